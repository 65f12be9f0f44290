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

/// Middleware recording one count and one latency sample per request.
pub async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let matched = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());
    let response = next.run(request).await;
    let route = match (response.extensions().get::<RouteLabel>(), matched) {
        (Some(RouteLabel(id)), _) => (*id).to_owned(),
        (None, Some(path)) => path,
        (None, None) => "unmatched".to_owned(),
    };
    let status = response.status().as_u16().to_string();
    metrics::counter!("svc_http_requests_total", "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    metrics::histogram!("svc_http_request_duration_seconds", "route" => route).record(started.elapsed().as_secs_f64());
    response
}
