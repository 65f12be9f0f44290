//! The svc HTTP application, built from the catalogue.
//!
//! [`app`] returns the whole router, so `svc serve` and the tests run the same app.
//!
//! # Layout
//! - [`pipeline`]: the path every catalogue route takes (read, validate, check, then its channel).
//! - `call`: the one request a channel is handed.
//! - `x402`: the one x402 front door of every surface that sells (routes, sellers' agents,
//!   the LLM top-up): the payment read once, challenges on the configured base URL, the one
//!   dispatch of a sale, the paywall's outcome mapped to a response; `challenge`: the
//!   challenges it caches; `handover`: an answer paid on chain confirmed to the paywall once
//!   written.
//! - `credits`: the credit channel (`/api/svc-tools/*`); `preview`: free previews.
//! - `rate`: rate limits per client; `limits`: who the client is, and the rate headers.
//! - [`handlers`]: route handlers by catalogue id.
//! - `seller_invoke`: a seller's agent, sold through the routes' preview and x402 branches.
//! - `llm`: the LLM proxy's routes, and the one mapping of its errors to OpenAI's error body.
//! - `mcp`: the MCP server, every route a tool, paid through the same path as its HTTP call.
//! - `console`: the console's pages for people, over the same services and routes.
//! - `agentbox_logs`: a sandboxed gateway's log, as server-sent events; `agentbox_telegram`:
//!   the chat-bot relay and the Bot-API shim the sandboxed agent polls.
//! - `answer`: what routes answer with (JSON encoded ahead of time, 402 challenges).
//! - `encoding`: gzip for answers encoded ahead of time.
//! - `edge`: request ids, tracing, CORS and the panic guard, around every route.
//! - `error`: [`ApiError`], the one place errors become responses.
//! - `ops`: health, readiness, metrics and the generated documents.
//! - `config`: the HTTP settings; `state`: the shared [`AppState`].
//! - [`serve`]: accepting connections, with timeouts, a cap, and a cap per client.

mod agentbox_logs;
mod agentbox_telegram;
mod answer;
mod call;
mod challenge;
mod config;
mod console;
mod credits;
mod edge;
mod encoding;
mod error;
pub mod handlers;
mod handover;
mod limits;
mod llm;
mod mcp;
mod ops;
pub mod pipeline;
mod preview;
mod rate;
mod seller_invoke;
pub mod serve;
mod state;
mod x402;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::routing::{MethodFilter, get, on};
use svc_catalogue::{HttpMethod, Loc, Operational, RouteSpec};

pub use config::McpAccess;
pub use error::ApiError;
pub use handlers::{HandlerMismatch, Handlers};
pub use pipeline::Channel;
pub use state::{ApiConfig, AppState, Services, StateError};

/// The router's form of a path template: parameters renamed by position (`{p0}`, `{p1}`).
/// The contract names the parameter at one position differently on sibling routes
/// (`/social/user/{username}` beside `/social/user/{user_id}/timeline`), which the router
/// cannot hold under two names; the pipeline maps positions back to the route's names.
fn router_path(template: &str) -> String {
    let mut index = 0;
    template
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') && segment.ends_with('}') {
                let renamed = format!("{{p{index}}}");
                index += 1;
                renamed
            } else {
                segment.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn method_router(
    route: &'static RouteSpec,
    channel: Channel,
    handlers: &Arc<Handlers>,
) -> axum::routing::MethodRouter<AppState> {
    let filter = match route.method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Put => MethodFilter::PUT,
        HttpMethod::Delete => MethodFilter::DELETE,
        HttpMethod::Patch => MethodFilter::PATCH,
    };
    let handlers = Arc::clone(handlers);
    on(filter, move |State(state): State<AppState>, request: Request| {
        pipeline::serve(state, Arc::clone(&handlers), route, channel, request)
    })
}

/// Adds `route` at `path`, next to other methods at the same path; a method none of them
/// serves is a 405 naming those that are.
fn add_route(
    paths: &mut std::collections::BTreeMap<String, (axum::routing::MethodRouter<AppState>, Vec<&'static str>)>,
    labels: &mut svc_metrics::RouteLabels,
    path: String,
    route: &'static RouteSpec,
    channel: Channel,
    handlers: &Arc<Handlers>,
) {
    labels.add(&path, route.method.as_str(), route.id);
    let entry = paths.entry(path).or_insert_with(|| (axum::routing::MethodRouter::new(), Vec::new()));
    entry.0 = std::mem::take(&mut entry.0).merge(method_router(route, channel, handlers));
    entry.1.push(route.method.as_str());
}

/// `{path}` values of the chain-data proxy outside the catalogue: a 422 listing the allowed ones.
async fn unknown_chaindata_path() -> ApiError {
    let allowed = svc_catalogue::routes::chaindata::allowed_paths().join(", ");
    ApiError::field(
        vec![Loc::from("path"), Loc::from("path")],
        format!("unknown chain-data route; allowed: {allowed}"),
        "enum",
    )
}

/// The whole application: the catalogue's routes, served by `handlers` over `state`. Every
/// handler must take its route's input type and return its output type; a mismatch is a
/// build bug, refused here, at start.
pub fn app(state: AppState, handlers: Handlers) -> Result<Router, HandlerMismatch> {
    app_with(state, handlers, Router::new())
}

/// The whole application plus `extra` routes, served behind the same middleware (request ids,
/// tracing, metrics, CORS, panic guard): how the benchmark measures a route on equal terms.
pub fn app_with(state: AppState, handlers: Handlers, extra: Router<AppState>) -> Result<Router, HandlerMismatch> {
    handlers.verify(state.catalogue)?;
    let handlers = Arc::new(handlers);
    let mut paths = std::collections::BTreeMap::new();
    let mut labels = svc_metrics::RouteLabels::default();
    for route in state.catalogue.routes() {
        let channel = if route.is_paid() { Channel::X402 } else { Channel::Free };
        add_route(&mut paths, &mut labels, router_path(route.path), route, channel, &handlers);
        if let Some(twin) = route.credits_path() {
            add_route(&mut paths, &mut labels, router_path(&twin), route, Channel::Credits, &handlers);
        }
    }
    let mut router: Router<AppState> = Router::new();
    for (path, (methods, allowed)) in paths {
        // Paths with several methods are few and built once per app.
        let allow: &'static str = match allowed.as_slice() {
            [one] => one,
            many => Box::leak(many.join(", ").into_boxed_str()),
        };
        router = router.route(&path, methods.fallback(move || async move { ApiError::MethodNotAllowed { allow } }));
    }
    let chaindata = svc_catalogue::routes::chaindata::CHAINDATA_PREFIX;
    for prefix in [Some(chaindata.to_owned()), svc_catalogue::route::credits_twin(chaindata)].into_iter().flatten() {
        router = router.route(&format!("{prefix}{{*rest}}"), axum::routing::any(unknown_chaindata_path));
    }
    for op in Operational::ALL {
        let serve = match op {
            Operational::Index => get(ops::index),
            Operational::Healthz => get(ops::healthz),
            Operational::Readyz => get(ops::readyz),
            Operational::Metrics => get(ops::metrics),
            Operational::OpenApi => get(ops::openapi_json),
            Operational::Catalogue => get(ops::catalogue),
            Operational::WellKnown => get(ops::well_known),
            Operational::LlmsTxt => get(ops::llms_txt),
        };
        router = router.route(op.path(), serve);
    }
    let router = router
        .merge(llm::router())
        .merge(agentbox_logs::router())
        .merge(agentbox_telegram::router())
        .merge(seller_invoke::router())
        .merge(mcp::router(&state, &handlers))
        .merge(console::router(&handlers))
        .merge(extra)
        .fallback(|| async { ApiError::NotFound })
        // Every route above that takes another method sets its own; what is left are the
        // operational routes and the gateway log, all GET.
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed { allow: "GET" } });

    // One `layer` call, so each route is boxed once with both. Metrics outermost, so a panic
    // turned into a 500 by the edge layer is counted as one.
    let metrics = svc_metrics::RecordLayer::new(labels, matched_path);
    let layers = tower::ServiceBuilder::new().layer(metrics).layer(edge::EdgeLayer::new());
    Ok(router.layer(layers).with_state(state))
}

/// The router path a request matched, as the router keeps it: what requests are counted under
/// when they reach no catalogue route.
fn matched_path(extensions: &axum::http::Extensions) -> Option<&str> {
    extensions.get::<axum::extract::MatchedPath>().map(axum::extract::MatchedPath::as_str)
}

/// How long in-flight requests get to finish after a shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
