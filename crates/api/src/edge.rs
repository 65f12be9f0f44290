//! The layer every request crosses first: it marks secret headers, gives the request an id,
//! opens its trace span, answers CORS preflights, adds the CORS headers every answer carries,
//! and turns a handler panic into a 500 in our error shape.
//!
//! It replaces a stack of five general-purpose layers (tower-http's sensitive-headers,
//! request-id set and propagate, trace, CORS and catch-panic). Each is cheap on its own, but
//! together, cloned per request and nested five futures deep, they cost about 11,700
//! instructions per request (callgrind), more than validating, pricing and answering a paid
//! route's 402 challenge. Our CORS policy is fixed (any origin, method and header, with the
//! x402 headers exposed), so everything this layer adds is a constant header.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::FutureExt as _;

use crate::error::ApiError;

/// The header carrying a request's id, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Headers that carry secrets or payments: marked sensitive, so no debug output shows them.
/// A `static`, not a `const`: a const array is built and dropped again at every use.
static SENSITIVE: [HeaderName; 4] = [
    header::AUTHORIZATION,
    HeaderName::from_static("x-api-key"),
    HeaderName::from_static(svc_x402::PAYMENT_SIGNATURE),
    HeaderName::from_static(svc_x402::X_PAYMENT),
];

/// The response headers a browser page may read: the x402 headers are not CORS-safelisted.
const EXPOSED: HeaderValue = HeaderValue::from_static("payment-required, payment-response, x-request-id");
const ANY: HeaderValue = HeaderValue::from_static("*");

/// Browsers and browser-based agents may call from any origin, with any method and header.
/// No answer varies by the request's CORS headers, so none sends `Vary` for them; if origins
/// are ever restricted, `Vary: Origin` must come back.
#[derive(Clone)]
pub struct EdgeLayer {
    ids: RequestIds,
}

impl EdgeLayer {
    /// A layer whose request ids start from a fresh random prefix.
    pub fn new() -> Self {
        EdgeLayer { ids: RequestIds::new() }
    }
}

impl Default for EdgeLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> tower::Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge { inner, ids: self.ids.clone() }
    }
}

/// The service of [`EdgeLayer`].
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    ids: RequestIds,
}

impl<S> tower::Service<Request> for Edge<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let headers = request.headers_mut();
        // One pass over the request's few headers, rather than a lookup per secret name.
        for (name, value) in headers.iter_mut() {
            if SENSITIVE.contains(name) {
                value.set_sensitive(true);
            }
        }
        let id = match headers.get(REQUEST_ID) {
            Some(id) => id.clone(),
            None => {
                let id = self.ids.next();
                headers.insert(REQUEST_ID, id.clone());
                id
            }
        };
        let started = Instant::now();
        if is_preflight(&request) {
            return EdgeFuture { called: None, early: Some(preflight()), span: None, started, id: Some(id) };
        }
        // Field values are only read when the span is enabled; a disabled span (no subscriber
        // wants it) is not entered at all, on the call or on any poll.
        let span = tracing::info_span!(
            "request",
            method = %request.method(),
            path = %svc_agentbox::telegram::logged_path(request.uri().path()),
            request_id = id.to_str().unwrap_or(""),
        );
        let span = (!span.is_disabled()).then_some(span);
        let _entered = span.as_ref().map(tracing::Span::enter);
        let (called, early) = match std::panic::catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
            Ok(future) => (Some(AssertUnwindSafe(future).catch_unwind()), None),
            Err(_) => (None, Some(panicked())),
        };
        drop(_entered);
        EdgeFuture { called, early, span, started, id: Some(id) }
    }
}

pin_project_lite::pin_project! {
    /// The response future of [`Edge`]: a named type rather than a boxed one, since the
    /// router boxes every route's future once already.
    pub struct EdgeFuture<F> {
        #[pin]
        called: Option<futures::future::CatchUnwind<AssertUnwindSafe<F>>>,
        // A preflight's answer, or the 500 for a handler that panicked before its future.
        early: Option<Response>,
        span: Option<tracing::Span>,
        started: Instant,
        id: Option<HeaderValue>,
    }
}

impl<F> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.span.as_ref().map(tracing::Span::enter);
        let response = match (this.called.as_mut().as_pin_mut(), this.early.take()) {
            (_, Some(early)) => early,
            (Some(called), None) => match std::task::ready!(called.poll(cx)) {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(_) => panicked(),
            },
            (None, None) => panic!("EdgeFuture polled after it finished"),
        };
        // Finished: the handler's future is dropped now, and never polled again.
        this.called.set(None);
        let status = response.status();
        let latency_us = this.started.elapsed().as_micros() as u64;
        if status.is_server_error() {
            tracing::error!(status = status.as_u16(), latency_us, "request failed");
        } else {
            tracing::debug!(status = status.as_u16(), latency_us, "request finished");
        }
        let id = this.id.take().expect("an answer is finished once");
        Poll::Ready(Ok(finish(response, id)))
    }
}

/// A CORS preflight: `OPTIONS` from a page, asking whether its real request may be sent.
fn is_preflight(request: &Request) -> bool {
    request.method() == Method::OPTIONS
        && request.headers().contains_key(header::ORIGIN)
        && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// Any method and any header, from any origin.
fn preflight() -> Response {
    let mut response = StatusCode::OK.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, ANY);
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, ANY);
    response
}

/// A handler panic: logged, and answered as a 500 in our error shape; the process keeps serving.
fn panicked() -> Response {
    ApiError::Internal("handler panicked".into()).into_response()
}

/// Adds what every answer carries: its request id and the CORS headers.
fn finish(mut response: Response, id: HeaderValue) -> Response {
    let headers: &mut HeaderMap = response.headers_mut();
    headers.reserve(3);
    headers.insert(REQUEST_ID, id);
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY);
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED);
    response
}

/// Request ids: a random per-process prefix and a counter. Unique across replicas in
/// practice, and unlike a UUIDv4 it needs no entropy per request.
#[derive(Clone)]
struct RequestIds {
    prefix: u32,
    next: Arc<AtomicU64>,
}

impl RequestIds {
    fn new() -> Self {
        let prefix = uuid::Uuid::new_v4().as_u128() as u32;
        RequestIds { prefix, next: Arc::new(AtomicU64::new(0)) }
    }

    fn next(&self) -> HeaderValue {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_bytes(&request_id_text(self.prefix, n)).expect("hex digits and a dash make a header value")
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
