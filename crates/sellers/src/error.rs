//! The one error type of the seller side.

use svc_catalogue::FieldError;
use svc_domain::Money;

use crate::endpoint::ForwardError;

/// Why a seller operation or an invoke did not go through.
#[derive(Debug, thiserror::Error)]
pub enum SellerError {
    /// No such agent for this caller (another seller's is the same answer), or, on an invoke, no
    /// agent at this id (unknown or deleted).
    #[error("no such agent")]
    NoAgent,
    /// On an invoke: the agent exists but is not for sale, for this reason.
    #[error("this agent is not for sale: {0}")]
    NotForSale(&'static str),
    /// Input the route's own types could not judge (an endpoint, a schema, a network, bounds
    /// from configuration): 422 with these errors.
    #[error("invalid input")]
    Invalid(Vec<FieldError>),
    /// The agent still holds a balance and cannot be deleted.
    #[error("the agent holds {balance} USDC; withdraw it before deleting the agent")]
    HoldsBalance {
        /// The balance.
        balance: Money,
    },
    /// Calls whose payments may still settle, or payouts not yet paid: the agent cannot be
    /// deleted until they are decided.
    #[error("the agent has paid calls or payouts still being settled; try again in a few minutes")]
    MoneyInFlight,
    /// A withdrawal below the smallest payout.
    #[error("the smallest withdrawal is {min} USDC")]
    BelowMinimum {
        /// The smallest payout.
        min: Money,
    },
    /// A withdrawal larger than the balance.
    #[error(
        "the balance is {balance} USDC; {unsettled} USDC more is from payments only verified, never settled, and cannot be withdrawn"
    )]
    InsufficientBalance {
        /// What can be withdrawn.
        balance: Money,
        /// What cannot.
        unsettled: Money,
    },
    /// The agent has no x402 config yet (404 on reading it).
    #[error("this agent has no x402 config yet; set one with PUT /agents/{{agent_id}}/x402-config")]
    NoConfig,
    /// The agent has no x402 config yet, so no payout wallet.
    #[error("set the agent's x402 config (its wallet) before withdrawing")]
    NotConfigured,
    /// An agent's limit is reached; retry after `reset_secs`.
    #[error("the agent's {which} limit of {limit} is reached; try again in {reset_secs} s")]
    Limited {
        /// `per-minute` or `daily`.
        which: &'static str,
        /// The limit.
        limit: u64,
        /// Calls left (0).
        remaining: u64,
        /// Unix ms the window resets.
        reset_at_ms: i64,
        /// Seconds until then.
        reset_secs: u64,
    },
    /// The seller's endpoint failed; nothing was charged.
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] svc_store::StoreError),
    /// A stored value svc wrote cannot be read back (a sealed secret under another key).
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

impl SellerError {
    /// A 422 at one field.
    pub(crate) fn field(loc: &[&str], msg: impl Into<String>, kind: &'static str) -> Self {
        SellerError::Invalid(vec![FieldError::new(loc.iter().map(|l| (*l).into()), msg, kind)])
    }
}
