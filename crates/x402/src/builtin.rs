//! The built-in facilitator: verifies `exact` payments itself (no network round trip, so a
//! paid call costs one signature recovery) and settles through a JSON-RPC node when one is
//! configured. With no node it runs verify-only: useful offline, refused in production.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::Value;
use svc_chain_evm::{EvmError, ExactEvmPayload, ExactRequirement, Signer, U256, VerifiedAuthorization, verify_exact};
use svc_domain::Clock;

use crate::facilitator::{Facilitator, FacilitatorError, PaymentRequest, Settled, Verified};
use crate::network::{NetworkKind, PaymentNetwork};
use crate::wire::{SupportedKind, SupportedResponse, X402_VERSION};

/// Sends verified EVM authorizations on chain; implemented by the `settle` feature's node
/// client, and by test doubles at the chain edge.
pub trait EvmChain: Send + Sync + std::fmt::Debug {
    /// EIP-1271: whether contract wallet `wallet` accepts `signature` over `digest`.
    fn is_valid_signature<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>>;
    /// Whether the token already consumed this authorization's nonce.
    fn nonce_used<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>>;
    /// Sends `transferWithAuthorization` and waits for the receipt; returns the tx hash.
    fn transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>>;
}

/// A node attached to one network, shared by every request.
type SharedChain = Arc<dyn EvmChain>;

/// The built-in facilitator.
#[derive(Debug, Clone)]
pub struct BuiltinFacilitator {
    networks: Vec<PaymentNetwork>,
    clock: Arc<dyn Clock>,
    evm_chains: HashMap<String, SharedChain>,
}

impl BuiltinFacilitator {
    /// A facilitator for `networks`, verify-only until chains are attached.
    pub fn new(networks: Vec<PaymentNetwork>, clock: Arc<dyn Clock>) -> Self {
        BuiltinFacilitator { networks, clock, evm_chains: HashMap::new() }
    }

    /// Settles payments on EVM network `network` (CAIP-2) through `chain`.
    pub fn with_evm_chain(mut self, network: &str, chain: Arc<dyn EvmChain>) -> Self {
        self.evm_chains.insert(network.to_owned(), chain);
        self
    }

    fn network(&self, request: &PaymentRequest<'_>) -> Result<&PaymentNetwork, FacilitatorError> {
        if request.requirements.scheme != "exact" {
            return Err(FacilitatorError::invalid("unsupported_scheme", "only the exact scheme is supported"));
        }
        if request.payment.get("x402Version").and_then(Value::as_u64) != Some(u64::from(X402_VERSION)) {
            return Err(FacilitatorError::invalid("invalid_x402_version", "payments are verified as x402 v2"));
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
        let NetworkKind::Evm { domain, pay_to } = &network.kind else {
            return Err(FacilitatorError::invalid("invalid_network", "not an EVM network"));
        };
        let payload: ExactEvmPayload =
            request.payment.get("payload").cloned().and_then(|p| serde_json::from_value(p).ok()).ok_or_else(|| {
                FacilitatorError::invalid("invalid_payload", "payload is not an EIP-3009 authorization")
            })?;
        let amount = U256::from_str(&request.requirements.amount)
            .map_err(|_| FacilitatorError::invalid("invalid_payment_requirements", "amount"))?;
        let chain = self.evm_chains.get(&network.network);
        let required = ExactRequirement { domain, pay_to: *pay_to, amount };
        let verified = verify_exact(&payload, &required, self.now(), chain.is_some()).map_err(evm_invalid)?;
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
            if chain.nonce_used(&verified).await.map_err(rpc)? {
                return Err(evm_invalid(EvmError::NonceUsed));
            }
        }
        Ok(verified)
    }
}

fn evm_invalid(err: EvmError) -> FacilitatorError {
    FacilitatorError::invalid(err.reason(), err.to_string())
}

fn rpc(err: EvmError) -> FacilitatorError {
    FacilitatorError::Unavailable(err.to_string())
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
                    Err(FacilitatorError::invalid("invalid_network", "Solana payments are not accepted yet"))
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
                        let payer = request.payment["payload"]["authorization"]["from"]
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
                            reason: err.reason().to_owned(),
                            message: err.to_string(),
                            transaction: match err {
                                EvmError::Pending(tx) | EvmError::TransactionFailed(tx) => Some(tx.to_string()),
                                _ => None,
                            },
                        }),
                    }
                }
                NetworkKind::Solana { .. } => {
                    Err(FacilitatorError::invalid("invalid_network", "Solana payments are not accepted yet"))
                }
            }
        }
        .boxed()
    }

    fn verify_only(&self) -> bool {
        self.networks.iter().any(|n| !self.evm_chains.contains_key(&n.network))
    }
}

#[cfg(feature = "settle")]
impl EvmChain for svc_chain_evm::settle::EvmSettler {
    fn is_valid_signature<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>> {
        svc_chain_evm::settle::EvmSettler::is_valid_signature(self, verified).boxed()
    }

    fn nonce_used<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<bool, EvmError>> {
        svc_chain_evm::settle::EvmSettler::nonce_used(self, verified).boxed()
    }

    fn transfer<'a>(&'a self, verified: &'a VerifiedAuthorization) -> BoxFuture<'a, Result<String, EvmError>> {
        async move { svc_chain_evm::settle::EvmSettler::transfer(self, verified).await.map(|h| h.to_string()) }.boxed()
    }
}
