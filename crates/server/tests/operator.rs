//! The operator commands as an operator meets them on a fresh data directory.

use std::process::Command;

fn svc(data: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_svc")).args(args).env("SVC_DATA_DIR", data).output().expect("svc")
}

#[test]
fn listing_payouts_when_there_are_none_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = svc(dir.path(), &["payouts", "list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "stdout keeps one line per payout for scripts");
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "no queued payouts");
    let out = svc(dir.path(), &["payouts", "list", "--status", "paid"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "no paid payouts");
}
