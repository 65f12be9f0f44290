//! Every input the fuzz campaign kept (`fuzz/corpus/<target>/`), replayed through its target's
//! property: a regression the fuzzer once found fails here, in the ordinary test run.

use std::path::{Path, PathBuf};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

/// The inputs kept for `target`, in a fixed order so a failure names the same file each run.
fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = corpus(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("a directory entry").path()).collect();
    files.sort();
    files
}

fn replay(target: &str) {
    let (_, property) = svc_fuzz_properties::TARGETS.iter().find(|(name, _)| *name == target).expect("a target");
    let files = inputs(target);
    assert!(files.len() >= 100, "{target}: only {} kept inputs; is fuzz/corpus/{target} there?", files.len());
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = std::panic::catch_unwind(|| property(&data));
        assert!(outcome.is_ok(), "{target}: {} fails (cargo fuzz run {target} {0} replays it)", file.display());
    }
}

#[test]
fn every_kept_payment_header_decodes_without_panicking() {
    replay("payment_header");
}

#[test]
fn every_kept_route_input_is_judged_and_priced_within_its_rule() {
    replay("route_input");
}

#[test]
fn every_kept_sign_in_is_read_and_none_proves_a_wallet() {
    replay("sign_in");
}

#[test]
fn every_kept_solana_transaction_is_checked_without_panicking() {
    replay("solana_transaction");
}

#[test]
fn the_fuzz_targets_are_exactly_the_properties_replayed_here() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    let mut targets: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/fuzz_targets")
        .filter_map(|e| e.expect("an entry").file_name().to_string_lossy().strip_suffix(".rs").map(str::to_owned))
        .collect();
    targets.sort();
    let replayed: Vec<&str> = svc_fuzz_properties::TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(targets, replayed, "a fuzz target without its replay here, or the other way round");
}
