//! What a paid invoke needs, step by step, in the order the HTTP layer takes them: the agent as
//! sold ([`Sellers::invocable`]), the body against its schema ([`Sellers::check_body`]), its
//! limits before any challenge ([`Sellers::peek_limits`], then [`Sellers::take_limits`] for a
//! paid call), the work the paywall runs ([`Sellers::forward`]), and what follows a payment
//! ([`Sellers::after_payment`]). A call earns in the same statement that records its payment;
//! a sweeper ([`Sellers::sweep`]) drops calls whose payment never went through.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use svc_catalogue::routes::sellers::{AutoWithdraw, Example, X402Config};
use svc_domain::{Money, rfc3339};
use svc_limits::{Decision, MINUTE_MS};
use svc_store::{NewSellerCall, SellerAgent};

use crate::schema::InputSchema;
use crate::{DAY_MS, SellerError, Sellers, parse_json, sealing_context, stored_config};

/// How long a call may stay `served` before the sweeper asks its payment's record.
const SWEEP_AFTER_MS: i64 = 120_000;

/// The longest description a challenge gives an agent, in UTF-16 units.
pub const MAX_DESCRIPTION_UNITS: usize = 300;

/// An agent as sold: live, with x402 enabled.
#[derive(Debug, Clone)]
pub struct Invocable {
    agent: SellerAgent,
    config: X402Config,
    schema: Arc<InputSchema>,
}

impl Invocable {
    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.agent.id
    }

    /// The price of one invoke.
    pub fn price(&self) -> Money {
        self.config.pricing.amount
    }

    /// What a payment for it is recorded as buying.
    pub fn product(&self) -> String {
        format!("seller:{}", self.agent.id)
    }

    /// One line for the challenge's resource.
    pub fn description(&self) -> String {
        let about = if self.agent.listing.description.is_empty() {
            "a seller's agent"
        } else {
            &self.agent.listing.description
        };
        let line = format!("{}: {about}", self.agent.listing.name);
        // Under 500 as JavaScript counts (UTF-16 units): longer descriptions are unpayable at
        // the most used public facilitator and unindexed by its discovery service.
        if line.encode_utf16().count() <= MAX_DESCRIPTION_UNITS {
            return line;
        }
        let mut units = 0;
        let mut cut: String = line
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= MAX_DESCRIPTION_UNITS - 3
            })
            .collect();
        cut.push_str("...");
        cut
    }

    /// The agent's input schema.
    pub fn input_schema(&self) -> &Value {
        self.schema.json()
    }
}

/// `body` checked against `schema`: a JSON object that matches.
fn check_body(schema: &InputSchema, body: &[u8]) -> Result<Value, SellerError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        let msg = if body.iter().all(u8::is_ascii_whitespace) {
            "Field required: a JSON object body".to_owned()
        } else {
            format!("JSON decode error: {e}")
        };
        SellerError::field(&["body"], msg, "json_invalid")
    })?;
    if !value.is_object() {
        return Err(SellerError::field(&["body"], "Input should be a JSON object", "model_attributes_type"));
    }
    // As on every route: no NUL in its text, no control character in its names. The seller
    // gets the body as sent, so whatever it keeps it in can keep it.
    svc_catalogue::input::check_body_text(&value).map_err(|refused| SellerError::Invalid(refused.errors))?;
    let errors = schema.errors(&value);
    if errors.is_empty() { Ok(value) } else { Err(SellerError::Invalid(errors)) }
}

/// How a paid invoke ended, as the agent's limits and payouts see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invoked {
    /// Served and paid; `on_chain` when the payment settled on chain.
    Paid {
        /// Whether the payment settled on chain.
        on_chain: bool,
    },
    /// Served, its answer withheld until the transfer confirms: the call stands.
    Withheld,
    /// Not served (a refused payment, failed work, an answer kept from an earlier call).
    NotServed,
}

/// What [`Sellers::take_limits`] counted, to give back if the call is not served.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    at_ms: i64,
    day: i64,
    /// The per-minute window after this call, for the rate headers.
    pub minute: Decision,
}

impl Sellers {
    /// The agent `agent_id` as sold: [`SellerError::NoAgent`] when it is unknown or deleted,
    /// [`SellerError::NotForSale`] when it exists but cannot be bought.
    pub async fn invocable(&self, agent_id: &str) -> Result<Invocable, SellerError> {
        if agent_id.len() > 64 {
            return Err(SellerError::NoAgent);
        }
        let agent = self.store.seller_agent(agent_id).await?.ok_or(SellerError::NoAgent)?;
        let Some(config) = stored_config(&agent)?.filter(|c| c.enabled) else {
            return Err(SellerError::NotForSale("its seller has not put it on sale (x402 is not enabled)"));
        };
        let schema = self.compiled(&agent).await?;
        Ok(Invocable { agent, config, schema })
    }

    /// The agent's compiled schema, compiled once per version of the agent, on the blocking
    /// pool in the same lane as bodies are checked ([`Sellers::schema_work`]), with no lock held.
    async fn compiled(&self, agent: &SellerAgent) -> Result<Arc<InputSchema>, SellerError> {
        if let Some((at, schema)) =
            self.schemas.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&agent.id)
            && *at == agent.updated_at
        {
            return Ok(schema.clone());
        }
        let value: Value = parse_json(&agent.listing.input_schema)?;
        // A schema saved before patterns ran in linear time may not compile now: the agent
        // is off sale until its seller saves one that does.
        let schema = self.schema_work(move || InputSchema::compile(value)).await?.map_err(|why| {
            tracing::warn!(agent = %agent.id, error = %why, "a stored input schema no longer compiles");
            SellerError::NotForSale("its input schema no longer compiles; its seller must save a new one")
        })?;
        let schema = Arc::new(schema);
        let mut cache = self.schemas.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= 10_000 {
            cache.clear();
        }
        cache.insert(agent.id.clone(), (agent.updated_at, schema.clone()));
        Ok(schema)
    }

    /// Runs schema work (compiling one, checking a body against one) on the blocking pool,
    /// one job at a time per spare core. The turn travels with the job, so a client that
    /// hangs up cannot start more jobs than there are turns: however costly a schema and body
    /// are, they never hold an async worker, and they queue behind each other.
    async fn schema_work<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Result<T, SellerError> {
        let turn = self
            .validations
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| SellerError::Corrupt("schema work closed".into()))?;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            job()
        })
        .await
        .map_err(|e| SellerError::Corrupt(format!("schema work stopped: {e}")))
    }

    /// The invoke's body, checked against the agent's schema: a JSON object that matches.
    pub async fn check_body(&self, invocable: &Invocable, body: Bytes) -> Result<Value, SellerError> {
        let schema = invocable.schema.clone();
        self.schema_work(move || check_body(&schema, &body)).await?
    }

    /// Whether the agent's limits leave room for one more call, without counting it: checked
    /// before a challenge, so nobody signs for a call that will be refused.
    pub async fn peek_limits(&self, invocable: &Invocable) -> Result<Decision, SellerError> {
        let now = self.clock.now_ms();
        let limits = invocable.config.limits;
        let key = minute_key(invocable.id());
        let minute = self.limiter.peek(&key, limits.rate_limit_per_minute, MINUTE_MS, now).await;
        if !minute.allowed {
            return Err(limited("per-minute", &minute, now));
        }
        let day = now.div_euclid(DAY_MS);
        let calls = self.store.daily_calls(invocable.id(), day).await?;
        if calls >= limits.max_requests_per_day {
            return Err(daily_limited(limits.max_requests_per_day, day, now));
        }
        Ok(minute)
    }

    /// Counts a paid call against the agent's limits, or refuses it.
    pub async fn take_limits(&self, invocable: &Invocable) -> Result<Taken, SellerError> {
        let now = self.clock.now_ms();
        let limits = invocable.config.limits;
        let key = minute_key(invocable.id());
        let minute = self.limiter.hit(&key, limits.rate_limit_per_minute, MINUTE_MS, now).await;
        if !minute.allowed {
            return Err(limited("per-minute", &minute, now));
        }
        let day = now.div_euclid(DAY_MS);
        let taken = self.store.take_daily_call(invocable.id(), day, limits.max_requests_per_day).await;
        if !matches!(taken, Ok(true)) {
            self.limiter.give_back(&key, now).await;
        }
        if !taken? {
            return Err(daily_limited(limits.max_requests_per_day, day, now));
        }
        Ok(Taken { at_ms: now, day, minute })
    }

    /// Gives back what [`Sellers::take_limits`] counted for a call that was not served.
    pub async fn give_back_limits(&self, invocable: &Invocable, taken: Taken) {
        self.limiter.give_back(&minute_key(invocable.id()), taken.at_ms).await;
        if let Err(err) = self.store.give_back_daily_call(invocable.id(), taken.day).await {
            tracing::warn!(agent = %invocable.id(), error = %err, "could not give back a daily call");
        }
    }

    /// The paid work: forwards `body` to the seller, signed, and records the call as served
    /// before the payment settles. `payment` is the paywall's `network:payer:nonce`.
    pub async fn forward(
        &self,
        invocable: &Invocable,
        body: Bytes,
        payer: &str,
        payment: &str,
    ) -> Result<Bytes, SellerError> {
        let agent = &invocable.agent;
        let secret = self
            .sealed
            .open(&agent.secret_sealed, &sealing_context(&agent.id))
            .map_err(|e| SellerError::Corrupt(e.to_string()))?;
        let now = self.clock.now_ms();
        let signature = crate::signing::sign(&secret, now.div_euclid(1000), &body);
        let call_id = call_id(payment);
        let headers = [
            (crate::signing::HEADER, signature),
            ("x-svc-agent-id", agent.id.clone()),
            ("x-svc-call-id", call_id.clone()),
            ("x-svc-payer", payer.to_owned()),
        ];
        let timeout = Duration::from_millis(agent.listing.timeout_ms.max(1000));
        let backend = self.backends.get(agent.listing.backend.as_str()).ok_or_else(|| {
            SellerError::Corrupt(format!("agent {} has an unknown backend {:?}", agent.id, agent.listing.backend))
        })?;
        let call = crate::backend::BackendCall { target: &agent.listing.endpoint, body, headers: &headers, timeout };
        let answer = match backend.call(call).await {
            Ok(answer) => answer,
            Err(err) => {
                tracing::warn!(agent = %agent.id, call = %call_id, error = %err, "seller endpoint failed; nothing charged");
                return Err(err.into());
            }
        };
        let (network, payer_key, nonce) = split_payment(payment)?;
        let price = invocable.price().atomic();
        let fee = price * u64::from(self.config.fee_bps.min(10_000)) / 10_000;
        let id = format!("sc_{}", uuid::Uuid::now_v7().simple());
        let call = NewSellerCall {
            id: &id,
            agent_id: &agent.id,
            network,
            payer: payer_key,
            nonce,
            price,
            fee,
            now_ms: self.clock.now_ms(),
        };
        self.store.record_seller_call(&call).await?;
        Ok(answer)
    }

    /// Settles what a counted call took by how it `ended`: a paid call may pay out, one not
    /// served gives its count back, and one withheld stands.
    pub async fn invoked(&self, invocable: &Invocable, taken: Taken, ended: Invoked) {
        match ended {
            Invoked::Paid { on_chain } => self.after_payment(invocable, on_chain).await,
            Invoked::Withheld => {}
            Invoked::NotServed => self.give_back_limits(invocable, taken).await,
        }
    }

    /// After a paid call: the call earned in the same statement that recorded its payment (the
    /// store's trigger), so what is left is auto-withdraw, once the earning was settled on chain.
    pub async fn after_payment(&self, invocable: &Invocable, settled: bool) {
        if settled {
            self.auto_withdraw(invocable.id()).await;
        }
    }

    /// Pays out an agent's whole balance when auto-withdraw is on and the balance is past its
    /// threshold. Two earnings at once may both try: the balance allows one.
    async fn auto_withdraw(&self, agent_id: &str) {
        let agent = match self.store.seller_agent(agent_id).await {
            Ok(Some(agent)) => agent,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!(agent = %agent_id, error = %err, "could not read an agent for auto-withdraw");
                return;
            }
        };
        let Ok(Some(config)) = stored_config(&agent) else { return };
        let AutoWithdraw { enabled, threshold, destination } = &config.auto_withdraw;
        if !enabled || agent.balance <= threshold.atomic() {
            return;
        }
        let destination = destination.clone().unwrap_or_else(|| config.wallet_address.clone());
        match self.take(&agent, agent.balance, &destination, &config.network, true).await {
            Ok(_) | Err(SellerError::InsufficientBalance { .. }) => {}
            Err(err) => tracing::warn!(agent = %agent_id, error = %err, "auto-withdraw failed"),
        }
    }

    /// Finishes calls left `served`: dropped when their payment failed or was released long ago,
    /// earned when their payment went through (the store earns those with the payment's record;
    /// this is a second look). Returns how many it finished.
    pub async fn sweep(&self) -> Result<usize, SellerError> {
        let now = self.clock.now_ms();
        let served = self.store.served_seller_calls(now - SWEEP_AFTER_MS, 200).await?;
        let mut finished = 0;
        for call in served {
            let key = (call.network.as_str(), call.payer.as_str(), call.nonce.as_str());
            let done = match call.payment_status.as_deref() {
                Some("settled") => self.store.earn_seller_call(key, true, now).await?,
                Some("unsettled") => self.store.earn_seller_call(key, false, now).await?,
                Some("failed") => self.store.drop_seller_call(key, now).await?,
                // Released: the payment may come back (the same authorization retried), and
                // earns then; after the challenge's lifetime it cannot.
                None if call.created_at < now - 3_600_000 => self.store.drop_seller_call(key, now).await?,
                _ => false,
            };
            finished += usize::from(done);
        }
        if finished > 0 {
            tracing::info!(finished, "seller calls left by a stopped process were settled from their payments");
        }
        Ok(finished)
    }

    /// A free preview: the agent's examples and price, without calling the seller.
    pub fn preview(&self, invocable: &Invocable, now_ms: i64) -> Result<Value, SellerError> {
        let agent = &invocable.agent;
        let examples: Vec<Example> = parse_json(&agent.listing.examples)?;
        let price = invocable.price();
        Ok(json!({
            "preview": true,
            "agent": {"id": agent.id, "name": agent.listing.name, "description": agent.listing.description},
            "examples": examples,
            "input_schema": invocable.input_schema(),
            "price": {"usd": price.to_string(), "atomic": price.atomic().to_string(), "asset": "USDC"},
            "served_at": rfc3339(now_ms),
            "pay": "Send the same request without preview=true for the x402 challenge, pay it, and get the agent's answer.",
        }))
    }
}

/// The limiter key of an agent's per-minute window.
fn minute_key(agent_id: &str) -> String {
    format!("seller:minute:{agent_id}")
}

fn limited(which: &'static str, decision: &Decision, now_ms: i64) -> SellerError {
    SellerError::Limited {
        which,
        limit: u64::from(decision.limit),
        remaining: 0,
        reset_at_ms: decision.reset_at_ms,
        reset_secs: decision.reset_secs(now_ms),
    }
}

fn daily_limited(limit: u64, day: i64, now_ms: i64) -> SellerError {
    let reset_at_ms = (day + 1) * DAY_MS;
    let secs = u64::try_from(reset_at_ms - now_ms).unwrap_or(0).div_ceil(1000).max(1);
    SellerError::Limited { which: "daily", limit, remaining: 0, reset_at_ms, reset_secs: secs }
}

/// A payment's `network:payer:nonce` in its parts (the network holds a colon itself).
fn split_payment(payment: &str) -> Result<(&str, &str, &str), SellerError> {
    let mut parts = payment.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(nonce), Some(payer), Some(network)) if !network.is_empty() => Ok((network, payer, nonce)),
        _ => Err(SellerError::Corrupt(format!("payment key {payment:?}"))),
    }
}

/// A call's id as its seller sees it: the same for every retry of one payment, so a seller can
/// answer a retry without working twice.
fn call_id(payment: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, payment.as_bytes());
    format!("call_{}", hex::encode(&digest.as_ref()[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payment_key_splits_from_the_right() {
        assert_eq!(split_payment("eip155:8453:0xabc:0x01").ok(), Some(("eip155:8453", "0xabc", "0x01")));
        assert!(split_payment("0xabc:0x01").is_err());
        assert_eq!(call_id("a"), call_id("a"));
        assert_ne!(call_id("a"), call_id("b"));
    }
}
