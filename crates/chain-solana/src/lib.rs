//! Solana `exact` payments (x402): the client sends a partially signed versioned transaction
//! that moves USDC from its token account to the recipient's; the facilitator co-signs it as
//! fee payer and sends it.
//!
//! This crate checks such a transaction the way the reference facilitator does (same order,
//! same reason codes) before anything is served: the layout of its instructions, the
//! compute-budget caps that bound what the fee payer spends, the mint, the destination token
//! account, the exact amount, and the payer's ed25519 signature. It also co-signs a verified
//! transaction for settlement. On the paying side it builds that transaction as the official
//! client does ([`build_exact`]).

mod exact;
mod pay;
#[cfg(feature = "settle")]
pub mod settle;

pub use exact::{
    ExactSvmPayload, ExactSvmRequirement, Keypair, MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS, MAX_COMPUTE_UNITS,
    SolanaError, VerifiedTransfer, associated_token_account, replay_key, verify_exact,
};
pub use pay::{
    BuildError, DEFAULT_COMPUTE_UNIT_LIMIT, DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS, ExactSvmPayment, MAX_MEMO_BYTES,
    build_exact,
};

/// Program ids the check recognises.
pub mod programs {
    /// Compute budget (unit limit and price).
    pub const COMPUTE_BUDGET: &str = "ComputeBudget111111111111111111111111111111";
    /// SPL Token.
    pub const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
    /// SPL Token-2022.
    pub const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
    /// Associated token accounts.
    pub const ASSOCIATED_TOKEN: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
    /// Memo (the client's uniqueness nonce or the server's requested memo).
    pub const MEMO: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
    /// Lighthouse assertions, injected by some wallets.
    pub const LIGHTHOUSE: &str = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";
}

/// Why sending a payment did not end in a confirmed transfer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The node refused it before sending (preflight): nothing moved.
    #[error("refused by the node: {0}")]
    Rejected(String),
    /// It landed and failed: nothing moved, the fee was spent.
    #[error("transaction failed: {0}")]
    Failed(String),
    /// Sent but not confirmed in time: it may still land.
    #[error("settlement pending: {0}")]
    Pending(String),
    /// The node could not be reached before anything was sent.
    #[error("node unavailable: {0}")]
    Unavailable(String),
}

impl SendError {
    /// The x402 reason code.
    pub fn reason(&self) -> &'static str {
        match self {
            SendError::Rejected(_) => "invalid_exact_svm_transaction_simulation_failed",
            SendError::Failed(_) => "invalid_exact_svm_transaction_failed",
            SendError::Pending(_) => "settlement_pending",
            SendError::Unavailable(_) => "unexpected_settle_error",
        }
    }
}
