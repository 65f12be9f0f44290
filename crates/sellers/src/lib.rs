//! Sellers: anyone signed in sells their own agent behind a pay-per-call x402 invoke, sees
//! its revenue, and gets paid out.
//!
//! This crate holds the rules; it knows nothing of HTTP. The paid invoke is charged by the
//! same paywall as every catalogue route (the HTTP layer hands it [`Sellers::forward`] as the
//! work), so the payment logic exists once: a seller failure charges nothing, and only a
//! settled or verified payment earns.
//!
//! Money: every paid call the seller answered is written `served` before its payment settles,
//! and earns (its price less the platform fee added to the agent's balance, or to `unsettled`
//! when svc only verified the payment) in the very statement that records its payment, so no
//! earning is lost to a crash and none is counted twice; a sweeper drops calls whose payment
//! never went through. Withdrawals take from a balance the database keeps non-negative.
//!
//! # Layout
//! - this module: [`Sellers`], its configuration, agents, configs, revenue, withdrawals and the
//!   marketplace.
//! - [`invoke`]: what a paid invoke needs: the agent as sold, its limits, forwarding, earning.
//! - [`payouts`]: queued withdrawals paid on chain, exactly once.
//! - [`backend`]: what answers an agent's invokes, behind one trait; [`endpoint`]: the seller's
//!   HTTPS endpoint, called without server-side request forgery.
//! - [`schema`]: agents' input schemas; [`signing`]: the signature sellers check.
//! - [`error`]: the one error type, [`SellerError`].

pub mod backend;
pub mod endpoint;
pub mod error;
pub mod invoke;
mod payout_chain;
pub mod payouts;
pub mod schema;
pub mod signing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::routes::sellers::{
    AgentCreated, AgentList, AgentPatch, AgentRequest, AutoWithdraw, Currency, Example, Listing, ListingStatus,
    MarketplaceAgent, MarketplacePage, MarketplaceQuery, Pricing, PricingModel, Revenue, SecretRotated,
    WithdrawRequest, WithdrawalList, WithdrawalView, X402Config, X402ConfigRequest,
};
use svc_domain::{Clock, Money, rfc3339};
use svc_sealed::SecretBox;
use svc_store::{AgentListing, NewWithdrawal, SellerAgent, Store, Withdrawal, WithdrawalTaken};

pub use endpoint::{EndpointPolicy, ForwardError, Forwarder};
pub use error::SellerError;

/// A day, ms.
const DAY_MS: i64 = 86_400_000;

/// Description lengths (characters) an agent needs to be listed.
pub const LISTED_DESCRIPTION: (u32, u32) = (20, 2000);

/// How the seller side is set up.
#[derive(Debug, Clone)]
pub struct SellersConfig {
    /// The platform's fee, basis points of each price (`SVC_SELLER_FEE_BPS`, default 0).
    pub fee_bps: u32,
    /// The lowest price a seller may set.
    pub min_price: Money,
    /// The highest price a seller may set.
    pub max_price: Money,
    /// svc's public address, for invoke URLs.
    pub base_url: String,
    /// Which endpoints may be called.
    pub endpoints: EndpointPolicy,
    /// The largest answer a seller may give, bytes.
    pub max_answer_bytes: usize,
    /// The EVM networks payouts are made on (CAIP-2), the default first.
    pub payout_networks: Vec<String>,
    /// The smallest withdrawal: each is a transfer whose gas svc pays.
    pub min_withdrawal: Money,
}

impl Default for SellersConfig {
    fn default() -> Self {
        SellersConfig {
            fee_bps: 0,
            min_price: Money::from_atomic(1_000),
            max_price: Money::from_atomic(100_000_000),
            base_url: "http://127.0.0.1:8080".to_owned(),
            endpoints: EndpointPolicy::default(),
            max_answer_bytes: 1024 * 1024,
            payout_networks: vec!["eip155:8453".to_owned()],
            min_withdrawal: Money::from_atomic(10_000),
        }
    }
}

/// The seller side: agents, their x402 configs, revenue, withdrawals, the marketplace, and the
/// paid invoke's steps ([`invoke`]).
pub struct Sellers {
    store: Store,
    clock: Arc<dyn Clock>,
    config: SellersConfig,
    sealed: Arc<SecretBox>,
    /// What answers invokes, by kind.
    backends: HashMap<&'static str, Arc<dyn backend::AgentBackend>>,
    limiter: Arc<svc_limits::Limiter>,
    /// Compiled input schemas by agent, with the `updated_at` they were compiled at.
    schemas: Mutex<HashMap<String, (i64, Arc<schema::InputSchema>)>>,
    /// Turns at schema work: compiling a seller's schema, checking a body against it.
    validations: Arc<tokio::sync::Semaphore>,
    /// The networks svc pays out on itself, by CAIP-2 id; payouts on others wait for an
    /// operator.
    payouts: HashMap<String, Arc<dyn payout_chain::PayoutChain>>,
}

impl std::fmt::Debug for Sellers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sellers").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Sellers {
    /// The seller side over `store`, sealing signing secrets with `sealed`.
    pub fn new(
        config: SellersConfig,
        store: Store,
        clock: Arc<dyn Clock>,
        sealed: Arc<SecretBox>,
        limiter: Arc<svc_limits::Limiter>,
    ) -> Result<Self, SellerError> {
        let https: Arc<dyn backend::AgentBackend> =
            Arc::new(Forwarder::new(config.endpoints.clone(), config.max_answer_bytes)?);
        let backends = HashMap::from([(https.kind(), https)]);
        Ok(Sellers {
            store,
            clock,
            config,
            sealed,
            backends,
            limiter,
            schemas: Mutex::default(),
            validations: Arc::new(tokio::sync::Semaphore::new(spare_cores())),
            payouts: HashMap::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SellersConfig {
        &self.config
    }

    /// Registers an agent for `account_id`; the answer shows its signing secret, once.
    pub async fn create(&self, account_id: &str, request: AgentRequest) -> Result<AgentCreated, SellerError> {
        let schema = request.input_schema.unwrap_or_else(schema::default_schema);
        let listing = AgentListing {
            name: request.name.trim().to_owned(),
            category: request.category.trim().to_owned(),
            tags: json_text(&request.tags),
            description: request.description.trim().to_owned(),
            examples: json_text(&request.examples),
            capabilities: json_text(&request.capabilities),
            input_schema: json_text(&schema),
            backend: backend::HTTPS.to_owned(),
            endpoint: request.endpoint.trim().to_owned(),
            timeout_ms: request.timeout_secs.unwrap_or(30) * 1000,
        };
        self.check_listing(&listing, &schema)?;
        let id = format!("{}{}", svc_catalogue::routes::sellers::AGENT_ID_PREFIX, uuid::Uuid::new_v4().simple());
        let secret = signing::new_secret();
        let sealed = self.sealed.seal(secret.as_bytes(), &sealing_context(&id));
        let now = self.clock.now_ms();
        self.store.create_seller_agent(&id, account_id, &listing, &sealed, now).await?;
        tracing::info!(agent = %id, account = %account_id, "seller agent registered");
        let agent = self.store.seller_agent(&id).await?.ok_or(SellerError::NoAgent)?;
        Ok(AgentCreated { agent: self.view(&agent)?, signing: signing::shown(secret) })
    }

    /// The caller's agents.
    pub async fn list(&self, account_id: &str) -> Result<AgentList, SellerError> {
        let agents = self.store.seller_agents(account_id).await?;
        Ok(AgentList { agents: agents.iter().map(|a| self.view(a)).collect::<Result<_, _>>()? })
    }

    /// One of the caller's agents.
    pub async fn get(
        &self,
        account_id: &str,
        agent_id: &str,
    ) -> Result<svc_catalogue::routes::sellers::AgentView, SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        self.view(&agent)
    }

    /// Changes the fields a patch names.
    pub async fn update(
        &self,
        account_id: &str,
        patch: AgentPatch,
    ) -> Result<svc_catalogue::routes::sellers::AgentView, SellerError> {
        let agent = self.owned(account_id, &patch.agent_id).await?;
        let AgentListing {
            name,
            category,
            tags,
            description,
            examples,
            capabilities,
            input_schema,
            backend,
            endpoint,
            timeout_ms,
        } = agent.listing;
        let schema = match patch.input_schema {
            Some(schema) => schema,
            None => parse_json(&input_schema)?,
        };
        let listing = AgentListing {
            name: patch.name.map_or(name, |n| n.trim().to_owned()),
            category: patch.category.map_or(category, |c| c.trim().to_owned()),
            tags: patch.tags.map_or(tags, |t| json_text(&t)),
            description: patch.description.map_or(description, |d| d.trim().to_owned()),
            examples: patch.examples.map_or(examples, |e| json_text(&e)),
            capabilities: patch.capabilities.map_or(capabilities, |c| json_text(&c)),
            input_schema: json_text(&schema),
            backend,
            endpoint: patch.endpoint.map_or(endpoint, |e| e.trim().to_owned()),
            timeout_ms: patch.timeout_secs.map_or(timeout_ms, |s| s * 1000),
        };
        self.check_listing(&listing, &schema)?;
        let now = self.clock.now_ms();
        if !self.store.update_seller_agent(&agent.id, account_id, &listing, now).await? {
            return Err(SellerError::NoAgent);
        }
        self.get(account_id, &agent.id).await
    }

    /// Deletes an agent with nothing left to withdraw.
    pub async fn delete(&self, account_id: &str, agent_id: &str) -> Result<(), SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        if self.store.delete_seller_agent(&agent.id, account_id, self.clock.now_ms()).await? {
            tracing::info!(agent = %agent.id, "seller agent deleted");
            return Ok(());
        }
        match self.store.seller_agent(&agent.id).await? {
            Some(now) if now.balance > 0 => Err(SellerError::HoldsBalance { balance: Money::from_atomic(now.balance) }),
            Some(_) => Err(SellerError::MoneyInFlight),
            None => Err(SellerError::NoAgent),
        }
    }

    /// Replaces an agent's signing secret; the answer shows the new one, once.
    pub async fn rotate_secret(&self, account_id: &str, agent_id: &str) -> Result<SecretRotated, SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        let secret = signing::new_secret();
        let sealed = self.sealed.seal(secret.as_bytes(), &sealing_context(&agent.id));
        if !self.store.set_seller_secret(&agent.id, account_id, &sealed, self.clock.now_ms()).await? {
            return Err(SellerError::NoAgent);
        }
        tracing::info!(agent = %agent.id, "seller agent's signing secret replaced");
        Ok(SecretRotated { agent_id: agent.id, signing: signing::shown(secret) })
    }

    /// An agent's x402 config.
    pub async fn x402_config(&self, account_id: &str, agent_id: &str) -> Result<X402Config, SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        stored_config(&agent)?.ok_or(SellerError::NoConfig)
    }

    /// Sets an agent's x402 config.
    pub async fn set_x402_config(
        &self,
        account_id: &str,
        request: X402ConfigRequest,
    ) -> Result<X402Config, SellerError> {
        let agent = self.owned(account_id, &request.agent_id).await?;
        let mut errors = Vec::new();
        let price = request.pricing.amount;
        if price < self.config.min_price || price > self.config.max_price {
            errors.push(field(
                &["body", "pricing", "amount"],
                format!("the price must be between {} and {} USDC", self.config.min_price, self.config.max_price),
                "value_error",
            ));
        }
        let wallet = wallet_address(&request.wallet_address).map_err(|msg| {
            errors.push(field(&["body", "wallet_address"], msg, "value_error"));
        });
        let network = self.network(request.network.as_deref()).map_err(|msg| {
            errors.push(field(&["body", "network"], msg, "enum"));
        });
        let auto =
            request.auto_withdraw.unwrap_or(AutoWithdraw { enabled: false, threshold: Money::ZERO, destination: None });
        if auto.enabled && auto.threshold < self.config.min_withdrawal {
            errors.push(field(
                &["body", "auto_withdraw", "threshold"],
                format!("the threshold must be at least the smallest withdrawal, {} USDC", self.config.min_withdrawal),
                "greater_than_equal",
            ));
        }
        let destination = match &auto.destination {
            Some(d) => wallet_address(d).map(Some).map_err(|msg| {
                errors.push(field(&["body", "auto_withdraw", "destination"], msg, "value_error"));
            }),
            None => Ok(None),
        };
        let (Ok(wallet), Ok(network), Ok(destination), true) = (wallet, network, destination, errors.is_empty()) else {
            return Err(SellerError::Invalid(errors));
        };
        let config = X402Config {
            enabled: request.enabled,
            pricing: Pricing { model: PricingModel::PerRequest, amount: price, currency: Currency::Usdc },
            wallet_address: wallet,
            network,
            limits: request.limits.unwrap_or_default(),
            auto_withdraw: AutoWithdraw { destination, ..auto },
        };
        let text = json_text(&config);
        let now = self.clock.now_ms();
        if !self.store.set_seller_config(&agent.id, account_id, &text, config.enabled, price.atomic(), now).await? {
            return Err(SellerError::NoAgent);
        }
        tracing::info!(agent = %agent.id, enabled = config.enabled, price = %price, "seller agent's x402 config saved");
        Ok(config)
    }

    /// An agent's revenue.
    pub async fn revenue(&self, account_id: &str, agent_id: &str) -> Result<Revenue, SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        let now = self.clock.now_ms();
        let (today, _) = self.store.seller_earned_since(&agent.id, day_start(now)).await?;
        let (this_week, _) = self.store.seller_earned_since(&agent.id, week_start(now)).await?;
        let pending = self.store.pending_withdrawals(&agent.id).await?;
        Ok(Revenue {
            total_earned: Money::from_atomic(agent.total_earned),
            currency: "USDC".to_owned(),
            transactions_count: agent.paid_calls,
            today: Money::from_atomic(today),
            this_week: Money::from_atomic(this_week),
            balance: Money::from_atomic(agent.balance),
            unsettled: Money::from_atomic(agent.unsettled),
            pending_payouts: Money::from_atomic(pending),
            fee_bps: self.config.fee_bps,
        })
    }

    /// Withdraws part of an agent's balance to its wallet (or `destination`).
    pub async fn withdraw(&self, account_id: &str, request: WithdrawRequest) -> Result<WithdrawalView, SellerError> {
        let agent = self.owned(account_id, &request.agent_id).await?;
        let config = stored_config(&agent)?.ok_or(SellerError::NotConfigured)?;
        let destination = match &request.destination {
            Some(d) => {
                wallet_address(d).map_err(|msg| SellerError::field(&["body", "destination"], msg, "value_error"))?
            }
            None => config.wallet_address.clone(),
        };
        if request.amount < self.config.min_withdrawal {
            return Err(SellerError::BelowMinimum { min: self.config.min_withdrawal });
        }
        self.take(&agent, request.amount.atomic(), &destination, &config.network, false).await
    }

    /// Writes a payout of `amount` from an agent's balance.
    async fn take(
        &self,
        agent: &SellerAgent,
        amount: u64,
        destination: &str,
        network: &str,
        automatic: bool,
    ) -> Result<WithdrawalView, SellerError> {
        let id = format!("wd_{}", uuid::Uuid::now_v7().simple());
        let withdrawal = NewWithdrawal {
            id: &id,
            agent_id: &agent.id,
            amount,
            destination,
            network,
            status: "queued",
            automatic,
            now_ms: self.clock.now_ms(),
        };
        match self.store.create_withdrawal(&withdrawal).await? {
            WithdrawalTaken::Taken => {}
            WithdrawalTaken::Insufficient { balance } => {
                let unsettled = self.store.seller_agent(&agent.id).await?.map_or(0, |a| a.unsettled);
                return Err(SellerError::InsufficientBalance {
                    balance: Money::from_atomic(balance),
                    unsettled: Money::from_atomic(unsettled),
                });
            }
        }
        tracing::info!(agent = %agent.id, withdrawal = %id, amount = %Money::from_atomic(amount), automatic, "payout queued");
        let written =
            self.store.withdrawal(&id).await?.ok_or(SellerError::Corrupt(format!("withdrawal {id} vanished")))?;
        withdrawal_view(&written)
    }

    /// An agent's payouts.
    pub async fn withdrawals(&self, account_id: &str, agent_id: &str) -> Result<WithdrawalList, SellerError> {
        let agent = self.owned(account_id, agent_id).await?;
        let rows = self.store.withdrawals(&agent.id, 100).await?;
        Ok(WithdrawalList { withdrawals: rows.iter().map(withdrawal_view).collect::<Result<_, _>>()? })
    }

    /// Listed agents matching `query`.
    pub async fn marketplace(&self, query: &MarketplaceQuery) -> Result<MarketplacePage, SellerError> {
        let category = query.category.as_deref().map(str::trim).filter(|c| !c.is_empty());
        let candidates = self.store.listable_seller_agents(category, LISTED_DESCRIPTION).await?;
        let tag = query.tag.as_deref().map(str::to_lowercase);
        let words: Vec<String> = query.q.as_deref().unwrap_or("").split_whitespace().map(str::to_lowercase).collect();
        let mut listed = Vec::new();
        for agent in &candidates {
            let Some(public) = self.public_view(agent)? else { continue };
            if let Some(tag) = &tag
                && !public.about.tags.iter().any(|t| t.to_lowercase() == *tag)
            {
                continue;
            }
            let about = &public.about;
            let text = format!("{} {} {}", about.name, about.description, about.capabilities.join(" ")).to_lowercase();
            if words.iter().all(|w| text.contains(w.as_str())) {
                listed.push(public);
            }
        }
        let per_page = query.per_page.unwrap_or(20);
        let page = query.page.unwrap_or(1);
        let total = listed.len() as u64;
        let skip = usize::try_from(u64::from(page - 1) * u64::from(per_page)).unwrap_or(usize::MAX);
        let agents = listed.into_iter().skip(skip).take(per_page as usize).collect();
        Ok(MarketplacePage { agents, page, per_page, total })
    }

    /// One listed agent.
    pub async fn listed(&self, agent_id: &str) -> Result<MarketplaceAgent, SellerError> {
        let agent = self.store.seller_agent(agent_id).await?.ok_or(SellerError::NoAgent)?;
        self.public_view(&agent)?.ok_or(SellerError::NoAgent)
    }

    /// Every listed agent, for the discovery documents.
    pub async fn all_listed(&self) -> Result<Vec<MarketplaceAgent>, SellerError> {
        let candidates = self.store.listable_seller_agents(None, LISTED_DESCRIPTION).await?;
        Ok(candidates
            .iter()
            .map(|a| self.public_view(a))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect())
    }

    /// The caller's live agent `agent_id`; another account's is [`SellerError::NoAgent`], as a
    /// missing one is.
    async fn owned(&self, account_id: &str, agent_id: &str) -> Result<SellerAgent, SellerError> {
        match self.store.seller_agent(agent_id).await? {
            Some(agent) if agent.account_id == account_id => Ok(agent),
            _ => Err(SellerError::NoAgent),
        }
    }

    /// Checks what a seller wrote that its types could not: the endpoint and the schema.
    fn check_listing(&self, listing: &AgentListing, input_schema: &Value) -> Result<(), SellerError> {
        let mut errors = Vec::new();
        if listing.name.is_empty() {
            errors.push(field(&["body", "name"], "a name is required", "missing"));
        }
        match self.backends.get(listing.backend.as_str()).map(|b| b.check(&listing.endpoint)) {
            Some(Ok(())) => {}
            Some(Err(refused)) => errors.push(field(&["body", "endpoint"], refused, "value_error")),
            None => {
                errors.push(field(&["body", "endpoint"], "this server sells no agents at endpoints", "value_error"))
            }
        }
        if let Err(error) = schema::check(input_schema, "input_schema") {
            errors.push(error);
        }
        if errors.is_empty() { Ok(()) } else { Err(SellerError::Invalid(errors)) }
    }

    /// The network a config names: `ethereum` (the default EVM payout network), a configured
    /// network's name, or its CAIP-2 id.
    fn network(&self, named: Option<&str>) -> Result<String, String> {
        let configured = &self.config.payout_networks;
        let accepted = || {
            let mut names = vec!["ethereum".to_owned()];
            for caip2 in configured {
                names.extend(network_name(caip2).map(str::to_owned));
                names.push(caip2.clone());
            }
            names.join(", ")
        };
        let Some(default) = configured.first() else {
            return Err("this server pays out on no network".to_owned());
        };
        let Some(named) = named.map(str::trim) else { return Ok(default.clone()) };
        let lower = named.to_ascii_lowercase();
        if lower == "ethereum" || lower == "evm" {
            return Ok(default.clone());
        }
        configured
            .iter()
            .find(|caip2| **caip2 == lower || network_name(caip2) == Some(lower.as_str()))
            .cloned()
            .ok_or_else(|| format!("unknown network {named:?}; this server pays out on: {}", accepted()))
    }

    /// How a seller sees its agent.
    fn view(&self, agent: &SellerAgent) -> Result<svc_catalogue::routes::sellers::AgentView, SellerError> {
        let config = stored_config(agent)?;
        let missing = listing_gaps(agent, config.as_ref());
        Ok(svc_catalogue::routes::sellers::AgentView {
            id: agent.id.clone(),
            about: listing_of(agent)?,
            endpoint: agent.listing.endpoint.clone(),
            timeout_secs: agent.listing.timeout_ms / 1000,
            x402: config,
            invoke_url: self.invoke_url(&agent.id),
            listing: ListingStatus { listed: missing.is_empty(), missing },
            created_at: Timestamp(rfc3339(agent.created_at)),
            updated_at: Timestamp(rfc3339(agent.updated_at)),
        })
    }

    /// How buyers see a listed agent; `None` when it is not listed.
    fn public_view(&self, agent: &SellerAgent) -> Result<Option<MarketplaceAgent>, SellerError> {
        let Some(config) = stored_config(agent)? else { return Ok(None) };
        if !listing_gaps(agent, Some(&config)).is_empty() {
            return Ok(None);
        }
        Ok(Some(MarketplaceAgent {
            id: agent.id.clone(),
            about: listing_of(agent)?,
            price: config.pricing,
            paid_calls: agent.paid_calls,
            invoke_url: self.invoke_url(&agent.id),
        }))
    }

    /// Where buyers invoke an agent.
    pub fn invoke_url(&self, agent_id: &str) -> String {
        let path = svc_catalogue::routes::sellers::INVOKE_PATH.replace("{agent_id}", agent_id);
        format!("{}{path}", self.config.base_url.trim_end_matches('/'))
    }
}

/// Cores left once one is kept for everything else: at least one.
fn spare_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// What keeps an agent off the marketplace (nothing: it is listed). The store's
/// `listable_seller_agents` preselects by the same rules.
fn listing_gaps(agent: &SellerAgent, config: Option<&X402Config>) -> Vec<String> {
    let mut missing = Vec::new();
    if !config.is_some_and(|c| c.enabled) {
        missing.push("x402 is not enabled (PUT /agents/{agent_id}/x402-config)".to_owned());
    }
    // Characters that show: twenty zero-width spaces are no description.
    let chars = svc_domain::text::visible_chars(&agent.listing.description);
    let (min, max) = LISTED_DESCRIPTION;
    if chars < min as usize || chars > max as usize {
        missing.push(format!("a description of {min} to {max} visible characters (it has {chars})"));
    }
    if agent.paid_calls == 0 {
        missing.push("a first successful paid invoke".to_owned());
    }
    missing
}

/// An agent's listing, as stored.
fn listing_of(agent: &SellerAgent) -> Result<Listing, SellerError> {
    Ok(Listing {
        name: agent.listing.name.clone(),
        description: agent.listing.description.clone(),
        category: agent.listing.category.clone(),
        tags: parse_json(&agent.listing.tags)?,
        examples: parse_json::<Vec<Example>>(&agent.listing.examples)?,
        capabilities: parse_json(&agent.listing.capabilities)?,
        input_schema: parse_json(&agent.listing.input_schema)?,
    })
}

/// What a signing secret is sealed to: its agent, so a sealed value cannot move rows.
fn sealing_context(agent_id: &str) -> String {
    format!("seller-signing:{agent_id}")
}

/// A stored agent's x402 config.
fn stored_config(agent: &SellerAgent) -> Result<Option<X402Config>, SellerError> {
    agent.config.as_deref().map(parse_json).transpose()
}

fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, SellerError> {
    serde_json::from_str(text).map_err(|e| SellerError::Corrupt(format!("stored JSON: {e}")))
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

fn field(loc: &[&str], msg: impl Into<String>, kind: &'static str) -> svc_catalogue::FieldError {
    svc_catalogue::FieldError::new(loc.iter().map(|l| (*l).into()), msg, kind)
}

/// An EVM wallet address: lower-case hex, or checksummed (EIP-55) when mixed case; answered in
/// its checksummed form.
fn wallet_address(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    let hex = raw.strip_prefix("0x").ok_or("an address is 0x followed by 40 hex digits")?;
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("an address is 0x followed by 40 hex digits".to_owned());
    }
    let mixed = hex.bytes().any(|b| b.is_ascii_lowercase()) && hex.bytes().any(|b| b.is_ascii_uppercase());
    let address = if mixed {
        alloy_primitives::Address::parse_checksummed(raw, None)
            .map_err(|_| "the address's checksum (its mix of upper and lower case) is wrong; check it".to_owned())?
    } else {
        raw.to_ascii_lowercase().parse::<alloy_primitives::Address>().map_err(|_| "not an address".to_owned())?
    };
    if address == alloy_primitives::Address::ZERO {
        return Err("the zero address burns what is sent to it".to_owned());
    }
    Ok(address.to_checksum(None))
}

/// A configured network's short name.
fn network_name(caip2: &str) -> Option<&'static str> {
    Some(match caip2 {
        "eip155:1" => "mainnet",
        "eip155:8453" => "base",
        "eip155:84532" => "base-sepolia",
        "eip155:31337" => "localhost",
        _ => return None,
    })
}

/// The start of `now_ms`'s UTC day.
fn day_start(now_ms: i64) -> i64 {
    now_ms - now_ms.rem_euclid(DAY_MS)
}

/// The start of `now_ms`'s ISO week (Monday, UTC). 1970-01-01 was a Thursday.
fn week_start(now_ms: i64) -> i64 {
    let day = now_ms.div_euclid(DAY_MS);
    (day - (day + 3).rem_euclid(7)) * DAY_MS
}

/// A payout as the seller sees it.
fn withdrawal_view(row: &Withdrawal) -> Result<WithdrawalView, SellerError> {
    Ok(WithdrawalView {
        id: row.id.clone(),
        amount: Money::from_atomic(u64::try_from(row.amount).map_err(|_| SellerError::Corrupt("amount".into()))?),
        destination: row.destination.clone(),
        network: row.network.clone(),
        status: row.status.clone(),
        automatic: row.automatic == 1,
        transaction: row.tx_hash.clone(),
        error: row.error.clone(),
        created_at: Timestamp(rfc3339(row.created_at)),
        updated_at: Timestamp(rfc3339(row.updated_at)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_iso_weeks_start_at_utc_midnight_and_monday() {
        // 2026-11-22T10:00:00Z is a Sunday.
        let now = 1_795_341_600_000;
        assert_eq!(rfc3339(day_start(now)), "2026-11-22T00:00:00Z");
        assert_eq!(rfc3339(week_start(now)), "2026-11-16T00:00:00Z");
        // A Monday starts its own week.
        assert_eq!(week_start(day_start(now) + DAY_MS), day_start(now) + DAY_MS);
    }

    #[test]
    fn wallets_are_lower_case_or_correctly_checksummed() {
        let checksummed = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
        assert_eq!(wallet_address(checksummed).as_deref(), Ok(checksummed));
        assert_eq!(wallet_address(&checksummed.to_lowercase()).as_deref(), Ok(checksummed));
        assert!(wallet_address("0x209693bc6afc0C5328bA36FaF03C514EF312287C").is_err(), "a wrong checksum");
        assert!(wallet_address("0x1234").is_err());
        assert!(wallet_address("209693bc6afc0c5328ba36faf03c514ef312287c").is_err());
        assert!(wallet_address(&format!("0x{}", "0".repeat(40))).is_err());
    }
}
