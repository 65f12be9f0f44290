//! The built-in facilitator: verifies `exact` payments itself (no network round trip, so a
//! paid call costs one signature recovery) and settles through a JSON-RPC node when one is
//! configured. With no node it runs verify-only: useful offline, refused in production.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde::Deserialize as _;
use serde_json::Value;
use svc_chain_evm::{
    Address, EvmError, ExactEvmPayload, ExactRequirement, Recoveries, Signer, U256, VerifiedAuthorization, verify_exact,
};
use svc_chain_solana::{ExactSvmPayload, ExactSvmRequirement, Keypair, SendError, VerifiedTransfer};
use svc_domain::Clock;

use crate::facilitator::{Facilitator, FacilitatorError, PaymentRequest, Resolution, Settled, Unresolved, Verified};
use crate::ledger::{EvmLedger, Ledgers, SolanaLedger, rpc};
use crate::network::{NetworkKind, PaymentNetwork};
use crate::wire::{SupportedKind, SupportedResponse, X402_VERSION};

/// Sends verified EVM authorizations on chain; implemented by the `settle` feature's node
/// client, and by test doubles at the chain edge. What it reads of payments afterwards is its
/// [`EvmLedger`] side.
pub trait EvmChain: EvmLedger {
    /// EIP-1271: whether contract wallet `wallet` accepts `signature` over `digest`.
    fn is_valid_signature<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>>;
    /// Sends `transferWithAuthorization` and waits for the receipt; returns the tx hash.
    fn transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>>;
    /// The token balance of `owner`, in atomic units.
    fn balance<'a>(&'a self, owner: Address) -> BoxFuture<'a, Result<U256, EvmError>>;
    /// Whether the token would take this transfer now (x402 §9.12: a payer who cannot cover
    /// the amount is refused before the handler runs). By default the token's record of the
    /// nonce and the payer's balance, both asked at once, so a paid call waits for the slower,
    /// not the sum; a node client simulates the transfer itself instead.
    fn check_transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<(), EvmError>> {
        async move {
            let authorization = &verified.authorization;
            let (used, balance) = futures::future::join(
                self.authorization_used(authorization.from, authorization.nonce),
                self.balance(authorization.from),
            )
            .await;
            if used? {
                return Err(EvmError::NonceUsed);
            }
            if balance? < authorization.value {
                return Err(EvmError::InsufficientBalance);
            }
            Ok(())
        }
        .boxed()
    }
    /// Whether a transfer can be sent now (some relayer can pay for gas).
    fn can_settle(&self) -> bool {
        true
    }
    /// Whether none of its senders has a transaction not yet mined, so an authorization the
    /// token has not used was not sent and (its process stopped) will not be. `false` when
    /// it cannot tell: the payment then waits for its `validBefore`.
    fn nothing_in_flight(&self) -> BoxFuture<'_, Result<bool, EvmError>> {
        async { Ok(false) }.boxed()
    }
}

/// A node attached to one network, shared by every request.
type SharedChain = Arc<dyn EvmChain>;

/// Sends co-signed Solana payments; implemented by the `settle` feature's node client, and
/// by test doubles at the chain edge. Looking transactions up is its [`SolanaLedger`] side.
pub trait SolanaChain: SolanaLedger {
    /// Sends `transaction` (base64, fully signed, first signature `signature`) and waits for
    /// the cluster to confirm it.
    fn send<'a>(&'a self, transaction: &'a str, signature: &'a str) -> BoxFuture<'a, Result<(), SendError>>;
    /// Whether a transaction can be sent now (the fee payer can pay its fee).
    fn can_settle(&self) -> bool {
        true
    }
}

/// What settles one Solana network: the fee payer's key and its node.
#[derive(Debug, Clone)]
struct SolanaSettlement {
    fee_payer: Arc<Keypair>,
    chain: Arc<dyn SolanaChain>,
}

/// The built-in facilitator.
#[derive(Debug, Clone)]
pub struct BuiltinFacilitator {
    networks: Vec<PaymentNetwork>,
    clock: Arc<dyn Clock>,
    evm_chains: HashMap<String, SharedChain>,
    solana: HashMap<String, SolanaSettlement>,
    /// The same nodes, read to reconcile payments.
    ledgers: Ledgers,
    /// Signers recovered at verification, for the re-check before settling.
    recoveries: Arc<Recoveries>,
    /// Solana transactions checked at verification, co-signed once for settling.
    solana_checks: Arc<SolanaChecks>,
}

/// Solana transactions checked (and co-signed, once a settlement needs it), kept from the
/// verification of a payment to its settlement: verify, [`Facilitator::transaction_id`] and
/// settle each check the very same transaction against the very same requirement, and the
/// check is a function of those alone (no clock, no chain), so it runs once, and the fee
/// payer's signature, recorded before sending, is the one sent.
#[derive(Debug, Default)]
struct SolanaChecks {
    kept: std::sync::Mutex<HashMap<String, Arc<SolanaChecked>>>,
}

/// One checked transaction (the key is its base64 text).
#[derive(Debug)]
struct SolanaChecked {
    /// The requirement it was checked against.
    requirement: crate::wire::PaymentRequirements,
    verified: VerifiedTransfer,
    /// The transaction co-signed by the fee payer, and that signature.
    cosigned: std::sync::OnceLock<(String, String)>,
}

/// Checked transactions kept before the lot is dropped: a verified payment settles within
/// seconds; one that never settles is dropped with the lot.
const SOLANA_CHECKS_KEPT: usize = 1_024;

impl SolanaChecks {
    /// The check of `transaction` against `requirement`, if it was made.
    fn get(&self, transaction: &str, requirement: &crate::wire::PaymentRequirements) -> Option<Arc<SolanaChecked>> {
        let kept = self.kept.lock().ok()?;
        kept.get(transaction).filter(|checked| checked.requirement == *requirement).cloned()
    }

    fn keep(&self, transaction: &str, checked: Arc<SolanaChecked>) {
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() >= SOLANA_CHECKS_KEPT {
                kept.clear();
            }
            kept.insert(transaction.to_owned(), checked);
        }
    }

    /// Drops the check of a transaction once settled: it is not asked for again.
    fn forget(&self, transaction: &str) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.remove(transaction);
        }
    }
}

impl SolanaChecked {
    /// The transaction co-signed by `fee_payer` (made once), and that signature.
    fn cosigned(&self, fee_payer: &Keypair) -> Result<(String, String), FacilitatorError> {
        if let Some(cosigned) = self.cosigned.get() {
            return Ok(cosigned.clone());
        }
        let cosigned = self
            .verified
            .cosigned(fee_payer)
            .map_err(|err| FacilitatorError::invalid(err.reason(), err.to_string()))?;
        Ok(self.cosigned.get_or_init(|| cosigned).clone())
    }
}

impl BuiltinFacilitator {
    /// A facilitator for `networks`, verify-only until chains are attached.
    pub fn new(networks: Vec<PaymentNetwork>, clock: Arc<dyn Clock>) -> Self {
        BuiltinFacilitator {
            networks,
            clock,
            evm_chains: HashMap::new(),
            solana: HashMap::new(),
            ledgers: Ledgers::default(),
            recoveries: Arc::default(),
            solana_checks: Arc::default(),
        }
    }

    /// Settles payments on EVM network `network` (CAIP-2) through `chain`.
    pub fn with_evm_chain(mut self, network: &str, chain: Arc<dyn EvmChain>) -> Self {
        self.ledgers = self.ledgers.with_evm(network, chain.clone());
        self.evm_chains.insert(network.to_owned(), chain);
        self
    }

    /// Settles payments on Solana network `network` (CAIP-2): `fee_payer` co-signs (it must
    /// be the network's offered fee payer) and `chain` sends.
    pub fn with_solana_chain(
        mut self,
        network: &str,
        fee_payer: Keypair,
        chain: Arc<dyn SolanaChain>,
    ) -> Result<Self, FacilitatorError> {
        let offered = self.networks.iter().find(|n| n.network == network).map(|n| &n.kind);
        match offered {
            Some(NetworkKind::Solana { fee_payer: offered }) if *offered == fee_payer.address() => {}
            _ => {
                return Err(FacilitatorError::invalid(
                    "invalid_exact_svm_fee_payer_not_managed_by_facilitator",
                    format!("{network} does not offer fee payer {}", fee_payer.address()),
                ));
            }
        }
        self.ledgers = self.ledgers.with_solana(network, chain.clone());
        self.solana.insert(network.to_owned(), SolanaSettlement { fee_payer: Arc::new(fee_payer), chain });
        Ok(self)
    }

    fn network(&self, request: &PaymentRequest<'_>) -> Result<&PaymentNetwork, FacilitatorError> {
        if request.requirements.scheme != "exact" {
            return Err(FacilitatorError::invalid("unsupported_scheme", "only the exact scheme is supported"));
        }
        self.networks
            .iter()
            .find(|n| n.network == request.requirements.network)
            .ok_or_else(|| FacilitatorError::invalid("invalid_network", "network not offered"))
    }

    fn now(&self) -> u64 {
        u64::try_from(self.clock.now_secs()).unwrap_or(0)
    }

    /// The offline checks of an EVM payment.
    fn check_evm(
        &self,
        network: &PaymentNetwork,
        request: &PaymentRequest<'_>,
    ) -> Result<(VerifiedAuthorization, Option<&SharedChain>), FacilitatorError> {
        let NetworkKind::Evm { separator, pay_to, .. } = &network.kind else {
            return Err(FacilitatorError::invalid("invalid_network", "not an EVM network"));
        };
        let payload = ExactEvmPayload::deserialize(request.payload)
            .map_err(|_| FacilitatorError::invalid("invalid_payload", "payload is not an EIP-3009 authorization"))?;
        let amount = U256::from_str(&request.requirements.amount)
            .map_err(|_| FacilitatorError::invalid("invalid_payment_requirements", "amount"))?;
        let chain = self.evm_chains.get(&network.network);
        let required = ExactRequirement { separator: *separator, pay_to: *pay_to, amount };
        // Only a settling server checks a payment twice; a verify-only one would only fill the memo.
        let verified = match chain {
            Some(_) => self.recoveries.verify_exact(&payload, &required, self.now(), true),
            None => verify_exact(&payload, &required, self.now(), false),
        }
        .map_err(evm_invalid)?;
        Ok((verified, chain))
    }

    async fn verify_evm(
        &self,
        network: &PaymentNetwork,
        request: PaymentRequest<'_>,
    ) -> Result<VerifiedAuthorization, FacilitatorError> {
        let (verified, chain) = self.check_evm(network, &request)?;
        if let Some(chain) = chain {
            if verified.signer == Signer::NeedsEip1271 && !chain.is_valid_signature(&verified).await.map_err(rpc)? {
                return Err(evm_invalid(EvmError::Signature));
            }
            match chain.check_transfer(&verified).await {
                Ok(()) => {}
                Err(e @ (EvmError::Rpc(_) | EvmError::Config(_))) => return Err(rpc(e)),
                Err(refused) => return Err(evm_invalid(refused)),
            }
        }
        Ok(verified)
    }
}

impl BuiltinFacilitator {
    /// The offline checks of a Solana payment (the signature, the instructions, the amount).
    fn check_solana(
        &self,
        network: &PaymentNetwork,
        request: &PaymentRequest<'_>,
    ) -> Result<VerifiedTransfer, FacilitatorError> {
        let NetworkKind::Solana { fee_payer } = &network.kind else {
            return Err(FacilitatorError::invalid("invalid_network", "not a Solana network"));
        };
        let transaction = request.payload["transaction"].as_str().ok_or_else(|| {
            FacilitatorError::invalid(
                "invalid_exact_svm_payload_transaction",
                "payload.transaction must be a base64 transaction",
            )
        })?;
        let requirements = request.requirements;
        let extra = requirements.extra.as_ref();
        let text = |key: &str| extra.and_then(|e| e.get(key)).and_then(Value::as_str);
        let amount = requirements
            .amount
            .parse::<u64>()
            .map_err(|_| FacilitatorError::invalid("invalid_payment_requirements", "amount"))?;
        let required = ExactSvmRequirement {
            amount,
            asset: &requirements.asset,
            decimals: network.decimals,
            pay_to: &requirements.pay_to,
            fee_payer: text("feePayer"),
            memo: text("memo"),
        };
        svc_chain_solana::verify_exact(&ExactSvmPayload { transaction }, &required, std::slice::from_ref(fee_payer))
            .map_err(|err| FacilitatorError::invalid(err.reason(), err.to_string()))
    }

    /// [`BuiltinFacilitator::check_solana`], made once per transaction and requirement.
    fn checked_solana(
        &self,
        network: &PaymentNetwork,
        request: &PaymentRequest<'_>,
    ) -> Result<Arc<SolanaChecked>, FacilitatorError> {
        let transaction = request.payload["transaction"].as_str();
        if let Some(checked) = transaction.and_then(|t| self.solana_checks.get(t, request.requirements)) {
            return Ok(checked);
        }
        let verified = self.check_solana(network, request)?;
        let checked = Arc::new(SolanaChecked {
            requirement: request.requirements.clone(),
            verified,
            cosigned: std::sync::OnceLock::new(),
        });
        if let Some(transaction) = transaction {
            self.solana_checks.keep(transaction, checked.clone());
        }
        Ok(checked)
    }

    async fn settle_solana(
        &self,
        network: &PaymentNetwork,
        request: PaymentRequest<'_>,
    ) -> Result<Settled, FacilitatorError> {
        // Settle must never co-sign a transaction that is not exactly the one required: the
        // check made at verification of this very transaction and requirement stands.
        let checked = self.checked_solana(network, &request)?;
        if let Some(transaction) = request.payload["transaction"].as_str() {
            self.solana_checks.forget(transaction);
        }
        let payer = checked.verified.payer.clone();
        let Some(settlement) = self.solana.get(&network.network) else {
            return Ok(Settled::VerifyOnly { payer });
        };
        let (transaction, signature) = checked.cosigned(&settlement.fee_payer)?;
        match settlement.chain.send(&transaction, &signature).await {
            Ok(()) => Ok(Settled::OnChain { payer, transaction: signature }),
            Err(err) => Err(FacilitatorError::SettleFailed {
                reason: err.reason().to_owned(),
                message: err.to_string(),
                transaction: matches!(err, SendError::Pending(_) | SendError::Failed(_)).then_some(signature),
            }),
        }
    }
}

fn evm_invalid(err: EvmError) -> FacilitatorError {
    FacilitatorError::invalid(err.reason(), err.to_string())
}

fn payer_of(verified: &VerifiedAuthorization) -> String {
    verified.authorization.from.to_checksum(None)
}

impl Facilitator for BuiltinFacilitator {
    fn supported(&self) -> BoxFuture<'_, Result<SupportedResponse, FacilitatorError>> {
        let kinds = self
            .networks
            .iter()
            .map(|n| SupportedKind {
                x402_version: X402_VERSION,
                scheme: "exact".to_owned(),
                network: n.network.clone(),
                extra: match &n.kind {
                    NetworkKind::Solana { fee_payer } => {
                        Some([("feePayer".to_owned(), Value::from(fee_payer.clone()))].into_iter().collect())
                    }
                    NetworkKind::Evm { .. } => None,
                },
            })
            .collect();
        futures::future::ready(Ok(SupportedResponse { kinds, ..SupportedResponse::default() })).boxed()
    }

    fn verify<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Verified, FacilitatorError>> {
        async move {
            let network = self.network(&request)?;
            match network.kind {
                NetworkKind::Evm { .. } => {
                    let verified = self.verify_evm(network, request).await?;
                    Ok(Verified { payer: payer_of(&verified) })
                }
                NetworkKind::Solana { .. } => {
                    let checked = self.checked_solana(network, &request)?;
                    Ok(Verified { payer: checked.verified.payer.clone() })
                }
            }
        }
        .boxed()
    }

    fn settle<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Settled, FacilitatorError>> {
        async move {
            let network = self.network(&request)?;
            match network.kind {
                NetworkKind::Evm { .. } => {
                    let Some(chain) = self.evm_chains.get(&network.network) else {
                        // Verify-only: nothing is sent, so there is nothing to re-check; the
                        // payer is the authorization's signer that verify just recovered.
                        let payer = request.payload["authorization"]["from"]
                            .as_str()
                            .and_then(|from| svc_chain_evm::Address::from_str(from).ok())
                            .map(|from| from.to_checksum(None))
                            .ok_or_else(|| FacilitatorError::invalid("invalid_payload", "no authorization.from"))?;
                        return Ok(Settled::VerifyOnly { payer });
                    };
                    // Re-checked (without the node round trips verify made): settle must never
                    // send a transfer that is not exactly the one required.
                    let (verified, _) = self.check_evm(network, &request)?;
                    let payer = payer_of(&verified);
                    match chain.transfer(&verified).await {
                        Ok(transaction) => Ok(Settled::OnChain { payer, transaction }),
                        Err(err) => Err(FacilitatorError::SettleFailed {
                            reason: match err {
                                // Not a failure to pay: the usual cause is that the
                                // authorization was used first (so the funds did move), and
                                // otherwise the signed authorization is public now and can
                                // still be sent until it expires. Reconciliation decides.
                                EvmError::TransactionFailed(_) => crate::SETTLEMENT_PENDING,
                                _ => err.reason(),
                            }
                            .to_owned(),
                            message: err.to_string(),
                            transaction: match err {
                                EvmError::Pending(tx) | EvmError::TransactionFailed(tx) => Some(tx.to_string()),
                                // May have left without a hash: the reconciler asks the token
                                // whether the authorization was used.
                                _ => None,
                            },
                        }),
                    }
                }
                NetworkKind::Solana { .. } => self.settle_solana(network, request).await,
            }
        }
        .boxed()
    }

    fn transaction_id(&self, request: PaymentRequest<'_>) -> Option<String> {
        let network = self.network(&request).ok()?;
        let settlement = self.solana.get(&network.network)?;
        let checked = self.checked_solana(network, &request).ok()?;
        checked.cosigned(&settlement.fee_payer).ok().map(|(_, signature)| signature)
    }

    fn resolve<'a>(&'a self, payment: Unresolved<'a>) -> BoxFuture<'a, Result<Resolution, FacilitatorError>> {
        async move {
            let Some(network) = self.networks.iter().find(|n| n.network == payment.network) else {
                return Ok(Resolution::Unknown);
            };
            let sent_nothing = match &network.kind {
                // Verify-only: nothing is ever sent, so nothing can have moved.
                NetworkKind::Evm { .. } => !self.evm_chains.contains_key(&network.network),
                // No transaction recorded, so none was sent: a Solana payment moves only when
                // we co-sign and send it, and its signature is recorded before it is sent
                // (`transaction_id`).
                NetworkKind::Solana { .. } => {
                    !self.solana.contains_key(&network.network) || payment.transaction.is_none()
                }
            };
            if sent_nothing {
                return Ok(Resolution::NotSettled);
            }
            // A reservation left by a stopped process, with no transaction on record: if none
            // of our relayers has one unmined (read first), an authorization still unused was
            // never sent, and is released now instead of at its `validBefore`.
            let idle = match self.evm_chains.get(&network.network) {
                Some(chain) if payment.abandoned && payment.transaction.is_none() => {
                    chain.nothing_in_flight().await.unwrap_or(false)
                }
                _ => false,
            };
            match self.ledgers.resolve(payment).await.unwrap_or(Ok(Resolution::Unknown))? {
                Resolution::Unknown if idle => Ok(Resolution::NotSettled),
                resolution => Ok(resolution),
            }
        }
        .boxed()
    }

    fn unready_networks(&self) -> Vec<String> {
        let evm = self.evm_chains.iter().filter(|(_, chain)| !chain.can_settle()).map(|(n, _)| n);
        let solana = self.solana.iter().filter(|(_, s)| !s.chain.can_settle()).map(|(n, _)| n);
        let mut unready: Vec<String> = evm.chain(solana).cloned().collect();
        unready.sort();
        unready
    }

    fn verify_only(&self) -> bool {
        self.networks.iter().any(|n| !self.evm_chains.contains_key(&n.network) && !self.solana.contains_key(&n.network))
    }
}

#[cfg(feature = "settle")]
impl EvmLedger for svc_chain_evm::settle::EvmReader {
    fn authorization_used<'a>(
        &'a self,
        payer: Address,
        nonce: svc_chain_evm::B256,
    ) -> BoxFuture<'a, Result<bool, EvmError>> {
        svc_chain_evm::settle::EvmReader::authorization_used(self, payer, nonce).boxed()
    }

    fn receipt<'a>(&'a self, transaction: svc_chain_evm::B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
        svc_chain_evm::settle::EvmReader::receipt(self, transaction).boxed()
    }

    fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>> {
        svc_chain_evm::settle::EvmReader::block_time(self).boxed()
    }
}

#[cfg(feature = "settle")]
impl EvmLedger for svc_chain_evm::settle::EvmSettler {
    fn authorization_used<'a>(
        &'a self,
        payer: Address,
        nonce: svc_chain_evm::B256,
    ) -> BoxFuture<'a, Result<bool, EvmError>> {
        self.reader().authorization_used(payer, nonce).boxed()
    }

    fn receipt<'a>(&'a self, transaction: svc_chain_evm::B256) -> BoxFuture<'a, Result<Option<bool>, EvmError>> {
        self.reader().receipt(transaction).boxed()
    }

    fn block_time(&self) -> BoxFuture<'_, Result<u64, EvmError>> {
        self.reader().block_time().boxed()
    }
}

#[cfg(feature = "settle")]
impl EvmChain for svc_chain_evm::settle::EvmSettler {
    fn is_valid_signature<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>> {
        svc_chain_evm::settle::EvmSettler::is_valid_signature(self, verified).boxed()
    }

    fn transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>> {
        async move { svc_chain_evm::settle::EvmSettler::transfer(self, verified).await.map(|h| h.to_string()) }.boxed()
    }

    fn balance<'a>(&'a self, owner: Address) -> BoxFuture<'a, Result<U256, EvmError>> {
        svc_chain_evm::settle::EvmSettler::balance(self, owner).boxed()
    }

    fn check_transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<(), EvmError>> {
        svc_chain_evm::settle::EvmSettler::check_transfer(self, verified).boxed()
    }

    fn can_settle(&self) -> bool {
        self.can_pay_gas()
    }

    fn nothing_in_flight(&self) -> BoxFuture<'_, Result<bool, EvmError>> {
        svc_chain_evm::settle::EvmSettler::nothing_in_flight(self).boxed()
    }
}

#[cfg(feature = "settle")]
impl SolanaChain for svc_chain_solana::settle::SolanaRpc {
    fn send<'a>(&'a self, transaction: &'a str, signature: &'a str) -> BoxFuture<'a, Result<(), SendError>> {
        self.send_and_confirm(transaction, signature).boxed()
    }

    fn can_settle(&self) -> bool {
        self.funds() != svc_chain_solana::settle::Funds::Empty
    }
}

#[cfg(feature = "settle")]
impl SolanaLedger for svc_chain_solana::settle::SolanaRpc {
    fn status<'a>(&'a self, signature: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
        self.signature_status(signature).boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use svc_chain_solana::ExactSvmPayment;
    use svc_domain::{FixedClock, Money};

    use super::*;
    use crate::network::{SOLANA, SOLANA_USDC};
    use crate::wire::{PaymentRequired, ResourceInfo};

    /// A node double that records what it is asked to send.
    #[derive(Debug, Default)]
    struct Node(Mutex<Vec<(String, String)>>);

    impl SolanaChain for Node {
        fn send<'a>(&'a self, transaction: &'a str, signature: &'a str) -> BoxFuture<'a, Result<(), SendError>> {
            self.0.lock().expect("sent").push((transaction.to_owned(), signature.to_owned()));
            futures::future::ready(Ok(())).boxed()
        }
    }

    impl SolanaLedger for Node {
        fn status<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<bool>, SendError>> {
            futures::future::ready(Ok(None)).boxed()
        }
    }

    #[tokio::test]
    async fn a_solana_payment_is_checked_at_verification_and_the_transaction_recorded_is_the_one_sent() {
        let fee_payer = "0x0ae919bb79373d44e812a220b3844c99480656b1f8d1d84a8b363b609e0a6383";
        let payer = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
        let pay_to = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";
        let fee_payer_address = Keypair::parse(fee_payer).expect("key").address();
        let network = PaymentNetwork::solana(SOLANA, SOLANA_USDC, pay_to, &fee_payer_address).expect("network");
        let node = Arc::new(Node::default());
        let clock = Arc::new(FixedClock::at_ms(1_795_341_600_000));
        let f = BuiltinFacilitator::new(vec![network.clone()], clock)
            .with_solana_chain(SOLANA, Keypair::parse(fee_payer).expect("key"), node.clone())
            .expect("fee payer offered");
        let requirement = crate::Offer::new(vec![network], 300).requirements(Money::from_atomic(500_000)).remove(0);
        let challenge = PaymentRequired {
            x402_version: 2,
            error: None,
            resource: ResourceInfo {
                url: "https://svc.example/".into(),
                description: String::new(),
                mime_type: String::new(),
            },
            accepts: vec![requirement.clone()],
            extensions: None,
        };
        let payment = ExactSvmPayment {
            token_program: svc_chain_solana::programs::TOKEN,
            recent_blockhash: "AEfG19HkBEptPUkVN3MpETgCTuUxvTM2q75pyHq6YfDF",
            nonce: [7; 16],
        };
        let payer = Keypair::parse(payer).expect("payer");
        let header = crate::client::pay_header_solana(&challenge, &requirement, &payer, 6, &payment).expect("sign");
        let payment = crate::decode_payment(header.as_bytes()).expect("decodes");
        let request = PaymentRequest { message: &payment.raw, payload: &payment.payload, requirements: &requirement };

        f.verify(request).await.expect("verifies");
        assert_eq!(f.solana_checks.kept.lock().expect("kept").len(), 1, "the check is kept for settling");
        // The same transaction against another requirement is checked afresh, never taken from
        // the check kept for this one.
        let mut dearer = requirement.clone();
        dearer.amount = "500001".into();
        let other = PaymentRequest { requirements: &dearer, ..request };
        assert_eq!(
            f.verify(other).await.map_err(|e| e.reason().to_owned()),
            Err("invalid_exact_svm_payload_amount_mismatch".to_owned())
        );
        let recorded = f.transaction_id(request).expect("a fee payer's signature is known before sending");
        let settled = f.settle(request).await.expect("settles");
        let sent = node.0.lock().expect("sent").clone();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, recorded, "the transaction recorded is the one sent");
        assert_eq!(settled, Settled::OnChain { payer: payer.address(), transaction: recorded });
        assert!(f.solana_checks.kept.lock().expect("kept").is_empty(), "a settled payment's check is dropped");
    }
}
