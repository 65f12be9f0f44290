//! Connections a client holds open without sending a request are cut, and a cap on open
//! connections keeps idle sockets from starving everyone else.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::TestApp;

const HEAD_TIMEOUT: Duration = Duration::from_millis(400);

/// Serves a test app on a real socket with a short head timeout and `max_connections`.
async fn listening(max_connections: usize) -> (TestApp, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = TestApp::new().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let limits = svc_api::serve::ConnectionLimits { header_read: HEAD_TIMEOUT, max_connections };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let router = app.router.clone();
    tokio::spawn(svc_api::serve::serve(listener, router, limits, async {
        let _ = stopped.await;
    }));
    (app, addr, stop)
}

/// Sends `GET /healthz` on a new connection and returns the status line.
async fn healthz(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\nConnection: close\r\n\r\n").await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned()
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
