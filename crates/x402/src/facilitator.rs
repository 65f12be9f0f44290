//! The facilitator: the party that checks a payment and moves the funds. svc ships a built-in
//! one ([`crate::BuiltinFacilitator`]); an external one speaks the standard HTTP API.

use futures::future::BoxFuture;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::wire::{PaymentRequirements, SupportedResponse};

/// A payment to verify or settle: the client's v2 message as received, its scheme payload,
/// and the requirement we rebuilt and matched it to (never the client's copy).
#[derive(Debug, Clone, Copy)]
pub struct PaymentRequest<'a> {
    /// The client's message (`{"x402Version":2,"accepted":…,"payload":…}`), verbatim: what an
    /// external facilitator is sent.
    pub message: &'a RawValue,
    /// The message's `payload` (the signed authorization or transaction), already read: what
    /// the built-in facilitator checks.
    pub payload: &'a Value,
    /// Our requirement.
    pub requirements: &'a PaymentRequirements,
}

/// A payment that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Who pays (the EVM `from`, the Solana token authority).
    pub payer: String,
}

/// A payment that was settled, or accepted without settling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The transfer is on chain.
    OnChain {
        /// Who paid.
        payer: String,
        /// Transaction hash or signature.
        transaction: String,
    },
    /// Verify-only mode: the authorization was valid but nothing was sent. Only a facilitator
    /// with no chain access answers this, and only when the operator allowed it.
    VerifyOnly {
        /// Who signed.
        payer: String,
    },
}

/// The reason code of a settlement whose outcome is not known yet.
pub const SETTLEMENT_PENDING: &str = "settlement_pending";

/// Why a facilitator said no, or could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FacilitatorError {
    /// The payment is invalid; the client can fix it (402 with the reason).
    #[error("payment invalid: {reason}: {message}")]
    Invalid {
        /// The x402 reason code.
        reason: String,
        /// Human text.
        message: String,
    },
    /// Settlement failed; nothing (or, if `transaction` is set, maybe something) was sent.
    #[error("settlement failed: {reason}: {message}")]
    SettleFailed {
        /// The x402 reason code.
        reason: String,
        /// Human text.
        message: String,
        /// The transaction, when one was sent (a pending settlement).
        transaction: Option<String>,
    },
    /// The facilitator could not be reached or answered nonsense (502).
    #[error("facilitator unavailable: {0}")]
    Unavailable(String),
}

impl FacilitatorError {
    /// An invalid payment.
    pub fn invalid(reason: impl Into<String>, message: impl Into<String>) -> Self {
        FacilitatorError::Invalid { reason: reason.into(), message: message.into() }
    }

    /// Whether funds may have moved despite the error: a settlement sent and not confirmed, or
    /// a facilitator that stopped answering mid-settlement. Such a payment is kept pending for
    /// the reconciler, and its payer is told to resend the same payment, never to sign a new
    /// one (which could pay twice).
    pub fn may_have_moved(&self) -> bool {
        match self {
            FacilitatorError::Invalid { .. } => false,
            FacilitatorError::SettleFailed { reason, .. } => reason == SETTLEMENT_PENDING,
            FacilitatorError::Unavailable(_) => true,
        }
    }

    /// The reason code sent to the client.
    pub fn reason(&self) -> &str {
        match self {
            FacilitatorError::Invalid { reason, .. } | FacilitatorError::SettleFailed { reason, .. } => reason,
            FacilitatorError::Unavailable(_) => "facilitator_unavailable",
        }
    }
}

/// A payment whose fate on chain svc does not know: a settlement sent but not confirmed in
/// time, or a reservation left behind by a process that stopped mid-request.
#[derive(Debug, Clone, Copy)]
pub struct Unresolved<'a> {
    /// CAIP-2 network.
    pub network: &'a str,
    /// Payer as recorded.
    pub payer: &'a str,
    /// The EIP-3009 nonce, or the payer's Solana signature.
    pub nonce: &'a str,
    /// The settlement transaction, when one was sent (or was about to be).
    pub transaction: Option<&'a str>,
    /// Still reserved: the process stopped before recording an outcome, longer ago than any
    /// request runs, so a Solana transaction the chain has never seen can no longer land (its
    /// blockhash has expired). An EVM authorization is decided by `valid_before` instead: it
    /// stays sendable by anyone holding it until then.
    pub abandoned: bool,
    /// Unix seconds from which the payment can no longer move funds (an EIP-3009
    /// `validBefore`, checked against the chain's clock; for Solana, a bound past its
    /// blockhash's life, checked against `now_secs`). Until then an outcome the chain has not
    /// seen may still come.
    pub valid_before: Option<u64>,
    /// Our clock, unix seconds.
    pub now_secs: u64,
}

/// What the chain says of an [`Unresolved`] payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The funds moved.
    Settled {
        /// The transaction, when known.
        transaction: Option<String>,
    },
    /// The funds did not move: the transaction failed, or the authorization was never used.
    NotSettled,
    /// Not decided yet (or not knowable by this facilitator): ask again later.
    Unknown,
}

/// Verifies and settles payments. Object-safe, so the server picks one at start-up.
pub trait Facilitator: Send + Sync + std::fmt::Debug {
    /// The (scheme, network) pairs it handles; the server offers no others.
    fn supported(&self) -> BoxFuture<'_, Result<SupportedResponse, FacilitatorError>>;

    /// Checks a payment without moving funds.
    fn verify<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Verified, FacilitatorError>>;

    /// Moves the funds. Called only after the paid handler succeeded.
    fn settle<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Settled, FacilitatorError>>;

    /// The id the settlement's transaction will have, when it is known before sending (a
    /// Solana fee payer's signature is deterministic). The server records it first, so a
    /// process that stops between sending and recording leaves a transaction to look up.
    fn transaction_id(&self, request: PaymentRequest<'_>) -> Option<String> {
        let _ = request;
        None
    }

    /// Asks the chain what became of a payment. The standard facilitator API has no such
    /// question, so by default the answer is [`Resolution::Unknown`]; a facilitator with
    /// [`crate::Ledgers`] reads the chain itself.
    fn resolve<'a>(&'a self, payment: Unresolved<'a>) -> BoxFuture<'a, Result<Resolution, FacilitatorError>> {
        let _ = payment;
        Box::pin(std::future::ready(Ok(Resolution::Unknown)))
    }

    /// Whether [`Facilitator::settle`] can answer [`Settled::VerifyOnly`]; the server warns at
    /// start-up and refuses it in production.
    fn verify_only(&self) -> bool {
        false
    }

    /// Networks on which it cannot settle right now (every relayer out of gas, say): the
    /// server reports itself not ready rather than take payments it cannot settle.
    fn unready_networks(&self) -> Vec<String> {
        Vec::new()
    }
}
