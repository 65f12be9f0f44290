//! Sellers' payouts on an EVM network svc settles on: the treasury authorizes each payout with
//! EIP-3009 under a nonce derived from the withdrawal's id, and a relayer sends it like any
//! settlement. The token refuses a second use of the nonce, so a payout sent twice pays once,
//! and whether it was paid is read from the token (`authorizationState`).

use std::sync::Arc;

use futures::future::BoxFuture;
use svc_chain_evm::settle::EvmSettler;
use svc_chain_evm::{Address, B256, EvmError, ExactRequirement, Payer, TokenDomain, U256};
use svc_domain::Clock;
use svc_sellers::payouts::{PayoutChain, PayoutOrder, Sent};

/// Payouts on one EVM network.
pub struct EvmPayouts {
    network: String,
    settler: Arc<EvmSettler>,
    treasury: Payer,
    domain: TokenDomain,
    clock: Arc<dyn Clock>,
}

impl EvmPayouts {
    /// Payouts on `network`, authorized by the treasury key `treasury_key` (0x-hex), sent by
    /// `settler`'s relayers.
    pub fn new(
        network: &str,
        settler: Arc<EvmSettler>,
        treasury_key: &str,
        domain: &TokenDomain,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let treasury =
            Payer::from_key(treasury_key).map_err(|_| anyhow::anyhow!("the payout key is not a 32-byte hex key"))?;
        Ok(EvmPayouts { network: network.to_owned(), settler, treasury, domain: domain.clone(), clock })
    }

    /// The treasury's address: it must hold the USDC it pays out.
    pub fn treasury(&self) -> Address {
        self.treasury.address()
    }
}

/// The EIP-3009 nonce of payout `id`: the same for every send of it.
fn nonce(id: &str) -> B256 {
    svc_chain_evm::keccak256(format!("svc-payout:{id}"))
}

impl PayoutChain for EvmPayouts {
    fn network(&self) -> &str {
        &self.network
    }

    fn pay<'a>(&'a self, order: PayoutOrder<'a>) -> BoxFuture<'a, Sent> {
        Box::pin(async move {
            let Ok(to) = order.to.parse::<Address>() else {
                return Sent::Reverted(format!("{} is not an address", order.to));
            };
            let amount = U256::from(order.amount);
            let payload =
                match self.treasury.authorize(&self.domain, to, amount, 0, order.valid_before, nonce(order.id)) {
                    Ok(payload) => payload,
                    Err(e) => return Sent::NotSent(e.to_string()),
                };
            let required = ExactRequirement { separator: self.domain.separator(), pay_to: to, amount };
            let now = u64::try_from(self.clock.now_ms().div_euclid(1000)).unwrap_or(0);
            let verified = match svc_chain_evm::verify_exact(&payload, &required, now, false) {
                Ok(verified) => verified,
                Err(e) => return Sent::NotSent(e.to_string()),
            };
            match self.settler.transfer(&verified).await {
                Ok(hash) => Sent::Paid(hash.to_string()),
                Err(EvmError::Pending(hash)) => Sent::Unknown(Some(hash.to_string())),
                Err(EvmError::SendUnknown(why)) => {
                    tracing::warn!(reason = %why, "a payout may have been sent");
                    Sent::Unknown(None)
                }
                Err(err @ (EvmError::TransactionFailed(_) | EvmError::NonceUsed | EvmError::InsufficientBalance)) => {
                    Sent::Reverted(err.to_string())
                }
                Err(err) => Sent::NotSent(err.to_string()),
            }
        })
    }

    fn paid<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            self.settler
                .reader()
                .authorization_used(self.treasury.address(), nonce(id))
                .await
                .map_err(|e| e.to_string())
        })
    }
}
