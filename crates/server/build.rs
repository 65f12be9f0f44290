//! Lays out the release binary's code so the functions a running server executes sit together.
//!
//! The kernel maps a binary's code into memory in 64 KiB windows around each page it runs, so
//! the ~1 MB of functions svc runs to start and serve, scattered over 33 MB of code, kept about
//! 20 MB of the file resident. `link-order.txt` lists those functions (by their linker names,
//! recorded from a run: `bench/link-order.sh` makes it anew) and the linker places them first;
//! a name this build does not have is skipped, so an out-of-date list costs memory, never
//! correctness. Release builds for the default Linux target only, whose linker (LLD) takes the
//! list; `SVC_LINK_ORDER=off` leaves the layout to the linker.

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=SVC_LINK_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let off = std::env::var("SVC_LINK_ORDER").is_ok_and(|v| v == "off");
    if target != "x86_64-unknown-linux-gnu" || profile != "release" || off {
        return;
    }
    let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("link-order.txt");
    if list.is_file() {
        println!("cargo:rustc-link-arg-bin=svc=-Wl,--symbol-ordering-file={}", list.display());
        println!("cargo:rustc-link-arg-bin=svc=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (DT_RELR): the loader reads a few kilobytes at start instead of
    // a 1.4 MB table that then stays mapped. glibc reads them from 2.36; the binary of an older
    // one could not start, so they are packed only where this machine's glibc is new enough.
    if glibc_version().is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-link-arg-bin=svc=-Wl,-z,pack-relative-relocs");
    }
}

/// This machine's glibc, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let out = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    let minor = minor.split('.').next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
