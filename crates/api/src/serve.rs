//! Accepting connections, with limits a hostile or broken client cannot hold open: a request
//! head must arrive within [`ConnectionLimits::header_read`] (which also closes a kept-alive
//! connection idle that long), at most [`ConnectionLimits::max_connections`] are open at
//! once, so idle sockets can never use up the process's file descriptors and starve
//! `/healthz`, and one client holds at most [`ConnectionLimits::max_per_client`] of them, so a
//! client reopening idle connections as fast as they are cut cannot hold every slot.
//!
//! A client is the socket's peer: its IPv4 address, or its IPv6 /64. The forwarded address a
//! trusted proxy names is read from a request's headers, after the connection is taken, and one
//! kept-alive proxy connection carries many clients' requests in turn, so it cannot decide
//! whether to take a connection; the trusted proxies are exempt from the per-client cap instead
//! (bounded by the total), and limiting connections per client is the proxy's job there. Their
//! clients' requests are still rate-limited by the forwarded address.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

/// What one client connection may take.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Time to send a whole request head, counted from when the server waits for one: a
    /// slow client is cut off after it, and so is a kept-alive connection idle that long.
    pub header_read: Duration,
    /// Connections open at once; more wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold open at once; one more is
    /// answered 429 and closed at once. 0: no cap of its own (the total still holds).
    pub max_per_client: usize,
    /// Peers exempt from [`ConnectionLimits::max_per_client`]: the proxies in front of svc,
    /// whose connections carry every client's requests.
    pub trusted_proxies: Vec<IpAddr>,
}

/// The default cap of one client's connections: a sixteenth of the default total, so at least
/// sixteen clients must join to fill it, and far more than an agent's pool or a browser opens.
pub const DEFAULT_MAX_PER_CLIENT: usize = 256;

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read: Duration::from_secs(10),
            max_connections: 4096,
            max_per_client: DEFAULT_MAX_PER_CLIENT,
            trusted_proxies: Vec::new(),
        }
    }
}

/// The body a connection past its client's cap is answered with, in the error shape of every
/// other answer.
const TOO_MANY_CONNECTIONS: &str =
    r#"{"detail":"Too many open connections from this client; close one first.","code":"too_many_connections"}"#;

/// Open connections by client. Entries leave with their client's last connection, so there
/// are never more than connections open; touched once when a connection opens and once when
/// it closes, never per request.
struct PerClient {
    cap: usize,
    exempt: Vec<IpAddr>,
    open: Mutex<HashMap<IpAddr, usize, foldhash::fast::RandomState>>,
}

impl PerClient {
    fn new(limits: &ConnectionLimits) -> Arc<Self> {
        let exempt = limits.trusted_proxies.iter().map(|ip| ip.to_canonical()).collect();
        Arc::new(PerClient { cap: limits.max_per_client, exempt, open: Mutex::default() })
    }

    /// A slot for one more connection from `peer`, or `None` when its client is at the cap.
    /// An exempt peer, or no cap, takes a slot that counts nothing.
    fn take(self: &Arc<Self>, peer: IpAddr) -> Option<ClientSlot> {
        if self.cap == 0 || self.exempt.contains(&peer.to_canonical()) {
            return Some(ClientSlot { counted: None });
        }
        let client = crate::limits::client_of(peer);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(client).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(ClientSlot { counted: Some((Arc::clone(self), client)) })
    }
}

/// One connection's place in its client's count, given back when the connection ends.
struct ClientSlot {
    counted: Option<(Arc<PerClient>, IpAddr)>,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        if let Some((clients, client)) = self.counted.take() {
            let mut open = clients.open.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(count) = open.get_mut(&client) {
                *count -= 1;
                if *count == 0 {
                    open.remove(&client);
                }
            }
        }
    }
}

/// Closes a connection past its client's cap: a 429 if the socket takes it at once, never a
/// wait. A warning says so at most once a minute, with how many were refused since.
struct Refusals {
    /// The whole answer, written straight to the socket (no request is read from it).
    answer: Vec<u8>,
    since_warned: u64,
    warned: Option<Instant>,
}

impl Refusals {
    fn new() -> Self {
        let answer = format!(
            "HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n{TOO_MANY_CONNECTIONS}",
            TOO_MANY_CONNECTIONS.len()
        );
        Refusals { answer: answer.into_bytes(), since_warned: 0, warned: None }
    }

    fn refuse(&mut self, stream: TcpStream, peer: SocketAddr, cap: usize) {
        let _ = stream.try_write(&self.answer);
        drop(stream);
        self.since_warned += 1;
        if self.warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
            tracing::warn!(
                client = %crate::limits::client_of(peer.ip()),
                max_per_client = cap,
                refused = self.since_warned,
                "a client is at its connection cap; connections past it are refused (SVC_MAX_CONNECTIONS_PER_CLIENT)"
            );
            self.warned = Some(Instant::now());
            self.since_warned = 0;
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting and waits for
/// the open connections to finish their requests (bound the wait with a timeout around it).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let clients = PerClient::new(&limits);
    let mut refusals = Refusals::new();
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read);
    tokio::pin!(shutdown);
    loop {
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "connection cap reached; new connections wait until one closes (raise SVC_MAX_CONNECTIONS \
                     and the file-descriptor limit, ulimit -n, together)"
                );
                tokio::select! {
                    permit = Arc::clone(&permits).acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                    () = &mut shutdown => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors or a connection reset before accept: wait and go on.
                    tracing::warn!(error = %err, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = clients.take(peer.ip()) else {
            refusals.refuse(stream, peer, limits.max_per_client);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            serve_request(app.clone(), peer, request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Timeouts and resets end here; each is the client's, and already answered or cut.
            let _ = connection.await;
            drop(slot);
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

async fn serve_request(
    app: Router,
    peer: SocketAddr,
    mut request: hyper::Request<Incoming>,
) -> Result<axum::response::Response, Infallible> {
    request.extensions_mut().insert(ConnectInfo(peer));
    app.oneshot(request.map(axum::body::Body::new)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_one_its_ipv4() {
        assert_eq!(
            crate::limits::client_of(ip("2001:db8:1:2:aaaa::1")),
            crate::limits::client_of(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(crate::limits::client_of(ip("2001:db8:1:2::1")), crate::limits::client_of(ip("2001:db8:1:3::1")));
        assert_eq!(crate::limits::client_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(crate::limits::client_of(ip("192.0.2.7")), ip("192.0.2.7"));
    }

    #[test]
    fn a_refused_connection_is_told_why_in_the_error_shape() {
        let refusals = Refusals::new();
        let answer = std::str::from_utf8(&refusals.answer).expect("text");
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 429 "), "{head}");
        assert!(head.lines().any(|line| line == format!("content-length: {}", body.len())), "{head}");
        let body: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(body["code"], "too_many_connections");
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()));
    }

    #[test]
    fn a_client_takes_up_to_its_cap_and_gets_slots_back() {
        let limits =
            ConnectionLimits { max_per_client: 2, trusted_proxies: vec![ip("10.0.0.9")], ..Default::default() };
        let clients = PerClient::new(&limits);
        let first = clients.take(ip("192.0.2.7")).expect("first");
        let _second = clients.take(ip("::ffff:192.0.2.7")).expect("second, the same client");
        assert!(clients.take(ip("192.0.2.7")).is_none(), "a third is refused");
        assert!(clients.take(ip("192.0.2.8")).is_some(), "another client is not");
        let proxied: Vec<_> = (0..5).map(|_| clients.take(ip("::ffff:10.0.0.9"))).collect();
        assert!(proxied.iter().all(Option::is_some), "a trusted proxy has no cap of its own");
        drop(first);
        let _again = clients.take(ip("192.0.2.7")).expect("a closed connection gives its slot back");
        drop(proxied);
        let open = clients.open.lock().expect("lock");
        assert_eq!(open.get(&ip("192.0.2.7")), Some(&2));
        assert!(!open.contains_key(&ip("10.0.0.9")), "exempt peers are not counted");
    }
}
