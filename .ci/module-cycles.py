#!/usr/bin/env python3
"""Finds import circles between the top-level modules of each crate.

A node is a crate's root (lib.rs / main.rs) or one of its top-level modules (src/x.rs or
src/x/). An edge A -> B means code in A names `crate::B...` (or, from the root, `B::...`),
with re-exports in the root (`pub use b::Item`, `pub use b::Item as Other`) followed to the
module that defines the item, and names the root imports from other crates left out. `super::` paths are resolved from the file's own place, so
`super::Item` in src/a.rs, or `super::super::b::Item` in src/a/x.rs, count as well. A macro
defined in the root's own code and called bare in a module is an edge to the root; a
`crate::`/`super::` path inside a string (serde's `with = "crate::a::f"`) is an edge too.
`mod` declarations and the root's re-exports are not edges. Test modules are skipped:
`#[cfg(test)] mod x { ... }` blocks, and files declared by `#[cfg(test)] mod x;`.

Usage: module-cycles.py [ROOT] [--why] | --self-test
Prints each strongly connected component of more than one node (with --why, the file and
line of every reference behind each edge of it); exits 1 when there is one. --self-test reads
a small crate made to trip each of the misreadings above and checks the edges it finds.
"""
import os
import re
import sys

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def lex(text):
    """Blanks comments, string and char literals, keeping newlines so line numbers hold.

    Returns (code, paths): `code` has every literal replaced by `""` padded with spaces;
    `paths` lists (offset, text) of string literals that look like a Rust path, which
    attributes use to name functions (`#[serde(with = "crate::a::f")]`).
    """
    out, paths, i, n = [], [], 0, len(text)

    def blank(s):
        return re.sub(r'[^\n]', ' ', s)

    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif text.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif re.match(r'b?r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'b?r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append('""' + blank(text[i + 2:j]))
            i = j
        elif c == '"' or (c == 'b' and text.startswith('b"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_'))):
            j = i + (2 if c == 'b' else 1)
            start = j
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            body = text[start:j]
            if re.fullmatch(r'(?:crate|super|self)(?:::\w+)+', body):
                paths.append((i, body))
            j += 1
            out.append('""' + blank(text[i + 2:j]))
            i = j
        elif c == "'":
            # a char literal ('a', '\n', '\u{1F600}', '"') or a lifetime / label ('a, 'static)
            m = re.match(r"'(?:\\(?:u\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append("' '" + blank(text[i + 3:i + m.end()]))
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return ''.join(out), paths


def cut_test_modules(code):
    """Blanks every `#[cfg(test)] mod x { ... }` block (braces are safe once literals are gone)."""
    while True:
        m = re.search(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{', code)
        if not m:
            return code
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {'{': 1, '}': -1}.get(code[j], 0)
            j += 1
        code = code[:m.start()] + re.sub(r'[^\n]', ' ', code[m.start():j]) + code[j:]


def test_only_mods(code):
    """Names declared by `#[cfg(test)] mod x;`."""
    return set(re.findall(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', code))


def read(path):
    with open(path) as f:
        code, paths = lex(f.read())
    return cut_test_modules(code), paths


def module_files(src, name):
    """Yields (path, module path inside the crate) of every non-test file of top-level module `name`."""
    path = os.path.join(src, name + '.rs')
    d = os.path.join(src, name)
    todo = []
    if os.path.exists(path):
        todo.append((path, [name], d))
    elif os.path.exists(os.path.join(d, 'mod.rs')):
        todo.append((os.path.join(d, 'mod.rs'), [name], d))
    while todo:
        f, modpath, child_dir = todo.pop()
        yield f, modpath
        code, _ = read(f)
        skip = test_only_mods(code)
        for sub in re.findall(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', code, flags=re.M):
            if sub in skip:
                continue
            for cand, cdir in ((os.path.join(child_dir, sub + '.rs'), os.path.join(child_dir, sub)),
                               (os.path.join(child_dir, sub, 'mod.rs'), os.path.join(child_dir, sub))):
                if os.path.exists(cand):
                    todo.append((cand, modpath + [sub], cdir))
                    break


def use_trees(code):
    """Yields (is public, offset, use-tree text) of every `use` item."""
    for m in re.finditer(r'\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);', code):
        yield bool(m.group(1)), m.start(), m.group(2)


def expand(tree):
    """Expands `a::{b, c::{d as e}}` into (path segments, name bound) pairs."""
    def go(prefix, t):
        t = t.strip()
        i = t.find('{')
        if i < 0:
            m = re.fullmatch(r'(.*?)\s+as\s+(\w+)', t, flags=re.S)
            path, alias = (m.group(1), m.group(2)) if m else (t, None)
            segs = [s for s in re.sub(r'\s+', '', prefix + path).split('::') if s]
            yield segs, alias or (segs[-1] if segs else None)
            return
        head, body = t[:i], t[i + 1:t.rfind('}')]
        depth, start, parts = 0, 0, []
        for j, ch in enumerate(body):
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ',' and depth == 0:
                parts.append(body[start:j])
                start = j + 1
        parts.append(body[start:])
        for p in parts:
            if p.strip():
                yield from go(prefix + head, p)
    yield from go('', tree)


def line_of(code, offset):
    return code.count('\n', 0, offset) + 1


def crate_graph(src, root_file):
    """Returns (edges, why): module -> set of modules, and (a, b) -> [file:line, ...]."""
    root_path = os.path.join(src, root_file)
    root, root_strings = read(root_path)
    skip = test_only_mods(root)
    mods = [m for m in re.findall(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', root, flags=re.M)
            if m not in skip and list(module_files(src, m))]
    # root re-exports: the name they bind -> the module that defines the item
    # (a name the root imports from outside the crate, `pub use svc_sealed as sealed`, is no
    # edge: `crate::sealed::X` names the other crate)
    reexport, external = {}, set()
    for _, _, tree in use_trees(root):
        for segs, name in expand(tree):
            if segs and segs[0] in ('self', 'crate'):
                segs = segs[1:]
            if len(segs) >= 2 and segs[0] in mods and name:
                reexport[name] = segs[0]
            elif segs and segs[0] not in mods and name and name != '*':
                external.add(name)
    # macros defined in the root's own code reach every module declared after them
    root_macros = set(re.findall(r'macro_rules!\s*(\w+)', root))

    def target(segs):
        if not segs or segs[0] in ('*', 'self'):
            return None
        if segs[0] in mods:
            return segs[0]
        if segs[0] in external:
            return None
        return reexport.get(segs[0], '<root>')

    edges = {m: set() for m in mods + ['<root>']}
    why = {}

    def add(a, b, f, code, offset):
        if b and b != a:
            edges[a].add(b)
            why.setdefault((a, b), []).append(f'{os.path.relpath(f)}:{line_of(code, offset)}')

    def resolve(modpath, segs):
        """Resolves a path written in module `modpath` to a top-level node, or None if local."""
        if segs[0] == 'crate':
            return target(segs[1:])
        if segs[0] == 'super':
            here = list(modpath)
            while segs and segs[0] == 'super':
                here, segs = here[:-1], segs[1:]
            if here:
                return here[0]
            return target(segs)
        return None

    for m in mods:
        for f, modpath in module_files(src, m):
            code, strings = read(f)
            for _, off, tree in use_trees(code):
                for segs, _ in expand(tree):
                    if segs and segs[0] in ('crate', 'super'):
                        add(m, resolve(modpath, segs), f, code, off)
            for mm in re.finditer(r'(?<![\w:])((?:crate|super)(?:::\w+)+)', code):
                segs = mm.group(1).split('::')
                add(m, resolve(modpath, segs), f, code, mm.start())
            for off, path in strings:
                add(m, resolve(modpath, path.split('::')), f, code, off)
            for mac in root_macros:
                for mm in re.finditer(r'(?<![\w:])' + mac + r'\s*!', code):
                    add(m, '<root>', f, code, mm.start())
    # the root's own code (not its mod declarations, not its re-exports)
    body = re.sub(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;', lambda x: re.sub(r'[^\n]', ' ', x.group(0)), root, flags=re.M)
    for public, off, tree in use_trees(body):
        if public:
            continue
        for segs, _ in expand(tree):
            if segs and segs[0] in ('crate', 'self'):
                segs = segs[1:]
            if segs and segs[0] in mods:
                add('<root>', segs[0], root_path, body, off)
    body = re.sub(r'\b(pub(?:\([^)]*\))?\s+)?use\s+[^;]+;', lambda x: re.sub(r'[^\n]', ' ', x.group(0)), body)
    for m in mods:
        for mm in re.finditer(r'(?<![\w:])(?:crate::|self::)?' + m + r'::', body):
            add('<root>', m, root_path, body, mm.start())
    for off, path in root_strings:
        segs = path.split('::')
        if segs[0] in ('crate', 'self') and len(segs) > 1 and segs[1] in mods:
            add('<root>', segs[1], root_path, root, off)
    return edges, why


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)
    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


# A crate that trips each way of misreading an edge, and the edges it really has.
FIXTURE = {
    'lib.rs': 'mod a;\nmod b;\nmod c;\nmod d;\n#[cfg(test)]\nmod t;\npub use a::Thing as Renamed;\n'
              'pub use svc_x as ext;\nconst URL: &str = "http://example/"; fn q() -> char { \'"\' }\n'
              'macro_rules! helper { () => {} }\n',
    'a.rs': 'pub struct Thing;\nconst S: &str = r#"crate::b::X "quoted" "#;\n'
            'fn f() { let _ = \'"\'; let _u = "//not a comment"; }\nfn g() -> crate::ext::Y { todo!() }\n',
    'b/mod.rs': 'mod inner;\n',
    'b/inner.rs': 'use super::super::c::Z;\n',
    'c.rs': 'pub struct Z; fn h() { helper!(); }\n'
            '#[derive(serde::Serialize)] struct W { #[serde(with = "crate::d::codec")] x: u8 }\n'
            'fn k() -> crate::Renamed { crate::Renamed }\n#[cfg(test)]\nmod tests { use crate::b::Q; }\n',
    'd.rs': 'pub mod codec { pub fn f() -> crate::Renamed { crate::Renamed } }\n',
    't.rs': 'use crate::c::Z;\n',
}
FIXTURE_EDGES = {'a': [], 'b': ['c'], 'c': ['<root>', 'a', 'd'], 'd': ['a'], '<root>': []}


def self_test():
    """Reads FIXTURE and checks it finds exactly FIXTURE_EDGES; exits 1 otherwise."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in FIXTURE.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(text)
        edges, _ = crate_graph(tmp, 'lib.rs')
    found = {k: sorted(v) for k, v in edges.items()}
    if found != FIXTURE_EDGES:
        print(f'self-test failed: found {found}, expected {FIXTURE_EDGES}')
        return 1
    print('self-test passed')
    return 0


def main(args):
    if '--self-test' in args:
        return self_test()
    show_why = '--why' in args
    args = [a for a in args if a != '--why']
    root = args[0] if args else '.'
    found = 0
    for crate in sorted(os.listdir(os.path.join(root, 'crates'))):
        src = os.path.join(root, 'crates', crate, 'src')
        for rf in ('lib.rs', 'main.rs'):
            if os.path.exists(os.path.join(src, rf)):
                g, why = crate_graph(src, rf)
                for comp in sccs(g):
                    found += 1
                    print(f'{crate} ({rf}): ' + ' <-> '.join(sorted(comp)))
                    for a in sorted(comp):
                        targets = sorted(b for b in g[a] if b in comp)
                        print(f'    {a} -> ' + ', '.join(targets))
                        if show_why:
                            for b in targets:
                                print(f'        {a} -> {b}: ' + ' '.join(sorted(set(why[(a, b)]))))
    print(f'{found} import circle(s)')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
