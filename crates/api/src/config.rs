//! Settings of the HTTP layer.

/// Settings of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest request body accepted, in bytes.
    pub body_limit_bytes: usize,
    /// Sign-in tokens and nonces, and the site they name: svc's public base URL
    /// ([`ApiConfig::base_url`]), the one address every challenge, discovery document and link
    /// is built on.
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
    /// Who may reach the MCP server, besides svc's own public host and origin.
    pub mcp: McpAccess,
    /// Accounts whose wallet sign-ins see the console's operator view: from configuration
    /// only, never from a request.
    pub operators: Vec<String>,
}

/// The hosts (`Host` header) and browser origins (`Origin` header) the MCP server answers
/// besides those of svc's public base URL, which are always allowed: a guard against DNS
/// rebinding, as the MCP transport asks of every server. `*` allows any.
#[derive(Debug, Clone, Default)]
pub struct McpAccess {
    /// More host names (`api.example.com`) or authorities (`api.example.com:8443`).
    pub hosts: Vec<String>,
    /// More origins (`https://app.example.com`).
    pub origins: Vec<String>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            body_limit_bytes: 256 * 1024,
            sign_in: svc_accounts::auth::SignInConfig::ephemeral(),
            previews_per_hour: 5,
            rate_per_minute: 120,
            route_rates: std::collections::HashMap::new(),
            rate_limits: true,
            trusted_proxies: Vec::new(),
            signals: svc_signals::SignalConfig::default(),
            mcp: McpAccess::default(),
            operators: Vec::new(),
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

    /// svc's public base URL (`https://api.example.com`, no trailing slash): the base of every
    /// challenge's `resource.url`, every discovery document and every absolute link. It is
    /// configuration only, the site sign-in messages name, and never a request's `Host`,
    /// which the sender chooses; a development run's default is the listen address
    /// (`http://127.0.0.1:8402`).
    pub fn base_url(&self) -> &str {
        self.sign_in.site().uri()
    }

    /// The absolute URL of `path_and_query` under [`ApiConfig::base_url`].
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base_url())
    }
}
