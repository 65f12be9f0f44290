//! Settings of the HTTP layer.

use axum::http::{HeaderMap, header};

/// Settings of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest request body accepted, in bytes.
    pub body_limit_bytes: usize,
    /// Public base URL used in discovery documents (`https://api.example.com`); when unset,
    /// the request's `Host` is used there. Sign-in never reads `Host`: its site is in
    /// [`ApiConfig::sign_in`].
    pub public_url: Option<String>,
    /// Sign-in tokens and nonces.
    pub sign_in: svc_accounts::auth::SignInConfig,
    /// Free previews per client IP per hour.
    pub previews_per_hour: u32,
    /// Calls per client per minute on routes without a limit of their own.
    pub rate_per_minute: u32,
    /// Whether rate limits apply; off only for load tests that replay one client.
    pub rate_limits: bool,
    /// Peers whose `X-Forwarded-For` is believed (the load balancers in front); nobody's by
    /// default, so a client cannot pick its own IP.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Scoring and refresh settings of the signal engine.
    pub signals: svc_signals::SignalConfig,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            body_limit_bytes: 256 * 1024,
            public_url: None,
            sign_in: svc_accounts::auth::SignInConfig::ephemeral(),
            previews_per_hour: 5,
            rate_per_minute: 120,
            rate_limits: true,
            trusted_proxies: Vec::new(),
            signals: svc_signals::SignalConfig::default(),
        }
    }
}

impl ApiConfig {
    /// The base URL for absolute links: the configured public URL, else the request's host.
    pub fn base_url(&self, headers: &HeaderMap) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let host =
            headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| is_host(h)).unwrap_or("localhost");
        format!("http://{host}")
    }
}

/// A conservative host[:port] check, so a hostile `Host` header cannot inject text into
/// the documents.
fn is_host(h: &str) -> bool {
    !h.is_empty() && h.len() <= 255 && h.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
}
