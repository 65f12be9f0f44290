//! What every conversation with the node shares: the client and its connection policy, and
//! the one timeout a node call gets. Below the settler, its read batcher and its relayer
//! lanes, which all talk to the same node the same way.

use std::time::Duration;

use crate::EvmError;

/// Longest wait for one node call: a paid request must not hang on a node that stopped
/// answering.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// `call` within [`CALL_TIMEOUT`], its error and a timeout both an [`EvmError::Rpc`].
pub(crate) async fn within<T, E: std::fmt::Display>(
    what: &str,
    call: impl std::future::IntoFuture<Output = Result<T, E>>,
) -> Result<T, EvmError> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(result) => result.map_err(|e| EvmError::Rpc(format!("{what}: {e}"))),
        Err(_) => Err(EvmError::Rpc(format!("{what}: no answer in {CALL_TIMEOUT:?}"))),
    }
}

/// `rpc_url` as a URL, with the TLS provider the node client needs installed first.
fn parse_url(rpc_url: &str) -> Result<alloy::transports::http::reqwest::Url, EvmError> {
    // The node client uses reqwest over rustls; ring is the provider the build links.
    let _ = rustls::crypto::ring::default_provider().install_default();
    rpc_url.parse().map_err(|_| EvmError::Config("the RPC URL does not parse".into()))
}

/// How long an idle connection to the node is kept. Below the 5 s after which common node
/// servers close idle connections: a request sent on a connection the node is closing fails
/// without saying whether it was read.
const IDLE_CONNECTION: Duration = Duration::from_secs(3);

/// A JSON-RPC client of `rpc_url` over connections that are dropped before the node drops them.
pub(crate) fn rpc_client(rpc_url: &str) -> Result<alloy::rpc::client::RpcClient, EvmError> {
    let url = parse_url(rpc_url)?;
    let http = alloy::transports::http::reqwest::Client::builder()
        .pool_idle_timeout(IDLE_CONNECTION)
        .build()
        .map_err(|e| EvmError::Config(format!("building the node client: {e}")))?;
    let is_local = url.host_str().is_some_and(|h| h == "localhost" || h.starts_with("127.") || h == "[::1]");
    Ok(alloy::rpc::client::RpcClient::new(alloy::transports::http::Http::with_client(http, url), is_local))
}
