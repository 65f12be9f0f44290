//! What the chains did with a payment, read through their nodes: how a payment whose
//! settlement outcome was lost (a process stopped, a node or facilitator went quiet) is
//! decided later, whoever sent the settlement.
//!
//! Reading needs only a node's URL, no key: a server whose payments an external facilitator
//! settles attaches [`Ledgers`] to it and still learns each payment's fate. The built-in
//! facilitator reads through the same code.

use std::collections::HashMap;
use std::str::FromStr as _;
use std::sync::Arc;

use futures::future::BoxFuture;
use svc_chain_evm::{Address, B256, EvmError};
use svc_chain_solana::SendError;

use crate::facilitator::{FacilitatorError, Resolution, Unresolved};

/// An EVM node's record of EIP-3009 payments.
pub trait EvmLedger: Send + Sync + std::fmt::Debug {
    /// Whether the token consumed `payer`'s authorization `nonce`.
    fn authorization_used<'a>(&'a self, payer: Address, nonce: B256) -> BoxFuture<'a, Result<bool, EvmError>>;
    /// A sent transaction's outcome: mined and succeeded, mined and reverted, or not mined.
    fn receipt<'a>(&'a self, transaction: B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>>;
    /// The latest block's timestamp, unix seconds: the clock `validBefore` is checked against.
    fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>>;
}

/// A Solana node's record of transactions.
pub trait SolanaLedger: Send + Sync + std::fmt::Debug {
    /// A sent transaction's outcome: confirmed, failed, or unknown.
    fn status<'a>(&'a self, signature: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>>;
}

/// The nodes a server reads payments from, by CAIP-2 network.
#[derive(Debug, Clone, Default)]
pub struct Ledgers {
    evm: HashMap<String, Arc<dyn EvmLedger>>,
    solana: HashMap<String, Arc<dyn SolanaLedger>>,
}

impl Ledgers {
    /// Reads EVM network `network` through `ledger`.
    pub fn with_evm(mut self, network: &str, ledger: Arc<dyn EvmLedger>) -> Self {
        self.evm.insert(network.to_owned(), ledger);
        self
    }

    /// Reads Solana network `network` through `ledger`.
    pub fn with_solana(mut self, network: &str, ledger: Arc<dyn SolanaLedger>) -> Self {
        self.solana.insert(network.to_owned(), ledger);
        self
    }

    /// Whether any network can be read.
    pub fn is_empty(&self) -> bool {
        self.evm.is_empty() && self.solana.is_empty()
    }

    /// What the chain says of `payment`, or `None` when no node of its network is attached.
    ///
    /// On EVM the token's own record of the nonce is the truth: a used authorization moved the
    /// funds to the recipient it names, whoever sent it, and an unused one (even after a
    /// transfer of it reverted: the signed authorization is public then) can still be sent by
    /// anyone until the chain's clock passes its `validBefore`. A Solana payment is looked up
    /// by its transaction, which can land only until its blockhash expires.
    pub async fn resolve(&self, payment: Unresolved<'_>) -> Option<Result<Resolution, FacilitatorError>> {
        if let Some(ledger) = self.evm.get(payment.network) {
            return Some(resolve_evm(ledger.as_ref(), payment).await);
        }
        let ledger = self.solana.get(payment.network)?;
        Some(resolve_solana(ledger.as_ref(), payment).await)
    }
}

async fn resolve_evm(ledger: &dyn EvmLedger, payment: Unresolved<'_>) -> Result<Resolution, FacilitatorError> {
    let unreadable = |what: &str, value: &str| FacilitatorError::Unavailable(format!("bad {what} {value}"));
    if let Some(tx) = payment.transaction {
        let hash = B256::from_str(tx).map_err(|_| unreadable("transaction hash", tx))?;
        if ledger.receipt(hash).await.map_err(rpc)? == Some(true) {
            return Ok(Resolution::Settled { transaction: Some(tx.to_owned()) });
        }
    }
    let payer = Address::from_str(payment.payer).map_err(|_| unreadable("payer", payment.payer))?;
    let nonce = B256::from_str(payment.nonce).map_err(|_| unreadable("nonce", payment.nonce))?;
    // The chain's clock is read before the token's record, so "unused" is read at a block at
    // least that late: no later block can use an authorization expired by then.
    let chain_now = match payment.valid_before {
        Some(_) => Some(ledger.block_time().await.map_err(rpc)?),
        None => None,
    };
    if ledger.authorization_used(payer, nonce).await.map_err(rpc)? {
        // Used, but not by the transaction on record (if any): another sender's.
        return Ok(Resolution::Settled { transaction: None });
    }
    let expired = matches!((chain_now, payment.valid_before), (Some(now), Some(bound)) if now >= bound);
    Ok(if expired { Resolution::NotSettled } else { Resolution::Unknown })
}

async fn resolve_solana(ledger: &dyn SolanaLedger, payment: Unresolved<'_>) -> Result<Resolution, FacilitatorError> {
    // Without its transaction a payment cannot be looked up: whoever co-signed it made the id.
    let Some(tx) = payment.transaction else { return Ok(Resolution::Unknown) };
    let status = ledger.status(tx).await.map_err(|e| FacilitatorError::Unavailable(e.to_string()))?;
    let expired = payment.valid_before.is_some_and(|bound| payment.now_secs >= bound);
    Ok(match status {
        Some(true) => Resolution::Settled { transaction: Some(tx.to_owned()) },
        Some(false) => Resolution::NotSettled,
        // Never seen: final once it can no longer land.
        None if payment.abandoned || expired => Resolution::NotSettled,
        None => Resolution::Unknown,
    })
}

/// A node that could not be asked: the question is asked again on the next pass.
pub(crate) fn rpc(err: EvmError) -> FacilitatorError {
    FacilitatorError::Unavailable(err.to_string())
}

#[cfg(test)]
mod tests {
    use futures::FutureExt as _;

    use super::*;

    /// A node that knows one authorization's state, one transaction's receipt and its time.
    #[derive(Debug, Default)]
    struct Node {
        used: bool,
        receipt: Option<bool>,
        time: u64,
    }

    impl EvmLedger for Node {
        fn authorization_used<'a>(&'a self, _: Address, _: B256) -> BoxFuture<'a, Result<bool, EvmError>> {
            futures::future::ready(Ok(self.used)).boxed()
        }

        fn receipt<'a>(&'a self, _: B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
            futures::future::ready(Ok(self.receipt)).boxed()
        }

        fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>> {
            futures::future::ready(Ok(self.time)).boxed()
        }
    }

    impl SolanaLedger for Node {
        fn status<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
            futures::future::ready(Ok(self.receipt)).boxed()
        }
    }

    const TX: &str = "0x00000000000000000000000000000000000000000000000000000000000000ee";
    /// The authorization's `validBefore`.
    const BOUND: u64 = 1_700_000_300;

    fn payment<'a>(network: &'a str, transaction: Option<&'a str>, abandoned: bool, now_secs: u64) -> Unresolved<'a> {
        Unresolved {
            network,
            payer: "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
            nonce: "0x00000000000000000000000000000000000000000000000000000000000000aa",
            transaction,
            abandoned,
            valid_before: Some(BOUND),
            now_secs,
        }
    }

    async fn resolve(node: Node, payment: Unresolved<'_>) -> Option<Resolution> {
        let node = Arc::new(node);
        let ledgers = Ledgers::default().with_evm("eip155:8453", node.clone()).with_solana("solana:mainnet", node);
        ledgers.resolve(payment).await.map(|r| r.expect("the node answers"))
    }

    fn settled(tx: Option<&str>) -> Option<Resolution> {
        Some(Resolution::Settled { transaction: tx.map(str::to_owned) })
    }

    #[tokio::test]
    async fn an_evm_payment_is_decided_by_its_receipt_else_by_the_tokens_record_and_the_chains_clock() {
        let base = "eip155:8453";
        let before = BOUND - 1;
        let not_yet = Some(Resolution::Unknown);
        let cases = [
            (
                Node { receipt: Some(true), used: true, time: before },
                payment(base, Some(TX), false, 0),
                settled(Some(TX)),
            ),
            // Not mined, or reverted, but the authorization was used (by another sender): paid.
            (Node { receipt: None, used: true, time: before }, payment(base, Some(TX), false, 0), settled(None)),
            (Node { receipt: Some(false), used: true, time: before }, payment(base, Some(TX), false, 0), settled(None)),
            (Node { receipt: None, used: true, time: before }, payment(base, None, false, 0), settled(None)),
            // Unused while the chain may still take it: a sent transfer may be mined, and a
            // reverted one left the signed authorization public. Abandonment is no proof.
            (Node { receipt: None, used: false, time: before }, payment(base, Some(TX), false, 0), not_yet.clone()),
            (
                Node { receipt: Some(false), used: false, time: before },
                payment(base, Some(TX), false, 0),
                not_yet.clone(),
            ),
            (Node { receipt: None, used: false, time: before }, payment(base, None, true, u64::MAX), not_yet.clone()),
            // Unused once the chain's clock reached validBefore: final, whatever our clock says.
            (
                Node { receipt: None, used: false, time: BOUND },
                payment(base, Some(TX), false, 0),
                Some(Resolution::NotSettled),
            ),
            (
                Node { receipt: Some(false), used: false, time: BOUND },
                payment(base, None, false, 0),
                Some(Resolution::NotSettled),
            ),
        ];
        for (node, payment, expected) in cases {
            let case = format!("{node:?} {payment:?}");
            assert_eq!(resolve(node, payment).await, expected, "{case}");
        }
        // No bound known (a payment recorded before bounds were): never taken as expired.
        let unbounded = Unresolved { valid_before: None, ..payment(base, None, true, u64::MAX) };
        assert_eq!(resolve(Node { time: u64::MAX, ..Node::default() }, unbounded).await, not_yet);
    }

    #[tokio::test]
    async fn a_solana_payment_is_decided_by_its_transaction() {
        let sol = "solana:mainnet";
        let cases = [
            (
                Node { receipt: Some(true), ..Node::default() },
                payment(sol, Some("sig"), false, 0),
                settled(Some("sig")),
            ),
            (
                Node { receipt: Some(false), ..Node::default() },
                payment(sol, Some("sig"), false, 0),
                Some(Resolution::NotSettled),
            ),
            (Node::default(), payment(sol, Some("sig"), false, BOUND - 1), Some(Resolution::Unknown)),
            // Never seen, and its blockhash has expired: it can no longer land.
            (Node::default(), payment(sol, Some("sig"), false, BOUND), Some(Resolution::NotSettled)),
            (Node::default(), payment(sol, Some("sig"), true, 0), Some(Resolution::NotSettled)),
            // Whoever co-signed it made its id; without it, nothing can be looked up.
            (
                Node { receipt: Some(true), ..Node::default() },
                payment(sol, None, true, BOUND),
                Some(Resolution::Unknown),
            ),
        ];
        for (node, payment, expected) in cases {
            let case = format!("{node:?} {payment:?}");
            assert_eq!(resolve(node, payment).await, expected, "{case}");
        }
    }

    #[tokio::test]
    async fn a_network_without_a_node_is_not_answered() {
        assert_eq!(resolve(Node::default(), payment("eip155:84532", None, true, BOUND)).await, None);
    }

    #[tokio::test]
    async fn a_record_the_node_cannot_be_asked_about_is_an_error_not_a_verdict() {
        let ledgers = Ledgers::default().with_evm("eip155:8453", Arc::new(Node::default()));
        let garbled = Unresolved { nonce: "not hex", ..payment("eip155:8453", None, true, BOUND) };
        let answer = ledgers.resolve(garbled).await.expect("a node is attached");
        assert!(matches!(answer, Err(FacilitatorError::Unavailable(_))), "{answer:?}");
    }
}
