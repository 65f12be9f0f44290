//! The catalogue is complete and everything generated from it agrees with it.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::Value;

use crate::support::{BASE_URL, TestApp};

fn spec_routes() -> BTreeSet<(String, String)> {
    routes_in(include_str!("../fixtures/spec_paths.txt"))
}

/// Routes added beyond the contract, each deliberately.
fn own_routes() -> BTreeSet<(String, String)> {
    routes_in(include_str!("../fixtures/own_paths.txt"))
}

fn routes_in(list: &str) -> BTreeSet<(String, String)> {
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (method, path) = l.split_once(' ').expect("METHOD path");
            (method.to_owned(), path.to_owned())
        })
        .collect()
}

#[test]
fn the_catalogue_lists_exactly_the_routes_of_the_contract() {
    let catalogue: BTreeSet<(String, String)> =
        svc_catalogue::catalogue().routes().iter().map(|r| (r.method.as_str().to_owned(), r.path.to_owned())).collect();
    let spec: BTreeSet<_> = spec_routes().union(&own_routes()).cloned().collect();
    let missing: Vec<_> = spec.difference(&catalogue).collect();
    let extra: Vec<_> = catalogue.difference(&spec).collect();
    assert!(missing.is_empty() && extra.is_empty(), "missing: {missing:?}\nextra: {extra:?}");
}

#[tokio::test]
async fn openapi_lists_every_route_and_its_credit_twin_with_a_real_200_schema() {
    let app = TestApp::new().await;
    let reply = app.get("/openapi.json").await;
    assert_eq!(reply.status, StatusCode::OK);
    let doc = reply.json();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "3.0.0");
    let schemas = &doc["components"]["schemas"];
    for route in svc_catalogue::catalogue().routes() {
        let method = route.method.as_str().to_ascii_lowercase();
        let mut paths = vec![route.path.to_owned()];
        paths.extend(route.credits_path());
        for path in paths {
            let op = &doc["paths"][&path][&method];
            assert!(op.is_object(), "{method} {path} missing from the document");
            let schema = &op["responses"]["200"]["content"]["application/json"]["schema"];
            let resolved = match schema["$ref"].as_str() {
                Some(r) => &schemas[r.trim_start_matches("#/components/schemas/")],
                None => schema,
            };
            let described = resolved["properties"].as_object().is_some_and(|p| !p.is_empty())
                || resolved["oneOf"].is_array()
                || resolved["anyOf"].is_array();
            assert!(described, "{method} {path}: 200 schema is empty: {resolved}");
            assert!(op["responses"]["422"].is_object(), "{path} documents 422");
            if route.is_paid() && !path.starts_with("/api/svc-tools/") {
                assert!(op["responses"]["402"].is_object(), "{path} documents 402");
                assert!(op["x-price"]["amount"]["atomic"].is_string() || op["x-price"]["unit"].is_object(), "{path}");
            }
        }
    }
    // Every $ref resolves.
    let text = reply.text();
    for piece in text.split("\"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap_or_default();
        assert!(schemas[name].is_object(), "dangling $ref {name}");
    }
}

#[tokio::test]
async fn the_committed_openapi_json_is_the_generated_one() {
    let committed = include_str!("../../../../openapi.json");
    let generated = svc_catalogue::openapi::document_text(svc_catalogue::catalogue());
    assert!(
        committed == generated,
        "openapi.json is stale: run `cargo run -q -p svc-server -- openapi > openapi.json`"
    );
}

#[tokio::test]
async fn chain_data_prices_stay_inside_the_contract_band() {
    for route in svc_catalogue::catalogue().routes().iter().filter(|r| r.tag == "chaindata") {
        let usd = route.price.min().atomic();
        assert!((12_000..=1_200_000).contains(&usd), "{} costs {}", route.id, route.price.min());
    }
}

#[tokio::test]
async fn the_catalogue_document_lists_every_paid_route_with_price_and_schemas() {
    let app = TestApp::new().await;
    let doc = app.get("/api/x402/catalogue").await.json();
    assert_eq!(doc["version"], 1);
    let resources = doc["resources"].as_array().expect("resources");
    let paid = svc_catalogue::catalogue().routes().iter().filter(|r| r.is_paid()).count();
    assert_eq!(resources.len(), paid);
    for r in resources {
        assert!(r["url"].as_str().is_some_and(|u| u.starts_with("http://")), "{r}");
        assert!(r["price"]["atomic"].as_str().is_some_and(|a| a.parse::<u64>().is_ok_and(|n| n > 0)), "{r}");
        assert_eq!(r["input_schema"]["type"], "object", "{}", r["id"]);
        assert!(r["output_schema"].is_object(), "{}", r["id"]);
        assert!(!r["output_schema"].to_string().contains("$ref"), "schemas are self-contained: {}", r["id"]);
    }
    let top = resources.iter().find(|r| r["id"] == "alpha.top_picks").expect("top picks");
    assert_eq!(top["price"]["usd"], "0.5");
    assert_eq!(top["credits"]["usd"], "0.02");
    assert_eq!(top["rate_limit_per_minute"], 30);
}

#[tokio::test]
async fn discovery_documents_name_the_configured_base_url_whatever_the_host() {
    let app = TestApp::new().await;
    for uri in ["/", "/.well-known/x402", "/api/x402/catalogue", "/llms.txt"] {
        let request = axum::http::Request::get(uri).header("host", "evil.example").body(axum::body::Body::empty());
        let reply = app.send(request.expect("request")).await;
        assert_eq!(reply.status, StatusCode::OK, "{uri}");
        assert!(reply.text().contains(BASE_URL), "{uri}: {}", reply.text());
        assert!(!reply.text().contains("evil.example"), "{uri} never names the Host");
    }
}

#[tokio::test]
async fn well_known_and_llms_txt_point_agents_at_every_paid_route() {
    let app = TestApp::new().await;
    let manifest = app.get("/.well-known/x402").await.json();
    assert_eq!(manifest["version"], 1);
    let resources: Vec<&str> =
        manifest["resources"].as_array().expect("list").iter().filter_map(Value::as_str).collect();
    assert!(resources.contains(&format!("{BASE_URL}/api/x402/alpha/top-picks").as_str()), "{resources:?}");
    let reply = app.get("/llms.txt").await;
    assert_eq!(reply.status, StatusCode::OK);
    let text = reply.text();
    assert!(text.contains("PAYMENT-SIGNATURE") && text.contains("preview=true"));
    for route in svc_catalogue::catalogue().routes() {
        assert!(text.contains(route.path), "llms.txt lists {}", route.path);
    }
}

/// The OpenAPI document is most of a megabyte; clients that accept gzip get it compressed,
/// the same document.
#[tokio::test]
async fn the_openapi_document_comes_gzipped_to_clients_that_accept_it() {
    let app = TestApp::new().await;
    let plain = app.get("/openapi.json").await;
    assert_eq!(plain.status, StatusCode::OK);
    assert!(plain.headers.get("content-encoding").is_none());
    let zipped = app.call_with(&axum::http::Method::GET, "/openapi.json", None, &[("accept-encoding", "gzip")]).await;
    assert_eq!(zipped.headers["content-encoding"], "gzip");
    assert_eq!(zipped.headers["vary"], "accept-encoding");
    assert!(zipped.body.len() * 5 < plain.body.len(), "{} vs {} bytes", zipped.body.len(), plain.body.len());
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped.body[..]), &mut json).expect("gunzip");
    assert_eq!(json, plain.body);
}

/// The LLM proxy is described wherever svc describes itself: OpenAPI (in OpenAI's wire
/// format), the catalogue, the discovery manifest and llms.txt; and `GET /` names the way to
/// each document.
#[tokio::test]
async fn the_llm_proxy_and_every_document_are_found_from_the_front_door() {
    use svc_catalogue::routes::llm;
    let app = TestApp::new().await;
    let doc = app.get("/openapi.json").await.json();
    let chat = &doc["paths"][llm::CHAT_COMPLETIONS_PATH]["post"];
    assert_eq!(chat["operationId"], "llm.chat_completions");
    assert_eq!(
        chat["requestBody"]["content"]["application/json"]["schema"]["required"],
        serde_json::json!(["model", "messages"])
    );
    assert!(chat["responses"]["402"].is_object() && chat["security"][0]["llmToken"].is_array());
    assert_eq!(doc["paths"][llm::MODELS_PATH]["get"]["operationId"], "llm.models");

    let catalogue = app.get("/api/x402/catalogue").await.json();
    assert!(
        catalogue["llm"]["chat_completions"]["url"].as_str().is_some_and(|u| u.ends_with(llm::CHAT_COMPLETIONS_PATH))
    );
    assert_eq!(catalogue["llm"]["wire_format"], "openai");
    let manifest = app.get("/.well-known/x402").await.json();
    assert!(manifest["llm"].as_str().is_some_and(|u| u.ends_with(llm::BASE_PATH)));
    let llms = app.get("/llms.txt").await.text();
    assert!(llms.contains(&format!("- POST {}", llm::CHAT_COMPLETIONS_PATH)), "{llms}");
    assert!(llms.contains(&format!("- GET {}", llm::MODELS_PATH)), "{llms}");

    let index = app.get("/").await;
    assert_eq!(index.status, StatusCode::OK, "{}", index.text());
    let index = index.json();
    assert_eq!(index["name"], "svc");
    assert!(index["version"].is_string());
    for (link, path) in [
        ("openapi", "/openapi.json"),
        ("catalogue", "/api/x402/catalogue"),
        ("discovery", "/.well-known/x402"),
        ("docs", "/llms.txt"),
        ("llm", llm::BASE_PATH),
    ] {
        let url = index["links"][link].as_str().unwrap_or_else(|| panic!("{link}: {index}"));
        assert!(url.ends_with(path), "{link}: {url}");
        let local = &url[url.find(path).expect("path")..];
        if link != "llm" {
            assert_eq!(app.get(local).await.status, StatusCode::OK, "{link} answers");
        }
    }
}
