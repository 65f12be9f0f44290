//! The networks svc takes payment on, from configuration, and the requirements it offers on
//! them. Everything that decides whether a payment matches (asset, recipient, EIP-712 domain,
//! fee payer) comes from here, never from the client.

use std::str::FromStr;

use serde_json::{Map, Value};
use svc_chain_evm::{Address, B256, TokenDomain};
use svc_domain::Money;

use crate::wire::PaymentRequirements;

/// CAIP-2 id of Base mainnet.
pub const BASE: &str = "eip155:8453";
/// CAIP-2 id of Solana mainnet.
pub const SOLANA: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
/// USDC on Base.
pub const BASE_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// USDC on Solana.
pub const SOLANA_USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/// A network configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// The id is not CAIP-2 of a supported namespace.
    #[error("network {0:?} is not a CAIP-2 id of the form eip155:<chain id> or solana:<genesis>")]
    Network(String),
    /// An address that does not parse.
    #[error("{field} of {network} is not a valid address")]
    Address {
        /// The network.
        network: String,
        /// Which setting.
        field: &'static str,
    },
    /// A token with fewer than 6 decimals cannot represent USDC cents exactly.
    #[error("{0}: decimals must be between 6 and 30")]
    Decimals(String),
    /// A setting the network needs is missing.
    #[error("{network}: {field} is required")]
    Missing {
        /// The network.
        network: String,
        /// Which setting.
        field: &'static str,
    },
}

/// Chain-specific facts of a network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkKind {
    /// An EVM chain whose token implements EIP-3009.
    Evm {
        /// The token's EIP-712 domain.
        domain: TokenDomain,
        /// Its separator, computed once.
        separator: B256,
        /// Our recipient.
        pay_to: Address,
    },
    /// Solana; the fee payer co-signs and pays the transaction fee.
    Solana {
        /// The fee payer's public key (base58).
        fee_payer: String,
    },
}

/// One network svc takes payment on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentNetwork {
    /// CAIP-2 id.
    pub network: String,
    /// Token contract or mint, as offered.
    pub asset: String,
    /// Recipient, as offered.
    pub pay_to: String,
    /// Token decimals (USDC: 6).
    pub decimals: u8,
    /// Chain-specific facts.
    pub kind: NetworkKind,
}

impl PaymentNetwork {
    /// An EVM network with an EIP-3009 token: the CAIP-2 id carries the chain id, and the
    /// domain name and version must be the token's own (`USD Coin`/`2` for USDC on Base).
    pub fn evm(
        network: &str,
        asset: &str,
        name: &str,
        version: &str,
        decimals: u8,
        pay_to: &str,
    ) -> Result<Self, NetworkError> {
        let chain_id = network
            .strip_prefix("eip155:")
            .and_then(|id| id.parse::<u64>().ok())
            .ok_or_else(|| NetworkError::Network(network.to_owned()))?;
        let bad = |field| NetworkError::Address { network: network.to_owned(), field };
        let token = Address::from_str(asset).map_err(|_| bad("asset"))?;
        let pay_to = Address::from_str(pay_to).map_err(|_| bad("pay_to"))?;
        check_decimals(network, decimals)?;
        Ok(PaymentNetwork {
            network: network.to_owned(),
            asset: token.to_checksum(None),
            pay_to: pay_to.to_checksum(None),
            decimals,
            kind: {
                let domain = TokenDomain { name: name.to_owned(), version: version.to_owned(), chain_id, token };
                NetworkKind::Evm { separator: domain.separator(), domain, pay_to }
            },
        })
    }

    /// USDC on Base mainnet, paid to `pay_to`.
    pub fn base_usdc(pay_to: &str) -> Result<Self, NetworkError> {
        PaymentNetwork::evm(BASE, BASE_USDC, "USD Coin", "2", 6, pay_to)
    }

    /// A Solana network; `fee_payer` is the key that co-signs (the facilitator's).
    pub fn solana(network: &str, mint: &str, pay_to: &str, fee_payer: &str) -> Result<Self, NetworkError> {
        if !network.strip_prefix("solana:").is_some_and(|g| (1..=44).contains(&g.len())) {
            return Err(NetworkError::Network(network.to_owned()));
        }
        for (field, value) in [("asset", mint), ("pay_to", pay_to), ("fee_payer", fee_payer)] {
            if value.parse::<svc_domain::SolanaAddress>().is_err() {
                return Err(NetworkError::Address { network: network.to_owned(), field });
            }
        }
        Ok(PaymentNetwork {
            network: network.to_owned(),
            asset: mint.to_owned(),
            pay_to: pay_to.to_owned(),
            decimals: 6,
            kind: NetworkKind::Solana { fee_payer: fee_payer.to_owned() },
        })
    }

    /// The scheme data the client needs to sign.
    fn extra(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        match &self.kind {
            NetworkKind::Evm { domain, .. } => {
                extra.insert("name".into(), Value::from(domain.name.clone()));
                extra.insert("version".into(), Value::from(domain.version.clone()));
            }
            NetworkKind::Solana { fee_payer } => {
                extra.insert("feePayer".into(), Value::from(fee_payer.clone()));
            }
        }
        extra
    }

    /// `price` in this token's atomic units (USDC amounts are 6-decimal already).
    pub fn atomic(&self, price: Money) -> Option<u128> {
        let scale = 10u128.checked_pow(u32::from(self.decimals) - 6)?;
        u128::from(price.atomic()).checked_mul(scale)
    }
}

/// An amount in a token's atomic units as a requirement writes it (a decimal string with no
/// sign, no spaces and no leading `+`), or `None`: what a client says it chose is read with
/// this, once, and compared with our own amount as a number.
pub fn token_amount(text: &str) -> Option<u128> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn check_decimals(network: &str, decimals: u8) -> Result<(), NetworkError> {
    if (6..=30).contains(&decimals) { Ok(()) } else { Err(NetworkError::Decimals(network.to_owned())) }
}

/// The networks offered, in the order clients see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    networks: Vec<PaymentNetwork>,
    max_timeout_seconds: u64,
}

impl Offer {
    /// An offer over `networks`; challenges stay valid `max_timeout_seconds`.
    pub fn new(networks: Vec<PaymentNetwork>, max_timeout_seconds: u64) -> Self {
        Offer { networks, max_timeout_seconds }
    }

    /// The networks.
    pub fn networks(&self) -> &[PaymentNetwork] {
        &self.networks
    }

    /// The network with CAIP-2 id `id`.
    pub fn network(&self, id: &str) -> Option<&PaymentNetwork> {
        self.networks.iter().find(|n| n.network == id)
    }

    /// One requirement per network for `price`. Deterministic: the same price always gives the
    /// same values, because a payment is matched against this rebuild.
    pub fn requirements(&self, price: Money) -> Vec<PaymentRequirements> {
        self.networks
            .iter()
            .filter_map(|n| {
                Some(PaymentRequirements {
                    scheme: "exact".to_owned(),
                    network: n.network.clone(),
                    amount: n.atomic(price)?.to_string(),
                    asset: n.asset.clone(),
                    pay_to: n.pay_to.clone(),
                    max_timeout_seconds: self.max_timeout_seconds,
                    extra: Some(n.extra()),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn every_amount_a_requirement_writes_reads_back_as_itself(units in any::<u64>(), decimals in 6u8..=24) {
            let network = PaymentNetwork { decimals, ..PaymentNetwork::base_usdc(BASE_USDC).expect("base") };
            let price = Money::from_atomic(units);
            let amount = network.atomic(price);
            let offer = Offer::new(vec![network], 300);
            let written = offer.requirements(price).first().map(|r| r.amount.clone());
            prop_assert_eq!(written.as_deref().and_then(token_amount), amount);
        }

        #[test]
        fn an_amount_with_anything_but_digits_is_no_amount(text in "[0-9]{0,5}[^0-9][0-9]{0,5}") {
            prop_assert_eq!(token_amount(&text), None);
        }
    }

    #[test]
    fn an_amount_is_digits_that_fit_in_u128() {
        assert_eq!(token_amount("500000"), Some(500_000));
        assert_eq!(token_amount(&u128::MAX.to_string()), Some(u128::MAX));
        for text in ["", "+5", "-5", " 5", "5 ", "0x10", "1e6", "0.5", "340282366920938463463374607431768211456"] {
            assert_eq!(token_amount(text), None, "{text:?}");
        }
    }
}
