//! Sending a co-signed payment through a Solana JSON-RPC node and waiting for it to confirm:
//! `sendTransaction` (with preflight, so a transfer that would fail is never sent), then
//! `getSignatureStatuses` until the cluster confirms it or the wait runs out. The fee payer's
//! SOL is watched, as EVM relayers' gas is: a fee payer that cannot pay is reported before
//! payments fail on it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
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
    /// The fee payer's funds as last read ([`Funds`] as a number); `Ok` until watched.
    funds: Arc<AtomicU8>,
}

/// Whether a fee payer can pay for transactions, as last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Funds {
    /// Enough for many transactions.
    Ok = 0,
    /// Enough for a transaction, but running low.
    Low = 1,
    /// Not enough for one transaction.
    Empty = 2,
}

/// Lamports one payment's transaction may cost its fee payer: two signatures at 5,000 each,
/// and room for the priority fee the reference client's compute-unit price allows.
const LAMPORTS_PER_TRANSACTION: u64 = 20_000;
/// A fee payer that cannot pay for this many transactions is low (a warning).
const LOW_TRANSACTIONS: u64 = 1_000;
/// How often the fee payer's balance is read.
const FUNDS_WATCH_INTERVAL: Duration = Duration::from_secs(30);

impl Funds {
    /// The level of a balance of `lamports`.
    pub fn of(lamports: u64) -> Funds {
        if lamports < LAMPORTS_PER_TRANSACTION {
            Funds::Empty
        } else if lamports < LAMPORTS_PER_TRANSACTION * LOW_TRANSACTIONS {
            Funds::Low
        } else {
            Funds::Ok
        }
    }
}

impl SolanaRpc {
    /// A client of the node at `url`; a sent transaction is awaited up to `confirm_timeout`.
    pub fn new(url: &str, confirm_timeout: Duration) -> Result<Self, SendError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| SendError::Unavailable(format!("HTTP client: {e}")))?;
        Ok(SolanaRpc {
            http,
            url: url.to_owned(),
            confirm_timeout,
            poll: Duration::from_millis(400),
            funds: Arc::new(AtomicU8::new(Funds::Ok as u8)),
        })
    }

    /// The SOL balance of `address`, in lamports.
    pub async fn balance(&self, address: &str) -> Result<u64, SendError> {
        let reply = self.call("getBalance", json!([address, {"commitment": "confirmed"}])).await?;
        reply["value"].as_u64().ok_or_else(|| SendError::Unavailable("getBalance: no value".into()))
    }

    /// Reads `fee_payer`'s balance now and every 30 s while this client lives, logging a
    /// fee payer that runs low or cannot pay; [`SolanaRpc::funds`] tells the last level.
    pub async fn watch_fee_payer(&self, fee_payer: String) {
        read_funds(self, &fee_payer, &self.funds).await;
        let (rpc, level) = (self.clone_unwatched(), Arc::downgrade(&self.funds));
        tokio::spawn(watch_funds(rpc, fee_payer, level));
    }

    /// The fee payer's funds, as last read (`Ok` when not watched).
    pub fn funds(&self) -> Funds {
        match self.funds.load(Ordering::Relaxed) {
            0 => Funds::Ok,
            1 => Funds::Low,
            _ => Funds::Empty,
        }
    }

    /// A client of the same node that does not keep the watched level alive.
    fn clone_unwatched(&self) -> SolanaRpc {
        SolanaRpc { funds: Arc::new(AtomicU8::new(Funds::Ok as u8)), ..self.clone() }
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

/// Reads `fee_payer`'s balance into `level`, logging a change for the worse (or back).
async fn read_funds(rpc: &SolanaRpc, fee_payer: &str, level: &AtomicU8) {
    let lamports = match rpc.balance(fee_payer).await {
        Ok(lamports) => lamports,
        Err(e) => {
            tracing::warn!(%fee_payer, error = %e, "reading the fee payer's balance");
            return;
        }
    };
    let funds = Funds::of(lamports);
    let before = level.swap(funds as u8, Ordering::Relaxed);
    if before != funds as u8 || funds != Funds::Ok {
        match funds {
            Funds::Ok => tracing::info!(%fee_payer, lamports, "the fee payer has SOL again"),
            Funds::Low => tracing::warn!(
                %fee_payer, lamports,
                "the fee payer is low on SOL: fewer than {LOW_TRANSACTIONS} transactions left"
            ),
            Funds::Empty => tracing::error!(%fee_payer, lamports, "the fee payer cannot pay for a transaction"),
        }
    }
}

/// Reads the balance every [`FUNDS_WATCH_INTERVAL`] while the watched client lives.
async fn watch_funds(rpc: SolanaRpc, fee_payer: String, level: Weak<AtomicU8>) {
    loop {
        tokio::time::sleep(FUNDS_WATCH_INTERVAL).await;
        let Some(level) = level.upgrade() else { return };
        read_funds(&rpc, &fee_payer, &level).await;
    }
}
