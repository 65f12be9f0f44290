//! One vendor's HTTP client: the base URL, the key, the timeout, retries with backoff and
//! jitter honouring `Retry-After`, the concurrency cap and the per-vendor metrics. Adapters
//! say what to ask; this says how.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, RETRY_AFTER};
use http::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tokio::sync::Semaphore;

use crate::{UpstreamError, Vendor, VendorConfig};

/// A vendor's client. Cheap to share; the adapters own one each.
#[derive(Debug)]
pub(crate) struct VendorClient {
    vendor: Vendor,
    http: reqwest::Client,
    /// Sent on every call: the vendor's key among them, marked sensitive.
    headers: HeaderMap,
    base: String,
    permits: Semaphore,
    config: VendorConfig,
}

/// First backoff step; doubled each retry, with full jitter.
const BACKOFF_BASE: Duration = Duration::from_millis(100);

/// Idle connections kept per vendor host. A connection that read a large answer keeps its
/// grown read buffer (tens to hundreds of KiB) while idle, so an unbounded pool left by a
/// burst (the signal engine's refresh fans out to every token) holds megabytes for nothing;
/// a few warm connections are what steady traffic reuses.
const IDLE_PER_HOST: usize = 8;

/// How long an idle vendor connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The one HTTP client every vendor shares: one connection pool (keyed by host) and one TLS
/// root store for the process, instead of a root store parsed and a pool kept per vendor.
/// Keys and timeouts are per call, so sharing it mixes nothing between vendors.
fn shared_http() -> Result<reqwest::Client, String> {
    static SHARED: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(client) = SHARED.get() {
        return Ok(client.clone());
    }
    // Vendors are HTTPS; the process-wide TLS provider may not be chosen yet (tests).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("svc/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(IDLE_PER_HOST)
        .pool_idle_timeout(IDLE_TIMEOUT)
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    Ok(SHARED.get_or_init(|| client).clone())
}

impl VendorClient {
    /// A client for `vendor`, sending `headers` on every call. Keyed vendors put their key
    /// in `headers` marked sensitive, so it never shows in debug output.
    pub(crate) fn new(vendor: Vendor, config: &VendorConfig, headers: HeaderMap) -> Result<Self, UpstreamError> {
        let misconfigured = |cause: String| UpstreamError::Config { vendor, cause };
        let base = reqwest::Url::parse(&config.base_url).map_err(|e| misconfigured(format!("base URL: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(misconfigured("base URL must be http(s)://host[/path]".into()));
        }
        Ok(VendorClient {
            vendor,
            http: shared_http().map_err(misconfigured)?,
            headers,
            base: config.base_url.trim_end_matches('/').to_owned(),
            permits: Semaphore::new(config.max_concurrency.max(1)),
            config: config.clone(),
        })
    }

    /// `GET {base}{path}?{query}` decoded as `T`. `path` is built by the adapter from
    /// validated input and always starts with `/`, so no request leaves the base URL.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, UpstreamError> {
        let bytes = self.call(Method::GET, path, query).await?;
        self.decode(&bytes)
    }

    /// `POST {base}{path}` with `body` as JSON, decoded as `T`. Retried like every call, so
    /// only for reads and for writes the vendor refuses to apply twice (signed actions with a
    /// one-time nonce).
    pub(crate) async fn post_json<B: serde::Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, UpstreamError> {
        let body = serde_json::to_vec(body).map_err(|e| self.transport(&format!("request body: {e}")))?;
        let bytes = self.call_with_body(Method::POST, path, &[], Some(Bytes::from(body))).await?;
        self.decode(&bytes)
    }

    /// Decodes a vendor body, reporting where it differs from the documented shape.
    pub(crate) fn decode<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, UpstreamError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize(&mut de).map_err(|e| UpstreamError::Decode {
            vendor: self.vendor,
            cause: format!("at {}: {}", e.path(), e.inner()),
        })
    }

    /// `POST {base}{path}` with a JSON `body`, answering the raw 2xx body. `path` is a
    /// constant of the adapter, so no request leaves the base URL.
    pub(crate) async fn post_json_bytes(&self, path: &str, body: &serde_json::Value) -> Result<Bytes, UpstreamError> {
        let body = Bytes::from(serde_json::to_vec(body).map_err(|_| self.transport("request body is not JSON"))?);
        self.call_with_body(Method::POST, path, &[], Some(body)).await
    }

    /// `POST {base}{path}?{query}` with a JSON body, decoded as `T`.
    pub(crate) async fn post_json_with_query<B: serde::Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        body: &B,
    ) -> Result<T, UpstreamError> {
        let body = serde_json::to_vec(body).map_err(|_| self.transport("request body does not encode"))?;
        let bytes = self.call_with_body(Method::POST, path, query, Some(Bytes::from(body))).await?;
        self.decode(&bytes)
    }

    /// One logical call: waits for a slot, then tries up to `1 + retries` times.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Bytes, UpstreamError> {
        self.call_with(method, path, query, &|request| request).await
    }

    /// [`Self::call`] with an optional JSON body, sent again on every retry.
    pub(crate) async fn call_with_body(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<Bytes, UpstreamError> {
        match body {
            Some(body) => {
                self.call_with(method, path, query, &|request| {
                    request.header(http::header::CONTENT_TYPE, "application/json").body(body.clone())
                })
                .await
            }
            None => self.call_with(method, path, query, &|request| request).await,
        }
    }

    /// [`Self::call`], with `decorate` adding headers or a body to every attempt; vendors
    /// that sign each request with the time (so a retry needs a fresh signature) sign here.
    pub(crate) async fn call_with(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        decorate: &(dyn Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder + Sync),
    ) -> Result<Bytes, UpstreamError> {
        // Empty for vendors whose base URL is the endpoint itself (a JSON-RPC node).
        debug_assert!(path.is_empty() || path.starts_with('/'), "adapter paths are absolute");
        let vendor = self.vendor.family();
        let started = Instant::now();
        let result = async {
            let _slot = self.permits.acquire().await.map_err(|_| self.transport("client closed"))?;
            let mut url = reqwest::Url::parse(&format!("{}{}", self.base, path))
                .map_err(|_| self.transport("request path is not a URL"))?;
            if !query.is_empty() {
                url.query_pairs_mut().extend_pairs(query);
            }
            let mut attempt = 0;
            loop {
                let request = self.http.request(method.clone(), url.clone()).headers(self.headers.clone());
                let sent = decorate(request.timeout(self.config.timeout)).send().await;
                let wait = match sent {
                    Ok(response) if response.status().is_success() => {
                        return response.bytes().await.map_err(|e| self.failure(e));
                    }
                    Ok(response) => {
                        let status = response.status();
                        if !retryable(status) || attempt >= self.config.retries {
                            return Err(UpstreamError::Status { vendor: self.vendor, status: status.as_u16() });
                        }
                        let wait = retry_after(response.headers()).unwrap_or_else(|| backoff(attempt));
                        if wait > self.config.max_retry_wait {
                            return Err(UpstreamError::Status { vendor: self.vendor, status: status.as_u16() });
                        }
                        wait
                    }
                    Err(e) if e.is_connect() && attempt < self.config.retries => backoff(attempt),
                    Err(e) => return Err(self.failure(e)),
                };
                metrics::counter!("svc_upstream_retries_total", "vendor" => vendor).increment(1);
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
        .await;
        metrics::counter!("svc_upstream_calls_total", "vendor" => vendor).increment(1);
        let took = started.elapsed();
        metrics::histogram!("svc_upstream_latency_seconds", "vendor" => vendor).record(took.as_secs_f64());
        crate::health::record(self.vendor, took, result.as_ref().err().map(ToString::to_string));
        if let Err(err) = &result {
            metrics::counter!("svc_upstream_errors_total", "vendor" => vendor, "kind" => err.kind()).increment(1);
            tracing::warn!(vendor, error = %err, "upstream call failed");
        }
        result
    }

    fn transport(&self, cause: &str) -> UpstreamError {
        UpstreamError::Transport { vendor: self.vendor, cause: cause.to_owned() }
    }

    fn failure(&self, err: reqwest::Error) -> UpstreamError {
        if err.is_timeout() {
            UpstreamError::Timeout { vendor: self.vendor }
        } else {
            // The URL may carry a query built from input; the base may carry credentials.
            UpstreamError::Transport { vendor: self.vendor, cause: err.without_url().to_string() }
        }
    }
}

/// Rate limits and server errors may pass; anything else is the same on every try.
fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

/// `Retry-After` in seconds (the HTTP-date form is rare from APIs and treated as absent).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let secs: f64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

/// Exponential backoff with full jitter: a random wait in `[0, base * 2^attempt]`, so
/// clients that failed together do not retry together.
fn backoff(attempt: u32) -> Duration {
    let ceiling = BACKOFF_BASE.saturating_mul(1 << attempt.min(6));
    ceiling.mul_f64(fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    use http::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_and_ignores_dates_and_garbage() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(RETRY_AFTER, HeaderValue::from_str(v).expect("value"));
            retry_after(&h)
        };
        assert_eq!(with("2"), Some(Duration::from_secs(2)));
        assert_eq!(with(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(with("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(with("-1"), None);
        assert_eq!(with("NaN"), None);
    }

    #[test]
    fn backoff_stays_under_its_doubling_ceiling() {
        for attempt in 0..10 {
            let ceiling = BACKOFF_BASE * (1 << attempt.min(6));
            assert!(backoff(attempt) <= ceiling);
        }
    }
}
