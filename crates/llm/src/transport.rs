//! How every provider is reached, whatever API it speaks: its configuration, the shapes of
//! its answers, and what its transport failures and refusals mean to the proxy. Both the
//! OpenAI-compatible client (`provider`) and the Anthropic one (`anthropic`) build on it.

use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::LlmError;

/// How a provider is reached.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API it speaks.
    pub kind: ProviderKind,
    /// Its base URL, up to and including the version (`…/v1`).
    pub base_url: String,
    /// Its key; never shown.
    #[serde(default, skip_serializing)]
    pub key: Option<String>,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// The API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI's chat completions: `POST {base}/chat/completions`, `Authorization: Bearer`.
    Openai,
    /// Anthropic's Messages API: `POST {base}/messages`, `x-api-key`.
    Anthropic,
}

/// A stream of OpenAI completion chunks; it ends after the provider's last chunk.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<Value, LlmError>> + Send>>;

/// What a provider answered.
pub enum Answer {
    /// A whole completion.
    Whole(Value),
    /// A stream of chunks.
    Stream(ChunkStream),
}

/// Why a stream that stopped without its last event failed: a truncated answer is not a
/// success.
pub(crate) const ENDED_EARLY: &str = "the provider's stream ended before its last event";
/// The most of an error body read from a provider.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A transport failure as the proxy reports it.
pub(crate) fn transport(err: reqwest::Error) -> LlmError {
    if err.is_timeout() {
        LlmError::UpstreamTimeout
    } else {
        // Not `err` itself: its text can carry the provider's URL.
        LlmError::Upstream(if err.is_connect() { "could not connect".into() } else { "the connection failed".into() })
    }
}

/// A provider's answer when it is a success; its refusal, mapped, when not.
pub(crate) async fn check(response: reqwest::Response) -> Result<reqwest::Response, LlmError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let body = read_capped(response).await;
    let error = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v.get("error").cloned());
    let message = error.as_ref().map(error_message).unwrap_or_else(|| format!("status {}", status.as_u16()));
    Err(match status.as_u16() {
        // Our own key is the provider's concern, never the client's: a 401 would make the
        // client think its token is bad (and some lock it for minutes).
        401 | 403 => LlmError::Upstream(format!("the provider refused svc's credentials ({})", status.as_u16())),
        429 => LlmError::UpstreamBusy { retry_after },
        // A 404 is svc's model table naming a model the provider lacks: not the client's doing.
        400 | 409 | 413 | 422 => LlmError::UpstreamRejected {
            message,
            code: error.as_ref().and_then(|e| e.get("code")).and_then(Value::as_str).map(str::to_owned),
            param: error.as_ref().and_then(|e| e.get("param")).and_then(Value::as_str).map(str::to_owned),
        },
        504 | 524 => LlmError::UpstreamTimeout,
        code => LlmError::Upstream(format!("status {code}: {message}")),
    })
}

/// At most [`MAX_ERROR_BODY`] bytes of a body.
async fn read_capped(response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(Ok(chunk)) = chunks.next().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    body
}

/// The message of an error object (`{"message": …}`, or a bare string).
pub(crate) fn error_message(error: &Value) -> String {
    match error {
        Value::String(message) => message.clone(),
        other => other.get("message").and_then(Value::as_str).unwrap_or("the provider failed").to_owned(),
    }
}
