//! Connections a client holds open without sending a request are cut, a cap on open
//! connections keeps idle sockets from starving everyone else, and a cap per client keeps one
//! client from holding every slot.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use svc_api::serve::ConnectionLimits;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::TestApp;

const HEAD_TIMEOUT: Duration = Duration::from_millis(400);

/// The client that opens too many connections, and another one (binding a client socket to
/// any 127/8 address works on Linux).
const GREEDY: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// Serves a test app on a real socket with a short head timeout and `max_connections`.
async fn listening(max_connections: usize) -> (TestApp, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    serving(ConnectionLimits { header_read: HEAD_TIMEOUT, max_connections, ..ConnectionLimits::default() }).await
}

/// Serves a test app on a real socket under `limits`.
async fn serving(limits: ConnectionLimits) -> (TestApp, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = TestApp::new().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let router = app.router.clone();
    tokio::spawn(svc_api::serve::serve(listener, router, limits, async {
        let _ = stopped.await;
    }));
    (app, addr, stop)
}

/// A connection to `addr` from the client at `source`.
async fn connect_from(source: IpAddr, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(source, 0)).expect("bind the client's address");
    socket.connect(addr).await.expect("connect")
}

/// Sends `GET /healthz` on a new connection and returns the status line.
async fn healthz(addr: SocketAddr) -> String {
    healthz_from(GREEDY, addr).await
}

/// Sends `GET /healthz` on a new connection from `source` and returns the status line.
async fn healthz_from(source: IpAddr, addr: SocketAddr) -> String {
    let mut stream = connect_from(source, addr).await;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\nConnection: close\r\n\r\n").await.expect("write");
    let mut answer = Vec::new();
    // A connection refused at its client's cap may be reset after its answer.
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned()
}

/// Whether the server has closed `stream` (after at most an answer), waiting up to `wait`.
async fn is_closed(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

/// Raises this process's soft limit of open files to `needed` if the hard limit allows it.
fn descriptors_for(needed: u64) -> bool {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|current| current < needed) {
        limit.current = Some(limit.maximum.map_or(needed, |hard| hard.min(needed)));
        let _ = setrlimit(Resource::Nofile, limit);
    }
    getrlimit(Resource::Nofile).current.is_none_or(|current| current >= needed)
}

/// Waits until the server closes `stream`, and says how long that took.
async fn closed_after(stream: &mut TcpStream) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => continue,
            Err(_) => panic!("the server never closed a connection that sent no request"),
        }
    }
}

#[tokio::test]
async fn a_client_that_never_finishes_its_request_head_is_cut_off_while_others_are_served() {
    let (_app, addr, _stop) = listening(64).await;
    let mut slow = TcpStream::connect(addr).await.expect("connect");
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\nX-Slow: ").await.expect("write");
    assert_eq!(healthz(addr).await, "HTTP/1.1 200 OK", "others are served meanwhile");
    let waited = closed_after(&mut slow).await;
    assert!(waited < HEAD_TIMEOUT * 5, "cut off after {waited:?}");
}

#[tokio::test]
async fn a_kept_alive_connection_left_idle_is_closed() {
    let (_app, addr, _stop) = listening(64).await;
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\n\r\n").await.expect("write");
    let mut buf = [0u8; 4096];
    let n = idle.read(&mut buf).await.expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200 OK"));
    let waited = closed_after(&mut idle).await;
    assert!(waited < HEAD_TIMEOUT * 5, "closed after {waited:?}");
}

#[tokio::test]
async fn idle_sockets_up_to_the_cap_cannot_keep_health_checks_out() {
    let (_app, addr, _stop) = listening(8).await;
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(TcpStream::connect(addr).await.expect("connect"));
    }
    // Every slot is held by a socket that sends nothing; the health check waits for one to
    // be cut, and is then served.
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), healthz(addr)).await.expect("served at last");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(started.elapsed() < HEAD_TIMEOUT * 5, "served after {:?}", started.elapsed());
}

#[tokio::test]
async fn one_client_holding_4300_connections_cannot_keep_another_from_healthz() {
    // The client's sockets, the server's side of those it keeps, and the other tests' files.
    if !descriptors_for(12_000) {
        eprintln!("skipped: this process may not open 12,000 files (ulimit -n), which the scenario needs");
        return;
    }
    // svc's defaults: 4,096 connections, 10 s to send a request head.
    let (_app, addr, _stop) = serving(ConnectionLimits::default()).await;
    let mut held = Vec::with_capacity(4300);
    for _ in 0..4300 {
        // A connect that does not complete within a second: the server has stopped taking
        // connections, from anyone.
        match tokio::time::timeout(Duration::from_secs(1), connect_from(GREEDY, addr)).await {
            Ok(stream) => held.push(stream),
            Err(_) => break,
        }
    }
    // Served at once, not when the idle connections are cut 10 s from now (which the greedy
    // client would answer by opening them again).
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(4), healthz_from(OTHER, addr))
        .await
        .expect("another client is served while one holds its connections");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(started.elapsed() < Duration::from_secs(4), "served after {:?}", started.elapsed());
    assert_eq!(held.len(), 4300, "the server kept taking (and closing) the greedy client's connections");
}

#[tokio::test]
async fn connections_past_a_clients_cap_are_refused_and_others_are_served() {
    let limits = ConnectionLimits {
        // Long enough that no slot is freed by a timeout during the test.
        header_read: Duration::from_secs(30),
        max_connections: 32,
        max_per_client: 8,
        trusted_proxies: Vec::new(),
    };
    let (_app, addr, _stop) = serving(limits).await;
    let mut held = Vec::new();
    for _ in 0..40 {
        held.push(connect_from(GREEDY, addr).await);
    }
    assert_eq!(healthz_from(OTHER, addr).await, "HTTP/1.1 200 OK", "another client is served");
    let mut open = Vec::new();
    let mut refused = 0;
    for mut stream in held {
        if is_closed(&mut stream, Duration::from_millis(50)).await {
            refused += 1;
        } else {
            open.push(stream);
        }
    }
    assert_eq!((open.len(), refused), (8, 32), "the client keeps its cap and no more");
    // Past the cap, a request is answered 429 (or the socket is cut) and never served.
    let answer = healthz_from(GREEDY, addr).await;
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 429 "), "{answer}");
    // A connection the client closes gives its slot back.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = healthz_from(GREEDY, addr).await;
        if status == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(Instant::now() < deadline, "the slot was never given back: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_trusted_proxy_is_not_held_to_one_clients_cap() {
    let limits = ConnectionLimits {
        header_read: Duration::from_secs(30),
        max_connections: 32,
        max_per_client: 2,
        trusted_proxies: vec![GREEDY],
    };
    let (_app, addr, _stop) = serving(limits).await;
    let mut proxied = Vec::new();
    for _ in 0..6 {
        proxied.push(connect_from(GREEDY, addr).await);
    }
    for stream in &mut proxied {
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\n\r\n").await.expect("write");
        let mut buf = [0u8; 1024];
        let n = stream.read(&mut buf).await.expect("answer");
        assert!(
            String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200 OK"),
            "every proxied connection is served"
        );
    }
    // Anyone else is still held to the cap.
    let _first = connect_from(OTHER, addr).await;
    let _second = connect_from(OTHER, addr).await;
    let answer = healthz_from(OTHER, addr).await;
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 429 "), "{answer}");
}
