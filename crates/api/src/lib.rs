//! The svc HTTP application, built from the catalogue.
//!
//! [`app`] returns the whole router, so `svc serve` and the tests run the same app.
//!
//! # Layout
//! - [`pipeline`]: the path every catalogue route takes (read, validate, handle).
//! - [`handlers`]: route handlers by catalogue id.
//! - [`encoding`]: gzip for answers encoded ahead of time.
//! - [`error`]: [`ApiError`], the one place errors become responses.
//! - [`ops`]: health, readiness, metrics and the generated documents.
//! - [`metrics`]: Prometheus recording.
//! - [`state`]: the shared [`AppState`].

pub mod accounts;
pub mod auth;
pub mod credits;
pub mod encoding;
pub mod error;
pub mod handlers;
pub mod limits;
pub mod metrics;
pub mod ops;
pub mod paywall;
pub mod pipeline;
pub mod preview;
pub mod rate;
pub mod reconcile;
pub mod signals;
pub mod state;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Response, header};
use axum::response::IntoResponse;
use axum::routing::{MethodFilter, get, on};
use svc_catalogue::{HttpMethod, Loc, RouteSpec};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

pub use error::ApiError;
pub use pipeline::Channel;
pub use state::{ApiConfig, AppState, Services};

/// Headers that carry secrets or payments: redacted from traces.
const SENSITIVE: [HeaderName; 4] = [
    header::AUTHORIZATION,
    HeaderName::from_static("x-api-key"),
    HeaderName::from_static("payment-signature"),
    HeaderName::from_static("x-payment"),
];

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

fn method_router(route: &'static RouteSpec, channel: Channel) -> axum::routing::MethodRouter<AppState> {
    let filter = match route.method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Delete => MethodFilter::DELETE,
    };
    on(filter, move |State(state): State<AppState>, request: Request| pipeline::serve(state, route, channel, request))
}

/// Adds `route` at `path`, next to other methods at the same path; a method none of them
/// serves is a 405 naming those that are.
fn add_route(
    paths: &mut std::collections::BTreeMap<String, (axum::routing::MethodRouter<AppState>, Vec<&'static str>)>,
    labels: &mut metrics::RouteLabels,
    path: String,
    route: &'static RouteSpec,
    channel: Channel,
) {
    labels.add(&path, route.method.as_str(), route.id);
    let entry = paths.entry(path).or_insert_with(|| (axum::routing::MethodRouter::new(), Vec::new()));
    entry.0 = std::mem::take(&mut entry.0).merge(method_router(route, channel));
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

/// The whole application.
pub fn app(state: AppState) -> Router {
    app_with(state, Router::new())
}

/// The whole application plus `extra` routes, served behind the same middleware (request ids,
/// tracing, metrics, CORS, panic guard): how the benchmark measures a route on equal terms.
pub fn app_with(state: AppState, extra: Router<AppState>) -> Router {
    let mut paths = std::collections::BTreeMap::new();
    let mut labels = metrics::RouteLabels::default();
    for route in state.catalogue.routes() {
        let channel = if route.is_paid() { Channel::X402 } else { Channel::Free };
        add_route(&mut paths, &mut labels, router_path(route.path), route, channel);
        if let Some(twin) = route.credits_path() {
            add_route(&mut paths, &mut labels, router_path(&twin), route, Channel::Credits);
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
    for prefix in [svc_catalogue::routes::chaindata::CHAINDATA_PREFIX, "/api/svc-tools/data-provider/chaindata/"] {
        router = router.route(&format!("{prefix}{{*rest}}"), axum::routing::any(unknown_chaindata_path));
    }
    let router = router
        .merge(extra)
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/openapi.json", get(ops::openapi_json))
        .route("/api/x402/catalogue", get(ops::catalogue))
        .route("/.well-known/x402", get(ops::well_known))
        .route("/llms.txt", get(ops::llms_txt))
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed { allow: "GET" } });

    router
        .layer(
            ServiceBuilder::new()
                .layer(SetSensitiveRequestHeadersLayer::new(SENSITIVE))
                .layer(SetRequestIdLayer::x_request_id(SequentialRequestId::new()))
                .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
                    // Field values are only read when the span is enabled.
                    tracing::info_span!(
                        "request",
                        method = %request.method(),
                        path = %request.uri().path(),
                        request_id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or(""),
                    )
                }))
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(metrics::RecordLayer::new(labels))
                .layer(cors())
                .layer(CatchPanicLayer::custom(panic_response)),
        )
        .with_state(state)
}

/// Request ids: a random per-process prefix and a counter. Unique across replicas in
/// practice, and unlike a UUIDv4 it needs no entropy per request.
#[derive(Clone)]
struct SequentialRequestId {
    prefix: u32,
    next: Arc<std::sync::atomic::AtomicU64>,
}

impl SequentialRequestId {
    fn new() -> Self {
        let prefix = uuid::Uuid::new_v4().as_u128() as u32;
        SequentialRequestId { prefix, next: Arc::new(std::sync::atomic::AtomicU64::new(0)) }
    }
}

impl MakeRequestId for SequentialRequestId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        HeaderValue::from_bytes(&request_id_text(self.prefix, n)).ok().map(RequestId::new)
    }
}

/// `{prefix:08x}-{n:012x}`, written without the formatting machinery (one per request).
fn request_id_text(prefix: u32, n: u64) -> [u8; 21] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [b'-'; 21];
    for (i, digit) in text[..8].iter_mut().enumerate() {
        *digit = HEX[((prefix >> (28 - 4 * i)) & 0xf) as usize];
    }
    for (i, digit) in text[9..].iter_mut().enumerate() {
        *digit = HEX[((n >> (44 - 4 * i)) & 0xf) as usize];
    }
    text
}

/// Browsers and browser-based agents may call from any origin; they must be able to read the
/// x402 headers, which are not CORS-safelisted.
fn cors() -> tower_http::cors::CorsLayer {
    use tower_http::cors::{Any, CorsLayer};
    // Every answer allows any origin, method and header with `*`, so none varies by the
    // request's CORS headers: no `Vary` (which would also cost a copy per request).
    CorsLayer::new().allow_origin(Any).allow_methods(Any).allow_headers(Any).vary([]).expose_headers([
        axum::http::HeaderName::from_static(svc_x402::PAYMENT_REQUIRED),
        axum::http::HeaderName::from_static(svc_x402::PAYMENT_RESPONSE),
        axum::http::HeaderName::from_static("x-request-id"),
    ])
}

/// A handler panic becomes a logged 500 in our error shape; the process keeps serving.
fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response<axum::body::Body> {
    ApiError::Internal("handler panicked".into()).into_response()
}

/// How long in-flight requests get to finish after a shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_read_as_prefix_dash_counter() {
        for (prefix, n) in [(0u32, 0u64), (0xdead_beef, 0x0123_4567_89ab), (u32::MAX, u64::MAX)] {
            let expected = format!("{prefix:08x}-{:012x}", n & 0xffff_ffff_ffff);
            assert_eq!(std::str::from_utf8(&super::request_id_text(prefix, n)).expect("ascii"), expected);
        }
    }
}
