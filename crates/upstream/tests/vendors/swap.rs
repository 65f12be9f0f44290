//! The Solana swap adapters against their recorded wire formats, and the simulated keys the
//! adapters send matching the ones the simulator accepts.

use svc_catalogue::routes::infra::{Aggregator, SwapQuoteRequest};
use svc_upstream::swap::{JupiterQuote, OkxEnvelope, OkxQuote, from_jupiter, from_okx};

fn request() -> SwapQuoteRequest {
    serde_json::from_value(serde_json::json!({
        "input_mint": "So11111111111111111111111111111111111111112",
        "output_mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "amount": 1_000_000_000u64,
        "slippage_bps": 50,
    }))
    .expect("request")
}

#[test]
fn the_recorded_first_aggregator_quote_decodes() {
    let wire: JupiterQuote =
        serde_json::from_str(include_str!("../fixtures/swap/jupiter-quote.json")).expect("decodes");
    let quote = from_jupiter(wire);
    assert_eq!(quote.aggregator, Aggregator::Jupiter);
    assert_eq!((quote.out_amount.as_str(), quote.other_amount_threshold.as_str()), ("150123456", "149372839"));
    assert!((quote.price_impact_pct - 0.01).abs() < 1e-12, "a fraction of 0.0001 is 0.01 %");
    assert_eq!(quote.route, ["Whirlpool"]);
}

#[test]
fn the_recorded_second_aggregator_quote_decodes_with_a_computed_floor() {
    let wire: OkxEnvelope<OkxQuote> =
        serde_json::from_str(include_str!("../fixtures/swap/okx-quote.json")).expect("decodes");
    let quote = from_okx(wire, &request()).expect("quote");
    assert_eq!(quote.out_amount, "150098765");
    assert_eq!(quote.other_amount_threshold, (150_098_765u128 * 9_950 / 10_000).to_string());
    assert_eq!(quote.route, ["Raydium CL", "Whirlpool"]);
    assert!((quote.price_impact_pct - 0.01).abs() < 1e-12);
}

#[test]
fn a_no_liquidity_envelope_is_a_missing_route() {
    let wire: OkxEnvelope<OkxQuote> =
        serde_json::from_str(r#"{"code":"82000","msg":"Insufficient liquidity.","data":[]}"#).expect("decodes");
    let err = from_okx(wire, &request()).expect_err("no route");
    assert!(matches!(err, svc_upstream::UpstreamError::NotFound { .. }), "{err}");
}

#[test]
fn the_simulated_keys_are_the_ones_the_simulator_accepts() {
    assert_eq!(svc_upstream::SIMULATED_KEY, svc_simulator::SIMULATED_KEY);
    let expected = format!(
        "{}:{}:{}",
        svc_simulator::SIMULATED_KEY,
        svc_simulator::SIMULATED_SECRET,
        svc_simulator::SIMULATED_PASSPHRASE
    );
    assert_eq!(svc_upstream::SIMULATED_OKX_CREDENTIAL, expected);
}

#[tokio::test]
async fn a_request_signed_with_a_skewed_clock_is_refused_and_the_other_aggregator_answers() {
    use std::sync::Arc;
    use svc_domain::FixedClock;
    const NOW_MS: i64 = 1_795_341_600_000;
    let sim = svc_simulator::Simulator::new(svc_simulator::DEFAULT_SEED, Arc::new(FixedClock::at_ms(NOW_MS)));
    let (base, _) = sim.spawn().await.expect("simulator");
    let config = svc_upstream::UpstreamsConfig::all_at(&base);
    let in_step =
        svc_upstream::Upstreams::new(&config, Arc::new(FixedClock::at_ms(NOW_MS + 5_000))).expect("upstreams");
    let mut want_okx = request();
    want_okx.preferred_aggregator = Aggregator::Okx;
    assert_eq!(in_step.solana_swap.quote(&want_okx).await.expect("quote").aggregator, Aggregator::Okx);
    let skewed =
        svc_upstream::Upstreams::new(&config, Arc::new(FixedClock::at_ms(NOW_MS + 60_000))).expect("upstreams");
    let quote = skewed.solana_swap.quote(&want_okx).await.expect("quote");
    assert_eq!(quote.aggregator, Aggregator::Jupiter, "the signed leg was refused");
}
