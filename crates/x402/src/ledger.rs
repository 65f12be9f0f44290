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
    /// funds to the recipient it names, whoever sent it. An unused one is final once it has
    /// expired, or once a reservation was abandoned; before that a settlement already sent
    /// may still land. A Solana payment is looked up by its transaction, which can land only
    /// until its blockhash expires.
    pub async fn resolve(&self, payment: Unresolved<'_>) -> Option<Result<Resolution, FacilitatorError>> {
        if let Some(ledger) = self.evm.get(payment.network) {
            return Some(resolve_evm(ledger.as_ref(), payment).await);
        }
        let ledger = self.solana.get(payment.network)?;
        Some(resolve_solana(ledger.as_ref(), payment).await)
    }
}

/// The outcome can no longer change: an unused authorization stays unused.
fn unused(payment: &Unresolved<'_>) -> Resolution {
    if payment.abandoned || payment.expired { Resolution::NotSettled } else { Resolution::Unknown }
}

async fn resolve_evm(ledger: &dyn EvmLedger, payment: Unresolved<'_>) -> Result<Resolution, FacilitatorError> {
    let unreadable = |what: &str, value: &str| FacilitatorError::Unavailable(format!("bad {what} {value}"));
    if let Some(tx) = payment.transaction {
        let hash = B256::from_str(tx).map_err(|_| unreadable("transaction hash", tx))?;
        match ledger.receipt(hash).await.map_err(rpc)? {
            Some(true) => return Ok(Resolution::Settled { transaction: Some(tx.to_owned()) }),
            Some(false) => return Ok(Resolution::NotSettled),
            // Not mined (yet): the token's record decides, below.
            None => {}
        }
    }
    let payer = Address::from_str(payment.payer).map_err(|_| unreadable("payer", payment.payer))?;
    let nonce = B256::from_str(payment.nonce).map_err(|_| unreadable("nonce", payment.nonce))?;
    if ledger.authorization_used(payer, nonce).await.map_err(rpc)? {
        // Used, but not by the transaction on record (if any): another sender's.
        return Ok(Resolution::Settled { transaction: None });
    }
    Ok(unused(&payment))
}

async fn resolve_solana(ledger: &dyn SolanaLedger, payment: Unresolved<'_>) -> Result<Resolution, FacilitatorError> {
    // Without its transaction a payment cannot be looked up: whoever co-signed it made the id.
    let Some(tx) = payment.transaction else { return Ok(Resolution::Unknown) };
    let status = ledger.status(tx).await.map_err(|e| FacilitatorError::Unavailable(e.to_string()))?;
    Ok(match status {
        Some(true) => Resolution::Settled { transaction: Some(tx.to_owned()) },
        Some(false) => Resolution::NotSettled,
        None => unused(&payment),
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

    /// A node that knows one authorization's state and one transaction's receipt.
    #[derive(Debug, Default)]
    struct Node {
        used: bool,
        receipt: Option<bool>,
    }

    impl EvmLedger for Node {
        fn authorization_used<'a>(&'a self, _: Address, _: B256) -> BoxFuture<'a, Result<bool, EvmError>> {
            futures::future::ready(Ok(self.used)).boxed()
        }

        fn receipt<'a>(&'a self, _: B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
            futures::future::ready(Ok(self.receipt)).boxed()
        }
    }

    impl SolanaLedger for Node {
        fn status<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
            futures::future::ready(Ok(self.receipt)).boxed()
        }
    }

    const TX: &str = "0x00000000000000000000000000000000000000000000000000000000000000ee";

    fn payment<'a>(network: &'a str, transaction: Option<&'a str>, abandoned: bool, expired: bool) -> Unresolved<'a> {
        Unresolved {
            network,
            payer: "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
            nonce: "0x00000000000000000000000000000000000000000000000000000000000000aa",
            transaction,
            abandoned,
            expired,
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
    async fn an_evm_payment_is_decided_by_its_receipt_else_by_the_tokens_record() {
        let base = "eip155:8453";
        let cases = [
            (Node { receipt: Some(true), used: true }, payment(base, Some(TX), false, false), settled(Some(TX))),
            (
                Node { receipt: Some(false), used: false },
                payment(base, Some(TX), false, false),
                Some(Resolution::NotSettled),
            ),
            // Not mined, but another sender used the authorization: the funds moved.
            (Node { receipt: None, used: true }, payment(base, Some(TX), false, false), settled(None)),
            (Node { receipt: None, used: true }, payment(base, None, false, false), settled(None)),
            // Unused, and a transfer sent may still be mined: not decided.
            (Node { receipt: None, used: false }, payment(base, Some(TX), false, false), Some(Resolution::Unknown)),
            (Node { receipt: None, used: false }, payment(base, None, false, false), Some(Resolution::Unknown)),
            // Unused and expired, or a reservation abandoned: final.
            (Node { receipt: None, used: false }, payment(base, Some(TX), false, true), Some(Resolution::NotSettled)),
            (Node { receipt: None, used: false }, payment(base, None, true, false), Some(Resolution::NotSettled)),
        ];
        for (node, payment, expected) in cases {
            let case = format!("{node:?} {payment:?}");
            assert_eq!(resolve(node, payment).await, expected, "{case}");
        }
    }

    #[tokio::test]
    async fn a_solana_payment_is_decided_by_its_transaction() {
        let sol = "solana:mainnet";
        let cases = [
            (Node { receipt: Some(true), used: false }, payment(sol, Some("sig"), false, false), settled(Some("sig"))),
            (
                Node { receipt: Some(false), used: false },
                payment(sol, Some("sig"), false, false),
                Some(Resolution::NotSettled),
            ),
            (Node::default(), payment(sol, Some("sig"), false, false), Some(Resolution::Unknown)),
            // Never seen, and its blockhash has expired: it can no longer land.
            (Node::default(), payment(sol, Some("sig"), false, true), Some(Resolution::NotSettled)),
            (Node::default(), payment(sol, Some("sig"), true, false), Some(Resolution::NotSettled)),
            // Whoever co-signed it made its id; without it, nothing can be looked up.
            (Node { receipt: Some(true), used: false }, payment(sol, None, true, true), Some(Resolution::Unknown)),
        ];
        for (node, payment, expected) in cases {
            let case = format!("{node:?} {payment:?}");
            assert_eq!(resolve(node, payment).await, expected, "{case}");
        }
    }

    #[tokio::test]
    async fn a_network_without_a_node_is_not_answered() {
        assert_eq!(resolve(Node::default(), payment("eip155:84532", None, true, true)).await, None);
    }

    #[tokio::test]
    async fn a_record_the_node_cannot_be_asked_about_is_an_error_not_a_verdict() {
        let ledgers = Ledgers::default().with_evm("eip155:8453", Arc::new(Node::default()));
        let garbled = Unresolved { nonce: "not hex", ..payment("eip155:8453", None, true, true) };
        let answer = ledgers.resolve(garbled).await.expect("a node is attached");
        assert!(matches!(answer, Err(FacilitatorError::Unavailable(_))), "{answer:?}");
    }
}
