//! One proxied call: token, limits, model, top-up, hold, provider, charge.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};
use svc_domain::Money;
use svc_limits::MINUTE_MS;
use svc_paywall::{Buyer, Outcome, Sale, Sold};
use svc_store::{LlmCap, LlmHold, NewLlmCall};
use svc_x402::SettleResponse;
use svc_x402::codec::Presented;

use crate::error::LlmError;
use crate::meter::{MAX_CALL, Meter};
use crate::provider::Answer;
use crate::relay::Relay;
use crate::{Llm, TopUp};

/// An account whose token verified and whose call the rate limit admitted.
#[derive(Debug, Clone)]
pub struct Caller {
    account_id: String,
    settings: svc_store::LlmAccount,
}

/// A chat-completions call as it arrived.
#[derive(Debug)]
pub struct ChatCall<'a> {
    /// Who calls ([`Llm::admit`]).
    pub caller: Caller,
    /// The request body.
    pub body: &'a [u8],
    /// The payment sent with the call, for a credit top-up, as read from wherever the
    /// surface carries it.
    pub payment: &'a Presented,
    /// The extensions the top-up's challenge advertises, which a v2 payment echoes: one that
    /// rewrote them is refused before anything is verified, as on every other surface.
    pub advertised: Option<&'a Map<String, Value>>,
}

/// The answer to a call.
pub enum Chat {
    /// A whole completion, as JSON.
    Whole {
        /// The completion.
        json: Bytes,
        /// The settlement of a top-up paid with the call.
        receipt: Option<SettleResponse>,
    },
    /// A stream of `data:` events, ending with `data: [DONE]`.
    Stream {
        /// The events.
        events: Relay,
        /// The settlement of a top-up paid with the call.
        receipt: Option<SettleResponse>,
    },
}

impl std::fmt::Debug for Chat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Chat::Whole { .. } => f.write_str("Chat::Whole"),
            Chat::Stream { .. } => f.write_str("Chat::Stream"),
        }
    }
}

/// What a call asks for, read from its body.
struct Asked {
    request: Map<String, Value>,
    alias: String,
    stream: bool,
    /// The client asked for the usage chunk of a stream.
    wants_usage: bool,
    /// The largest output limit the request names.
    max_output: Option<u64>,
    /// Choices asked for (`n`).
    choices: u64,
    /// Content parts that are not text (images, audio, files): their tokens are not bounded
    /// by their bytes.
    media_parts: u64,
}

/// The most choices one call may ask for.
const MAX_CHOICES: u64 = 8;
/// Prompt tokens one image, audio or file part is held for: above what providers charge for
/// one high-detail image.
const MEDIA_PART_TOKENS: u64 = 4_000;
const DAY_MS: i64 = 86_400_000;

impl Llm {
    /// The account a token names, if the token is its current one, with its call counted
    /// against the account's rate limit: checked before the body is read.
    pub async fn admit(&self, token: Option<&str>) -> Result<Caller, LlmError> {
        let presented = token.and_then(crate::token::parse).ok_or(LlmError::Unauthorized)?;
        let settings = self.store.llm_account(presented.account_id).await?;
        if !self.config.token_key.verify(&presented, settings.token_version) {
            return Err(LlmError::Unauthorized);
        }
        let account_id = presented.account_id.to_owned();
        if self.config.rate_per_minute > 0 {
            let now = self.clock.now_ms();
            let key = format!("llm:{account_id}");
            let decision = self.limiter.hit(&key, self.config.rate_per_minute, MINUTE_MS, now).await;
            if !decision.allowed {
                return Err(LlmError::RateLimited { retry_after: decision.reset_secs(now), limit: decision.limit });
            }
        }
        Ok(Caller { account_id, settings })
    }

    /// The largest body a call may send.
    pub fn body_limit(&self) -> usize {
        self.config.body_limit_bytes
    }

    /// Serves one chat-completions call.
    pub async fn chat(self: &Arc<Self>, call: ChatCall<'_>) -> Result<Chat, LlmError> {
        let Caller { account_id: account, settings } = call.caller;
        let now = self.clock.now_ms();
        if call.body.len() > self.config.body_limit_bytes {
            return Err(LlmError::TooLarge { limit: self.config.body_limit_bytes });
        }
        let asked = read(call.body)?;
        let model = self.config.models.get(&asked.alias).ok_or_else(|| LlmError::ModelNotFound(asked.alias.clone()))?;
        // Every text token is at least one byte, so the body's length bounds the text of the
        // prompt; media parts are held at a fixed count each.
        let body_bytes = u64::try_from(call.body.len()).unwrap_or(u64::MAX);
        let prompt_bound = body_bytes.saturating_add(asked.media_parts.saturating_mul(MEDIA_PART_TOKENS));
        let reserved = model.most(prompt_bound, asked.max_output, asked.choices);
        let day_start = now - now.rem_euclid(DAY_MS);
        let cap = (self.config.daily_cap > Money::ZERO)
            .then(|| LlmCap { limit: self.config.daily_cap.atomic(), since_ms: day_start });
        let over_cap = || {
            let retry_after = u64::try_from((day_start + DAY_MS - now).max(1000) / 1000).unwrap_or(1);
            LlmError::DailyCap { retry_after, cap: self.config.daily_cap }
        };
        let top_up = self.top_up_of(&settings);
        let receipt = match call.payment {
            Presented::Nothing => None,
            presented => {
                // No top-up is bought for a call the cap refuses: a read, enough to spare the
                // payer; the hold below is what keeps the cap.
                if let Some(cap) = cap {
                    let spent = self.store.llm_usage_since(&account, cap.since_ms).await?.spent;
                    if spent.saturating_add(reserved) > cap.limit {
                        return Err(over_cap());
                    }
                }
                let balance = self.balance(&account).await?;
                let amount = top_up_amount(top_up.amount, reserved, balance);
                self.buy_credits(&account, TopUp { amount, ..top_up }, presented, call.advertised).await?
            }
        };
        let id = format!("llm_{}", uuid::Uuid::now_v7().simple());
        let new = NewLlmCall {
            id: &id,
            account_id: &account,
            alias: &asked.alias,
            provider: &model.provider,
            upstream_model: &model.upstream_model,
            stream: asked.stream,
            reserved,
            cap,
            now_ms: now,
        };
        match self.store.begin_llm_call(&new).await? {
            LlmHold::Taken => {}
            LlmHold::OverCap => return Err(over_cap()),
            LlmHold::Insufficient { balance } => {
                let amount = top_up_amount(top_up.amount, reserved, balance);
                return Err(LlmError::InsufficientCredits {
                    balance: Money::from_atomic(balance),
                    needed: Money::from_atomic(reserved),
                    top_up: top_up.enabled.then_some(amount),
                });
            }
        }
        let meter = Meter::new(Arc::clone(self), id, model.clone(), reserved, body_bytes.div_ceil(4));
        let provider = self
            .providers
            .get(&model.provider)
            .ok_or_else(|| LlmError::Internal(format!("no provider {}", model.provider)))?
            .clone();
        let mut request = asked.request;
        request.insert("model".into(), Value::String(model.upstream_model.clone()));
        if asked.stream {
            // Billing needs the usage chunk, whether or not the client asked for it.
            let options = request.entry("stream_options").or_insert_with(|| Value::Object(Map::new()));
            if !options.is_object() {
                *options = Value::Object(Map::new());
            }
            if let Some(options) = options.as_object_mut() {
                options.insert("include_usage".into(), Value::Bool(true));
            }
        }
        let default_max = model.max_output;
        let alias = asked.alias;
        if asked.stream {
            return match provider.send(request, true, default_max).await {
                Ok(Answer::Stream(chunks)) => {
                    Ok(Chat::Stream { events: Relay::new(chunks, meter, alias, asked.wants_usage), receipt })
                }
                Ok(Answer::Whole(_)) => {
                    let err = LlmError::Upstream("the provider did not stream".into());
                    meter.fail(&err).await;
                    Err(err)
                }
                Err(err) => {
                    meter.fail(&err).await;
                    Err(err)
                }
            };
        }
        // The provider's work is paid for whether or not the client stays for the answer:
        // the call runs to its charge on its own task.
        let whole = tokio::spawn(async move {
            let sent = tokio::time::timeout(MAX_CALL, provider.send(request, false, default_max)).await;
            let answer = match sent.unwrap_or(Err(LlmError::UpstreamTimeout)) {
                Ok(Answer::Whole(answer)) => answer,
                Ok(Answer::Stream(_)) => {
                    let err = LlmError::Upstream("the provider streamed an answer not asked to".into());
                    meter.fail(&err).await;
                    return Err(err);
                }
                Err(err) => {
                    meter.fail(&err).await;
                    return Err(err);
                }
            };
            meter.complete(answer, &alias).await
        });
        let json = whole.await.map_err(|e| LlmError::Internal(format!("call task: {e}")))??;
        Ok(Chat::Whole { json, receipt })
    }

    /// The account's balance, atomic units.
    async fn balance(&self, account_id: &str) -> Result<u64, LlmError> {
        Ok(self.store.account(account_id).await?.map_or(0, |a| a.balance))
    }

    /// Buys credits with a payment sent with the call, through the credit purchase: once per
    /// payment, and only once it has settled. Returns the settlement, or nothing for a payment
    /// that already bought its credits (a retry). A refusal names the top-up a fresh payment
    /// would buy, when top-up is on.
    async fn buy_credits(
        &self,
        account_id: &str,
        top_up: TopUp,
        presented: &Presented,
        advertised: Option<&Map<String, Value>>,
    ) -> Result<Option<SettleResponse>, LlmError> {
        let refuse = |reason: String| -> Result<Option<SettleResponse>, LlmError> {
            Err(LlmError::PaymentRefused { reason, top_up: top_up.enabled.then_some(top_up.amount) })
        };
        if !top_up.enabled {
            return refuse(
                "automatic top-up is off for this account: turn it on with PUT /api/account/llm-top-up".into(),
            );
        }
        let payment = match presented {
            Presented::Payment(payment) => payment,
            Presented::TooLarge(bytes) => {
                let limit = svc_x402::codec::MAX_HEADER_BYTES;
                return refuse(format!("the payment is {bytes} bytes; a payment is at most {limit} bytes"));
            }
            Presented::Junk | Presented::Nothing => {
                return refuse("the payment does not decode as an x402 payment".into());
            }
        };
        let product = svc_accounts::credits::PURCHASE_PRODUCT;
        let sale = Sale { product, price: top_up.amount, discountable: false, advertised };
        let store = self.store.clone();
        let clock = Arc::clone(&self.clock);
        let account = account_id.to_owned();
        let amount = top_up.amount;
        let bought = Arc::new(std::sync::Mutex::new(None::<String>));
        let noted = Arc::clone(&bought);
        let work = |buyer: Buyer| async move {
            let reference = svc_accounts::credits::purchase_reference(&buyer.payment);
            let json = serde_json::json!({"account_id": account, "amount": amount, "reference": reference});
            if let Ok(mut noted) = noted.lock() {
                *noted = Some(reference.clone());
            }
            let delivery: svc_paywall::Delivery = Box::pin(async move {
                let now = clock.now_ms();
                if let Err(err) = svc_accounts::credits::add_purchase(&store, &account, amount, &reference, now).await {
                    tracing::error!(error = %err, "could not add the credits of a settled LLM top-up");
                }
            });
            Ok::<_, LlmError>(Sold { answer: (), json: Bytes::from(json.to_string()), then: Some(delivery) })
        };
        match self.paywall.charge(sale, payment, work).await? {
            Outcome::Paid { receipt, handover, .. } => {
                // What the payment bought is credits, on the account before this call goes on:
                // nothing of it is left to hand over.
                if let Some(handover) = handover {
                    handover.delivered();
                }
                // The delivery reports its own failures; the credits must be there before the
                // call goes on, so a failed delivery is tried once more here (it is idempotent)
                // and a second failure is the caller's error, with the payment on record.
                let reference = bought.lock().ok().and_then(|b| b.clone());
                if let Some(reference) = reference {
                    let now = self.clock.now_ms();
                    svc_accounts::credits::add_purchase(&self.store, account_id, amount, &reference, now).await?;
                }
                Ok(Some(receipt))
            }
            // The same payment again, after its answer was lost: its credits are on the account.
            Outcome::Kept { .. } => Ok(None),
            Outcome::Refused { reason, .. } => refuse(reason.into_owned()),
            Outcome::Failed(err) => Err(err),
            Outcome::Unsettled { error, .. } => Err(LlmError::TopUpUnsettled { reason: error.reason().to_owned() }),
        }
    }
}

/// What a top-up buys: the account's amount, or the shortfall of the call when that is more,
/// within what one purchase may buy.
fn top_up_amount(chosen: Money, needed: u64, balance: u64) -> Money {
    let shortfall = Money::from_atomic(needed.saturating_sub(balance));
    let min = svc_domain::money::MIN_CREDIT_PURCHASE;
    let max = svc_domain::money::MAX_CREDIT_PURCHASE;
    chosen.max(shortfall).clamp(min, max)
}

/// Reads what a call asks for; anything else in the body passes through untouched.
fn read(body: &[u8]) -> Result<Asked, LlmError> {
    let bad = |message: String, param: Option<&str>, code| LlmError::BadRequest {
        message,
        param: param.map(str::to_owned),
        code,
    };
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| bad(format!("the request body is not valid JSON: {e}"), None, "invalid_json"))?;
    if let Some(refused) = svc_catalogue::input::text_errors(&request).into_iter().next() {
        return Err(LlmError::Unprocessable { message: refused.msg, param: param_of(&refused.loc) });
    }
    let Value::Object(request) = request else {
        return Err(bad("the request body must be a JSON object".into(), None, "invalid_request"));
    };
    let alias = match request.get("model") {
        Some(Value::String(alias)) if !alias.is_empty() => alias.clone(),
        Some(_) => {
            return Err(bad(
                "`model` must be a model name (GET /api/v1/llm/models lists them)".into(),
                Some("model"),
                "invalid_type",
            ));
        }
        None => {
            return Err(bad("you must provide a model parameter".into(), Some("model"), "missing_required_parameter"));
        }
    };
    match request.get("messages") {
        Some(Value::Array(messages)) if !messages.is_empty() => {}
        Some(Value::Array(_)) => {
            return Err(bad("`messages` must not be empty".into(), Some("messages"), "invalid_value"));
        }
        Some(_) => return Err(bad("`messages` must be an array of messages".into(), Some("messages"), "invalid_type")),
        None => {
            return Err(bad(
                "you must provide a messages parameter".into(),
                Some("messages"),
                "missing_required_parameter",
            ));
        }
    }
    let stream = match request.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(stream)) => *stream,
        Some(_) => return Err(bad("`stream` must be a boolean".into(), Some("stream"), "invalid_type")),
    };
    let wants_usage = request.get("stream_options").and_then(|o| o.get("include_usage")) == Some(&Value::Bool(true));
    // A provider may honour either limit: the larger one bounds what the call can cost.
    let mut max_output = None;
    for field in ["max_completion_tokens", "max_tokens"] {
        match request.get(field) {
            None | Some(Value::Null) => {}
            Some(value) => match value.as_u64() {
                Some(n) if n > 0 => max_output = Some(max_output.map_or(n, |m: u64| m.max(n))),
                _ => return Err(bad(format!("`{field}` must be a positive integer"), Some(field), "invalid_value")),
            },
        }
    }
    let choices = match request.get("n") {
        None | Some(Value::Null) => 1,
        Some(value) => match value.as_u64() {
            Some(n) if (1..=MAX_CHOICES).contains(&n) => n,
            _ => {
                return Err(bad(format!("`n` must be an integer from 1 to {MAX_CHOICES}"), Some("n"), "invalid_value"));
            }
        },
    };
    let media_parts = request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) != Some("text"))
        .count() as u64;
    Ok(Asked { request, alias, stream, wants_usage, max_output, choices, media_parts })
}

/// A field's location as OpenAI names it: `messages[0].content`.
fn param_of(loc: &[svc_catalogue::Loc]) -> String {
    let mut param = String::new();
    for step in loc {
        match step {
            svc_catalogue::Loc::Key(key) if param.is_empty() => param.push_str(key),
            svc_catalogue::Loc::Key(key) => {
                param.push('.');
                param.push_str(key);
            }
            svc_catalogue::Loc::Index(index) => param.push_str(&format!("[{index}]")),
        }
    }
    param
}
