//! What a network must do for svc to pay out on it: send a payout exactly once, and say
//! whether one was paid. Below the service, which holds one per network, and the payout
//! rounds, which drive them.

use futures::future::BoxFuture;

/// One payout to send.
#[derive(Debug, Clone, Copy)]
pub struct PayoutOrder<'a> {
    /// The withdrawal's id: what makes the payout once.
    pub id: &'a str,
    /// Where the USDC goes.
    pub to: &'a str,
    /// How much, atomic USDC.
    pub amount: u64,
    /// Until when the authorization is valid, unix seconds.
    pub valid_before: u64,
}

/// What became of a send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// On chain, confirmed: its transaction.
    Paid(String),
    /// Refused before it left (a node down, no gas): nothing moved; send again later.
    NotSent(String),
    /// It may have left (no answer, no receipt in time): ask [`PayoutChain::paid`] later.
    Unknown(Option<String>),
    /// Mined and reverted, or refused by the token: not paid by this send.
    Reverted(String),
}

/// A network svc pays out on.
pub trait PayoutChain: Send + Sync {
    /// The network's CAIP-2 id.
    fn network(&self) -> &str;

    /// Sends a payout; the same id never pays twice, however often it is sent.
    fn pay<'a>(&'a self, order: PayoutOrder<'a>) -> BoxFuture<'a, Sent>;

    /// Whether the payout `id` has been paid on chain.
    fn paid<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, String>>;
}
