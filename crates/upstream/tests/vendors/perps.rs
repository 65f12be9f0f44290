//! The two derivatives adapters against the exchanges' recorded wire formats and against the
//! simulator's fakes: reads by type, signed actions the fake exchange verifies, the indexer
//! allow-list, caching and the vendors' failure modes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use svc_catalogue::routes::infra::{
    OrderbookProxyData, PerpAction, PerpInfoData, PerpInfoQuery, PerpOrderStatus, PerpScalar, ProxyParam,
};
use svc_simulator::Fault;
use svc_upstream::orderbookdex::{ProxyError, WireMarkets};
use svc_upstream::perpdex::{ExchangeError, decode_info};
use svc_upstream::{UpstreamError, UpstreamsConfig, Vendor};

use crate::support::{self, Fixture, NOW_MS};

/// The market, with the simulator's approved agent key and room for large test orders.
async fn fixture(tune: impl FnOnce(&mut UpstreamsConfig)) -> Fixture {
    support::fixture(|c| {
        c.vendor_mut(Vendor::Perpdex).key = Some(svc_simulator::PERPDEX_AGENT_KEY.into());
        c.perp_limits.max_order_notional_usd = 100_000;
        c.perp_limits.max_action_notional_usd = 200_000;
        tune(c);
    })
    .await
}

fn query(value: Value) -> PerpInfoQuery {
    serde_json::from_value(value).expect("query")
}

fn action(value: Value) -> PerpAction {
    serde_json::from_value(value).expect("action")
}

#[test]
fn recorded_perp_exchange_answers_decode() {
    let user = "0x0000000000000000000000000000000000000001";
    let fixture = |text: &str| serde_json::from_str::<Value>(text).expect("json");
    let account = decode_info(
        &query(json!({"type": "clearinghouseState", "user": user})),
        fixture(include_str!("../fixtures/perpdex-clearinghouse-state.json")),
    )
    .expect("account");
    let PerpInfoData::Account { asset_positions, withdrawable } = account else { panic!("not an account") };
    assert_eq!((asset_positions[0].position.szi.as_str(), withdrawable.as_str()), ("-0.00785", "1010.57"));

    let book = decode_info(
        &query(json!({"type": "l2Book", "coin": "DYDX"})),
        fixture(include_str!("../fixtures/perpdex-l2book.json")),
    )
    .expect("book");
    let PerpInfoData::Book { levels, .. } = book else { panic!("not a book") };
    assert_eq!((levels[0][0].px.as_str(), levels[1][0].n), ("2.111", 2));

    let candles = decode_info(
        &query(
            json!({"type": "candleSnapshot", "req": {"coin": "kPEPE", "interval": "1h", "startTime": 0, "endTime": 1}}),
        ),
        fixture(include_str!("../fixtures/perpdex-candle-snapshot.json")),
    )
    .expect("candles");
    let PerpInfoData::Rows(rows) = candles else { panic!("not rows") };
    assert!(matches!(rows[0].get("o"), Some(PerpScalar::Text(o)) if o == "0.001601"));

    let fills = decode_info(
        &query(json!({"type": "userFills", "user": user})),
        fixture(include_str!("../fixtures/perpdex-user-fills.json")),
    )
    .expect("fills");
    let PerpInfoData::Rows(rows) = fills else { panic!("not rows") };
    assert!(matches!(rows[0].get("crossed"), Some(PerpScalar::Flag(true))));

    let meta = decode_info(&query(json!({"type": "meta"})), fixture(include_str!("../fixtures/perpdex-meta.json")))
        .expect("meta");
    let PerpInfoData::Meta { universe } = meta else { panic!("not meta") };
    assert_eq!((universe.len(), universe[1].sz_decimals), (3, 4));
}

#[test]
fn the_recorded_indexer_market_list_decodes_and_normalises() {
    let wire: WireMarkets =
        serde_json::from_str(include_str!("../fixtures/orderbookdex-perpetual-markets.json")).expect("decodes");
    let btc = svc_catalogue::routes::infra::OrderbookMarket::from(wire.markets.into_values().next().expect("btc"));
    assert_eq!((btc.ticker.as_str(), btc.status.as_str()), ("BTC-USD", "ACTIVE"));
    assert!((btc.oracle_price - 96_984.213_46).abs() < 1e-6 && (btc.step_size - 0.0001).abs() < 1e-12);
}

#[tokio::test]
async fn every_info_type_answers_from_the_simulated_exchange() {
    let f = fixture(|_| {}).await;
    let user = f.sim.world.perp_accounts()[1].address.clone();
    let start = NOW_MS - 6 * 3_600_000;
    for (body, check) in [
        (json!({"type": "meta"}), "meta"),
        (json!({"type": "metaAndAssetCtxs"}), "markets"),
        (json!({"type": "allMids"}), "map"),
        (json!({"type": "spotMeta"}), "spot"),
        (json!({"type": "l2Book", "coin": "ETH"}), "book"),
        (
            json!({"type": "candleSnapshot", "req": {"coin": "BTC", "interval": "1h", "startTime": start, "endTime": NOW_MS}}),
            "rows",
        ),
        (json!({"type": "fundingHistory", "coin": "SOL", "startTime": start}), "rows"),
        (json!({"type": "clearinghouseState", "user": user}), "account"),
        (json!({"type": "spotClearinghouseState", "user": user}), "balances"),
        (json!({"type": "openOrders", "user": user}), "rows"),
        (json!({"type": "userFills", "user": user}), "rows"),
        (json!({"type": "userFunding", "user": user, "startTime": start}), "rows"),
    ] {
        let q = query(body.clone());
        let answer = f.upstreams.perpdex.info(&q).await.unwrap_or_else(|e| panic!("{body}: {e}"));
        let ok = match (&answer.data, check) {
            (PerpInfoData::Meta { universe }, "meta") => universe.len() == f.sim.world.perp_markets().len(),
            (PerpInfoData::Markets { universe, asset_ctxs }, "markets") => universe.len() == asset_ctxs.len(),
            (PerpInfoData::Map(mids), "map") => mids.contains_key("BTC"),
            (PerpInfoData::SpotMeta { tokens, .. }, "spot") => !tokens.is_empty(),
            (PerpInfoData::Book { levels, .. }, "book") => levels.len() == 2 && !levels[0].is_empty(),
            (PerpInfoData::Rows(_), "rows") => true,
            (PerpInfoData::Account { .. }, "account") => true,
            (PerpInfoData::SpotBalances { balances }, "balances") => !balances.is_empty(),
            _ => false,
        };
        assert!(ok, "{body} answered {:?}", answer.data);
    }
    let candles = f.upstreams.perpdex.info(&query(json!({"type": "candleSnapshot", "req": {"coin": "BTC", "interval": "1h", "startTime": start, "endTime": NOW_MS}}))).await.expect("candles");
    let PerpInfoData::Rows(rows) = candles.data else { panic!("rows") };
    assert_eq!(rows.len(), 7, "six past hours and the current one");
}

#[tokio::test]
async fn an_unlisted_coins_book_is_not_found() {
    let f = fixture(|_| {}).await;
    let err = f.upstreams.perpdex.info(&query(json!({"type": "l2Book", "coin": "NOPE"}))).await.expect_err("unlisted");
    assert!(matches!(err, UpstreamError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn signed_orders_rest_or_fill_and_a_resting_order_can_be_cancelled() {
    let f = fixture(|_| {}).await;
    let eth = f.sim.world.perp_market("ETH").expect("eth").clone();
    let mark = f.sim.world.perp_state(&eth).mark;
    let low = format!("{:.0}", (mark * 0.9).floor());
    let high = format!("{:.0}", (mark * 1.1).ceil());
    let placed = f
        .upstreams
        .perpdex
        .exchange(&action(json!({"type": "order", "orders": [
            {"coin": "ETH", "is_buy": true, "sz": "0.05", "limit_px": low},
            {"coin": "ETH", "is_buy": true, "sz": "0.05", "limit_px": high, "tif": "Ioc", "cloid": "0x0000000000000000000000000000ABCD"},
            {"coin": "ETH", "is_buy": true, "sz": "0.001", "limit_px": low},
        ]})))
        .await
        .expect("placed");
    assert_eq!(placed.status, "ok");
    let PerpOrderStatus::Resting { oid } = placed.statuses[0] else { panic!("{:?}", placed.statuses) };
    assert!(matches!(placed.statuses[1], PerpOrderStatus::Filled { .. }), "{:?}", placed.statuses);
    assert!(matches!(&placed.statuses[2], PerpOrderStatus::Error(e) if e.contains("minimum value")));

    // The agent trades for the simulated master account: its resting order and fill show there.
    let master = f.sim.world.perp_accounts()[0].address.clone();
    let open = f.upstreams.perpdex.info(&query(json!({"type": "openOrders", "user": master}))).await.expect("open");
    let PerpInfoData::Rows(open) = open.data else { panic!("rows") };
    assert!(matches!(open[0].get("oid"), Some(PerpScalar::Number(n)) if *n as u64 == oid), "{open:?}");
    let fills = f.upstreams.perpdex.info(&query(json!({"type": "userFills", "user": master}))).await.expect("fills");
    let PerpInfoData::Rows(fills) = fills.data else { panic!("rows") };
    assert!(fills.iter().any(|row| matches!(row.get("sz"), Some(PerpScalar::Text(sz)) if sz == "0.05")), "{fills:?}");

    let cancelled = f
        .upstreams
        .perpdex
        .exchange(&action(
            json!({"type": "cancel", "cancels": [{"coin": "ETH", "oid": oid}, {"coin": "ETH", "oid": oid}]}),
        ))
        .await
        .expect("cancelled");
    assert!(matches!(cancelled.statuses[0], PerpOrderStatus::Success));
    assert!(matches!(&cancelled.statuses[1], PerpOrderStatus::Error(e) if e.contains("never placed")));
    assert!(cancelled.nonce > placed.nonce, "nonces only go up");

    let leverage = f
        .upstreams
        .perpdex
        .exchange(&action(json!({"type": "updateLeverage", "coin": "ETH", "is_cross": true, "leverage": 5})))
        .await
        .expect("leverage");
    assert_eq!((leverage.status.as_str(), leverage.statuses.len()), ("ok", 0));
}

#[tokio::test]
async fn an_agent_the_exchange_does_not_know_is_a_vendor_refusal_not_a_client_error() {
    let f = fixture(|c| {
        c.vendor_mut(Vendor::Perpdex).key =
            Some("0x0123456789012345678901234567890123456789012345678901234567890123".into());
    })
    .await;
    let err = f
        .upstreams
        .perpdex
        .exchange(&action(json!({"type": "updateLeverage", "coin": "BTC", "is_cross": true, "leverage": 3})))
        .await
        .expect_err("unknown agent");
    assert!(matches!(err, ExchangeError::Upstream(UpstreamError::Refused { .. })), "{err}");
    assert!(!err.to_string().contains("0123456789012345678901234567890123"), "{err}");
}

#[tokio::test]
async fn without_an_agent_key_trading_is_disabled_and_nothing_is_sent() {
    let f = fixture(|c| c.vendor_mut(Vendor::Perpdex).key = None).await;
    assert_eq!(f.upstreams.perpdex.agent_address(), None);
    let err = f
        .upstreams
        .perpdex
        .exchange(&action(json!({"type": "updateLeverage", "coin": "BTC", "is_cross": true, "leverage": 3})))
        .await
        .expect_err("disabled");
    assert!(matches!(err, ExchangeError::Disabled));
    assert!(f.sim.faults.log().is_empty());
}

#[tokio::test]
async fn orders_over_the_configured_limits_are_refused_before_anything_is_signed() {
    let f = fixture(|c| c.perp_limits.max_order_notional_usd = 50).await;
    let err = f
        .upstreams
        .perpdex
        .exchange(&action(
            json!({"type": "order", "orders": [{"coin": "BTC", "is_buy": true, "sz": "0.001", "limit_px": "90000"}]}),
        ))
        .await
        .expect_err("over limit");
    let ExchangeError::Invalid(errors) = err else { panic!("{err}") };
    assert!(errors[0].msg.contains("50 USD"), "{:?}", errors);
    assert!(f.sim.faults.log().iter().all(|line| !line.contains("/exchange")), "{:?}", f.sim.faults.log());
}

#[tokio::test]
async fn markets_are_normalised_and_cached_for_a_minute() {
    let f = fixture(|_| {}).await;
    let markets = f.upstreams.orderbookdex.markets().await.expect("markets");
    assert_eq!(markets.markets.len(), f.sim.world.perp_markets().len());
    let btc = markets.markets.iter().find(|m| m.ticker == "BTC-USD").expect("btc");
    assert!(btc.oracle_price > 50_000.0 && btc.tick_size > 0.0 && btc.status == "ACTIVE");
    f.upstreams.orderbookdex.markets().await.expect("cached");
    assert_eq!(f.sim.faults.log().len(), 1);
    f.clock.advance_ms(61_000);
    f.upstreams.orderbookdex.markets().await.expect("refreshed");
    assert_eq!(f.sim.faults.log(), vec!["GET /orderbookdex/v4/perpetualMarkets"; 2]);
}

#[tokio::test]
async fn each_public_indexer_path_is_proxied_with_its_parameters() {
    let f = fixture(|_| {}).await;
    let params = |pairs: &[(&str, ProxyParam)]| -> BTreeMap<String, ProxyParam> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    };
    let book =
        f.upstreams.orderbookdex.proxy("/v4/orderbooks/perpetualMarket/ETH-USD", &params(&[])).await.expect("book");
    assert!(matches!(book.data, OrderbookProxyData::Orderbook { ref bids, .. } if !bids.is_empty()));
    let candles = f
        .upstreams
        .orderbookdex
        .proxy(
            "/v4/candles/perpetualMarkets/BTC-USD",
            &params(&[("resolution", ProxyParam::Text("1HOUR".into())), ("limit", ProxyParam::Number(5.0))]),
        )
        .await
        .expect("candles");
    assert!(matches!(candles.data, OrderbookProxyData::Candles { ref candles } if candles.len() == 5));
    let funding = f.upstreams.orderbookdex.proxy("/v4/historicalFunding/SOL-USD", &params(&[])).await.expect("funding");
    assert!(
        matches!(funding.data, OrderbookProxyData::Funding { ref historical_funding } if !historical_funding.is_empty())
    );
    let trades = f
        .upstreams
        .orderbookdex
        .proxy("/v4/trades/perpetualMarket/DOGE-USD", &params(&[("limit", ProxyParam::Text("3".into()))]))
        .await
        .expect("trades");
    assert!(matches!(trades.data, OrderbookProxyData::Trades { ref trades } if trades.len() == 3));
    let log = f.sim.faults.log();
    assert!(
        log.contains(&"GET /orderbookdex/v4/candles/perpetualMarkets/BTC-USD?limit=5&resolution=1HOUR".to_owned()),
        "{log:?}"
    );
}

#[tokio::test]
async fn an_unknown_ticker_is_not_found_and_a_path_off_the_list_never_leaves() {
    let f = fixture(|_| {}).await;
    let err =
        f.upstreams.orderbookdex.proxy("/v4/historicalFunding/NOPE-USD", &BTreeMap::new()).await.expect_err("404");
    assert!(matches!(err, ProxyError::Upstream(UpstreamError::NotFound { .. })), "{err}");
    for hostile in [
        "/v4/perpetualMarkets",
        "http://169.254.169.254/v4/historicalFunding/BTC-USD",
        "/v4/historicalFunding/..%2fBTC-USD",
    ] {
        let err = f.upstreams.orderbookdex.proxy(hostile, &BTreeMap::new()).await.expect_err("refused");
        assert!(matches!(err, ProxyError::Refused), "{hostile}: {err}");
    }
    assert_eq!(f.sim.faults.log().len(), 1);
}

#[tokio::test]
async fn a_rate_limited_indexer_is_retried_and_a_failing_one_is_an_error() {
    let f = fixture(|c| c.vendor_mut(Vendor::Orderbookdex).timeout = Duration::from_millis(500)).await;
    f.sim.faults.push("orderbookdex", Fault::Status { status: 429, retry_after: Some(0) });
    f.upstreams.orderbookdex.markets().await.expect("retried");
    f.clock.advance_ms(61_000);
    for _ in 0..3 {
        f.sim.faults.push("orderbookdex", Fault::Status { status: 500, retry_after: None });
    }
    let err = f.upstreams.orderbookdex.markets().await.expect_err("down");
    assert!(matches!(err, UpstreamError::Status { status: 500, .. }), "{err}");
}
