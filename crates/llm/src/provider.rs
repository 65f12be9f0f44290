//! The model providers the proxy calls: an OpenAI-compatible chat-completions API (OpenAI,
//! an OpenAI-compatible gateway, vLLM, a local server, the simulator), or Anthropic's
//! Messages API translated both ways (module `anthropic`).
//!
//! Whatever the provider speaks, the proxy sees OpenAI's shapes: a completion object, or a
//! stream of completion chunks.

use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures::StreamExt as _;
use serde_json::{Map, Value};

use crate::error::LlmError;
pub use crate::transport::{Answer, ChunkStream, ProviderConfig, ProviderKind};
use crate::transport::{ENDED_EARLY, check, error_message, transport};

/// A configured provider.
#[derive(Debug, Clone)]
pub struct Provider {
    config: ProviderConfig,
    client: reqwest::Client,
}

/// The longest a provider may take to start answering, or between two chunks of a stream.
const READ_TIMEOUT: Duration = Duration::from_secs(300);
impl Provider {
    /// A client for `config`.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(READ_TIMEOUT)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| LlmError::Internal(format!("LLM provider client: {e}")))?;
        Ok(Provider {
            config: ProviderConfig { base_url: config.base_url.trim_end_matches('/').to_owned(), ..config },
            client,
        })
    }

    /// Sends an OpenAI chat-completions `request` (its `model` already the provider's);
    /// `default_max` is the output limit for providers that need one when none is asked.
    pub async fn send(&self, request: Map<String, Value>, stream: bool, default_max: u64) -> Result<Answer, LlmError> {
        match self.config.kind {
            ProviderKind::Openai => self.send_openai(request, stream).await,
            ProviderKind::Anthropic => {
                crate::anthropic::send(&self.config, &self.client, request, stream, default_max).await
            }
        }
    }

    async fn send_openai(&self, request: Map<String, Value>, stream: bool) -> Result<Answer, LlmError> {
        let mut builder = self.client.post(format!("{}/chat/completions", self.config.base_url)).json(&request);
        if let Some(key) = &self.config.key {
            builder = builder.bearer_auth(key);
        }
        let response = check(builder.send().await.map_err(transport)?).await?;
        if !stream {
            let body = response.bytes().await.map_err(transport)?;
            let value = serde_json::from_slice::<Value>(&body)
                .map_err(|e| LlmError::Upstream(format!("the provider answered something other than JSON: {e}")))?;
            return Ok(Answer::Whole(value));
        }
        let mut events = response.bytes_stream().eventsource();
        let chunks = async_stream::stream! {
            loop {
                let chunk = match events.next().await {
                    Some(Ok(event)) if event.data.trim() == "[DONE]" => break,
                    Some(Ok(event)) => serde_json::from_str::<Value>(&event.data)
                        .map_err(|e| LlmError::Upstream(format!("the provider streamed something other than JSON: {e}")))
                        .and_then(|chunk| match chunk.get("error") {
                            Some(error) => Err(LlmError::Upstream(error_message(error))),
                            None => Ok(chunk),
                        }),
                    Some(Err(e)) => Err(LlmError::Upstream(format!("the provider's stream broke: {e}"))),
                    None => Err(LlmError::Upstream(ENDED_EARLY.into())),
                };
                let failed = chunk.is_err();
                yield chunk;
                if failed {
                    break;
                }
            }
        };
        Ok(Answer::Stream(Box::pin(chunks)))
    }
}
