//! Every data route, paid and called once on the default world: each must answer a 200 that
//! matches its published schema. The samples come from each family's own test module, built
//! from identifiers the simulated world holds.

use axum::http::{Method, StatusCode};
use serde_json::Value;

use crate::support::{Sample, TestApp, assert_matches_preview_schema, assert_matches_schema};

/// Valid calls of every route that has landed, one per route.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let mut all = Vec::new();
    all.extend(crate::upstream::samples(app));
    all.extend(crate::perps::samples(app));
    all.extend(crate::chaindata::samples(app));
    all.extend(crate::defi::samples(app));
    all.extend(crate::predmkt::samples(app));
    all.extend(crate::social::samples(app));
    all.extend(crate::signals::samples(app));
    all
}

#[tokio::test]
async fn every_sampled_route_answers_a_schema_valid_200() {
    let app = TestApp::new().await;
    let catalogue = svc_catalogue::catalogue();
    let samples = samples(&app);
    for (index, sample) in samples.iter().enumerate() {
        let route = catalogue.get(sample.route).unwrap_or_else(|| panic!("no route {}", sample.route));
        let nonce = u8::try_from(index + 1).expect("fewer than 255 samples");
        let reply = app.pay(&sample.method, &sample.uri, sample.body.as_deref(), nonce).await;
        assert_eq!(reply.status, StatusCode::OK, "{} {}: {}", sample.route, sample.uri, reply.text());
        assert_matches_schema(&sample.method.as_str().to_lowercase(), route.path, &reply.json());
    }
    assert_eq!(app.paid_calls().await, samples.len());
}

/// Every sampled route's free preview matches the preview schema OpenAPI documents for it:
/// the answer as the preview cuts it, and what the preview says of itself.
#[tokio::test]
async fn every_sampled_route_previews_on_its_documented_preview_schema() {
    let config = svc_api::ApiConfig { previews_per_hour: 0, ..Default::default() };
    let app = TestApp::with_config(config).await;
    for sample in samples(&app) {
        let separator = if sample.uri.contains('?') { '&' } else { '?' };
        let uri = format!("{}{separator}preview=true", sample.uri);
        let reply = app.call(&sample.method, &uri, sample.body.as_deref()).await;
        assert_eq!(reply.status, StatusCode::OK, "{} {uri}: {}", sample.route, reply.text());
        assert_matches_preview_schema(sample.route, &reply.json());
    }
    assert_eq!(app.paid_calls().await, 0);
}

/// Every paid data, infrastructure and signal route has a sample above, so the walk covers
/// them all.
#[tokio::test]
async fn the_walk_covers_every_data_infrastructure_and_signal_route() {
    let app = TestApp::new().await;
    let sampled: std::collections::BTreeSet<&str> = samples(&app).iter().map(|s| s.route).collect();
    let missing: Vec<&str> = svc_catalogue::catalogue()
        .routes()
        .iter()
        .filter(|r| r.is_paid() && r.billed_as_data)
        .filter(|r| {
            matches!(
                r.group,
                svc_catalogue::Group::Data | svc_catalogue::Group::Infrastructure | svc_catalogue::Group::Signals
            )
        })
        .map(|r| r.id)
        .filter(|id| !sampled.contains(id))
        .collect();
    assert!(missing.is_empty(), "routes without a sample: {missing:?}");
}

/// Whether `reply` is a 422 naming query parameter `name`.
fn refuses_param(reply: &crate::support::Reply, name: &str) -> bool {
    reply.status == StatusCode::UNPROCESSABLE_ENTITY
        && reply.json()["detail"].as_array().is_some_and(|errors| {
            errors.iter().any(|e| e["loc"].as_array().is_some_and(|loc| loc.contains(&Value::from(name))))
        })
}

/// The integer bounds OpenAPI documents for the query parameters of operation `id`.
fn documented_bounds(doc: &Value, id: &str) -> Vec<(String, &'static str, i64)> {
    let mut bounds = Vec::new();
    for operations in doc["paths"].as_object().expect("paths").values() {
        for operation in operations.as_object().expect("operations").values() {
            if operation["operationId"] != id {
                continue;
            }
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                if parameter["in"] != "query" {
                    continue;
                }
                for bound in ["minimum", "maximum"] {
                    if let Some(edge) = parameter["schema"][bound].as_i64() {
                        bounds.push((parameter["name"].as_str().expect("name").to_owned(), bound, edge));
                    }
                }
            }
        }
    }
    bounds
}

#[tokio::test]
async fn every_documented_bound_of_a_query_parameter_is_the_one_validation_enforces() {
    let app = TestApp::new().await;
    let doc = app.get("/openapi.json").await.json();
    let mut checked = 0;
    let mut calls: Vec<(&str, String)> =
        samples(&app).into_iter().filter(|s| s.method == Method::GET).map(|s| (s.route, s.uri)).collect();
    // The account routes' lists, called by their account: who calls is asked first.
    let (_, key) = app.account_with_credits("0", &[svc_accounts::Scope::Data]).await;
    calls.push(("x402.receipts", "/api/x402/receipts?limit=50".into()));
    calls.push(("account.credits", "/api/account/credits?limit=50".into()));
    for (route, uri) in &calls {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        for (name, bound, edge) in documented_bounds(&doc, route) {
            let others: Vec<&str> =
                query.split('&').filter(|pair| !pair.is_empty() && !pair.starts_with(&format!("{name}="))).collect();
            let with = |value: i64| {
                let mut pairs = others.clone();
                let own = format!("{name}={value}");
                pairs.push(&own);
                format!("{path}?{}", pairs.join("&"))
            };
            let inside = app.call_with(&Method::GET, &with(edge), None, &[("x-api-key", &key)]).await;
            assert!(
                !refuses_param(&inside, &name),
                "{route}: {name}={edge} is documented as allowed: {}",
                inside.text()
            );
            let beyond = if bound == "minimum" { edge - 1 } else { edge + 1 };
            let outside = app.call_with(&Method::GET, &with(beyond), None, &[("x-api-key", &key)]).await;
            assert!(
                refuses_param(&outside, &name),
                "{route}: {name}={beyond} is documented as refused: {}",
                outside.text()
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} bounds checked");
}

/// `schema` with its `$ref` (or single `allOf` wrapper) followed into the document's components.
fn resolved<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        return resolved(document, &document["components"]["schemas"][name]);
    }
    match schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) => resolved(document, only),
        _ => schema,
    }
}

/// Keeps, at every level of `value`, only the fields its schema requires.
fn strip_to_required(document: &Value, schema: &Value, value: &mut Value) {
    let schema = resolved(document, schema);
    let Some(object) = value.as_object_mut() else { return };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    object.retain(|key, _| required.contains(&key.as_str()));
    for (key, field) in object.iter_mut() {
        strip_to_required(document, &schema["properties"][key], field);
    }
}

/// `sample` cut down to what its route's schema requires: the body's required fields, the
/// query's required parameters.
fn minimal(document: &Value, route: &svc_catalogue::RouteSpec, sample: &Sample) -> Sample {
    let operation = &document["paths"][route.path][route.method.as_str().to_lowercase()];
    let body = sample.body.as_ref().map(|body| {
        let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
        let mut value: Value = serde_json::from_str(body).expect("sample body is JSON");
        strip_to_required(document, schema, &mut value);
        value.to_string()
    });
    let required_query: Vec<String> = operation["parameters"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .filter_map(|p| p["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let uri = match sample.uri.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|pair| required_query.iter().any(|name| pair.split('=').next() == Some(name.as_str())))
                .collect();
            if kept.is_empty() { path.to_owned() } else { format!("{path}?{}", kept.join("&")) }
        }
        None => sample.uri.clone(),
    };
    Sample { route: sample.route, method: sample.method.clone(), uri, body }
}

/// Nothing to sign that cannot succeed: every route called with only what its schema requires
/// (at every level of the body) is either refused before payment (422) or, once paid,
/// answered; never refused after payment, which would have a client pay for a refusal. The
/// data sources' other needs, such as a date range, have defaults.
#[tokio::test]
async fn every_route_called_with_only_its_required_fields_is_refused_before_payment_or_answered() {
    // Two calls per route from one client: rate limits are another test's subject.
    let app = TestApp::with_config(svc_api::ApiConfig { rate_limits: false, ..svc_api::ApiConfig::default() }).await;
    let catalogue = svc_catalogue::catalogue();
    let document = svc_catalogue::openapi::document(catalogue);
    let samples = samples(&app);
    let mut refused = Vec::new();
    for (index, sample) in samples.iter().enumerate() {
        let route = catalogue.get(sample.route).unwrap_or_else(|| panic!("no route {}", sample.route));
        let call = minimal(&document, route, sample);
        let unpaid = app.call(&call.method, &call.uri, call.body.as_deref()).await;
        if unpaid.status == StatusCode::UNPROCESSABLE_ENTITY {
            refused.push(call.route);
            continue;
        }
        assert_eq!(unpaid.status, StatusCode::PAYMENT_REQUIRED, "{} {}: {}", call.route, call.uri, unpaid.text());
        let nonce = u8::try_from(index + 100).expect("fewer than 155 samples");
        let reply = app.pay(&call.method, &call.uri, call.body.as_deref(), nonce).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{} {} {:?} was challenged, paid, then refused: {}",
            call.route,
            call.uri,
            call.body,
            reply.text()
        );
    }
    // Routes that need one of several fields (an address or an entity) refuse the bare
    // required set before payment; every other route was paid once and answered.
    assert_eq!(app.paid_calls().await, samples.len() - refused.len(), "refused before payment: {refused:?}");
}

/// Only a key that may trade calls a route that moves funds: every sampled route's credit
/// twin refuses a data-only key (the owner's `data`, an analyst agent's `gateway:data`) with a
/// 403 naming `gateway:wallet_write` exactly where the route places orders or moves funds, and a
/// trading agent's key is served everywhere.
#[tokio::test]
async fn only_a_key_that_may_trade_calls_a_route_that_moves_funds() {
    use svc_accounts::Scope;
    let app = TestApp::new().await;
    let catalogue = svc_catalogue::catalogue();
    let (_, owner) = app.account_with_credits("100", &[Scope::Data]).await;
    let (_, analyst) = app.account_with_credits("100", &[Scope::GatewayRead, Scope::GatewayData]).await;
    let trader_scopes = [Scope::GatewayRead, Scope::GatewayData, Scope::GatewayWalletWrite];
    let (_, trader) = app.account_with_credits("100", &trader_scopes).await;
    let mut moving = Vec::new();
    for sample in samples(&app) {
        let route = catalogue.get(sample.route).expect("route");
        let twin = svc_catalogue::credits_twin(&sample.uri).expect("a paid route has a twin");
        let body = sample.body.as_deref();
        for key in [&owner, &analyst] {
            let reply = app.call_with(&sample.method, &twin, body, &[("x-api-key", key)]).await;
            if route.moves_funds {
                assert_eq!(reply.status, StatusCode::FORBIDDEN, "{twin}: {}", reply.text());
                assert!(reply.text().contains("gateway:wallet_write"), "the scope is named: {}", reply.text());
            } else {
                assert_eq!(reply.status, StatusCode::OK, "{twin}: {}", reply.text());
            }
        }
        let reply = app.call_with(&sample.method, &twin, body, &[("x-api-key", &trader)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{twin} with a trader's key: {}", reply.text());
        if route.moves_funds {
            moving.push(route.id);
        }
    }
    assert_eq!(moving, [svc_catalogue::ids::infra::PERPDEX_EXCHANGE], "the routes that move funds");
}

/// Whether a 402's `resource.description` stays under the 500 characters (as JavaScript counts
/// them) past which the most used public facilitator refuses to settle and its discovery
/// service to index.
fn payable_description(challenge: &crate::support::Reply) -> Result<usize, String> {
    assert_eq!(challenge.status, StatusCode::PAYMENT_REQUIRED, "{}", challenge.text());
    let body = challenge.json();
    let description = body["resource"]["description"].as_str().ok_or_else(|| format!("no description: {body}"))?;
    let units = description.encode_utf16().count();
    if units < 500 { Ok(units) } else { Err(format!("{units} units: {description}")) }
}

#[tokio::test]
async fn every_challenge_describes_its_resource_in_under_500_characters() {
    let app = TestApp::new().await;
    for route in svc_catalogue::catalogue().routes().iter().filter(|r| r.is_paid()) {
        assert!(route.description.encode_utf16().count() < 500, "{}: {}", route.id, route.description);
    }
    for sample in samples(&app) {
        let challenge = app.call(&sample.method, &sample.uri, sample.body.as_deref()).await;
        payable_description(&challenge).unwrap_or_else(|e| panic!("{}: {e}", sample.route));
    }
    // A seller's agent with the longest name and description allowed, in characters JavaScript
    // counts twice.
    let (_, key) = app.account_with_credits("0", &[svc_accounts::Scope::Agents]).await;
    let body = serde_json::json!({
        "name": "𝔄".repeat(100), "endpoint": "http://127.0.0.1:9/run", "description": "𝔅".repeat(2000),
    });
    let headers = [("x-api-key", key.as_str())];
    let created = app.call_with(&Method::POST, "/agents", Some(&body.to_string()), &headers).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text());
    let id = created.json()["agent"]["id"].as_str().expect("id").to_owned();
    let config = serde_json::json!({
        "enabled": true,
        "pricing": {"model": "per_request", "amount": "0.05", "currency": "USDC"},
        "wallet_address": "0x209693bc6afc0c5328ba36faf03c514ef312287c",
    });
    let sold =
        app.call_with(&Method::PUT, &format!("/agents/{id}/x402-config"), Some(&config.to_string()), &headers).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.text());
    let challenge = app.post_json(&format!("/x402/agents/{id}/invoke"), r#"{"query":"hi"}"#).await;
    let units = payable_description(&challenge).expect("payable");
    assert!(units > 250, "cut near the limit, not emptied: {units}");
}
