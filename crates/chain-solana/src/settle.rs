//! Sending a co-signed payment through a Solana JSON-RPC node and waiting for it to confirm:
//! `sendTransaction` (with preflight, so a transfer that would fail is never sent), then
//! `getSignatureStatuses` until the cluster confirms it or the wait runs out.

use std::time::Duration;

use serde_json::{Value, json};

use crate::SendError;

/// A Solana node.
#[derive(Debug, Clone)]
pub struct SolanaRpc {
    http: reqwest::Client,
    url: String,
    confirm_timeout: Duration,
    poll: Duration,
}

impl SolanaRpc {
    /// A client of the node at `url`; a sent transaction is awaited up to `confirm_timeout`.
    pub fn new(url: &str, confirm_timeout: Duration) -> Result<Self, SendError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| SendError::Unavailable(format!("HTTP client: {e}")))?;
        Ok(SolanaRpc { http, url: url.to_owned(), confirm_timeout, poll: Duration::from_millis(400) })
    }

    /// Checks the node answers, so a wrong URL fails at start rather than on a paid call.
    pub async fn health(&self) -> Result<(), SendError> {
        self.call("getHealth", json!([])).await.map(|_| ())
    }

    /// Sends `transaction` (base64, fully signed) whose first signature is `signature` and
    /// waits for confirmation.
    pub async fn send_and_confirm(&self, transaction: &str, signature: &str) -> Result<(), SendError> {
        let params = json!([transaction, {"encoding": "base64", "preflightCommitment": "confirmed"}]);
        match self.call("sendTransaction", params).await {
            Ok(_) => {}
            // Preflight refused it: nothing was sent.
            Err(SendError::Rejected(message)) => return Err(SendError::Rejected(message)),
            // Unknown whether it reached the leader: it may still land, so it is pending.
            Err(other) => return Err(SendError::Pending(other.to_string())),
        }
        let deadline = tokio::time::Instant::now() + self.confirm_timeout;
        loop {
            let params = json!([[signature], {"searchTransactionHistory": false}]);
            if let Ok(statuses) = self.call("getSignatureStatuses", params).await {
                let status = &statuses["value"][0];
                if !status.is_null() {
                    if !status["err"].is_null() {
                        return Err(SendError::Failed(status["err"].to_string()));
                    }
                    if matches!(status["confirmationStatus"].as_str(), Some("confirmed" | "finalized")) {
                        return Ok(());
                    }
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(SendError::Pending(format!("not confirmed within {:?}", self.confirm_timeout)));
            }
            tokio::time::sleep(self.poll).await;
        }
    }

    /// What the cluster says of a sent transaction: `Some(true)` confirmed, `Some(false)`
    /// failed, `None` unknown (not seen, or not yet confirmed).
    pub async fn signature_status(&self, signature: &str) -> Result<Option<bool>, SendError> {
        let params = json!([[signature], {"searchTransactionHistory": true}]);
        let statuses = self.call("getSignatureStatuses", params).await?;
        let status = &statuses["value"][0];
        if status.is_null() {
            return Ok(None);
        }
        if !status["err"].is_null() {
            return Ok(Some(false));
        }
        Ok(matches!(status["confirmationStatus"].as_str(), Some("confirmed" | "finalized")).then_some(true))
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, SendError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self
            .http
            .post(&self.url)
            .json(&body)
            .send()
            .await
            .map_err(|e| SendError::Unavailable(format!("{method}: {}", e.without_url())))?;
        let reply: Value =
            response.json().await.map_err(|e| SendError::Unavailable(format!("{method}: {}", e.without_url())))?;
        if let Some(error) = reply.get("error") {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("error").to_owned();
            return Err(SendError::Rejected(format!("{method}: {message}")));
        }
        reply.get("result").cloned().ok_or_else(|| SendError::Unavailable(format!("{method}: no result")))
    }
}
