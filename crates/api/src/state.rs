//! Shared application state: one `Arc`, cloned into every request.

use std::sync::Arc;

pub use crate::config::ApiConfig;

use svc_catalogue::Catalogue;
use svc_domain::Clock;
use svc_paywall::Paywall;
use svc_signals::{EngineParts, SignalEngine, UpstreamMarket};
use svc_store::Store;
use svc_upstream::Upstreams;
use svc_x402::{Facilitator, Offer};

use crate::answer::SignalAnswers;

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
    pub metrics: svc_metrics::PrometheusHandle,
    /// Charges x402 payments.
    pub paywall: Arc<Paywall>,
    /// The x402 channel's challenges.
    pub challenges: crate::challenge::Challenges,
    /// Vendor adapters behind the data routes.
    pub upstreams: Arc<Upstreams>,
    /// Preview quotas and rate limits.
    pub limiter: Arc<svc_limits::Limiter>,
    /// The signal engine and its newest snapshot.
    pub signals: Arc<SignalEngine<SignalAnswers>>,
    /// The LLM proxy.
    pub llm: Arc<svc_llm::Llm>,
    /// Agent sandboxes.
    pub agentbox: Arc<svc_agentbox::Agentbox>,
    /// Sellers' agents, their revenue and payouts, the marketplace.
    pub sellers: Arc<svc_sellers::Sellers>,
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
    /// The LLM proxy's tokens, models and providers.
    pub llm: svc_llm::LlmConfig,
    /// Agent sandboxes: settings and backend.
    pub agentbox: svc_agentbox::AgentboxSetup,
    /// The seller side's settings.
    pub sellers: svc_sellers::SellersConfig,
    /// Seals secrets svc must read back (sellers' signing secrets).
    pub sealed: Arc<svc_sealed::SecretBox>,
    /// The networks svc pays sellers out on itself (none: an operator pays queued payouts).
    pub payouts: Vec<Arc<dyn svc_sellers::payouts::PayoutChain>>,
}

impl AppState {
    /// Builds the state the handlers run on; refuses an LLM model table that names a
    /// provider it does not configure.
    pub fn new(services: Services) -> Result<Self, StateError> {
        let Services {
            store,
            clock,
            config,
            offer,
            facilitator,
            upstreams,
            limiter,
            llm,
            agentbox,
            sellers,
            sealed,
            payouts,
        } = services;
        let limiter = Arc::new(limiter);
        let catalogue = svc_catalogue::catalogue();
        let paywall = Arc::new(Paywall::new(store.clone(), facilitator, offer, clock.clone()));
        let challenges = crate::challenge::Challenges::new(catalogue);
        let signals = Arc::new(SignalEngine::new(EngineParts {
            config: config.signals.clone(),
            store: store.clone(),
            clock: clock.clone(),
            market: Arc::new(UpstreamMarket(upstreams.clone())),
            publish: SignalAnswers::publish,
        }));
        let llm = Arc::new(svc_llm::Llm::new(llm, store.clone(), clock.clone(), paywall.clone(), limiter.clone())?);
        let agentbox = Arc::new(svc_agentbox::Agentbox::new(agentbox, store.clone(), clock.clone(), llm.clone()));
        let sellers = svc_sellers::Sellers::new(sellers, store.clone(), clock.clone(), sealed, limiter.clone())?;
        let sellers = Arc::new(payouts.into_iter().fold(sellers, svc_sellers::Sellers::with_payouts));
        Ok(AppState(Arc::new(App {
            store,
            clock,
            catalogue,
            config,
            metrics: svc_metrics::handle(),
            paywall,
            challenges,
            upstreams,
            limiter,
            signals,
            llm,
            agentbox,
            sellers,
        })))
    }
}

/// Why the application state could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The LLM proxy's model table names a provider it does not configure.
    #[error(transparent)]
    Llm(#[from] svc_llm::LlmError),
    /// The seller side could not be set up.
    #[error("sellers: {0}")]
    Sellers(#[from] svc_sellers::SellerError),
}
