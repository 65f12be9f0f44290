//! Shared application state: one `Arc`, cloned into every request.

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use svc_catalogue::Catalogue;
use svc_domain::Clock;
use svc_paywall::Paywall;
use svc_signals::{EngineParts, SignalEngine, UpstreamMarket};
use svc_store::Store;
use svc_upstream::Upstreams;
use svc_x402::{Facilitator, Offer};

use crate::handlers::{Handlers, SignalAnswers};

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

/// Everything a handler may need. Cheap to clone.
#[derive(Clone)]
pub struct AppState(pub(crate) Arc<App>);

/// The contents of [`AppState`].
pub struct App {
    /// Persistence.
    pub store: Store,
    /// Injected time.
    pub clock: Arc<dyn Clock>,
    /// The route table.
    pub catalogue: &'static Catalogue,
    /// HTTP settings.
    pub config: ApiConfig,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// Charges x402 payments.
    pub paywall: Arc<Paywall>,
    /// The x402 channel's challenges.
    pub challenges: crate::x402::Challenges,
    /// Vendor adapters behind the data routes.
    pub upstreams: Arc<Upstreams>,
    /// Preview quotas and rate limits.
    pub limiter: svc_limits::Limiter,
    /// The signal engine and its newest snapshot.
    pub signals: Arc<SignalEngine<SignalAnswers>>,
    pub(crate) handlers: Handlers,
}

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").field("store", &self.store).field("config", &self.config).finish_non_exhaustive()
    }
}

/// What the application is built from; everything with I/O or configuration comes in here.
pub struct Services {
    /// Persistence.
    pub store: Store,
    /// Injected time.
    pub clock: Arc<dyn Clock>,
    /// HTTP settings.
    pub config: ApiConfig,
    /// Networks and recipients of x402 payments.
    pub offer: Offer,
    /// Verifies and settles payments.
    pub facilitator: Arc<dyn Facilitator>,
    /// Vendor adapters (pointed at the simulator on a default run and in tests).
    pub upstreams: Arc<Upstreams>,
    /// Preview and rate-limit counters: in memory, or shared in Redis.
    pub limiter: svc_limits::Limiter,
}

impl AppState {
    /// Builds the state, checking that every route with a handler takes the catalogue's
    /// input type and returns its output type (a mismatch is a build bug, caught at start).
    pub fn new(services: Services) -> Result<Self, crate::handlers::HandlerMismatch> {
        Self::with_handlers(services, crate::handlers::all())
    }

    /// [`AppState::new`] with a handler registry of the caller's: tests stand in for a route
    /// whose upstream has not landed, to exercise the paths around it.
    pub fn with_handlers(services: Services, handlers: Handlers) -> Result<Self, crate::handlers::HandlerMismatch> {
        let Services { store, clock, config, offer, facilitator, upstreams, limiter } = services;
        let catalogue = svc_catalogue::catalogue();
        handlers.verify(catalogue)?;
        let paywall = Arc::new(Paywall::new(store.clone(), facilitator, offer, clock.clone()));
        let challenges = crate::x402::Challenges::new(catalogue);
        let signals = Arc::new(SignalEngine::new(EngineParts {
            config: config.signals.clone(),
            store: store.clone(),
            clock: clock.clone(),
            market: Arc::new(UpstreamMarket(upstreams.clone())),
            publish: SignalAnswers::publish,
        }));
        Ok(AppState(Arc::new(App {
            store,
            clock,
            catalogue,
            config,
            metrics: crate::metrics::handle(),
            paywall,
            challenges,
            upstreams,
            limiter,
            signals,
            handlers,
        })))
    }
}
