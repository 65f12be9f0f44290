//! Accepting connections, with limits a hostile or broken client cannot hold open: a request
//! head must arrive within [`ConnectionLimits::header_read`] (which also closes a kept-alive
//! connection idle that long), and at most [`ConnectionLimits::max_connections`] are open at
//! once, so idle sockets can never use up the process's file descriptors and starve
//! `/healthz`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

/// What one client connection may take.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Time to send a whole request head, counted from when the server waits for one: a
    /// slow client is cut off after it, and so is a kept-alive connection idle that long.
    pub header_read: Duration,
    /// Connections open at once; more wait in the listen backlog until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits { header_read: Duration::from_secs(10), max_connections: 4096 }
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
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            serve_request(app.clone(), peer, request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Timeouts and resets end here; each is the client's, and already answered or cut.
            let _ = connection.await;
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
