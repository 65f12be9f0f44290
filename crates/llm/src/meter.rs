//! The meter of one proxied call: what it held, and the charge of what it used once it has
//! ended, whether it ended whole, streamed, failed or was abandoned by its client. The call
//! (`proxy`) starts it and the stream relay (`relay`) finishes it.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde_json::Value;
use svc_store::FinishedLlmCall;

use crate::Llm;
use crate::error::LlmError;
use crate::models::{Model, Tokens};

/// The longest a call may run, stream included: under [`crate::STALE_AFTER_MS`], so the sweep
/// never releases a call that is still running.
pub(crate) const MAX_CALL: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Charges one call for what it used, once it has ended.
pub(crate) struct Meter {
    llm: Arc<Llm>,
    id: String,
    model: Model,
    reserved: u64,
    started: Instant,
    /// Prompt tokens guessed from the body, for a call whose usage never came.
    prompt_estimate: u64,
    /// Set once the call's end has been handed to the store.
    finished: bool,
}

impl Drop for Meter {
    /// A call dropped before it was charged (its client left while the provider was still
    /// being asked, and the request to it was cancelled): its hold is given back now rather
    /// than by the sweep an hour later.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let done = self.record("failed", Tokens::default(), 0, Some("the client left before the answer began"));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(done);
        }
    }
}

/// The usage an OpenAI completion or chunk reports.
pub(crate) fn usage_of(value: &Value) -> Option<Tokens> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    let n = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Some(Tokens {
        prompt: n("/prompt_tokens"),
        cached: n("/prompt_tokens_details/cached_tokens"),
        completion: n("/completion_tokens"),
    })
}

/// Whether a completion produced nothing: no text and no tool call in any choice.
fn is_empty(completion: &Value) -> bool {
    let choices = completion.get("choices").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    choices.iter().all(|choice| {
        let message = choice.get("message");
        let text = message.and_then(|m| m.get("content")).and_then(Value::as_str).unwrap_or("");
        let calls = message.and_then(|m| m.get("tool_calls")).and_then(Value::as_array).is_some_and(|c| !c.is_empty());
        text.is_empty() && !calls
    })
}

impl Meter {
    /// The meter of call `id` to `model`, holding `reserved`; `prompt_estimate` is charged for
    /// the prompt if the provider never reports its usage.
    pub(crate) fn new(llm: Arc<Llm>, id: String, model: Model, reserved: u64, prompt_estimate: u64) -> Self {
        Meter { llm, id, model, reserved, started: Instant::now(), prompt_estimate, finished: false }
    }

    /// Charges a whole completion and gives it back with the alias as its model.
    pub(crate) async fn complete(self, mut answer: Value, alias: &str) -> Result<Bytes, LlmError> {
        let tokens = usage_of(&answer);
        if let Some(object) = answer.as_object_mut() {
            object.insert("model".into(), Value::String(alias.to_owned()));
        }
        let json = serde_json::to_vec(&answer).map_err(|e| LlmError::Internal(format!("encode completion: {e}")))?;
        match tokens {
            _ if is_empty(&answer) => {
                self.finish("ok", tokens.unwrap_or_default(), 0, Some("empty completion: not charged")).await
            }
            Some(tokens) => self.charge(tokens, "ok", None).await,
            None => {
                let estimate =
                    Tokens { prompt: self.prompt_estimate, cached: 0, completion: (json.len() as u64).div_ceil(4) };
                self.charge(estimate, "estimated", Some("the provider reported no usage; estimated from the text"))
                    .await;
            }
        }
        Ok(Bytes::from(json))
    }

    /// Charges `tokens` (at most what was held).
    pub(crate) async fn charge(self, tokens: Tokens, status: &str, note: Option<&str>) {
        let cost = self.model.cost(tokens);
        let (cost, note) = if cost > self.reserved {
            // Only a provider that ignores the output limit gets here; the hold is the most
            // the account agreed to.
            tracing::warn!(call = %self.id, cost, reserved = self.reserved, "an LLM call cost more than it held");
            (self.reserved, Some("usage above the hold: charged the hold"))
        } else {
            (cost, note)
        };
        self.finish(status, tokens, cost, note).await;
    }

    /// Ends a call that failed: nothing is charged.
    pub(crate) async fn fail(self, err: &LlmError) {
        let note = err.to_string();
        self.finish("failed", Tokens::default(), 0, Some(&note)).await;
    }

    /// Hands the call's end to the store on a task of its own, so a client that leaves while
    /// it is written cannot cancel it halfway, and waits for it.
    async fn finish(mut self, status: &str, tokens: Tokens, cost: u64, note: Option<&str>) {
        self.finished = true;
        let _ = tokio::spawn(self.record(status, tokens, cost, note)).await;
    }

    /// The store write that ends the call.
    fn record(&self, status: &str, tokens: Tokens, cost: u64, note: Option<&str>) -> impl Future<Output = ()> + use<> {
        let (store, id) = (self.llm.store.clone(), self.id.clone());
        let (status, note) = (status.to_owned(), note.map(str::to_owned));
        let latency_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let now_ms = self.llm.clock.now_ms();
        async move {
            let done = FinishedLlmCall {
                status: &status,
                prompt_tokens: tokens.prompt,
                cached_tokens: tokens.cached,
                completion_tokens: tokens.completion,
                cost,
                latency_ms,
                note: note.as_deref(),
                now_ms,
            };
            if let Err(err) = store.finish_llm_call(&id, &done).await {
                // The hold stays until the sweep releases it: the account is never charged more.
                tracing::error!(call = %id, error = %err, "could not finish an LLM call");
            }
        }
    }

    /// Prompt tokens guessed from the body.
    pub(crate) fn prompt_estimate(&self) -> u64 {
        self.prompt_estimate
    }
}
