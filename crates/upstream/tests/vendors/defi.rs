//! The router and yields adapters against their recorded wire formats, and the yields
//! snapshot's lifetime against the simulator.

use std::sync::Arc;

use svc_catalogue::routes::infra::DefiPosition;
use svc_domain::{Chain, FixedClock};
use svc_simulator::Simulator;
use svc_upstream::enso::{WireNontokenized, WirePage, WirePosition, WirePrice, WireRoute};
use svc_upstream::yields::{WirePools, filter};
use svc_upstream::{Upstreams, UpstreamsConfig};

use crate::support::NOW_MS;

#[test]
fn the_recorded_router_answers_decode() {
    let price: WirePrice = serde_json::from_str(include_str!("../fixtures/defi/enso-price.json")).expect("price");
    assert_eq!((price.decimals, price.symbol.as_deref()), (6, Some("USDC")));
    let page: WirePage<WirePosition> =
        serde_json::from_str(include_str!("../fixtures/defi/enso-tokens.json")).expect("tokens");
    assert_eq!(page.meta.and_then(|m| m.total), Some(1));
    let pool = page.data[0].clone().into_pool("base");
    assert_eq!((pool.protocol.as_str(), pool.apy, pool.apy_reward), ("aave-v3", Some(4.12), None));
    assert_eq!(pool.underlying_tokens, ["0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"]);
    let route: WireRoute = serde_json::from_str(include_str!("../fixtures/defi/enso-route.json")).expect("route");
    assert_eq!((route.amount_out.as_str(), route.gas.as_deref()), ("4793215432", Some("182345")));
    assert_eq!(route.tx.value, "1500000000000000000");
    let page: WirePage<WireNontokenized> =
        serde_json::from_str(include_str!("../fixtures/defi/enso-nontokenized.json")).expect("nontokenized");
    let position = DefiPosition::from(page.data[0].clone());
    assert_eq!(position.position_id.as_deref(), Some("1234567"));
    assert_eq!(position.underlying_tokens.len(), 2, "objects and bare addresses are both read");
}

#[test]
fn the_recorded_yields_snapshot_filters_by_chain_project_and_apy() {
    let wire: WirePools = serde_json::from_str(include_str!("../fixtures/defi/defillama-pools.json")).expect("pools");
    let all = filter(&wire.data, Chain::Solana, None, 10);
    assert_eq!(all.total, 2);
    assert_eq!(all.pools[0].protocol, "orca-dex", "highest APY first");
    assert_eq!(all.pools[0].chain, "solana");
    let kamino = filter(&wire.data, Chain::Solana, Some(&["Kamino-Lend".to_owned()]), 10);
    assert_eq!((kamino.total, kamino.pools[0].tvl_usd), (1, 212_345_678.0));
    let page = filter(&wire.data, Chain::Solana, None, 1);
    assert_eq!((page.total, page.pools.len()), (2, 1));
}

#[tokio::test]
async fn the_yields_snapshot_is_fetched_once_per_five_minutes() {
    let clock = FixedClock::at_ms(NOW_MS);
    let sim = Simulator::new(svc_simulator::DEFAULT_SEED, Arc::new(clock.clone()));
    let (base, _) = sim.spawn().await.expect("simulator");
    let upstreams = Upstreams::new(&UpstreamsConfig::all_at(&base), Arc::new(clock.clone())).expect("upstreams");
    let first = upstreams.yields.discover(Chain::Solana, None, 3).await.expect("pools");
    upstreams.yields.discover(Chain::Solana, None, 50).await.expect("pools");
    assert_eq!(sim.faults.log().len(), 1);
    clock.advance_ms(301_000);
    let later = upstreams.yields.discover(Chain::Solana, None, 3).await.expect("pools");
    assert_eq!(sim.faults.log().len(), 2);
    assert_ne!(first.pools[0].apy, later.pools[0].apy, "yields moved with the clock");
}
