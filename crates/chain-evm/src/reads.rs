//! Reads of the node that travel together: the simulations that verify payments and the
//! receipts that confirm them, taken from every paid call at once.
//!
//! A node spends much of each request on the request itself (parsing, routing, answering), so
//! reads waiting at the same moment go as one JSON-RPC batch: at most [`IN_FLIGHT`] requests
//! are out at once, and whatever arrives meanwhile waits and leaves together when one comes
//! back. An idle server's read goes alone and at once, so batching costs no latency; a busy
//! one's reads cost the node a fraction each. Only reads ride here: their order does not
//! matter, which a node running a batch's calls concurrently may not keep (transactions go
//! through their relayer's lane, in nonce order).

use std::borrow::Cow;
use std::sync::Arc;

use alloy::providers::{DynProvider, Provider as _};
use alloy::transports::{RpcError, TransportErrorKind, TransportResult};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::EvmError;
use crate::rpc::CALL_TIMEOUT;

/// Most reads in one batch.
const MAX_BATCH: usize = 64;
/// Requests out at once; more reads wait and leave together.
const IN_FLIGHT: usize = 2;

/// One read waiting to go.
struct Read {
    method: &'static str,
    params: Box<RawValue>,
    reply: oneshot::Sender<TransportResult<Box<RawValue>>>,
}

/// The node's reads, batched when several wait.
#[derive(Debug, Clone)]
pub(crate) struct Reads {
    waiting: mpsc::UnboundedSender<Read>,
}

impl Reads {
    /// Starts the task that sends the reads of `provider`; it ends with the last handle.
    pub(crate) fn start(provider: DynProvider) -> Self {
        let (waiting, receiver) = mpsc::unbounded_channel();
        tokio::spawn(run(provider, receiver));
        Reads { waiting }
    }

    /// Calls read-only `method` with `params`; `what` names it in errors. A node's error
    /// answer (a revert, say) is [`ReadError::Refused`] with its message; no answer in
    /// [`CALL_TIMEOUT`], or a transport failure, is [`ReadError::Unanswered`].
    pub(crate) async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &P,
    ) -> Result<R, ReadError> {
        let params = serde_json::value::to_raw_value(params)
            .map_err(|e| ReadError::Unanswered(format!("{method}: encoding the parameters: {e}")))?;
        let (reply, answer) = oneshot::channel();
        if self.waiting.send(Read { method, params, reply }).is_err() {
            return Err(ReadError::Unanswered(format!("{method}: the node's reader has stopped")));
        }
        let raw = match answer.await {
            Ok(Ok(raw)) => raw,
            Ok(Err(e)) => {
                return Err(match e.as_error_resp() {
                    Some(payload) => ReadError::Refused(format!("{method}: {}", payload.message)),
                    None => ReadError::Unanswered(format!("{method}: {e}")),
                });
            }
            Err(_) => return Err(ReadError::Unanswered(format!("{method}: the node's reader has stopped"))),
        };
        serde_json::from_str(raw.get()).map_err(|e| ReadError::Unanswered(format!("{method}: unexpected answer: {e}")))
    }
}

/// Why a read has no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The node answered with an error (a revert, an unknown method): its message.
    Refused(String),
    /// No usable answer: a timeout, a dropped connection, a malformed answer.
    Unanswered(String),
}

impl ReadError {
    /// The message, whichever kind.
    pub(crate) fn message(&self) -> &str {
        match self {
            ReadError::Refused(m) | ReadError::Unanswered(m) => m,
        }
    }
}

impl From<ReadError> for EvmError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Refused(m) | ReadError::Unanswered(m) => EvmError::Rpc(m),
        }
    }
}

async fn run(provider: DynProvider, mut receiver: mpsc::UnboundedReceiver<Read>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut reads = Vec::with_capacity(MAX_BATCH);
    loop {
        // A slot first: while every slot is out, reads gather in the channel and leave as one.
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else { return };
        if receiver.recv_many(&mut reads, MAX_BATCH).await == 0 {
            return;
        }
        let batch = std::mem::replace(&mut reads, Vec::with_capacity(MAX_BATCH));
        let provider = provider.clone();
        tokio::spawn(async move {
            send(&provider, batch).await;
            drop(slot);
        });
    }
}

/// Sends `reads`, alone when there is one, and answers each.
async fn send(provider: &DynProvider, mut reads: Vec<Read>) {
    let client = provider.client();
    if reads.len() == 1 {
        let Some(read) = reads.pop() else { return };
        let call = client.request::<_, Box<RawValue>>(Cow::Borrowed(read.method), read.params);
        let answer = tokio::time::timeout(CALL_TIMEOUT, call).await.unwrap_or_else(|_| Err(timed_out()));
        let _ = read.reply.send(answer);
        return;
    }
    let mut batch = alloy::rpc::client::BatchRequest::new(client);
    let mut waiters = Vec::with_capacity(reads.len());
    for read in reads {
        match batch.add_call::<_, Box<RawValue>>(read.method, &read.params) {
            Ok(waiter) => waiters.push((read.reply, waiter)),
            Err(e) => {
                let _ = read.reply.send(Err(e));
            }
        }
    }
    let sent = tokio::time::timeout(CALL_TIMEOUT, batch.send()).await.unwrap_or_else(|_| Err(timed_out()));
    for (reply, waiter) in waiters {
        // A batch that failed as a whole leaves every waiter without its answer: each gets
        // the batch's error.
        let answer = match &sent {
            Ok(()) => waiter.await,
            Err(e) => Err(TransportErrorKind::custom_str(&e.to_string())),
        };
        let _ = reply.send(answer);
    }
}

fn timed_out() -> RpcError<TransportErrorKind> {
    TransportErrorKind::custom_str(&format!("no answer in {CALL_TIMEOUT:?}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use alloy::providers::{Provider as _, ProviderBuilder};
    use axum::Json;
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::*;
    use std::time::Duration;

    /// A JSON-RPC node double at the network edge: answers `echo` with its parameter after a
    /// pause (so reads pile up), `fail` with an error object, and records how many reads each
    /// request carried; with `down` set it answers every request with a 502.
    #[derive(Default)]
    struct Node {
        requests: Mutex<Vec<usize>>,
        down: std::sync::atomic::AtomicBool,
    }

    fn answer(call: &Value) -> Value {
        match call["method"].as_str() {
            Some("fail") => {
                json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": 3, "message": "execution reverted: no"}})
            }
            _ => json!({"jsonrpc": "2.0", "id": call["id"], "result": call["params"][0]}),
        }
    }

    async fn node() -> (Arc<Node>, Reads) {
        let node = Arc::new(Node::default());
        let state = Arc::clone(&node);
        let app = axum::Router::new().route(
            "/",
            axum::routing::post(move |Json(body): Json<Value>| {
                let node = Arc::clone(&state);
                async move {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    if node.down.load(std::sync::atomic::Ordering::SeqCst) {
                        return (StatusCode::BAD_GATEWAY, Json(json!("down")));
                    }
                    let reply = match &body {
                        Value::Array(calls) => {
                            node.requests.lock().expect("requests").push(calls.len());
                            // Answered out of order, as a node running a batch concurrently may.
                            Value::Array(calls.iter().rev().map(answer).collect())
                        }
                        call => {
                            node.requests.lock().expect("requests").push(1);
                            answer(call)
                        }
                    };
                    (StatusCode::OK, Json(reply))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        // The node client svc uses, as configured for a real node.
        let client = crate::rpc::rpc_client(&url).expect("client");
        let provider = ProviderBuilder::new().connect_client(client).erased();
        (node, Reads::start(provider))
    }

    #[tokio::test]
    async fn reads_waiting_together_leave_together_and_each_gets_its_own_answer() {
        let (node, reads) = node().await;
        assert_eq!(reads.call::<_, u64>("echo", &(7u64,)).await, Ok(7));
        assert_eq!(*node.requests.lock().expect("requests"), [1], "a lone read goes alone");
        let calls = (0..40u64).map(|i| {
            let reads = reads.clone();
            async move { (i, reads.call::<_, u64>("echo", &(i,)).await) }
        });
        for (i, answer) in futures::future::join_all(calls).await {
            assert_eq!(answer, Ok(i), "read {i}");
        }
        let requests = node.requests.lock().expect("requests").clone();
        assert_eq!(requests.iter().sum::<usize>(), 41, "{requests:?}");
        assert!(requests.len() <= 3, "40 reads at once went in {} requests: {requests:?}", requests.len() - 1);
    }

    #[tokio::test]
    async fn a_refused_read_is_told_the_nodes_reason_and_the_others_in_its_batch_are_answered() {
        let (_, reads) = node().await;
        let calls =
            (0..10u64).map(|i| {
                let reads = reads.clone();
                async move {
                    if i == 5 { reads.call::<_, u64>("fail", &(i,)).await } else { reads.call("echo", &(i,)).await }
                }
            });
        let answers = futures::future::join_all(calls).await;
        for (i, answer) in answers.into_iter().enumerate() {
            if i == 5 {
                assert_eq!(answer, Err(ReadError::Refused("fail: execution reverted: no".into())));
            } else {
                assert_eq!(answer, Ok(i as u64));
            }
        }
    }

    #[tokio::test]
    async fn a_node_that_fails_a_whole_batch_leaves_every_read_unanswered_not_refused() {
        let (node, reads) = node().await;
        node.down.store(true, std::sync::atomic::Ordering::SeqCst);
        let calls = (0..10u64).map(|i| {
            let reads = reads.clone();
            async move { reads.call::<_, u64>("echo", &(i,)).await }
        });
        for answer in futures::future::join_all(calls).await {
            assert!(matches!(answer, Err(ReadError::Unanswered(_))), "{answer:?}");
        }
    }
}
