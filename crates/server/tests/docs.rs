//! The documents point at what exists: every relative link in `README.md` and `docs/*.md` names a
//! file (and, with `#`, a heading) of the repository, and every path they mention under
//! `crates/`, `interop/`, `fuzz/`, `bench/` or `.ci/` exists, so a moved file cannot leave the
//! docs pointing at nothing. And the committed configuration reference and example file are
//! what the `svc` binary prints.

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md` and every page of `docs/`, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, text)
        })
        .collect()
}

/// The targets of a page's Markdown links, `[text](target)`.
fn links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.trim().to_owned()))
        .collect()
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            found.push(slug(line.trim_start_matches('#')));
        }
    }
    found
}

#[test]
fn every_relative_link_in_the_docs_names_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for (page, text) in pages() {
        let dir = page.parent().expect("a directory");
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() { page.clone() } else { dir.join(file) };
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            let markdown = file.extension().is_some_and(|e| e == "md");
            if !anchor.is_empty() && markdown {
                let text = std::fs::read_to_string(&file).expect("a page");
                if !anchors(&text).iter().any(|a| a == anchor) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The repository paths a page mentions: words starting with one of the top folders.
fn mentioned_paths(text: &str) -> Vec<String> {
    const TOPS: [&str; 5] = ["crates/", "interop/", "fuzz/", "bench/", ".ci/"];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '<' | '>' | '*');
    let mut found = Vec::new();
    for (at, _) in text.match_indices('/') {
        for top in TOPS {
            let Some(start) = at.checked_sub(top.len() - 1) else { continue };
            if text.get(start..=at) != Some(top) {
                continue;
            }
            // A top folder's name must start the word, not end a longer one (`data/crates/`).
            let before = text[..start].chars().next_back();
            if before.is_some_and(is_path_char) {
                continue;
            }
            let path: String = text[start..].chars().take_while(|c| is_path_char(*c)).collect();
            found.push(path.trim_end_matches(['.', ',']).to_owned());
        }
    }
    found
}

#[test]
fn every_path_the_docs_mention_exists() {
    let mut missing = Vec::new();
    for (page, text) in pages() {
        for path in mentioned_paths(&text) {
            // A pattern (`crates/upstream/src/<vendor>.rs`, `routes/*.rs`) names its folder.
            let concrete = match path.find(['<', '*']) {
                Some(at) => path[..at].rsplit_once('/').map_or(String::new(), |(dir, _)| format!("{dir}/")),
                None => path.clone(),
            };
            // What svc or its scripts make at run time is not in a clone.
            const MADE_AT_RUN_TIME: [&str; 1] = ["fuzz/artifacts/"];
            if !root().join(&concrete).exists() && !MADE_AT_RUN_TIME.contains(&concrete.as_str()) {
                missing.push(format!("{}: {path}", page.display()));
            }
        }
    }
    assert!(missing.is_empty(), "paths named in the docs that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_path_finder_sees_paths_and_patterns_but_not_parts_of_words() {
    let text = "see `crates/api/src/x402.rs`, crates/upstream/src/<vendor>.rs and data/crates/x; fuzz/run.sh.";
    assert_eq!(mentioned_paths(text), ["crates/api/src/x402.rs", "crates/upstream/src/<vendor>.rs", "fuzz/run.sh"]);
    assert_eq!(anchors("### `[llm.providers.<name>]`\n```\n# not a heading\n```"), ["llmprovidersname"]);
    assert_eq!(anchors("## Replicas: PostgreSQL and Redis"), ["replicas-postgresql-and-redis"]);
}

/// What `svc config <what>` prints.
fn printed(what: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_svc")).args(["config", what]).output().expect("svc runs");
    assert!(out.status.success(), "svc config {what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn svc_config_prints_the_committed_reference_and_example() {
    let reference = std::fs::read_to_string(root().join("docs/configuration.md")).expect("docs/configuration.md");
    assert!(
        printed("reference") == reference,
        "docs/configuration.md is stale; regenerate it with:\n    \
         cargo run -q -p svc-server -- config reference > docs/configuration.md"
    );
    let example = std::fs::read_to_string(root().join("svc.example.toml")).expect("svc.example.toml");
    assert!(
        printed("example") == example,
        "svc.example.toml is stale; regenerate it with:\n    cargo run -q -p svc-server -- config example > svc.example.toml"
    );
}
