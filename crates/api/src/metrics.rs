//! Prometheus metrics: request counts and latency by route id and status, rendered at
//! `/metrics`. The recorder is process-global (the `metrics` facade is), installed once.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Latency buckets in seconds: sub-millisecond paid calls up to slow upstreams.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// The route label of a response, set by the route pipeline so metrics name the catalogue
/// id rather than a path template.
#[derive(Debug, Clone, Copy)]
pub struct RouteLabel(pub &'static str);

/// The process's metrics handle, installing the recorder on first use.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new();
            let builder = builder.set_buckets(BUCKETS).unwrap_or_else(|_| PrometheusBuilder::new());
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            // Fails only if another recorder is installed; then ours renders nothing, which
            // is visible at /metrics and harmless to requests.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// Middleware recording one count and one latency sample per request. Labels are static
/// strings wherever they can be (route id, method, status), so recording allocates nothing
/// on the routes of the catalogue.
pub async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route: metrics::SharedString = match (response.extensions().get::<RouteLabel>(), matched) {
        (Some(RouteLabel(id)), _) => (*id).into(),
        (None, Some(path)) => path.as_str().to_owned().into(),
        (None, None) => "unmatched".into(),
    };
    let code = response.status();
    let status: metrics::SharedString = match STATUS_LABELS.iter().find(|s| **s == code.as_str()) {
        Some(label) => (*label).into(),
        None => code.as_str().to_owned().into(),
    };
    metrics::counter!("svc_http_requests_total", "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    metrics::histogram!("svc_http_request_duration_seconds", "route" => route).record(started.elapsed().as_secs_f64());
    response
}

/// The statuses svc answers with, as static labels (others are labelled too, with an allocation).
const STATUS_LABELS: &[&str] = &[
    "200", "204", "400", "401", "402", "403", "404", "405", "409", "413", "415", "422", "429", "500", "501", "502",
    "503", "504",
];

fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}
