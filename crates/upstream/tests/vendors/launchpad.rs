//! The launchpad adapter against its recorded wire format and against the simulator's fake,
//! including the vendor's failure modes.

use std::sync::Arc;
use std::time::Duration;

use svc_catalogue::routes::infra::LaunchpadCoinResponse;
use svc_domain::FixedClock;
use svc_simulator::Fault;
use svc_upstream::launchpad::WireCoin;
use svc_upstream::{UpstreamError, Upstreams, UpstreamsConfig, Vendor};

use crate::support::{self, Fixture, NOW_MS};

/// The market, with a short launchpad timeout so the slow-vendor test is quick.
async fn fixture(tune: impl FnOnce(&mut UpstreamsConfig)) -> Fixture {
    support::fixture(|c| {
        c.vendor_mut(Vendor::Launchpad).timeout = Duration::from_millis(500);
        tune(c);
    })
    .await
}

fn mint(f: &Fixture) -> String {
    f.sim.world.coins()[0].mint.clone()
}

#[test]
fn the_recorded_vendor_answer_decodes_with_empty_links_as_absent() {
    let wire: WireCoin = serde_json::from_str(include_str!("../fixtures/launchpad-coin.json")).expect("decodes");
    let coin = LaunchpadCoinResponse::from(wire);
    assert_eq!(coin.symbol, "EVAN");
    assert_eq!(coin.created_at.0, "2025-02-16T05:17:31.855Z");
    assert_eq!(coin.virtual_sol_reserves, 30_936_250_001);
    assert!((coin.market_cap_usd - 5786.906).abs() < 0.001);
    assert_eq!(coin.socials.website, None);
    assert_eq!(coin.pool, None);
}

#[tokio::test]
async fn a_coin_is_read_from_the_vendor_then_from_the_cache_until_it_expires() {
    let f = fixture(|_| {}).await;
    let mint = mint(&f);
    let first = f.upstreams.launchpad.coin(&mint).await.expect("coin");
    assert_eq!(first.mint, mint);
    let again = f.upstreams.launchpad.coin(&mint).await.expect("coin");
    assert_eq!(again.virtual_sol_reserves, first.virtual_sol_reserves);
    assert_eq!(f.sim.faults.log().len(), 1, "the second read came from the cache");
    f.clock.advance_ms(11_000);
    f.upstreams.launchpad.coin(&mint).await.expect("coin");
    assert_eq!(f.sim.faults.log().len(), 2);
    assert_eq!(f.sim.faults.log()[0], format!("GET /launchpad/coins/{mint}"));
}

#[tokio::test]
async fn an_unknown_mint_is_not_found() {
    let f = fixture(|_| {}).await;
    let unknown = bs58_of([9u8; 32]);
    let err = f.upstreams.launchpad.coin(&unknown).await.expect_err("unknown");
    assert!(matches!(err, UpstreamError::NotFound { vendor: Vendor::Launchpad, .. }), "{err:?}");
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let f = fixture(|_| {}).await;
    f.sim.faults.push("launchpad", Fault::Status { status: 429, retry_after: Some(0) });
    f.sim.faults.push("launchpad", Fault::Status { status: 503, retry_after: None });
    f.upstreams.launchpad.coin(&mint(&f)).await.expect("third attempt succeeds");
    assert_eq!(f.sim.faults.log().len(), 3);
}

#[tokio::test]
async fn a_vendor_that_keeps_failing_gives_up_after_its_retries() {
    let f = fixture(|c| c.vendor_mut(Vendor::Launchpad).retries = 1).await;
    for _ in 0..3 {
        f.sim.faults.push("launchpad", Fault::Status { status: 500, retry_after: None });
    }
    let err = f.upstreams.launchpad.coin(&mint(&f)).await.expect_err("fails");
    assert!(matches!(err, UpstreamError::Status { status: 500, .. }), "{err:?}");
    assert_eq!(f.sim.faults.log().len(), 2);
}

#[tokio::test]
async fn a_retry_after_longer_than_the_budget_fails_at_once() {
    let f = fixture(|_| {}).await;
    f.sim.faults.push("launchpad", Fault::Status { status: 429, retry_after: Some(60) });
    let err = f.upstreams.launchpad.coin(&mint(&f)).await.expect_err("fails");
    assert!(matches!(err, UpstreamError::Status { status: 429, .. }), "{err:?}");
    assert_eq!(f.sim.faults.log().len(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let f = fixture(|_| {}).await;
    f.sim.faults.push("launchpad", Fault::Status { status: 401, retry_after: None });
    let err = f.upstreams.launchpad.coin(&mint(&f)).await.expect_err("fails");
    assert!(matches!(err, UpstreamError::Status { status: 401, .. }), "{err:?}");
    assert_eq!(f.sim.faults.log().len(), 1);
}

#[tokio::test]
async fn a_slow_vendor_times_out() {
    let f = fixture(|c| c.vendor_mut(Vendor::Launchpad).timeout = Duration::from_millis(100)).await;
    f.sim.faults.push("launchpad", Fault::Delay(Duration::from_millis(400)));
    let err = f.upstreams.launchpad.coin(&mint(&f)).await.expect_err("times out");
    assert!(matches!(err, UpstreamError::Timeout { vendor: Vendor::Launchpad }), "{err:?}");
}

#[tokio::test]
async fn an_unreachable_vendor_is_a_transport_error_without_its_url() {
    let mut config = UpstreamsConfig::all_at("http://127.0.0.1:1/secret-path");
    config.vendor_mut(Vendor::Launchpad).retries = 0;
    let upstreams = Upstreams::new(&config, Arc::new(FixedClock::at_ms(NOW_MS))).expect("upstreams");
    let err = upstreams.launchpad.coin(&bs58_of([1u8; 32])).await.expect_err("unreachable");
    assert!(matches!(err, UpstreamError::Transport { .. }), "{err:?}");
    assert!(!err.to_string().contains("secret-path"), "{err}");
}

#[test]
fn a_base_url_that_is_not_http_is_refused_at_start() {
    let config = UpstreamsConfig::all_at("file:///etc");
    let err = Upstreams::new(&config, Arc::new(FixedClock::at_ms(NOW_MS))).expect_err("refused");
    assert!(matches!(err, UpstreamError::Config { .. }), "{err:?}");
}

fn bs58_of(bytes: [u8; 32]) -> String {
    bs58::encode(bytes).into_string()
}
