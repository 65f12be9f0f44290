//! Prometheus metrics: request counts and latency by route id and status, rendered at
//! `/metrics`. The recorder is process-global (the `metrics` facade is), installed once.
//!
//! [`RecordLayer`] is a tower layer over plain `http` requests: the HTTP application says how
//! a request names the path it matched, and which route id each path and method serves.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{Extensions, Method, Request, Response};
use metrics::{Counter, Histogram, SharedString};
use metrics_exporter_prometheus::PrometheusBuilder;
pub use metrics_exporter_prometheus::PrometheusHandle;

/// Latency buckets in seconds: sub-millisecond paid calls up to slow upstreams.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// How often recorded latency samples are folded into their buckets. Until then each sample
/// is held in memory, so without this a process nobody scrapes would grow without bound.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Upkeep passes run so far: shows the upkeep thread is alive.
static UPKEEPS: AtomicU64 = AtomicU64::new(0);

/// The process's metrics handle, installing the recorder (and its upkeep thread) on first use.
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
            let upkept = handle.clone();
            let spawned = std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || {
                loop {
                    upkept.run_upkeep();
                    UPKEEPS.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(UPKEEP_EVERY);
                }
            });
            if let Err(err) = spawned {
                tracing::error!(error = %err, "could not start the metrics upkeep thread; /metrics scrapes still drain samples");
            }
            handle
        })
        .clone()
}

/// Upkeep passes run so far.
pub fn upkeeps() -> u64 {
    UPKEEPS.load(Ordering::Relaxed)
}

/// The layer recording one count and one latency sample per request, labelled with the
/// catalogue id of the route served (both billing channels of a route share it), else the
/// matched path, else `unmatched`.
#[derive(Debug, Clone)]
pub struct RecordLayer {
    routes: Arc<RouteLabels>,
    matched: MatchedPath,
}

/// How a request names the router path it matched (kept in its extensions by the router),
/// if it matched one.
pub type MatchedPath = fn(&Extensions) -> Option<&str>;

/// Catalogue ids by router path and method, with their metric handles.
#[derive(Debug, Default)]
pub struct RouteLabels {
    by_path: HashMap<String, Vec<(&'static str, Arc<RouteMetrics>)>, foldhash::fast::FixedState>,
    /// Handles of the matched paths outside the catalogue (ops routes, catch-alls) and of
    /// `unmatched`, made on first use: the router's paths are finite, so this stays small.
    others: RwLock<HashMap<String, Arc<RouteMetrics>, foldhash::fast::FixedState>>,
}

impl RouteLabels {
    /// Labels requests to `path` (as the router knows it) with `method` as route `id`.
    pub fn add(&mut self, path: &str, method: &'static str, id: &'static str) {
        let metrics = Arc::new(RouteMetrics::new(id.into()));
        self.by_path.entry(path.to_owned()).or_default().push((method, metrics));
    }

    /// The handles a request is counted under: the catalogue id of the route served, else the
    /// matched path, else `unmatched`.
    fn label(&self, path: Option<&str>, method: &str) -> Arc<RouteMetrics> {
        let key = match path {
            Some(path) => {
                let routes = self.by_path.get(path);
                if let Some((_, metrics)) = routes.and_then(|routes| routes.iter().find(|(m, _)| *m == method)) {
                    return metrics.clone();
                }
                path
            }
            None => "unmatched",
        };
        if let Some(known) = self.others.read().ok().and_then(|others| others.get(key).cloned()) {
            return known;
        }
        let made = Arc::new(RouteMetrics::new(key.to_owned().into()));
        match self.others.write() {
            Ok(mut others) => others.entry(key.to_owned()).or_insert(made).clone(),
            Err(_) => made,
        }
    }
}

impl RecordLayer {
    /// Records with the catalogue labels of `routes`, reading each request's matched path
    /// with `matched`.
    pub fn new(routes: RouteLabels, matched: MatchedPath) -> Self {
        RecordLayer { routes: Arc::new(routes), matched }
    }
}

impl<S> tower::Layer<S> for RecordLayer {
    type Service = Record<S>;

    fn layer(&self, inner: S) -> Record<S> {
        Record { inner, routes: self.routes.clone(), matched: self.matched }
    }
}

/// The service of [`RecordLayer`].
#[derive(Debug, Clone)]
pub struct Record<S> {
    inner: S,
    routes: Arc<RouteLabels>,
    matched: MatchedPath,
}

impl<S, A, B> tower::Service<Request<A>> for Record<S>
where
    S: tower::Service<Request<A>, Response = Response<B>>,
{
    type Response = Response<B>;
    type Error = S::Error;
    type Future = RecordFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<A>) -> Self::Future {
        let method = method_label(request.method());
        let label = self.routes.label((self.matched)(request.extensions()), method);
        RecordFuture { inner: self.inner.call(request), started: Instant::now(), method, label: Some(label) }
    }
}

pin_project_lite::pin_project! {
    /// The response future of [`Record`].
    pub struct RecordFuture<F> {
        #[pin]
        inner: F,
        started: Instant,
        method: &'static str,
        label: Option<Arc<RouteMetrics>>,
    }
}

impl<F, B, E> Future for RecordFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = std::task::ready!(this.inner.poll(cx));
        if let (Ok(response), Some(label)) = (&result, this.label.take()) {
            let took = this.started.elapsed().as_secs_f64();
            let status = response.status().as_u16();
            label.record(this.method, status, took);
        }
        Poll::Ready(result)
    }
}

/// The metric handles of one route: registered once, then recording is two atomic updates.
#[derive(Debug)]
struct RouteMetrics {
    route: SharedString,
    latency: Histogram,
    counts: RwLock<Vec<(&'static str, u16, Counter)>>,
}

impl RouteMetrics {
    fn new(route: SharedString) -> Self {
        let latency = metrics::histogram!("svc_http_request_duration_seconds", "route" => route.clone());
        RouteMetrics { route, latency, counts: RwLock::default() }
    }

    fn record(&self, method: &'static str, status: u16, took_secs: f64) {
        self.latency.record(took_secs);
        let counted = self.counts.read().ok().is_some_and(|counts| {
            let known = counts.iter().find(|(m, s, _)| *m == method && *s == status);
            known.map(|(_, _, counter)| counter.increment(1)).is_some()
        });
        if !counted {
            let label: SharedString = match STATUS_LABELS.iter().find(|s| s.parse() == Ok(status)) {
                Some(label) => (*label).into(),
                None => status.to_string().into(),
            };
            let counter = metrics::counter!("svc_http_requests_total",
                "route" => self.route.clone(), "method" => method, "status" => label);
            counter.increment(1);
            if let Ok(mut counts) = self.counts.write() {
                counts.push((method, status, counter));
            }
        }
    }
}

/// The statuses svc answers with, as static labels (others are labelled too, with an allocation).
const STATUS_LABELS: &[&str] = &[
    "200", "204", "400", "401", "402", "403", "404", "405", "409", "413", "415", "422", "429", "500", "501", "502",
    "503", "504",
];

fn method_label(method: &Method) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_folded_without_a_scrape() {
        let _handle = handle();
        let deadline = Instant::now() + Duration::from_secs(5);
        while upkeeps() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(upkeeps() > 0, "the upkeep thread folds histogram samples on its own");
    }
}
