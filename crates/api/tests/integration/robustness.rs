//! No input may produce a 500 or a panic: random paths, queries and bodies against every route.

use std::sync::OnceLock;

use axum::http::Method;
use proptest::prelude::*;

use crate::support::TestApp;

fn fill(template: &str, value: &str) -> String {
    template
        .split('/')
        .map(|seg| if seg.starts_with('{') { value.to_owned() } else { seg.to_owned() })
        .collect::<Vec<_>>()
        .join("/")
}

/// One app for all cases: building a store per case would dominate the run.
fn shared() -> &'static (tokio::runtime::Runtime, TestApp) {
    static SHARED: OnceLock<(tokio::runtime::Runtime, TestApp)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
        let app = runtime.block_on(TestApp::new());
        (runtime, app)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_requests_never_get_a_500(
        route_index in any::<prop::sample::Index>(),
        segment in "[a-zA-Z0-9%._~-]{0,40}",
        query in "[a-zA-Z0-9=&%_.,-]{0,80}",
        body in prop_oneof![
            Just(String::new()),
            ".{0,200}",
            Just("{}".to_owned()),
            Just(r#"{"payload":{"chains":["solana"],"token_address":"x","chain":"base"}}"#.to_owned()),
            Just(r#"{"max_results":1e309,"limit":-1,"ids":[1,2]}"#.to_owned()),
        ],
        post in any::<bool>(),
    ) {
        let (runtime, app) = shared();
        runtime.block_on(async {
            let routes = svc_catalogue::catalogue().routes();
            let route = &routes[route_index.index(routes.len())];
            let uri = format!("{}?{query}", fill(route.path, &segment));
            let method = if post { Method::POST } else { Method::GET };
            if let Ok(request) = axum::http::Request::builder()
                .method(method)
                .uri(&uri)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body.clone()))
            {
                let reply = app.send(request).await;
                prop_assert!(reply.status.as_u16() < 500 || reply.status.as_u16() == 501, "{uri} {body:?} -> {}: {}", reply.status, reply.text());
            }
            Ok(())
        })?;
    }
}
