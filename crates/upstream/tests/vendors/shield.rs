//! The scanner adapter against its recorded wire format.

use svc_catalogue::routes::infra::ShieldVerdict;
use svc_upstream::shield::{ScanMode, WireScan, to_response};

#[test]
fn the_recorded_scan_decodes_into_a_verdict_and_exact_balance_changes() {
    let wire: WireScan = serde_json::from_str(include_str!("../fixtures/shield/blockaid-scan.json")).expect("decodes");
    let scan = to_response(wire.clone(), ScanMode::Simulate);
    assert_eq!(scan.result_type, ShieldVerdict::Malicious);
    assert_eq!(scan.classification.as_deref(), Some("known_malicious"));
    assert_eq!(scan.features[0].address.as_deref(), Some("0x0d524a5b52737c0a02880d5e84f7d20b8d66bfba"));
    let simulation = scan.simulation.expect("simulated");
    let usdc = &simulation.assets_diffs[0];
    assert_eq!((usdc.symbol.as_str(), usdc.amount_in.as_str(), usdc.usd), ("USDC", "10", 10.0));
    let eth = &simulation.assets_diffs[1];
    assert_eq!((eth.address.as_deref(), eth.amount_out.as_str()), (None, "0.6"), "summed exactly from the raw values");
    assert!((eth.usd + 2175.0).abs() < 1e-9);
    assert_eq!((simulation.total_usd_diff.received, simulation.total_usd_diff.total), (10.0, -2165.0));
    assert!(to_response(wire, ScanMode::Validate).simulation.is_none());
}

#[test]
fn a_failed_validation_is_an_error_verdict_with_its_reason() {
    let wire: WireScan = serde_json::from_str(
        r#"{"validation":{"status":"Error","error":"simulation reverted"},"simulation":{"status":"Error","error":"reverted"}}"#,
    )
    .expect("decodes");
    let scan = to_response(wire, ScanMode::Simulate);
    assert_eq!(scan.result_type, ShieldVerdict::Error);
    assert_eq!(scan.description.as_deref(), Some("simulation reverted"));
    assert!(scan.simulation.is_none());
}
