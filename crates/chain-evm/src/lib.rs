//! EIP-3009 `transferWithAuthorization` payments, the `exact` scheme of x402 on EVM chains.
//!
//! Verification is pure: parse the client's authorization, rebuild the EIP-712 digest from the
//! token domain *we* configured (never from the client), recover the signer, and check the
//! recipient, the amount and the time window. Smart-contract wallets cannot be recovered; they
//! are reported as needing an EIP-1271 check, which only a node can answer ([`settle`], behind
//! the `settle` feature, which also sends the transfer).

mod exact;
#[cfg(feature = "settle")]
mod reads;
#[cfg(feature = "settle")]
mod relayer;
#[cfg(feature = "settle")]
mod rpc;
#[cfg(feature = "settle")]
pub mod settle;
mod sign;

pub use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
pub use exact::{
    Authorization, ExactEvmPayload, ExactRequirement, Recoveries, Signer, TokenDomain, VALID_BEFORE_MARGIN_SECS,
    VerifiedAuthorization, WireAuthorization, verify_exact,
};
pub use sign::Payer;

/// Why an authorization was refused or could not be settled. [`EvmError::reason`] gives the
/// reason code the official x402 facilitator uses for the same failure, so clients that
/// branch on it keep working.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvmError {
    /// The payload is not an EIP-3009 authorization (missing field, bad number, bad address).
    #[error("malformed EIP-3009 payload: {0}")]
    InvalidPayload(String),
    /// The signature is not hex.
    #[error("the signature is not 0x-prefixed hex")]
    SignatureEncoding,
    /// The signature does not come from `authorization.from`.
    #[error("the signature was not made by authorization.from")]
    Signature,
    /// `authorization.to` is not the configured recipient.
    #[error("authorization.to is not the payment recipient")]
    RecipientMismatch,
    /// `authorization.value` is not the price.
    #[error("authorization.value is not the required amount")]
    ValueMismatch,
    /// The authorization expires too soon (or has expired).
    #[error("the authorization expires too soon (validBefore)")]
    ValidBefore,
    /// The authorization is not valid yet.
    #[error("the authorization is not valid yet (validAfter)")]
    ValidAfter,
    /// The nonce was used on chain already.
    #[error("the authorization nonce was already used")]
    NonceUsed,
    /// The payer cannot cover the amount.
    #[error("the payer's balance does not cover the amount")]
    InsufficientBalance,
    /// Simulating the transfer failed for a reason the token did not name.
    #[error("the token refused the transfer in simulation: {0}")]
    SimulationFailed(String),
    /// The transfer was mined but reverted.
    #[error("the transfer transaction reverted")]
    TransactionFailed(B256),
    /// The transfer was sent but no receipt arrived in time; it may still land.
    #[error("the transfer was sent but is not confirmed yet")]
    Pending(B256),
    /// Sending failed in a way that does not say whether the transaction reached the network
    /// (a dropped connection after the request left, say); it may still land.
    #[error("the transfer may have been sent: {0}")]
    SendUnknown(String),
    /// The node could not be reached or answered nonsense.
    #[error("EVM node error: {0}")]
    Rpc(String),
    /// The relayer key or node configuration is unusable.
    #[error("EVM settlement configuration: {0}")]
    Config(String),
}

impl EvmError {
    /// The x402 reason code (`invalidReason` / `errorReason`).
    pub fn reason(&self) -> &'static str {
        match self {
            EvmError::InvalidPayload(_) => "invalid_payload",
            EvmError::SignatureEncoding => "invalid_exact_evm_failed_to_parse_signature",
            EvmError::Signature => "invalid_exact_evm_signature",
            EvmError::RecipientMismatch => "invalid_exact_evm_recipient_mismatch",
            EvmError::ValueMismatch => "invalid_exact_evm_payload_authorization_value_mismatch",
            EvmError::ValidBefore => "invalid_exact_evm_payload_authorization_valid_before",
            EvmError::ValidAfter => "invalid_exact_evm_payload_authorization_valid_after",
            EvmError::NonceUsed => "invalid_exact_evm_nonce_already_used",
            EvmError::InsufficientBalance => "invalid_exact_evm_insufficient_balance",
            EvmError::SimulationFailed(_) => "invalid_exact_evm_transaction_simulation_failed",
            EvmError::TransactionFailed(_) => "invalid_exact_evm_transaction_failed",
            EvmError::Pending(_) | EvmError::SendUnknown(_) => "settlement_pending",
            EvmError::Rpc(_) | EvmError::Config(_) => "unexpected_settle_error",
        }
    }
}
