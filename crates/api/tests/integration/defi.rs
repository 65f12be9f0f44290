//! Swap, DeFi, price and shield routes end to end against the simulated market: paid calls
//! answer schema-valid data computed from the world; vendor failures charge nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use svc_simulator::Fault;
use svc_upstream::Vendor;

use crate::support::{Sample, Setup, TestApp, assert_error, assert_matches_schema};

const TOOLS: &str = "/api/x402/svc-tools";
const SWAP: &str = "/api/x402/svc-tools/swap-quote";
const SOL: &str = "So11111111111111111111111111111111111111112";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

fn sample(route: &'static str, path: &str, body: Value) -> Sample {
    Sample { route, method: Method::POST, uri: format!("{TOOLS}{path}"), body: Some(body.to_string()) }
}

const BASE_USDC: &str = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";
const BASE_WETH: &str = "0x4200000000000000000000000000000000000006";
const WALLET: &str = "0x209693bc6afc0c5328ba36faf03c514ef312287c";

/// Valid calls of every route of this family, for the catalogue walk.
pub(crate) fn samples(_app: &TestApp) -> Vec<Sample> {
    vec![
        sample(
            "infra.swap_quote",
            "/swap-quote",
            json!({"input_mint": SOL, "output_mint": USDC, "amount": 1_000_000_000u64}),
        ),
        sample(
            "infra.evm_swap_quote",
            "/evm/swap-quote",
            json!({"token_in": "eth", "token_out": BASE_USDC, "amount": "0.25", "from_address": WALLET}),
        ),
        sample("infra.evm_token_price", "/evm/token-price", json!({"token_address": BASE_WETH})),
        sample("infra.defi_discover", "/defi/discover", json!({"network": "base", "protocols": ["aave-v3"]})),
        sample("infra.defi_discover", "/defi/discover", json!({"network": "solana", "page_size": 5})),
        sample("infra.defi_nontokenized", "/defi/nontokenized", json!({})),
        sample(
            "infra.defi_quote",
            "/defi/quote",
            json!({"protocol": "aave-v3", "action": "deposit", "amount": "100", "token": BASE_USDC, "from_address": WALLET}),
        ),
        sample(
            "infra.shield_simulate",
            "/shield/simulate",
            json!({"tx_data": {"to": BASE_USDC, "data": erc20_call("a9059cbb", WALLET, "f4240")}, "from_address": WALLET}),
        ),
        sample("infra.shield_validate", "/shield/validate", json!({"tx_data": {"to": BASE_WETH, "value": "0x0"}})),
    ]
}

fn quote_of<'a>(body: &'a Value, aggregator: &str) -> &'a Value {
    body["quotes"].as_array().and_then(|q| q.iter().find(|q| q["aggregator"] == aggregator)).expect("quote listed")
}

#[tokio::test]
async fn a_swap_quote_asks_both_aggregators_and_returns_the_preferred_one() {
    let app = TestApp::new().await;
    let body = json!({"input_mint": SOL, "output_mint": JUP, "amount": 2_000_000_000u64, "slippage_bps": 100});
    let reply = app.pay_post(SWAP, &body, 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", SWAP, &answer);
    assert_eq!(answer["aggregator"], "jupiter");
    assert_eq!(answer["in_amount"], "2000000000");
    assert_eq!(answer["slippage_bps"], 100);
    for aggregator in ["jupiter", "okx"] {
        assert_eq!(quote_of(&answer, aggregator)["status"], "ok", "{answer}");
    }
    assert_eq!(quote_of(&answer, "jupiter")["out_amount"], answer["out_amount"]);
    let out: u128 = answer["out_amount"].as_str().and_then(|a| a.parse().ok()).expect("amount");
    let floor: u128 = answer["other_amount_threshold"].as_str().and_then(|a| a.parse().ok()).expect("threshold");
    assert_eq!(floor, out * 9_900 / 10_000);
    // 2 SOL at the world's prices, less fees and impact, in JUP's 6 decimals.
    let world = &app.sim.world;
    let (sol, jup) = (world.sol_token(SOL).expect("sol"), world.sol_token(JUP).expect("jup"));
    let fair = 2.0 * world.sol_token_usd(sol) / world.sol_token_usd(jup) * 1e6;
    assert!((out as f64) < fair && (out as f64) > fair * 0.99, "{out} vs {fair}");
    let log = app.sim.faults.log();
    assert!(log.iter().any(|l| l.starts_with("GET /jupiter/swap/v1/quote?")), "{log:?}");
    assert!(log.iter().any(|l| l.starts_with("GET /okx/api/v6/dex/aggregator/quote?")), "{log:?}");

    let okx = json!({"input_mint": SOL, "output_mint": JUP, "amount": 2_000_000_000u64, "preferred_aggregator": "okx"});
    let reply = app.pay_post(SWAP, &okx, 2).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "okx");
    assert_eq!(reply.json()["route"].as_array().map(Vec::len), Some(1));
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn a_failing_preferred_aggregator_falls_back_to_the_other() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("jupiter", Fault::Status { status: 503, retry_after: None });
    }
    let body = json!({"input_mint": USDC, "output_mint": SOL, "amount": 250_000_000u64});
    let reply = app.pay_post(SWAP, &body, 3).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["aggregator"], "okx");
    assert_eq!(quote_of(&answer, "jupiter")["status"], "error");
    assert_eq!(quote_of(&answer, "jupiter")["out_amount"], Value::Null);
}

#[tokio::test]
async fn a_slow_aggregator_is_reported_as_timed_out() {
    let app = TestApp::new().await;
    app.sim.faults.push("okx", Fault::Delay(std::time::Duration::from_millis(2_500)));
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 5_000_000u64, "preferred_aggregator": "okx"});
    let reply = app.pay_post(SWAP, &body, 4).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["aggregator"], "jupiter");
    assert_eq!(quote_of(&answer, "okx")["status"], "timeout");
}

#[tokio::test]
async fn a_bad_signing_key_is_refused_by_the_vendor_and_never_shown() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| {
            c.vendor_mut(Vendor::Okx).key = Some("simulated-key:wrong-secret:simulated-passphrase".into())
        }),
        ..Default::default()
    })
    .await;
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 7_000_000u64, "preferred_aggregator": "okx"});
    let reply = app.pay_post(SWAP, &body, 5).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "jupiter");
    assert_eq!(quote_of(&reply.json(), "okx")["status"], "error");
    assert!(!reply.text().contains("wrong-secret"));

    // With the other aggregator down too, the call fails, names the family, charges nothing.
    for _ in 0..3 {
        app.sim.faults.push("jupiter", Fault::Status { status: 500, retry_after: None });
    }
    let again = json!({"input_mint": SOL, "output_mint": USDC, "amount": 7_000_001u64, "preferred_aggregator": "okx"});
    let failed = app.pay_post(SWAP, &again, 6).await;
    assert_error(&failed, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(failed.json()["vendor"], "okx");
    assert!(!failed.text().contains("wrong-secret"));
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_rate_limited_aggregator_is_retried_and_an_unknown_mint_is_a_free_404() {
    let app = TestApp::new().await;
    app.sim.faults.push("jupiter", Fault::Status { status: 429, retry_after: Some(0) });
    let body = json!({"input_mint": SOL, "output_mint": USDC, "amount": 9_000_000u64});
    let reply = app.pay_post(SWAP, &body, 7).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["aggregator"], "jupiter");
    let jupiter_calls = app.sim.faults.log().iter().filter(|l| l.contains("/jupiter/")).count();
    assert_eq!(jupiter_calls, 2);

    let unknown = bs58::encode([9u8; 32]).into_string();
    let body = json!({"input_mint": unknown, "output_mint": USDC, "amount": 1_000u64});
    let reply = app.pay_post(SWAP, &body, 8).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 1);
}

fn atomic(value: &Value) -> u128 {
    value.as_str().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("not an atomic amount: {value}"))
}

#[tokio::test]
async fn an_evm_swap_quote_converts_the_human_amount_exactly_and_builds_a_tx_only_for_a_signer() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/evm/swap-quote");
    let body = json!({"token_in": "eth", "token_out": BASE_USDC, "amount": "1.5", "slippage": "30"});
    let reply = app.pay_post(&uri, &body, 20).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/evm/swap-quote", &answer);
    assert_eq!(answer["network"], "base");
    assert_eq!(answer["token_in"], "eth");
    assert_eq!(answer["amount_in"], "1500000000000000000");
    assert_eq!(answer["tx"], Value::Null, "no signer, no transaction");
    let world = &app.sim.world;
    let eth = world.evm_token(8453, svc_simulator::world::NATIVE_SENTINEL).expect("eth");
    let fair = 1.5 * world.evm_token_usd(eth) * 1e6;
    let out = atomic(&answer["amount_out"]) as f64;
    assert!(out < fair && out > fair * 0.99, "{out} vs {fair}");
    assert_eq!(atomic(&answer["min_amount_out"]), atomic(&answer["amount_out"]) * 9_970 / 10_000);
    let log = app.sim.faults.log();
    let asked = log.iter().find(|l| l.contains("/shortcuts/route?")).expect("route asked");
    assert!(
        asked.contains("tokenIn=0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee")
            && asked.contains("amountIn=1500000000000000000"),
        "{asked}"
    );

    let signed = json!({"network": "base", "token_in": BASE_USDC, "token_out": "eth", "amount": "2500.5", "from_address": WALLET});
    let reply = app.pay_post(&uri, &signed, 21).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["amount_in"], "2500500000");
    assert_eq!(answer["tx"]["from"], WALLET);
    assert_eq!(answer["tx"]["value"], "0");
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn an_amount_finer_than_the_tokens_decimals_is_a_free_422_and_an_unknown_token_a_free_404() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/evm/swap-quote");
    let body = json!({"token_in": BASE_USDC, "token_out": "eth", "amount": "1.0000001"});
    let reply = app.pay_post(&uri, &body, 22).await;
    crate::support::assert_invalid_at(&reply, &[json!("body"), json!("amount")]);
    let price = format!("{TOOLS}/evm/token-price");
    let unknown = json!({"token_address": "0x1111111111111111111111111111111111111111"});
    let reply = app.pay_post(&price, &unknown, 23).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_token_price_is_the_worlds_price_now() {
    let app = TestApp::new().await;
    let reply = app
        .pay_post(
            &format!("{TOOLS}/evm/token-price"),
            &json!({"network": "ethereum", "token_address": "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"}),
            24,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/evm/token-price", &answer);
    let weth = app.sim.world.evm_token(1, "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2").expect("weth");
    assert_eq!(answer["symbol"], "WETH");
    assert_eq!(answer["decimals"], 18);
    assert!((answer["price_usd"].as_f64().expect("price") - app.sim.world.evm_token_usd(weth)).abs() < 1e-9);
    assert_eq!(answer["timestamp"], "2026-11-22T10:00:00Z");
}

#[tokio::test]
async fn evm_discovery_merges_protocols_by_apy_and_solana_discovery_filters_a_cached_snapshot() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/defi/discover");
    let body = json!({"network": "base", "protocols": ["aave-v3", "moonwell"], "min_apy": 1.0, "page_size": 4});
    let reply = app.pay_post(&uri, &body, 25).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/defi/discover", &answer);
    let pools = answer["pools"].as_array().expect("pools");
    assert!(!pools.is_empty() && pools.len() <= 4);
    let apys: Vec<f64> = pools.iter().map(|p| p["apy"].as_f64().expect("apy")).collect();
    assert!(apys.windows(2).all(|w| w[0] >= w[1]), "{apys:?}");
    assert!(apys.iter().all(|a| *a >= 1.0));
    assert!(pools.iter().all(|p| p["protocol"] == "aave-v3" || p["protocol"] == "moonwell"));
    let expected = app.sim.world.defi_positions().iter().filter(|p| {
        p.chain_id == 8453
            && (p.protocol == "aave-v3" || p.protocol == "moonwell")
            && app.sim.world.position_yields(p).apy() >= 1.0
    });
    assert_eq!(answer["total"], expected.count());

    let solana = json!({"network": "solana", "protocols": ["kamino-lend", "orca-dex"]});
    let first = app.pay_post(&uri, &solana, 26).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let pools = first.json()["pools"].as_array().cloned().expect("pools");
    assert_eq!(pools.len(), 4);
    assert!(pools.iter().all(|p| p["chain"] == "solana"));
    let everything = json!({"network": "solana", "page_size": 100});
    let second = app.pay_post(&uri, &everything, 27).await;
    assert_eq!(second.json()["total"], 10);
    let fetches = app.sim.faults.log().iter().filter(|l| l.starts_with("GET /yields/pools")).count();
    assert_eq!(fetches, 1, "one snapshot serves both calls");
}

#[tokio::test]
async fn nontokenized_positions_are_listed_per_protocol() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/defi/nontokenized");
    let reply = app.pay_post(&uri, &json!({"protocols": ["uniswap-v3"]}), 29).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/defi/nontokenized", &answer);
    let positions = answer["positions"].as_array().expect("positions");
    assert_eq!(positions.len(), 4);
    assert!(positions.iter().all(|p| p["protocol"] == "uniswap-v3" && p["chain_id"] == 8453));
    assert!(positions.iter().all(|p| p["underlying_tokens"].as_array().map(Vec::len) == Some(2)));
}

#[tokio::test]
async fn a_defi_deposit_quote_finds_the_market_and_asks_for_the_approval() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/defi/quote");
    let body = json!({"protocol": "aave-v3", "action": "deposit", "amount": "100.25", "token": BASE_USDC, "from_address": WALLET});
    let reply = app.pay_post(&uri, &body, 30).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", "/api/x402/svc-tools/defi/quote", &answer);
    assert_eq!(answer["amount_in"], "100250000");
    assert_eq!(answer["tx"]["from"], WALLET);
    assert_eq!(answer["approvals"][0]["token"], BASE_USDC);
    assert_eq!(answer["approvals"][0]["amount"], "100250000");
    assert_eq!(answer["approvals"][0]["spender"], answer["tx"]["to"]);
    let market = app
        .sim
        .world
        .defi_positions()
        .iter()
        .find(|p| p.chain_id == 8453 && p.protocol == "aave-v3" && p.underlying.address == BASE_USDC)
        .expect("the world has the market");
    assert_eq!(answer["amounts_out"][&market.address], (100_250_000u128 * 9_990 / 10_000).to_string());

    let quote_only = json!({"protocol": "aave-v3", "action": "withdraw", "amount": "1", "token": BASE_USDC});
    let reply = app.pay_post(&uri, &quote_only, 31).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["tx"], Value::Null);
    assert_eq!(reply.json()["approvals"], json!([]));

    let nowhere = json!({"protocol": "no-such-protocol", "action": "deposit", "amount": "1"});
    let reply = app.pay_post(&uri, &nowhere, 32).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn a_bad_router_key_is_a_502_naming_the_family_and_a_rate_limit_is_retried() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Enso).key = Some("not-the-key".into())),
        ..Default::default()
    })
    .await;
    let body = json!({"token_address": BASE_USDC});
    let reply = app.pay_post(&format!("{TOOLS}/evm/token-price"), &body, 33).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "evm-router");
    assert!(!reply.text().contains("not-the-key"));
    assert_eq!(app.paid_calls().await, 0);

    let app = TestApp::new().await;
    app.sim.faults.push("evm-router", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = app.pay_post(&format!("{TOOLS}/defi/nontokenized"), &json!({}), 34).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.sim.faults.log().len(), 2);
    for _ in 0..3 {
        app.sim.faults.push("evm-router", Fault::Status { status: 500, retry_after: None });
    }
    let reply = app.pay_post(&format!("{TOOLS}/defi/nontokenized"), &json!({"network": "ethereum"}), 35).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_failing_yields_index_is_a_free_502_and_a_rate_limited_one_is_retried() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("yields", Fault::Status { status: 502, retry_after: None });
    }
    let reply = app.pay_post(&format!("{TOOLS}/defi/discover"), &json!({"network": "solana"}), 36).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "yields");
    assert_eq!(app.paid_calls().await, 0);

    app.sim.faults.push("yields", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = app.pay_post(&format!("{TOOLS}/defi/discover"), &json!({"network": "solana"}), 37).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.paid_calls().await, 1);
}

/// ERC-20 calldata: `selector(address, amount)`.
fn erc20_call(selector: &str, address: &str, amount_hex: &str) -> String {
    format!("0x{selector}{:0>64}{:0>64}", address.trim_start_matches("0x"), amount_hex)
}

const SIMULATE: &str = "/api/x402/svc-tools/shield/simulate";
const VALIDATE: &str = "/api/x402/svc-tools/shield/validate";

#[tokio::test]
async fn a_plain_token_transfer_is_benign_and_its_simulation_shows_the_tokens_leaving() {
    let app = TestApp::new().await;
    // 1000.5 USDC (6 decimals) to an ordinary wallet.
    let data = erc20_call("a9059cbb", "0x1111111111111111111111111111111111111111", &format!("{:x}", 1_000_500_000u64));
    let body = json!({"tx_data": {"to": BASE_USDC, "data": data}, "from_address": WALLET});
    let reply = app.pay_post(SIMULATE, &body, 40).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", SIMULATE, &answer);
    assert_eq!(answer["result_type"], "Benign");
    assert_eq!(answer["features"][0]["feature_id"], "VERIFIED_CONTRACT");
    let diff = &answer["simulation"]["assets_diffs"][0];
    assert_eq!(
        (diff["symbol"].as_str(), diff["amount_out"].as_str(), diff["amount_in"].as_str()),
        (Some("USDC"), Some("1000.5"), Some("0"))
    );
    assert!((diff["usd"].as_f64().expect("usd") + 1000.5).abs() < 1e-3, "{diff}");
    assert!((answer["simulation"]["total_usd_diff"]["out"].as_f64().expect("out") - 1000.5).abs() < 1e-3);
    let sent = app.sim.faults.log().into_iter().find(|l| l.contains("/shield/")).expect("scanned");
    assert_eq!(sent, "POST /shield/v0/evm/transaction/scan");
}

#[tokio::test]
async fn the_planted_drainer_is_flagged_malicious_however_it_is_reached() {
    let app = TestApp::new().await;
    let drainer = app.sim.world.drainer_address().to_owned();
    let approval = erc20_call("095ea7b3", &drainer, &"f".repeat(64));
    let body = json!({"tx_data": {"to": BASE_USDC, "data": approval, "from": WALLET}});
    let reply = app.pay_post(VALIDATE, &body, 41).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_matches_schema("post", VALIDATE, &answer);
    assert_eq!(answer["result_type"], "Malicious");
    assert_eq!(answer["classification"], "approval_farming");
    assert_eq!(answer["features"][0]["address"], drainer);
    assert_eq!(answer["simulation"], Value::Null, "validation only");

    // Sending 0.5 ETH straight to it (value in decimal wei): malicious, and the ETH leaves.
    let body = json!({"network": "ethereum", "tx_data": {"to": drainer, "value": "500000000000000000"}, "from_address": WALLET});
    let reply = app.pay_post(SIMULATE, &body, 42).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["result_type"], "Malicious");
    assert_eq!(answer["classification"], "known_malicious");
    let diff = &answer["simulation"]["assets_diffs"][0];
    assert_eq!((diff["symbol"].as_str(), diff["amount_out"].as_str()), (Some("ETH"), Some("0.5")));
    assert_eq!(diff["address"], Value::Null);

    // An unlimited allowance to anyone else is only a warning.
    let other = erc20_call("095ea7b3", "0x2222222222222222222222222222222222222222", &"f".repeat(64));
    let reply = app.pay_post(VALIDATE, &json!({"tx_data": {"to": BASE_USDC, "data": other}}), 43).await;
    assert_eq!(reply.json()["result_type"], "Warning");
    assert_eq!(app.paid_calls().await, 3);
}

#[tokio::test]
async fn a_bad_scanner_key_or_a_failing_scanner_is_a_502_that_charges_nothing() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Blockaid).key = Some("wrong-scanner-key".into())),
        ..Default::default()
    })
    .await;
    let body = json!({"tx_data": {"to": BASE_USDC}});
    let reply = app.pay_post(VALIDATE, &body, 44).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "shield");
    assert!(!reply.text().contains("wrong-scanner-key"));

    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("shield", Fault::Status { status: 500, retry_after: None });
    }
    let reply = app.pay_post(VALIDATE, &body, 45).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(app.paid_calls().await, 0);
    app.sim.faults.push("shield", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = app.pay_post(VALIDATE, &body, 46).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn native_ether_deposits_travel_as_value_and_borrows_pay_out_the_token() {
    let app = TestApp::new().await;
    let uri = format!("{TOOLS}/defi/quote");
    let world = &app.sim.world;
    let weth_market = world
        .defi_positions()
        .iter()
        .find(|p| p.chain_id == 8453 && p.underlying.symbol == "WETH")
        .expect("the world has a wrapped-ether market")
        .clone();
    let body = json!({"protocol": weth_market.protocol, "action": "deposit", "amount": "0.75", "token": "eth", "from_address": WALLET});
    let reply = app.pay_post(&uri, &body, 50).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["amount_in"], "750000000000000000");
    assert_eq!(answer["tx"]["value"], "750000000000000000");
    assert_eq!(answer["approvals"], json!([]), "ether needs no allowance");

    let usdc_market = world
        .defi_positions()
        .iter()
        .find(|p| p.chain_id == 8453 && p.underlying.address == BASE_USDC)
        .expect("the world has a USDC market")
        .clone();
    let body = json!({"protocol": usdc_market.protocol, "action": "borrow", "amount": "50", "token": BASE_USDC, "from_address": WALLET});
    let reply = app.pay_post(&uri, &body, 51).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["amounts_out"][BASE_USDC], "50000000");
    assert_eq!(answer["approvals"], json!([]));
    let bundle = app.sim.faults.log().into_iter().rev().find(|l| l.contains("/shortcuts/bundle?")).expect("bundled");
    assert!(bundle.contains("fromAddress=0x209693bc6afc0c5328ba36faf03c514ef312287c"), "{bundle}");
}

#[tokio::test]
async fn evm_only_filters_on_solana_discovery_are_a_free_422() {
    let app = TestApp::new().await;
    let reply =
        app.post_json(&format!("{TOOLS}/defi/discover"), &json!({"network": "solana", "min_apy": 5}).to_string()).await;
    crate::support::assert_invalid_at(&reply, &[json!("body"), json!("min_apy")]);
    assert!(app.sim.faults.log().is_empty());
}

/// The largest valid input is paid for like any other: the challenge echoes no more of it than a
/// small bound, so the payment that copies the challenge's extensions stays a payment svc
/// takes (before, 11 KB of calldata made the payment too large and the client looped on 402).
#[tokio::test]
async fn a_simulation_with_large_calldata_is_challenged_briefly_and_paid() {
    let app = TestApp::new().await;
    // The most calldata the schema allows (64 KiB), which fits the default body limit.
    let data = format!("0xa9059cbb{}", "00".repeat(64 * 1024 - 4));
    let body = json!({"tx_data": {"to": BASE_USDC, "data": data}, "from_address": WALLET});
    let one_more = json!({"tx_data": {"to": BASE_USDC, "data": format!("{data}00")}, "from_address": WALLET});
    let refused = app.call(&Method::POST, SIMULATE, Some(&one_more.to_string())).await;
    crate::support::assert_invalid_at(&refused, &[json!("body"), json!("tx_data"), json!("data")]);
    let challenge = app.call(&Method::POST, SIMULATE, Some(&body.to_string())).await;
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED, "{}", challenge.text());
    let header = challenge.headers.get("payment-required").expect("challenge header");
    assert!(header.len() < 16 * 1024, "a {} byte challenge header", header.len());
    let paid = app.pay_post(SIMULATE, &body, 61).await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.text());
    assert_eq!(app.paid_calls().await, 1);
}
