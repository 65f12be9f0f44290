//! The chain-data adapter against the vendor's documented answers (fixtures) and against the
//! simulator's fake: request mapping (renamed paths, one call per wallet), decoding, the
//! cache, and the vendor's auth and error behaviour.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use svc_catalogue::routes::chaindata::{
    ChaindataCounterpartyRow, ChaindataNetflowRow, ChaindataPnlRow, ChaindataScreenerRow, ChaindataTokenInformation,
};
use svc_domain::Chain;
use svc_simulator::Fault;
use svc_simulator::world::{Scenario, WalletKind};
use svc_upstream::chaindata::{decode_list, decode_object};
use svc_upstream::{UpstreamError, UpstreamsConfig, Vendor};

use crate::support::{self, Fixture};

/// The market, with the chain-data vendor's base URL and a timeout for its large answers.
async fn fixture(tune: impl FnOnce(&mut UpstreamsConfig)) -> Fixture {
    let mut fixture = support::fixture(|c| {
        c.vendor_mut(Vendor::Chaindata).timeout = Duration::from_secs(5);
        tune(c);
    })
    .await;
    fixture.base = format!("{}/chaindata", fixture.base);
    fixture
}

fn payload<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("payload")
}

fn vendor_paths(f: &Fixture) -> Vec<String> {
    f.sim.faults.log().into_iter().filter(|l| l.starts_with("POST /chaindata")).collect()
}

#[test]
fn the_recorded_and_documented_vendor_answers_decode() {
    let netflow =
        decode_list::<ChaindataNetflowRow>(include_bytes!("../fixtures/chaindata/netflow.json")).expect("netflow");
    assert_eq!(netflow.data[0].token_symbol, "FARTCOIN");
    assert_eq!(netflow.data[0].trader_count, 14);
    assert!(netflow.pagination.is_last_page);
    let parties = decode_list::<ChaindataCounterpartyRow>(include_bytes!("../fixtures/chaindata/counterparties.json"))
        .expect("cp");
    assert_eq!(parties.data[0].counterparty_address_label.len(), 2);
    assert_eq!(parties.data[0].tokens_info[0].num_transfer, 9, "counts sent as strings");
    assert_eq!(parties.data[0].tokens_info[1].num_transfer, 3);
    let pnl = decode_list::<ChaindataPnlRow>(include_bytes!("../fixtures/chaindata/pnl.json")).expect("pnl");
    assert_eq!((pnl.data[0].nof_buys, pnl.data[0].nof_sells), (3, 0));
    let screener = decode_list::<ChaindataScreenerRow>(include_bytes!("../fixtures/chaindata/token-screener.json"))
        .expect("screener");
    assert_eq!(screener.data[0].nof_traders, Some(5400));
    assert_eq!(screener.data[0].liquidity_usd, None);
    let info =
        decode_object::<ChaindataTokenInformation>(include_bytes!("../fixtures/chaindata/token-information.json"))
            .expect("token information");
    assert_eq!(info.spot_metrics.total_holders, Some(140_000));
}

#[tokio::test]
async fn the_fake_speaks_the_vendors_validation_error_shape() {
    let recorded: Value =
        serde_json::from_slice(include_bytes!("../fixtures/chaindata/error-validation.json")).expect("fixture");
    let f = fixture(|_| {}).await;
    let reply = reqwest::Client::new()
        .post(format!("{}/api/v1/smart-money/netflow", f.base))
        .header("apikey", "k")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("send");
    assert_eq!(reply.status().as_u16(), 422);
    let body: Value = serde_json::from_slice(&reply.bytes().await.expect("body")).expect("json");
    assert_eq!(body["detail"][0]["loc"], recorded["detail"][0]["loc"]);
    assert!(body["detail"][0]["msg"].as_str().is_some_and(|m| m.to_lowercase().contains("field required")));
}

#[tokio::test]
async fn every_vendor_endpoint_wants_a_key_and_pages_as_the_vendor_does() {
    let f = fixture(|_| {}).await;
    let http = reqwest::Client::new();
    for endpoint in svc_upstream::chaindata::Endpoint::ALL {
        let send = |key: Option<&str>, body: &str| {
            let mut request = http
                .post(format!("{}{}", f.base, endpoint.path()))
                .header("content-type", "application/json")
                .body(body.to_owned());
            if let Some(key) = key {
                request = request.header("apikey", key);
            }
            request.send()
        };
        let status = |r: reqwest::Response| r.status().as_u16();
        assert_eq!(status(send(None, "{}").await.expect("send")), 401, "{endpoint:?} without a key");
        let revoked = send(Some(svc_simulator::CHAINDATA_REVOKED_KEY), "{}").await.expect("send");
        assert_eq!(status(revoked), 401, "{endpoint:?} with a revoked key");
        let garbage = send(Some("k"), "not json").await.expect("send");
        assert_eq!(status(garbage), 422, "{endpoint:?} with a body that is not JSON");
    }
    let page = |n: u64| {
        let body = json!({"chains": ["solana", "base"], "pagination": {"page": n, "per_page": 5}}).to_string();
        http.post(format!("{}/api/v1/token-screener", f.base)).header("apikey", "k").body(body).send()
    };
    let first: Value =
        serde_json::from_slice(&page(1).await.expect("send").bytes().await.expect("body")).expect("json");
    assert_eq!(first["data"].as_array().map(Vec::len), Some(5));
    assert_eq!(first["pagination"], json!({"page": 1, "per_page": 5, "is_last_page": false}));
    let last: Value = serde_json::from_slice(&page(4).await.expect("send").bytes().await.expect("body")).expect("json");
    assert_eq!(last["pagination"]["is_last_page"], true);
    assert_eq!(status_of(page(0).await.expect("send")), 422);
}

fn status_of(reply: reqwest::Response) -> u16 {
    reply.status().as_u16()
}

#[tokio::test]
async fn smart_money_netflow_finds_the_planted_stories_and_is_cached() {
    let f = fixture(|_| {}).await;
    let chaindata = &f.upstreams.chaindata;
    let query =
        payload(json!({"chains": ["solana"], "order_by": [{"field": "net_flow_24h_usd", "direction": "DESC"}]}));
    let page = chaindata.netflow(&query).await.expect("netflow");
    let up = f.sim.world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    let down = f.sim.world.planted_token(Chain::Solana, Scenario::Exodus).expect("planted");
    let flow = |address: &str| page.data.iter().find(|r| r.token_address == address).map(|r| r.net_flow_24h_usd);
    assert!(flow(&up.address).expect("listed") > 0.0);
    assert!(flow(&down.address).expect("listed") < 0.0);
    assert!(page.data.windows(2).all(|w| w[0].net_flow_24h_usd >= w[1].net_flow_24h_usd), "sorted by the vendor");
    assert!(page.data.iter().all(|r| r.chain == "solana"));

    chaindata.netflow(&query).await.expect("cached");
    assert_eq!(vendor_paths(&f), vec!["POST /chaindata/api/v1/smart-money/netflow".to_owned()]);
    f.clock.advance_ms(61_000);
    chaindata.netflow(&query).await.expect("refetched");
    assert_eq!(vendor_paths(&f).len(), 2, "a minute later the answer is fetched again");
}

#[tokio::test]
async fn renamed_routes_reach_the_vendors_paths() {
    let f = fixture(|_| {}).await;
    let c = &f.upstreams.chaindata;
    let world = &f.sim.world;
    let fund = world.wallets().iter().find(|w| w.kind == WalletKind::Fund && w.chain == Chain::Solana).expect("fund");
    let token = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
    c.smart_money_dcas(&payload(json!({}))).await.expect("dcas");
    c.address_balances(&payload(json!({"walletAddresses": [fund.address], "chain": "solana"})))
        .await
        .expect("balances");
    c.token_screener(&payload(json!({"chains": ["solana"], "timeframe": "24h"}))).await.expect("screener");
    c.perp_screener(&payload(json!({}))).await.expect("perp screener");
    c.token_dcas(&payload(json!({"token_address": token.address, "chain": "solana"}))).await.expect("jup dca");
    let labels = c
        .address_labels(&payload(json!({"walletAddresses": [fund.address], "chain": "solana"})))
        .await
        .expect("labels");
    assert!(labels.data.iter().any(|l| l.label == "Fund"), "{:?}", labels.data);
    assert_eq!(
        vendor_paths(&f),
        [
            "/api/v1/smart-money/dcas",
            "/api/v1/profiler/address/current-balance",
            "/api/v1/token-screener",
            "/api/v1/perp-screener",
            "/api/v1/tgm/jup-dca",
            "/api/beta/profiler/address/labels",
        ]
        .map(|p| format!("POST /chaindata{p}"))
    );
}

#[tokio::test]
async fn the_profiler_asks_once_per_wallet_and_joins_the_answers() {
    let f = fixture(|_| {}).await;
    let world = &f.sim.world;
    let smart: Vec<&str> = world
        .wallets()
        .iter()
        .filter(|w| w.chain == Chain::Ethereum && w.kind == WalletKind::SmartTrader)
        .take(2)
        .map(|w| w.address.as_str())
        .collect();
    let query = payload(json!({"walletAddresses": smart, "chain": "ethereum"}));
    let balances = f.upstreams.chaindata.address_balances(&query).await.expect("balances");
    assert_eq!(vendor_paths(&f).len(), 2);
    for wallet in &smart {
        assert!(balances.data.iter().any(|r| r.address == *wallet), "{wallet} has rows");
    }
    let summary = f.upstreams.chaindata.address_pnl_summary(&query).await.expect("summary");
    assert!(summary.data.traded_token_count > 0);
    assert!(summary.data.top5_tokens.len() <= 5);
    let transfers = f
        .upstreams
        .chaindata
        .address_token_transfers(&payload(json!({"walletAddresses": [smart[0]], "chain": "ethereum"})))
        .await
        .expect("transfers");
    assert!(transfers.data.iter().all(|t| t.from_address == smart[0] || t.to_address == smart[0]));
}

#[tokio::test]
async fn a_revoked_or_missing_key_is_a_vendor_401() {
    for key in [Some(svc_simulator::CHAINDATA_REVOKED_KEY.to_owned()), None] {
        let f = fixture(move |c| c.vendor_mut(Vendor::Chaindata).key = key).await;
        let err = f.upstreams.chaindata.netflow(&payload(json!({"chains": ["base"]}))).await.expect_err("refused");
        assert!(matches!(err, UpstreamError::Status { status: 401, vendor: Vendor::Chaindata }), "{err:?}");
        assert!(!err.to_string().contains("revoked"), "the key never shows: {err}");
    }
}

#[tokio::test]
async fn a_rate_limit_is_retried_and_an_unknown_filter_is_a_400() {
    let f = fixture(|_| {}).await;
    f.sim.faults.push("chaindata", Fault::Status { status: 429, retry_after: Some(0) });
    f.upstreams.chaindata.holdings(&payload(json!({"chains": ["base"]}))).await.expect("retried");
    assert_eq!(vendor_paths(&f).len(), 2);
    let err = f
        .upstreams
        .chaindata
        .holdings(&payload(json!({"chains": ["base"], "filters": {"no_such_field": 1}})))
        .await
        .expect_err("refused");
    assert!(matches!(err, UpstreamError::Status { status: 400, .. }), "{err:?}");
}

#[tokio::test]
async fn token_routes_answer_for_a_known_token_and_information_is_404_for_an_unknown_one() {
    let f = fixture(|_| {}).await;
    let c = &f.upstreams.chaindata;
    let token = f.sim.world.planted_token(Chain::Base, Scenario::Accumulated).expect("planted");
    let query = payload(json!({"token_address": token.address.to_uppercase().replace("0X", "0x"), "chain": "base",
        "date": {"from": "2026-11-21", "to": "2026-11-22"}}));
    let info = c.token_information(&query).await.expect("info");
    assert_eq!(info.data.symbol, token.symbol);
    let flows = c.flow_intelligence(&query).await.expect("flows");
    assert!(flows.data.smart_trader_net_flow_usd > 0.0, "smart money is accumulating");
    assert!(!c.token_holders(&query).await.expect("holders").data.is_empty());
    assert!(!c.token_dex_trades(&query).await.expect("trades").data.is_empty());
    assert!(!c.who_bought_sold(&query).await.expect("who").data.is_empty());
    assert_eq!(c.token_flows(&query).await.expect("daily").data.len(), 2);
    assert!(!c.token_ohlcv(&query).await.expect("candles").data.is_empty());
    assert!(!c.token_indicators(&query).await.expect("indicators").data.is_empty());
    let unknown = payload(json!({"token_address": format!("0x{}", "ab".repeat(20)), "chain": "base"}));
    let err = c.token_information(&unknown).await.expect_err("unknown");
    assert!(matches!(err, UpstreamError::NotFound { .. }), "{err:?}");
}
