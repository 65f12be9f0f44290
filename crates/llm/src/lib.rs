//! The LLM proxy: an OpenAI-compatible chat-completions endpoint, billed in account credits
//! and topped up over x402.
//!
//! A call presents the account's proxy token, names a model alias, and is relayed to the
//! provider the alias maps to with only `model` changed (tools, tool choice, response format,
//! both token limits, multi-part content and fields svc does not know all pass through).
//! Before the provider is asked, the most the call can cost is held from the account's
//! credits; after, the actual usage is charged and the rest given back, so concurrent calls
//! never overspend and a failed or empty completion costs nothing. When credits run out the
//! answer is a 402 that OpenAI clients read as a retryable limit, with an x402 challenge that
//! buys more when the account has automatic top-up on.
//!
//! # Layout
//! - this module: [`Llm`], the service, and what it is built from ([`LlmConfig`]).
//! - [`token`]: the proxy tokens and their rotation.
//! - [`models`]: the alias table and token prices.
//! - [`provider`], `anthropic`: the providers, seen through OpenAI's shapes.
//! - `transport`: how every provider is reached (its config, answers, failures).
//! - `proxy`: one call, from token to hold; `meter`: its charge once it ended; `relay`: a
//!   streamed answer, chunk by chunk.
//!
//! The proxy knows no HTTP: its routes, the payment header, the x402 challenge and the mapping
//! of [`LlmError`] to OpenAI's error body are the HTTP layer's (`svc-api`), shared with every
//! other surface that sells.

mod anthropic;
mod error;
mod meter;
pub mod models;
pub mod provider;
mod proxy;
mod relay;
pub mod token;
mod transport;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use svc_domain::{Clock, Money};
use svc_paywall::Paywall;
use svc_store::{LlmUsage, Store};

pub use error::LlmError;
pub use models::{Model, ModelTable};
pub use proxy::{Caller, Chat, ChatCall};
pub use relay::{Event, Relay};
pub use token::TokenKey;
pub use transport::{ProviderConfig, ProviderKind};

/// The API key the simulated providers accept.
const SIMULATED_KEY: &str = "simulated-key";

/// What the proxy is built from.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Signs the proxy tokens.
    pub token_key: TokenKey,
    /// Aliases and their models.
    pub models: ModelTable,
    /// Providers by name.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Calls per account per minute; 0 turns the limit off.
    pub rate_per_minute: u32,
    /// Credits one account may spend on calls per UTC day; zero turns the cap off.
    pub daily_cap: Money,
    /// Credits an automatic top-up buys when the account chose no amount.
    pub default_top_up: Money,
    /// The largest request body read, bytes.
    pub body_limit_bytes: usize,
}

impl LlmConfig {
    /// The default table and limits over `providers`.
    pub fn new(providers: BTreeMap<String, ProviderConfig>) -> Self {
        LlmConfig {
            token_key: TokenKey::ephemeral(),
            models: ModelTable::default(),
            providers,
            rate_per_minute: 600,
            daily_cap: Money::from_atomic(50_000_000),
            default_top_up: Money::from_atomic(1_000_000),
            body_limit_bytes: 8 * 1024 * 1024,
        }
    }

    /// The default table with both providers at the simulated market at `base` (the default
    /// run, and tests).
    pub fn simulated(base: &str) -> Self {
        LlmConfig::new(simulated_providers(base))
    }
}

/// The built-in providers, `openai` and `anthropic`, at the simulated market at `base`.
pub fn simulated_providers(base: &str) -> BTreeMap<String, ProviderConfig> {
    let base = base.trim_end_matches('/');
    let provider = |kind, path: &str| ProviderConfig {
        kind,
        base_url: format!("{base}{path}"),
        key: Some(SIMULATED_KEY.to_owned()),
    };
    BTreeMap::from([
        ("openai".to_owned(), provider(ProviderKind::Openai, "/llm/v1")),
        ("anthropic".to_owned(), provider(ProviderKind::Anthropic, "/anthropic/v1")),
    ])
}

/// The proxy.
pub struct Llm {
    config: LlmConfig,
    providers: HashMap<String, provider::Provider>,
    store: Store,
    clock: Arc<dyn Clock>,
    paywall: Arc<Paywall>,
    limiter: Arc<svc_limits::Limiter>,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm").field("models", &self.config.models).finish_non_exhaustive()
    }
}

/// An account's automatic top-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopUp {
    /// Whether a payment sent with a proxied call buys credits for it.
    pub enabled: bool,
    /// What one top-up buys.
    pub amount: Money,
}

impl Llm {
    /// The proxy over `config`, charging credits in `store` and top-ups through `paywall`.
    pub fn new(
        config: LlmConfig,
        store: Store,
        clock: Arc<dyn Clock>,
        paywall: Arc<Paywall>,
        limiter: Arc<svc_limits::Limiter>,
    ) -> Result<Self, LlmError> {
        let names: Vec<&str> = config.providers.keys().map(String::as_str).collect();
        config.models.check(&names).map_err(|e| LlmError::Internal(e.to_string()))?;
        let providers = config
            .providers
            .iter()
            .map(|(name, p)| Ok((name.clone(), provider::Provider::new(p.clone())?)))
            .collect::<Result<_, LlmError>>()?;
        Ok(Llm { config, providers, store, clock, paywall, limiter })
    }

    /// The model table.
    pub fn models(&self) -> &ModelTable {
        &self.config.models
    }

    /// The account's current proxy token.
    pub async fn token(&self, account_id: &str) -> Result<String, LlmError> {
        let version = self.store.llm_account(account_id).await?.token_version;
        Ok(self.config.token_key.issue(account_id, version))
    }

    /// A new proxy token for the account; every earlier one stops working.
    pub async fn rotate(&self, account_id: &str) -> Result<String, LlmError> {
        let version = self.store.rotate_llm_token(account_id, self.clock.now_ms()).await?;
        Ok(self.config.token_key.issue(account_id, version))
    }

    /// The account's automatic top-up.
    pub async fn top_up(&self, account_id: &str) -> Result<TopUp, LlmError> {
        let settings = self.store.llm_account(account_id).await?;
        Ok(self.top_up_of(&settings))
    }

    fn top_up_of(&self, settings: &svc_store::LlmAccount) -> TopUp {
        let amount = match settings.top_up_amount {
            0 => self.config.default_top_up,
            n => Money::from_atomic(n),
        };
        TopUp { enabled: settings.top_up_enabled, amount }
    }

    /// Turns the account's automatic top-up on or off, with the amount it buys; with no
    /// amount, the one it had stays (the server's default until one is chosen).
    pub async fn set_top_up(&self, account_id: &str, enabled: bool, amount: Option<Money>) -> Result<TopUp, LlmError> {
        let now = self.clock.now_ms();
        let mut settings = self.store.llm_account(account_id).await?;
        settings.top_up_enabled = enabled;
        settings.top_up_amount = amount.map_or(settings.top_up_amount, Money::atomic);
        self.store.set_llm_top_up(account_id, enabled, settings.top_up_amount, now).await?;
        Ok(self.top_up_of(&settings))
    }

    /// The account's proxied calls since `since_ms`.
    pub async fn usage(&self, account_id: &str, since_ms: i64) -> Result<LlmUsage, LlmError> {
        Ok(self.store.llm_usage_since(account_id, since_ms).await?)
    }

    /// The daily cap on each account's spend.
    pub fn daily_cap(&self) -> Money {
        self.config.daily_cap
    }

    /// Releases the credits held by calls that began over `older_than_ms` ago and never
    /// finished (their process stopped mid-call): nothing is charged for them.
    pub async fn release_stale(&self, older_than_ms: i64) -> Result<usize, LlmError> {
        let now = self.clock.now_ms();
        let stale = self.store.stale_llm_calls(now - older_than_ms, 500).await?;
        for id in &stale {
            let abandoned = svc_store::FinishedLlmCall {
                status: "abandoned",
                prompt_tokens: 0,
                cached_tokens: 0,
                completion_tokens: 0,
                cost: 0,
                latency_ms: 0,
                note: Some("the process serving it stopped; nothing was charged"),
                now_ms: now,
            };
            // One call the store cannot finish must not keep the others' holds.
            if let Err(err) = self.store.finish_llm_call(id, &abandoned).await {
                tracing::error!(call = %id, error = %err, "could not release an unfinished LLM call");
            }
        }
        Ok(stale.len())
    }

    /// Releases stale calls every `every`, for as long as the process runs.
    pub async fn run_sweeper(self: Arc<Self>, every: std::time::Duration) {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match self.release_stale(STALE_AFTER_MS).await {
                Ok(0) => {}
                Ok(n) => tracing::warn!(calls = n, "released the credits of LLM calls left unfinished"),
                Err(err) => tracing::error!(error = %err, "could not release unfinished LLM calls"),
            }
        }
    }
}

/// How long after its start a call still `reserved` counts as abandoned: twice the longest a
/// call may run, so the sweep never releases a running call.
pub const STALE_AFTER_MS: i64 = 60 * 60 * 1000;
