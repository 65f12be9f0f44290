//! A streamed answer, relayed chunk by chunk as the provider sends it: each chunk is passed
//! on at once with only its `model` changed back to the alias, and the call is charged when
//! the provider has finished.
//!
//! The usage chunk is always asked of the provider (billing needs it) and passed on only if
//! the client asked for it. A client that leaves mid-stream does not stop the meter: the rest
//! of the provider's answer is drained on its own task and the call charged for what the
//! provider produced; when no usage comes, the charge is estimated from the text relayed and
//! the record says so. A provider that fails mid-stream (or ends it without its last event)
//! gets an error as its last event ([`Event::Failed`]) and the stream ends; the call charges nothing. A call is cut at
//! [`MAX_CALL`] and charged an estimate.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt as _};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::LlmError;
use crate::meter::{MAX_CALL, Meter, usage_of};
use crate::models::Tokens;
use crate::transport::ChunkStream;

/// The events of a streamed answer.
pub struct Relay(Pin<Box<dyn Stream<Item = Event> + Send>>);

/// One event of a streamed answer. A failure is handed over as the error itself, so the HTTP
/// layer writes it in the one error shape it maps every other proxy error to.
#[derive(Debug)]
pub enum Event {
    /// A `data:` event, ready to send.
    Data(Bytes),
    /// The call failed after the answer began: the last event.
    Failed(LlmError),
}

impl Stream for Relay {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.as_mut().poll_next(cx)
    }
}

/// What the provider has sent so far.
#[derive(Debug, Default)]
struct Tally {
    usage: Option<Tokens>,
    /// Bytes of text and tool arguments seen.
    text_bytes: u64,
    /// Whether any text or tool call came.
    produced: bool,
}

impl Tally {
    fn observe(&mut self, chunk: &Value) {
        if let Some(usage) = usage_of(chunk) {
            self.usage = Some(usage);
        }
        for choice in chunk.get("choices").and_then(Value::as_array).into_iter().flatten() {
            let Some(delta) = choice.get("delta") else { continue };
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                self.produced = true;
                self.text_bytes += text.len() as u64;
            }
            for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                self.produced = true;
                let arguments = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("");
                self.text_bytes += arguments.len() as u64 + 1;
            }
        }
    }

    /// Charges the call for what the provider produced.
    async fn settle(self, meter: Meter) {
        match self.usage {
            Some(tokens) if tokens.completion == 0 && !self.produced => {
                meter.charge(Tokens { completion: 0, ..tokens }, "ok", Some("empty completion: not charged")).await;
            }
            None if !self.produced => meter.fail(&LlmError::Upstream("the provider produced nothing".into())).await,
            Some(tokens) => meter.charge(tokens, "ok", None).await,
            None => self.estimate(meter, "the provider reported no usage; estimated from the text relayed").await,
        }
    }

    /// Charges an estimate: a quarter token per byte of the prompt and of what was relayed.
    async fn estimate(self, meter: Meter, why: &str) {
        let tokens = Tokens { prompt: meter.prompt_estimate(), cached: 0, completion: self.text_bytes.div_ceil(4) };
        meter.charge(tokens, "estimated", Some(why)).await;
    }
}

/// The provider's stream and the meter, until the call is charged. If the client leaves
/// first, dropping this hands both to a task that drains the provider and charges.
struct Pending {
    chunks: Option<ChunkStream>,
    meter: Option<Meter>,
    tally: Tally,
    /// When the call must have ended.
    deadline: Instant,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let (Some(chunks), Some(meter)) = (self.chunks.take(), self.meter.take()) else { return };
        let tally = std::mem::take(&mut self.tally);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(chunks, meter, tally, self.deadline));
        }
    }
}

/// Reads the rest of a stream whose client left, then charges it as if the client had stayed.
async fn drain(mut chunks: ChunkStream, meter: Meter, mut tally: Tally, deadline: Instant) {
    loop {
        match tokio::time::timeout_at(deadline, chunks.next()).await {
            Ok(Some(Ok(chunk))) => tally.observe(&chunk),
            Ok(Some(Err(err))) => return meter.fail(&err).await,
            Ok(None) => return tally.settle(meter).await,
            Err(_) => return tally.estimate(meter, "cut at the call's time limit; estimated").await,
        }
    }
}

impl Relay {
    /// Relays `chunks` with `alias` as their model, charging through `meter` at the end;
    /// the usage chunk is passed on only if `wants_usage`.
    pub(crate) fn new(chunks: ChunkStream, meter: Meter, alias: String, wants_usage: bool) -> Self {
        // Built outside the stream, so a body dropped before its first poll still drains.
        let deadline = Instant::now() + MAX_CALL;
        let pending = Pending { chunks: Some(chunks), meter: Some(meter), tally: Tally::default(), deadline };
        let events = async_stream::stream! {
            let mut pending = pending;
            loop {
                let next = match pending.chunks.as_mut() {
                    Some(chunks) => match tokio::time::timeout_at(pending.deadline, chunks.next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            pending.chunks = None;
                            if let Some(meter) = pending.meter.take() {
                                std::mem::take(&mut pending.tally).estimate(meter, "cut at the call's time limit; estimated").await;
                            }
                            yield Event::Failed(LlmError::UpstreamTimeout);
                            break;
                        }
                    },
                    None => None,
                };
                match next {
                    Some(Ok(mut chunk)) => {
                        pending.tally.observe(&chunk);
                        if let Some(event) = render(&mut chunk, &alias, wants_usage) {
                            yield Event::Data(event);
                        }
                    }
                    Some(Err(err)) => {
                        pending.chunks = None;
                        if let Some(meter) = pending.meter.take() {
                            meter.fail(&err).await;
                        }
                        yield Event::Failed(err);
                        break;
                    }
                    None => {
                        pending.chunks = None;
                        if let Some(meter) = pending.meter.take() {
                            std::mem::take(&mut pending.tally).settle(meter).await;
                        }
                        yield Event::Data(Bytes::from_static(b"data: [DONE]\n\n"));
                        break;
                    }
                }
            }
        };
        Relay(Box::pin(events))
    }
}

/// One chunk as the client gets it: the alias as its model, the usage only if asked for.
fn render(chunk: &mut Value, alias: &str, wants_usage: bool) -> Option<Bytes> {
    let object = chunk.as_object_mut()?;
    if !wants_usage && object.get("usage").is_some_and(|u| !u.is_null()) {
        let no_choices = object.get("choices").and_then(Value::as_array).is_none_or(Vec::is_empty);
        if no_choices {
            return None;
        }
        object.remove("usage");
    }
    object.insert("model".into(), Value::String(alias.to_owned()));
    let mut event = b"data: ".to_vec();
    serde_json::to_writer(&mut event, chunk).ok()?;
    event.extend_from_slice(b"\n\n");
    Some(Bytes::from(event))
}
