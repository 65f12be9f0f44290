//! The two derivatives exchanges end to end: the perp exchange's info reads and the actions svc
//! signs with its agent key, the order-book exchange's markets and its read-only proxy, which
//! never lets a request reach anything but the indexer's four public paths.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use svc_simulator::Fault;
use svc_upstream::Vendor;

use crate::support::{NOW_MS, Sample, Setup, TestApp, assert_error, assert_invalid_at, assert_matches_schema};

const INFO: &str = "/api/x402/svc-tools/perpdex/info";
const EXCHANGE: &str = "/api/x402/svc-tools/perpdex/exchange";
const MARKETS: &str = "/api/x402/svc-tools/orderbookdex/markets";
const PROXY: &str = "/api/x402/svc-tools/orderbookdex/proxy";

/// A buy of `sz` ETH well under the mark, so it rests on the book.
fn resting_order(app: &TestApp, sz: &str) -> Value {
    let eth = app.sim.world.perp_market("ETH").expect("eth").clone();
    let price = (app.sim.world.perp_state(&eth).mark * 0.8).floor();
    json!({"coin": "ETH", "is_buy": true, "sz": sz, "limit_px": format!("{price:.0}")})
}

/// Valid calls of the four derivatives routes, for the catalogue walk.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let post = |route: &'static str, uri: &str, body: Value| Sample {
        route,
        method: Method::POST,
        uri: uri.to_owned(),
        body: Some(body.to_string()),
    };
    vec![
        post("infra.perpdex_info", INFO, json!({"body": {"type": "l2Book", "coin": "BTC"}})),
        post(
            "infra.perpdex_exchange",
            EXCHANGE,
            json!({"body": {"type": "order", "orders": [resting_order(app, "0.01")]}}),
        ),
        Sample { route: "infra.orderbookdex_markets", method: Method::POST, uri: MARKETS.to_owned(), body: None },
        post("infra.orderbookdex_proxy", PROXY, json!({"endpoint": "/v4/orderbooks/perpetualMarket/BTC-USD"})),
    ]
}

#[tokio::test]
async fn paid_info_reads_answer_every_allowed_type_on_schema() {
    let app = TestApp::new().await;
    let user = app.sim.world.perp_accounts()[2].address.clone();
    let start = NOW_MS - 3 * 3_600_000;
    let bodies = [
        json!({"type": "meta"}),
        json!({"type": "metaAndAssetCtxs"}),
        json!({"type": "allMids"}),
        json!({"type": "spotMeta"}),
        json!({"type": "candleSnapshot", "req": {"coin": "SOL", "interval": "15m", "startTime": start, "endTime": NOW_MS}}),
        json!({"type": "fundingHistory", "coin": "BTC", "startTime": start}),
        json!({"type": "clearinghouseState", "user": user}),
        json!({"type": "spotClearinghouseState", "user": user}),
        json!({"type": "userFunding", "user": user, "startTime": start}),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let reply = app.pay_post(INFO, &json!({"body": body}), 10 + i as u8).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text());
        let answer = reply.json();
        assert_matches_schema("post", INFO, &answer);
        assert_eq!(answer["type"], body["type"]);
    }
    assert_eq!(app.paid_calls().await, bodies.len());
}

#[tokio::test]
async fn an_account_read_shows_the_simulated_positions() {
    let app = TestApp::new().await;
    let account = app.sim.world.perp_accounts()[0].clone();
    let reply = app.pay_post(INFO, &json!({"body": {"type": "clearinghouseState", "user": account.address}}), 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let positions = reply.json()["data"]["assetPositions"].as_array().expect("positions").clone();
    assert_eq!(positions.len(), account.positions.len());
    let coin = &app.sim.world.perp_markets()[account.positions[0].market].coin;
    assert_eq!(positions[0]["position"]["coin"], coin.as_str());
}

#[tokio::test]
async fn info_types_off_the_allow_list_are_refused_before_payment() {
    let app = TestApp::new().await;
    for body in [
        json!({"body": {"type": "userRole", "user": "0x0000000000000000000000000000000000000001"}}),
        json!({"body": {"type": "exchangeStatus"}}),
        json!({"body": {"type": "l2Book"}}),
        json!({"body": {"type": "clearinghouseState", "user": "not-an-address"}}),
        json!({"body": {"type": "candleSnapshot", "req": {"coin": "BTC", "interval": "7m", "startTime": 0, "endTime": 1}}}),
        json!({"type": "meta"}),
    ] {
        let reply = app.post_json(INFO, &body.to_string()).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
    }
    assert!(app.sim.faults.log().is_empty(), "{:?}", app.sim.faults.log());
}

#[tokio::test]
async fn an_unlisted_coins_book_is_a_404_and_charges_nothing() {
    let app = TestApp::new().await;
    let reply = app.pay_post(INFO, &json!({"body": {"type": "l2Book", "coin": "NOPE"}}), 2).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_paid_order_is_signed_by_svc_and_rests_then_a_paid_cancel_removes_it() {
    let app = TestApp::new().await;
    let order = json!({"body": {"type": "order", "orders": [resting_order(&app, "0.02")]}});
    let placed = app.pay_post(EXCHANGE, &order, 1).await;
    assert_eq!(placed.status, StatusCode::OK, "{}", placed.text());
    let placed = placed.json();
    assert_matches_schema("post", EXCHANGE, &placed);
    assert_eq!(placed["status"], "ok");
    let oid = placed["statuses"][0]["resting"]["oid"].as_u64().expect("resting order id");
    assert_eq!(app.sim.world.perp_ledger().len(), 1);

    let cancel = json!({"body": {"type": "cancel", "cancels": [{"coin": "ETH", "oid": oid}]}});
    let cancelled = app.pay_post(EXCHANGE, &cancel, 2).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.text());
    assert_eq!(cancelled.json()["statuses"][0], "success");
    assert!(app.sim.world.perp_ledger()[0].cancelled);
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn the_exchange_price_is_a_cent_an_order_up_to_five_cents() {
    let app = TestApp::new().await;
    for (count, expected) in [(1, "10000"), (3, "30000"), (12, "50000")] {
        let orders: Vec<Value> = (0..count).map(|_| resting_order(&app, "0.01")).collect();
        let body = json!({"body": {"type": "order", "orders": orders}}).to_string();
        let reply = app.post_json(EXCHANGE, &body).await;
        assert_eq!(reply.status, StatusCode::PAYMENT_REQUIRED, "{}", reply.text());
        assert_eq!(reply.json()["accepts"][0]["amount"], expected, "{count} orders");
    }
}

#[tokio::test]
async fn a_client_signed_blob_is_refused_before_payment() {
    let app = TestApp::new().await;
    let signature = json!({"r": "0x01", "s": "0x02", "v": 27});
    let order = resting_order(&app, "0.01");
    for body in [
        json!({"body": {"type": "order", "orders": [order.clone()]}, "signature": signature}),
        json!({"body": {"type": "order", "orders": [order.clone()], "signature": signature}}),
        json!({"body": {"type": "order", "orders": [order.clone()]}, "nonce": 1}),
        json!({"action": {"type": "order", "orders": [], "grouping": "na"}, "nonce": 1, "signature": signature}),
        json!({"body": {"type": "usdSend", "destination": "0x0000000000000000000000000000000000000001", "amount": "1"}}),
    ] {
        let reply = app.post_json(EXCHANGE, &body.to_string()).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
    }
    assert!(app.sim.faults.log().is_empty());
}

#[tokio::test]
async fn an_order_over_the_notional_limit_is_a_422_before_any_challenge() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.perp_limits.max_order_notional_usd = 20),
        ..Default::default()
    })
    .await;
    // Unpaid: a 422, not a 402 to sign for a call that cannot succeed.
    let body = json!({"body": {"type": "order", "orders": [resting_order(&app, "0.01")]}}).to_string();
    let reply = app.post_json(EXCHANGE, &body).await;
    assert_invalid_at(&reply, &[json!("body"), json!("body"), json!("orders"), json!(0)]);
    assert!(reply.text().contains("20 USD"), "{}", reply.text());
    assert_eq!(app.paid_calls().await, 0);
    assert!(app.sim.faults.log().iter().all(|line| !line.contains("/exchange")));
}

#[tokio::test]
async fn without_an_agent_key_the_exchange_is_a_503_before_any_challenge() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Perpdex).key = None),
        ..Default::default()
    })
    .await;
    let body = json!({"body": {"type": "updateLeverage", "coin": "BTC", "is_cross": true, "leverage": 2}});
    let reply = app.post_json(EXCHANGE, &body.to_string()).await;
    assert_error(&reply, StatusCode::SERVICE_UNAVAILABLE, "not_enabled");
    assert!(reply.text().contains("agent key"), "{}", reply.text());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn an_agent_key_the_exchange_does_not_know_is_a_502_that_never_shows_the_key() {
    const STRANGER: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Perpdex).key = Some(STRANGER.into())),
        ..Default::default()
    })
    .await;
    let reply = app
        .pay_post(
            EXCHANGE,
            &json!({"body": {"type": "updateLeverage", "coin": "BTC", "is_cross": true, "leverage": 2}}),
            5,
        )
        .await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "perpdex");
    assert!(!reply.text().contains(&STRANGER[2..]), "{}", reply.text());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn the_perp_exchange_is_retried_on_429_and_a_500_is_a_502_that_charges_nothing() {
    let app = TestApp::new().await;
    app.sim.faults.push("perpdex", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = app.pay_post(INFO, &json!({"body": {"type": "allMids"}}), 6).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.sim.faults.log().len(), 2);

    for _ in 0..3 {
        app.sim.faults.push("perpdex", Fault::Status { status: 500, retry_after: None });
    }
    let reply = app.pay_post(INFO, &json!({"body": {"type": "meta"}}), 7).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "perpdex");
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn an_action_is_sent_once_even_when_its_answer_is_lost() {
    let app = TestApp::new().await;
    let body = json!({"body": {"type": "order", "orders": [resting_order(&app, "0.01")]}});
    // A first order warms the market metadata, so the fault below meets the action itself.
    assert_eq!(app.pay_post(EXCHANGE, &body, 8).await.status, StatusCode::OK);
    let header = app.payment_for(&Method::POST, EXCHANGE, Some(&body.to_string()), 9).await;
    // The exchange may have acted before failing; sending the action again could place a
    // second order, so the client gets a 502 (nothing charged) and the action went out once.
    let meta_calls = app.sim.faults.log().len();
    app.sim.faults.push("perpdex", Fault::Status { status: 500, retry_after: None });
    let reply =
        app.call_with(&Method::POST, EXCHANGE, Some(&body.to_string()), &[("payment-signature", &header)]).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    let log = app.sim.faults.log();
    let sent = log[meta_calls..].iter().filter(|line| line.contains("/exchange")).count();
    assert_eq!(sent, 1, "one send of the action: {log:?}");
    assert_eq!(app.paid_calls().await, 1, "only the first order was charged");
}

#[tokio::test]
async fn markets_are_normalised_from_the_indexer_and_cached() {
    let app = TestApp::new().await;
    let first = app.pay(&Method::POST, MARKETS, None, 1).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let body = first.json();
    assert_matches_schema("post", MARKETS, &body);
    let markets = body["markets"].as_array().expect("markets");
    assert_eq!(markets.len(), app.sim.world.perp_markets().len());
    let btc = markets.iter().find(|m| m["ticker"] == "BTC-USD").expect("btc");
    let oracle = app.sim.world.perp_state(app.sim.world.perp_market("BTC").expect("btc")).oracle;
    assert!((btc["oracle_price"].as_f64().expect("price") / oracle - 1.0).abs() < 1e-4);
    let again = app.pay(&Method::POST, MARKETS, Some("{}"), 2).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text());
    assert_eq!(app.sim.faults.log(), vec!["GET /orderbookdex/v4/perpetualMarkets".to_owned()]);
}

#[tokio::test]
async fn each_public_indexer_path_is_proxied_on_schema() {
    let app = TestApp::new().await;
    let bodies = [
        json!({"endpoint": "/v4/orderbooks/perpetualMarket/ETH-USD"}),
        json!({"endpoint": "/v4/candles/perpetualMarkets/BTC-USD", "params": {"resolution": "15MINS", "limit": 10}}),
        json!({"endpoint": "/v4/historicalFunding/SOL-USD", "params": {"limit": 24}}),
        json!({"endpoint": "/v4/trades/perpetualMarket/DOGE-USD", "method": "GET"}),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let reply = app.pay_post(PROXY, body, 20 + i as u8).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text());
        let answer = reply.json();
        assert_matches_schema("post", PROXY, &answer);
        assert_eq!(answer["status"], 200);
    }
    let log = app.sim.faults.log();
    assert_eq!(log.len(), 4);
    assert!(log.iter().all(|line| line.starts_with("GET /orderbookdex/v4/")), "{log:?}");
    assert!(
        log.contains(&"GET /orderbookdex/v4/candles/perpetualMarkets/BTC-USD?limit=10&resolution=15MINS".to_owned())
    );
}

#[tokio::test]
async fn an_unknown_ticker_is_a_404_and_charges_nothing() {
    let app = TestApp::new().await;
    let reply = app.pay_post(PROXY, &json!({"endpoint": "/v4/trades/perpetualMarket/NOPE-USD"}), 3).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 0);
}

/// Endpoints that try to leave the indexer's four public paths: other hosts and schemes,
/// traversal in every spelling, encoded separators, header injection, internal addresses,
/// look-alike characters, whitespace and query tricks.
const HOSTILE_ENDPOINTS: [&str; 40] = [
    "http://evil.example/v4/orderbooks/perpetualMarket/BTC-USD",
    "https://evil.example/v4/orderbooks/perpetualMarket/BTC-USD",
    "ftp://evil.example/v4/orderbooks/perpetualMarket/BTC-USD",
    "file:///etc/passwd",
    "file:/v4/orderbooks/perpetualMarket/BTC-USD",
    "//evil.example/v4/orderbooks/perpetualMarket/BTC-USD",
    "///evil.example/v4/historicalFunding/BTC-USD",
    "@evil.example/v4/orderbooks/perpetualMarket/BTC-USD",
    "/v4/orderbooks/perpetualMarket/BTC-USD@evil.example",
    "\\\\evil.example\\v4\\orderbooks",
    "/v4\\..\\..\\admin",
    "/v4/../admin",
    "/v4/orderbooks/perpetualMarket/../../../admin",
    "/v4/orderbooks/perpetualMarket/..",
    "/v4/%2e%2e/%2e%2e/admin",
    "/v4/orderbooks/perpetualMarket/%2e%2e",
    "/v4/orderbooks%2FperpetualMarket%2FBTC-USD",
    "/v4/orderbooks/perpetualMarket/BTC-USD%2F..%2F..%2Fadmin",
    "/v4/orderbooks/perpetualMarket/BTC-USD%0d%0aHost:%20evil.example",
    "/v4/orderbooks/perpetualMarket/BTC-USD\r\nHost: evil.example",
    "http://127.0.0.1/v4/orderbooks/perpetualMarket/BTC-USD",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/v4/trades/perpetualMarket/BTC-USD",
    "/v4/orderbooks/perpetualMarket/127.0.0.1",
    "/v4/historicalFunding/169.254.169.254",
    "http://localhost:8402/admin",
    "/v4/orderbooks/perpetualMarket/BTC-USD?@evil.example",
    "/v4/x?@evil",
    "/v4/trades/perpetualMarket/BTC-USD#@evil.example",
    "/v4/trades/perpetualMarket/BTC-USD?limit=1&url=http://evil.example",
    "/v4/orderbooks/perpetualMarket/BTC\u{2024}USD",
    "/v4\u{ff0e}\u{ff0e}/admin",
    "/v4/orderbooks/perpetualMarket/BTC-USD\t",
    " /v4/orderbooks/perpetualMarket/BTC-USD",
    "/v4/orderbooks/perpetualMarket/BTC USD",
    "/v4/perpetualMarkets",
    "/v4/addresses/dydx1abcdef/subaccountNumber/0",
    "/v4/orderbooks/perpetualMarket/BTC-USD/",
    "v4/orderbooks/perpetualMarket/BTC-USD",
    "/V4/orderbooks/perpetualMarket/BTC-USD",
];

#[tokio::test]
async fn hostile_endpoints_are_refused_and_no_request_leaves() {
    let app = TestApp::new().await;
    for endpoint in HOSTILE_ENDPOINTS {
        let reply = app.post_json(PROXY, &json!({"endpoint": endpoint}).to_string()).await;
        assert_invalid_at(&reply, &[json!("body"), json!("endpoint")]);
    }
    for body in [
        json!({"endpoint": "/v4/orderbooks/perpetualMarket/BTC-USD", "method": "POST"}),
        json!({"endpoint": "/v4/orderbooks/perpetualMarket/BTC-USD", "method": "DELETE"}),
        json!({"endpoint": "/v4/orderbooks/perpetualMarket/BTC-USD", "params": {"host": "evil.example"}}),
        json!({"endpoint": "/v4/trades/perpetualMarket/BTC-USD", "params": {"limit": "1&x=y"}}),
        json!({"endpoint": "/v4/candles/perpetualMarkets/BTC-USD", "params": {"resolution": "1HOUR\r\nX: y"}}),
        json!({"endpoint": "/v4/candles/perpetualMarkets/BTC-USD"}),
    ] {
        let reply = app.post_json(PROXY, &body.to_string()).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", reply.text());
    }
    assert!(app.sim.faults.log().is_empty(), "requests left: {:?}", app.sim.faults.log());
}

#[tokio::test]
async fn the_indexer_is_retried_on_429_and_a_500_is_a_502_that_charges_nothing() {
    let app = TestApp::new().await;
    app.sim.faults.push("orderbookdex", Fault::Status { status: 429, retry_after: Some(0) });
    let body = json!({"endpoint": "/v4/historicalFunding/BTC-USD"});
    let reply = app.pay_post(PROXY, &body, 8).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.sim.faults.log().len(), 2);

    let uri = MARKETS;
    let header = app.payment_for(&Method::POST, uri, None, 9).await;
    for _ in 0..3 {
        app.sim.faults.push("orderbookdex", Fault::Status { status: 500, retry_after: None });
    }
    let failed =
        app.send(Request::post(uri).header("payment-signature", &header).body(Body::empty()).expect("request")).await;
    assert_error(&failed, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(failed.json()["vendor"], "orderbookdex");
    assert_eq!(app.paid_calls().await, 1);
}
