//! The MCP server at `/mcp`: every route a tool, paid over x402's tool-result binding or from
//! credits, through the same path as the route's HTTP call.

use axum::http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use svc_accounts::Scope;

use crate::support::{Sample, TestApp, assert_matches_schema, mcp_result, payment_payload};

/// A paid tool with no arguments: Top Picks Lite.
const LITE: &str = "alpha_top_picks_lite";
const LITE_PATH: &str = "/api/x402/alpha/top-picks-lite";
/// A paid tool with a path parameter.
const COIN: &str = "infra_launchpad_coin";

fn mint(app: &TestApp, index: usize) -> String {
    app.sim.world.coins()[index].mint.clone()
}

fn structured(result: &Value) -> &Value {
    &result["structuredContent"]
}

/// The text of a result's first content block, parsed.
fn text_json(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {result}"));
    serde_json::from_str(text).expect("JSON text")
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// The tool arguments of a sampled HTTP call: its path parameters, query and body fields.
fn arguments_of(sample: &Sample) -> Value {
    let route = svc_catalogue::catalogue().get(sample.route).expect("route");
    let (path, query) = sample.uri.split_once('?').unwrap_or((&sample.uri, ""));
    let mut arguments = Map::new();
    for (template, actual) in route.path.split('/').zip(path.split('/')) {
        if let Some(name) = template.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            arguments.insert(name.to_owned(), Value::from(actual));
        }
    }
    // An MCP client sends what the input schema says: numbers as numbers, lists as arrays.
    let schema = svc_catalogue::tools::tool_facts(route).input_schema;
    for (name, value) in serde_urlencoded::from_str::<Vec<(String, String)>>(query).expect("query") {
        let typed = typed(&schema["properties"][&name], &value);
        arguments.insert(name, typed);
    }
    if let Some(Value::Object(body)) = sample.body.as_deref().map(|b| serde_json::from_str(b).expect("body")) {
        arguments.extend(body);
    }
    Value::Object(arguments)
}

/// A query string's value as the JSON type `schema` names.
fn typed(schema: &Value, value: &str) -> Value {
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    match kinds.into_iter().find(|k| *k != "null") {
        Some("integer" | "number" | "boolean") => serde_json::from_str(value).unwrap_or_else(|_| Value::from(value)),
        Some("array") => Value::Array(value.split(',').map(|item| typed(&schema["items"], item)).collect()),
        _ => Value::from(value),
    }
}

#[tokio::test]
async fn every_route_is_one_tool_and_the_compact_server_lists_three() {
    let app = TestApp::new().await;
    let tools = app.mcp("tools/list", json!({})).await["tools"].as_array().expect("tools").clone();
    let catalogue = svc_catalogue::catalogue();
    assert_eq!(tools.len(), catalogue.routes().len());
    for (tool, route) in tools.iter().zip(catalogue.routes()) {
        assert_eq!(tool["name"], svc_catalogue::tools::tool_name(route));
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", route.id);
        assert!(tool["description"].as_str().expect("description").starts_with(route.description));
        if route.moves_funds {
            assert_eq!(tool["annotations"]["destructiveHint"], true, "{}", route.id);
        }
    }
    let lite = tools.iter().find(|t| t["name"] == LITE).expect("lite");
    assert!(lite["description"].as_str().expect("text").contains("USDC per call"), "{lite}");
    assert_eq!(lite["annotations"]["readOnlyHint"], true);

    let compact = mcp_result(&app.mcp_with("/mcp/compact", "tools/list", json!({}), &[]).await);
    let names: Vec<&str> =
        compact["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["search_tools", "describe_tool", "call_tool"]);
}

#[tokio::test]
async fn a_free_tool_answers_with_its_json_as_structured_content_and_text() {
    let app = TestApp::new().await;
    let result = app.mcp_call("public_tokens_stats", json!({}), None, &[]).await;
    assert!(!is_error(&result), "{result}");
    assert!(structured(&result)["tokens"].is_array(), "{result}");
    assert_eq!(&text_json(&result), structured(&result));
}

#[tokio::test]
async fn an_unpaid_call_answers_the_http_challenge_as_an_error_result_in_three_places() {
    let app = TestApp::new().await;
    let result = app.mcp_call(LITE, json!({}), None, &[]).await;
    assert!(is_error(&result), "{result}");
    let required = structured(&result);
    assert_eq!(required["x402Version"], 2);
    assert_eq!(&text_json(&result), required, "content[0].text is the same JSON");
    assert_eq!(&result["_meta"]["x402/error"], required, "and so is _meta[\"x402/error\"]");
    let http = app.get(LITE_PATH).await;
    assert_eq!(http.status, StatusCode::PAYMENT_REQUIRED);
    assert_eq!(required["accepts"], http.json()["accepts"], "the same accepts as the HTTP route");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_paid_call_answers_with_the_settlement_in_meta_and_charges_once() {
    let app = TestApp::new().await;
    let required = structured(&app.mcp_call(LITE, json!({}), None, &[]).await).clone();
    let payment = payment_payload(&required, 1);
    let paid = app.mcp_call(LITE, json!({}), Some(json!({"x402/payment": payment})), &[]).await;
    assert!(!is_error(&paid), "{paid}");
    assert!(structured(&paid)["picks"].is_object(), "{paid}");
    let receipt = &paid["_meta"]["x402/payment-response"];
    assert_eq!(receipt["success"], true, "{paid}");
    assert_eq!(receipt["network"], "eip155:8453");
    assert_eq!(app.paid_calls().await, 1);

    // The same payment again is a replay: refused with a fresh challenge, nothing more charged.
    let again = app.mcp_call(LITE, json!({}), Some(json!({"x402/payment": payment})), &[]).await;
    assert!(is_error(&again), "{again}");
    assert_eq!(structured(&again)["x402Version"], 2);
    assert!(structured(&again).get("picks").is_none());
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_base64_payment_as_older_clients_send_it_pays_too() {
    let app = TestApp::new().await;
    let required = structured(&app.mcp_call(LITE, json!({}), None, &[]).await).clone();
    let payment = payment_payload(&required, 2);
    let encoded = svc_x402::encode_header(&payment);
    let paid = app.mcp_call(LITE, json!({}), Some(json!({"x402/payment": encoded})), &[]).await;
    assert!(!is_error(&paid), "{paid}");
    assert_eq!(paid["_meta"]["x402/payment-response"]["success"], true);
}

#[tokio::test]
async fn a_payment_for_one_tool_buys_neither_another_tool_nor_other_arguments() {
    let app = TestApp::new().await;
    let (one, two) = (mint(&app, 0), mint(&app, 1));
    let required = structured(&app.mcp_call(COIN, json!({"mint": one}), None, &[]).await).clone();
    let payment = json!({"x402/payment": payment_payload(&required, 3)});
    for (tool, arguments) in [(COIN, json!({"mint": two})), (LITE, json!({}))] {
        let elsewhere = app.mcp_call(tool, arguments, Some(payment.clone()), &[]).await;
        assert!(is_error(&elsewhere), "{tool}: {elsewhere}");
        assert_eq!(structured(&elsewhere)["x402Version"], 2, "{tool}: refused with a challenge: {elsewhere}");
    }
    // Without the echoed extensions, the resource it names still binds it.
    let mut bare = payment["x402/payment"].clone();
    bare.as_object_mut().expect("payload").remove("extensions");
    let elsewhere = app.mcp_call(COIN, json!({"mint": two}), Some(json!({"x402/payment": bare})), &[]).await;
    assert!(structured(&elsewhere)["error"].as_str().expect("why").starts_with("resource_mismatch"), "{elsewhere}");
    assert_eq!(app.paid_calls().await, 0);
    // It still buys what it was made for.
    let paid = app.mcp_call(COIN, json!({"mint": one}), Some(payment), &[]).await;
    assert!(!is_error(&paid), "{paid}");
}

#[tokio::test]
async fn forged_and_junk_payments_are_refused_with_a_challenge_and_charge_nothing() {
    let app = TestApp::new().await;
    let required = structured(&app.mcp_call(LITE, json!({}), None, &[]).await).clone();
    let mut forged = payment_payload(&required, 4);
    forged["payload"]["signature"] = Value::from(format!("0x{}", "11".repeat(65)));
    let mut underpaid = payment_payload(&required, 5);
    underpaid["accepted"]["amount"] = Value::from("1");
    underpaid["payload"]["authorization"]["value"] = Value::from("1");
    for payment in [forged, underpaid, json!("%%% not base64"), json!(42), json!({"x402Version": 2})] {
        let result = app.mcp_call(LITE, json!({}), Some(json!({"x402/payment": payment})), &[]).await;
        assert!(is_error(&result), "{payment}: {result}");
        assert_eq!(structured(&result)["x402Version"], 2, "{payment}: {result}");
    }
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn invalid_arguments_are_refused_where_they_are_before_any_challenge() {
    let app = TestApp::new().await;
    let result = app.mcp_call(COIN, json!({"mint": "not-a-mint"}), None, &[]).await;
    assert!(is_error(&result), "{result}");
    assert_eq!(structured(&result)["detail"][0]["loc"], json!(["path", "mint"]), "{result}");
    assert!(structured(&result).get("accepts").is_none());
    // A path parameter stays one segment, whatever it holds: escaped, then refused where it is.
    let escaping = app.mcp_call(COIN, json!({"mint": "../a b/%2F?x=1"}), None, &[]).await;
    assert_eq!(structured(&escaping)["detail"][0]["loc"], json!(["path", "mint"]), "{escaping}");
    let missing = app.mcp_call(COIN, json!({}), None, &[]).await;
    assert_eq!(structured(&missing)["detail"][0]["loc"], json!(["path", "mint"]), "{missing}");
    let nul = app.mcp_call("infra_evm_token_price", json!({"chain": "base\u{0}", "address": "0x00"}), None, &[]).await;
    assert!(is_error(&nul) && structured(&nul)["detail"].is_array(), "{nul}");
}

#[tokio::test]
async fn an_unknown_tool_is_the_protocols_invalid_params_error() {
    let app = TestApp::new().await;
    let reply = app.mcp_with("/mcp", "tools/call", json!({"name": "alpha.top_picks", "arguments": {}}), &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.text());
}

#[tokio::test]
async fn an_api_key_with_credits_pays_from_credits_and_never_sees_a_challenge() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("1.00", &[Scope::Data]).await;
    let before = app.balance(&account).await;
    let bearer = format!("Bearer {key}");
    let result = app.mcp_call(LITE, json!({}), None, &[("authorization", &bearer)]).await;
    assert!(!is_error(&result), "{result}");
    assert!(result.get("_meta").is_none_or(|meta| meta.get("x402/payment-response").is_none()));
    let price = svc_catalogue::catalogue().get("alpha.top_picks_lite").expect("route").credit_price;
    assert_eq!(before - app.balance(&account).await, price.atomic());
    assert_eq!(app.paid_calls().await, 0);
    // The key also works as X-API-Key.
    let again = app.mcp_call(LITE, json!({}), None, &[("x-api-key", &key)]).await;
    assert!(!is_error(&again), "{again}");
}

#[tokio::test]
async fn a_sign_in_token_pays_from_credits_and_a_forged_one_is_refused_not_challenged() {
    let app = TestApp::new().await;
    let wallet = svc_chain_evm::Payer::from_key(crate::support::PAYER_KEY).expect("key");
    let token = app.sign_in(&wallet).await;
    let address = wallet.address().to_string().to_lowercase();
    let account = app.store.account_by_wallet(&address).await.expect("store").expect("account");
    svc_accounts::grant_credits(
        &app.store,
        &account.id,
        "1".parse().expect("usd"),
        "grant:owner",
        crate::support::NOW_MS,
    )
    .await
    .expect("grant");
    let result = app.mcp_call(LITE, json!({}), None, &[("authorization", &format!("Bearer {token}"))]).await;
    assert!(!is_error(&result), "{result}");
    assert!(app.balance(&account.id).await < 1_000_000);
    let forged = app.mcp_call(LITE, json!({}), None, &[("authorization", "Bearer forged")]).await;
    assert!(is_error(&forged), "{forged}");
    assert!(structured(&forged).get("accepts").is_none(), "refused, not challenged: {forged}");
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn an_empty_account_is_told_how_to_buy_credits_and_loses_nothing() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("0", &[Scope::Data]).await;
    let result = app.mcp_call(LITE, json!({}), None, &[("authorization", &format!("Bearer {key}"))]).await;
    assert!(is_error(&result), "{result}");
    assert_eq!(structured(&result)["code"], "insufficient_credits");
    assert!(result["content"][0]["text"].as_str().expect("text").contains("Buy credits"), "{result}");
    assert_eq!(app.balance(&account).await, 0);
}

#[tokio::test]
async fn an_agents_key_without_wallet_write_cannot_call_a_trading_tool() {
    let app = TestApp::new().await;
    let (account, key) = app.account_with_credits("5.00", &[Scope::GatewayData]).await;
    let order = crate::walk::samples(&app).into_iter().find(|s| s.route == "infra.perpdex_exchange").expect("sample");
    let bearer = format!("Bearer {key}");
    let result =
        app.mcp_call("infra_perpdex_exchange", arguments_of(&order), None, &[("authorization", &bearer)]).await;
    assert!(is_error(&result), "{result}");
    assert!(result["content"][0]["text"].as_str().expect("text").contains("gateway:wallet_write"), "{result}");
    assert_eq!(app.balance(&account).await, 5_000_000);
}

#[tokio::test]
async fn another_accounts_agent_is_the_same_not_found_as_a_missing_one() {
    let app = TestApp::new().await;
    let (_, owner) = app.account_with_credits("0", &[Scope::Agents]).await;
    let (_, other) = app.account_with_credits("0", &[Scope::Agents]).await;
    let (as_owner, as_other) = (format!("Bearer {owner}"), format!("Bearer {other}"));
    let (as_owner, as_other) = ([("authorization", as_owner.as_str())], [("authorization", as_other.as_str())]);
    let agent = json!({"name": "Flow explainer", "endpoint": "http://127.0.0.1:9/ok"});
    let created = app.mcp_call("sellers_create", agent, None, &as_owner).await;
    assert!(!is_error(&created), "{created}");
    let id = structured(&created)["agent"]["id"].as_str().expect("id").to_owned();
    let theirs = app.mcp_call("sellers_get", json!({"agent_id": id}), None, &as_other).await;
    let nobody = json!({"agent_id": "agt_00000000000000000000000000000000"});
    let missing = app.mcp_call("sellers_get", nobody, None, &as_other).await;
    assert!(is_error(&theirs), "{theirs}");
    assert_eq!(theirs, missing, "the same answer as an agent that does not exist");
    let mine = app.mcp_call("sellers_get", json!({"agent_id": id}), None, &as_owner).await;
    assert!(!is_error(&mine), "{mine}");
}

#[tokio::test]
async fn a_hostile_host_or_origin_is_refused_and_the_public_ones_are_not() {
    let app = TestApp::new().await;
    let list = |headers: Vec<(&'static str, &'static str)>| {
        let app = &app;
        async move { app.mcp_with("/mcp", "tools/list", json!({}), &headers).await.status }
    };
    assert_eq!(list(vec![("host", "evil.example")]).await, StatusCode::FORBIDDEN);
    assert_eq!(list(vec![("origin", "https://evil.example")]).await, StatusCode::FORBIDDEN);
    assert_eq!(list(vec![("origin", "http://127.0.0.1:8402")]).await, StatusCode::OK);
    assert_eq!(list(vec![("host", "localhost:8402")]).await, StatusCode::OK);
}

#[tokio::test]
async fn oversized_or_malformed_requests_are_4xx_and_never_5xx() {
    let app = TestApp::new().await;
    let huge = json!({"name": LITE, "arguments": {"x": "y".repeat(300 * 1024)}});
    assert_eq!(app.mcp_with("/mcp", "tools/call", huge, &[]).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    let headers = [("accept", "application/json, text/event-stream"), ("host", crate::support::SITE)];
    for body in [
        "{not json",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\\u0000\"}}",
        "\u{0}",
    ] {
        let reply = app.call_with(&Method::POST, "/mcp", Some(body), &headers).await;
        assert!(reply.status.is_client_error() || reply.json().get("error").is_some(), "{body}: {}", reply.text());
        assert!(!reply.status.is_server_error(), "{body}: {}", reply.text());
    }
    // Arguments that are not what the route takes: a 422's body, located, never a 5xx.
    let nested = app.mcp_call(COIN, json!({"mint": {"deep": [1, 2, 3]}}), None, &[]).await;
    assert_eq!(structured(&nested)["detail"][0]["loc"], json!(["path", "mint"]), "{nested}");
}

#[tokio::test]
async fn many_distinct_concurrent_paid_calls_are_each_charged_once() {
    let app = TestApp::new().await;
    let required = structured(&app.mcp_call(LITE, json!({}), None, &[]).await).clone();
    let calls = (0..24u8).map(|n| {
        let meta = json!({"x402/payment": payment_payload(&required, 100 + n)});
        let app = &app;
        async move { app.mcp_call(LITE, json!({}), Some(meta), &[]).await }
    });
    let results = futures::future::join_all(calls).await;
    for result in &results {
        assert!(!is_error(result), "{result}");
    }
    assert_eq!(app.paid_calls().await, 24);
}

#[tokio::test]
async fn every_sampled_route_called_as_a_tool_and_paid_answers_its_schema() {
    let config = svc_api::ApiConfig { rate_limits: false, ..Default::default() };
    let app = TestApp::with_config(config).await;
    let catalogue = svc_catalogue::catalogue();
    let samples = crate::walk::samples(&app);
    for (index, sample) in samples.iter().enumerate() {
        let route = catalogue.get(sample.route).expect("route");
        let name = svc_catalogue::tools::tool_name(route);
        let arguments = arguments_of(sample);
        let challenge = app.mcp_call(&name, arguments.clone(), None, &[]).await;
        assert_eq!(structured(&challenge)["x402Version"], 2, "{name} {arguments}: {challenge}");
        let nonce = u8::try_from(index + 1).expect("fewer than 255 samples");
        let meta = json!({"x402/payment": payment_payload(structured(&challenge), nonce)});
        let paid = app.mcp_call(&name, arguments.clone(), Some(meta), &[]).await;
        assert!(!is_error(&paid), "{name} {arguments}: {paid}");
        assert_matches_schema(&sample.method.as_str().to_lowercase(), route.path, &text_json(&paid));
    }
    assert_eq!(app.paid_calls().await, samples.len());
}

#[tokio::test]
async fn the_compact_server_finds_describes_and_calls_a_tool_paid_as_itself() {
    let app = TestApp::new().await;
    let compact = |name: &'static str, arguments: Value, meta: Option<Value>| {
        let app = &app;
        async move {
            let mut params = json!({"name": name, "arguments": arguments});
            if let Some(meta) = meta {
                params["_meta"] = meta;
            }
            mcp_result(&app.mcp_with("/mcp/compact", "tools/call", params, &[]).await)
        }
    };
    let found = compact("search_tools", json!({"query": "launchpad coin"}), None).await;
    assert_eq!(structured(&found)["tools"][0]["name"], COIN, "{found}");
    let described = compact("describe_tool", json!({"name": COIN}), None).await;
    assert!(structured(&described)["inputSchema"]["properties"]["mint"].is_object(), "{described}");
    let mint = mint(&app, 0);
    let call = json!({"name": COIN, "arguments": {"mint": mint}});
    let required = compact("call_tool", call.clone(), None).await;
    assert!(is_error(&required));
    let meta = json!({"x402/payment": payment_payload(structured(&required), 7)});
    let paid = compact("call_tool", call, Some(meta)).await;
    assert!(!is_error(&paid), "{paid}");
    assert_eq!(structured(&paid)["mint"], mint.as_str());
    assert_eq!(paid["_meta"]["x402/payment-response"]["success"], true);
    for (tool, arguments) in [
        ("search_tools", json!({"query": ""})),
        ("search_tools", json!({"query": "x".repeat(201)})),
        ("search_tools", json!({"query": "coin", "limit": 0})),
        ("describe_tool", json!({"name": "nothing"})),
        ("call_tool", json!({"name": COIN, "arguments": [1]})),
    ] {
        let refused = compact(tool, arguments.clone(), None).await;
        assert!(is_error(&refused), "{tool} {arguments}: {refused}");
        assert_eq!(structured(&refused)["code"], "validation_error");
    }
}

#[tokio::test]
async fn the_resources_are_llms_txt_the_catalogue_and_the_track_record() {
    let app = TestApp::new().await;
    let listed = app.mcp("resources/list", json!({})).await;
    let uris: Vec<&str> =
        listed["resources"].as_array().expect("list").iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris.len(), 3, "{listed}");
    for uri in uris {
        let read = app.mcp("resources/read", json!({"uri": uri})).await;
        let text = read["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{uri}: {read}"));
        assert!(!text.is_empty());
        if uri.ends_with("llms.txt") {
            assert!(text.starts_with("# svc"), "{text}");
        } else {
            let _: Value = serde_json::from_str(text).expect("JSON");
        }
    }
    let missing = app.mcp_with("/mcp", "resources/read", json!({"uri": "file:///etc/passwd"}), &[]).await;
    assert_eq!(missing.json()["error"]["code"], -32002, "{}", missing.text());
}
