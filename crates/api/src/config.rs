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
    /// Free previews per client IP per hour; 0 means no quota.
    pub previews_per_hour: u32,
    /// Calls per client per minute on routes without a limit of their own; 0 means no limit.
    pub rate_per_minute: u32,
    /// Calls per client per minute by route id, overriding the route's own limit or the
    /// default; 0 means no limit (a deployment behind its own gateway).
    pub route_rates: std::collections::HashMap<&'static str, u32>,
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
            route_rates: std::collections::HashMap::new(),
            rate_limits: true,
            trusted_proxies: Vec::new(),
            signals: svc_signals::SignalConfig::default(),
        }
    }
}

impl ApiConfig {
    /// Calls per client per minute on `route`, and the bucket they are counted in; a limit of
    /// 0 means none.
    pub fn rate_of(&self, route: &svc_catalogue::RouteSpec) -> (u32, &'static str) {
        if let Some(&limit) = self.route_rates.get(route.id) {
            return (limit, route.id);
        }
        match route.rate {
            svc_catalogue::RatePolicy::PerMinute(limit) => (limit, route.id),
            svc_catalogue::RatePolicy::Default => (self.rate_per_minute, "default"),
        }
    }

    /// The limit the catalogue shows for `route`: `None` where calls are not limited.
    pub fn shown_rate_limit(&self, route: &svc_catalogue::RouteSpec) -> Option<u32> {
        let (limit, _) = self.rate_of(route);
        (self.rate_limits && limit > 0).then_some(limit)
    }

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
