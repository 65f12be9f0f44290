//! A local sandbox's way out: an HTTP proxy from its `egress.sock` to svc that puts the real
//! credentials in place of the sandbox's placeholders on every request.
//!
//! The sandbox is only ever given placeholders (same shapes as the real key, LLM token and
//! bot token, random). A prompt-injected agent that prints its environment gives away strings
//! that work nowhere but through its own sandbox's socket, while its calls reach svc's API,
//! LLM proxy and Bot-API shim with the real credentials, so scopes and billing are theirs.
//! Placeholders are swapped where credentials travel (`Authorization`, `X-API-Key`, the
//! Bot-API path); anywhere else they stay as they are.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use ring::rand::{SecureRandom as _, SystemRandom};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::{Mutex, Semaphore};

use crate::backend::Credentials;

/// The header svc's API also reads keys from.
const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
/// The random part of a key or token placeholder, in hex digits.
const SECRET_HEX: usize = 64;
/// The secret part of a chat-bot token, as the platform makes them.
const BOT_SECRET_LEN: usize = 35;

/// Each placeholder a sandbox holds and the secret it stands for.
#[derive(Clone)]
pub(crate) struct Swap {
    pairs: Vec<(String, String)>,
    /// While the gateway warms up (and while a warm sandbox is armed for nobody): its model
    /// calls are answered here, so the warm-up turn reaches no model, costs nothing, and is
    /// never refused (a refusal would put the gateway's provider in a cooldown that outlasts
    /// the warm-up).
    warming: bool,
}

impl Swap {
    /// Pairs `given` (what the sandbox holds) with `real`; a credential the sandbox was not
    /// given, or that no longer exists, has no pair.
    pub(crate) fn new(given: &Credentials, real: &Credentials) -> Swap {
        let mut pairs =
            vec![(given.api_key.clone(), real.api_key.clone()), (given.llm_token.clone(), real.llm_token.clone())];
        if let (Some(given), Some(real)) = (&given.bot_token, &real.bot_token) {
            pairs.push((given.clone(), real.clone()));
        }
        Swap { pairs, warming: real.is_nobody() }
    }

    /// The same swap, warming or not.
    pub(crate) fn warming(&self, on: bool) -> Swap {
        Swap { warming: on, ..self.clone() }
    }

    /// `text` with every placeholder replaced, or `None` when it holds none.
    fn apply(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        for (placeholder, real) in &self.pairs {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(placeholder.as_str()) {
                out = Some(current.replace(placeholder.as_str(), real));
            }
        }
        out
    }

    /// Puts the real credentials on `request`, where credentials travel.
    fn rewrite<B>(&self, request: &mut Request<B>) {
        for name in [AUTHORIZATION, X_API_KEY] {
            let swapped = request.headers().get(&name).and_then(|v| v.to_str().ok()).and_then(|v| self.apply(v));
            if let Some(Ok(mut value)) = swapped.map(HeaderValue::try_from) {
                value.set_sensitive(true);
                request.headers_mut().insert(name, value);
            }
        }
        let swapped = request.uri().path_and_query().and_then(|pq| self.apply(pq.as_str()));
        if let Some(Ok(uri)) = swapped.map(|pq| pq.parse::<http::Uri>()) {
            *request.uri_mut() = uri;
        }
    }
}

/// Placeholders for `real`: each of the same shape (the part before its secret kept, so the
/// agent's own checks of a key's or token's form pass), the secret part random.
pub(crate) fn placeholders_for(real: &Credentials) -> Credentials {
    let random = SystemRandom::new();
    let hex = |len: usize| {
        let mut bytes = vec![0u8; len.div_ceil(2)];
        let _ = random.fill(&mut bytes);
        hex::encode(bytes)[..len].to_owned()
    };
    let keep_before = |secret: &str, mark: char, otherwise: &str| {
        secret.rfind(mark).map_or(otherwise, |at| &secret[..=at]).to_owned()
    };
    let bot_token = real.bot_token.as_deref().map(|token| {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut bytes = [0u8; BOT_SECRET_LEN];
        let _ = random.fill(&mut bytes);
        let secret: String = bytes.iter().map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()])).collect();
        format!("{}{secret}", keep_before(token, ':', ""))
    });
    Credentials {
        api_key: format!("{}{}", keep_before(&real.api_key, '_', "svck_"), hex(SECRET_HEX)),
        llm_token: format!("{}{}", keep_before(&real.llm_token, '_', "svc_"), hex(SECRET_HEX)),
        bot_token,
    }
}

/// A sandbox's swap, replaced in place when its way out is armed anew (a warm sandbox taken,
/// a key minted after a restart): connections the gateway keeps open take the new one on
/// their next request.
pub(crate) type SharedSwap = Arc<std::sync::RwLock<Arc<Swap>>>;

/// The swap now.
fn current(shared: &SharedSwap) -> Arc<Swap> {
    Arc::clone(&shared.read().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// When the sandbox last called out (unix ms), waiting for chat messages aside: what tells an
/// idle gateway.
#[derive(Debug, Default)]
pub(crate) struct Activity(AtomicI64);

impl Activity {
    /// Now.
    pub(crate) fn touch(&self) {
        self.0.fetch_max(unix_ms(), Ordering::Relaxed);
    }

    /// The last call out, unix ms.
    pub(crate) fn last_ms(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Serves the sandbox's connections until the listener is dropped: each is HTTP/1, forwarded
/// to svc at `target` with the credentials swapped, at most `open` at once.
pub(crate) async fn serve(
    listener: UnixListener,
    target: SocketAddr,
    swap: SharedSwap,
    open: Arc<Semaphore>,
    activity: Arc<Activity>,
) {
    while let Ok((inside, _)) = listener.accept().await {
        // A cap on the sandbox's open connections to svc, so one agent cannot use up svc's
        // descriptors and connection slots for everyone.
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            drop(inside);
            continue;
        };
        let (swap, activity) = (Arc::clone(&swap), Arc::clone(&activity));
        tokio::spawn(async move {
            bridge(inside, target, swap, activity).await;
            drop(permit);
        });
    }
}

type Answer = Response<Either<Incoming, Full<Bytes>>>;

/// One connection from inside: its requests in turn, over one connection to svc (made again
/// when svc closes it).
async fn bridge(inside: UnixStream, target: SocketAddr, swap: SharedSwap, activity: Arc<Activity>) {
    let svc: Arc<Mutex<Option<SendRequest<Incoming>>>> = Arc::default();
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        let (svc, swap) = (Arc::clone(&svc), current(&swap));
        // A chat bot's long poll is waiting, not working.
        if !request.uri().path().ends_with("/getUpdates") {
            activity.touch();
        }
        async move {
            if swap.warming && request.uri().path().ends_with("/chat/completions") {
                use http_body_util::BodyExt as _;
                let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                let streamed = serde_json::from_slice::<serde_json::Value>(&body)
                    .is_ok_and(|asked| asked["stream"] == serde_json::Value::Bool(true));
                return Ok::<Answer, std::convert::Infallible>(warm_up_answer(streamed));
            }
            swap.rewrite(&mut request);
            Ok(forward(&svc, target, request).await)
        }
    });
    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(inside), service).await;
}

async fn forward(svc: &Mutex<Option<SendRequest<Incoming>>>, target: SocketAddr, request: Request<Incoming>) -> Answer {
    let mut held = svc.lock().await;
    let reusable = match held.as_mut() {
        Some(sender) => sender.ready().await.is_ok(),
        None => false,
    };
    if !reusable {
        *held = connect(target).await;
    }
    let Some(sender) = held.as_mut() else { return unreachable_svc() };
    match sender.send_request(request).await {
        Ok(answer) => answer.map(Either::Left),
        Err(e) => {
            tracing::debug!(error = %e, "a sandbox's request to svc failed");
            *held = None;
            unreachable_svc()
        }
    }
}

async fn connect(target: SocketAddr) -> Option<SendRequest<Incoming>> {
    let stream = TcpStream::connect(target).await.ok()?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.ok()?;
    tokio::spawn(connection);
    Some(sender)
}

/// The model's answer to a warm sandbox's warm-up turn: one word, streamed when asked so.
fn warm_up_answer(streamed: bool) -> Answer {
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"data: {{"id":"warm-up","object":"chat.completion.chunk","created":0,"model":"warm-up","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}],"usage":{{"prompt_tokens":0,"completion_tokens":1,"total_tokens":1}}}}"#
        ) + "\n\n"
    };
    let (body, kind) = if streamed {
        let body =
            chunk(r#"{"role":"assistant","content":"ready"}"#, "null") + &chunk("{}", r#""stop""#) + "data: [DONE]\n\n";
        (body, "text/event-stream")
    } else {
        let body = r#"{"id":"warm-up","object":"chat.completion","created":0,"model":"warm-up","choices":[{"index":0,"message":{"role":"assistant","content":"ready"},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":1,"total_tokens":1}}"#;
        (body.to_owned(), "application/json")
    };
    let mut answer = Response::new(Either::Right(Full::new(Bytes::from(body))));
    answer.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static(kind));
    answer
}

/// What the agent sees when svc cannot be reached from its sandbox.
fn unreachable_svc() -> Answer {
    let body = r#"{"type":"about:blank","title":"svc is not reachable from the sandbox","status":502}"#;
    let mut answer = Response::new(Either::Right(Full::new(Bytes::from_static(body.as_bytes()))));
    *answer.status_mut() = StatusCode::BAD_GATEWAY;
    answer.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real() -> Credentials {
        Credentials {
            api_key: format!("svck_{}", "a".repeat(64)),
            llm_token: format!("svc_acct_1_{}", "b".repeat(64)),
            bot_token: Some("7001234567:AAHrealrealrealrealrealrealrealreal".to_owned()),
        }
    }

    #[test]
    fn placeholders_keep_each_credentials_shape_and_share_no_secret() {
        let real = real();
        let given = placeholders_for(&real);
        assert!(given.api_key.starts_with("svck_") && given.api_key.len() == real.api_key.len());
        assert!(given.llm_token.starts_with("svc_acct_1_") && given.llm_token.len() == real.llm_token.len());
        let bot = given.bot_token.as_deref().expect("a bot placeholder");
        assert!(bot.starts_with("7001234567:") && bot.len() == "7001234567:".len() + BOT_SECRET_LEN);
        assert!(!real.api_key.contains(&given.api_key[5..]) && given != placeholders_for(&real), "random");
        let no_bot = Credentials { bot_token: None, ..real };
        assert_eq!(placeholders_for(&no_bot).bot_token, None);
    }

    #[test]
    fn credentials_are_swapped_in_their_headers_and_the_bot_path_and_nowhere_else() {
        let real = real();
        let given = placeholders_for(&real);
        let swap = Swap::new(&given, &real);
        let bot = given.bot_token.clone().expect("bot");
        let mut request = Request::post(format!("/api/agentbox/telegram/bot{bot}/getUpdates?x=1"))
            .header("authorization", format!("Bearer {}", given.llm_token))
            .header("x-api-key", &given.api_key)
            .header("x-other", &given.api_key)
            .body(())
            .expect("request");
        swap.rewrite(&mut request);
        assert_eq!(request.headers()["authorization"], format!("Bearer {}", real.llm_token).as_str());
        assert_eq!(request.headers()["x-api-key"], real.api_key.as_str());
        assert_eq!(request.headers()["x-other"], given.api_key.as_str(), "other headers pass as they are");
        let bot = real.bot_token.clone().expect("bot");
        assert_eq!(request.uri(), format!("/api/agentbox/telegram/bot{bot}/getUpdates?x=1").as_str());
        // Another sandbox's placeholders (or a stranger's key) are not this sandbox's to swap.
        let other = placeholders_for(&real);
        let mut request = Request::get("/").header("x-api-key", &other.api_key).body(()).expect("request");
        swap.rewrite(&mut request);
        assert_eq!(request.headers()["x-api-key"], other.api_key.as_str());
    }
}
