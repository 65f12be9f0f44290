//! The chains whose data svc sells, and the address formats valid on each. An address is
//! checked against its chain before any upstream call, so a malformed address is a 422 the
//! client sees at once, never a paid call that fails upstream.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A chain, named as the upstream analytics provider names it (lowercase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Chain {
    /// Solana mainnet.
    Solana,
    /// Ethereum mainnet.
    Ethereum,
    /// Base, the EVM layer-2 whose USDC we accept.
    Base,
    /// BNB Smart Chain.
    Bnb,
    /// Arbitrum One.
    Arbitrum,
    /// Optimism.
    Optimism,
    /// Polygon PoS.
    Polygon,
    /// Avalanche C-Chain.
    Avalanche,
    /// Linea.
    Linea,
    /// Scroll.
    Scroll,
    /// Mantle.
    Mantle,
    /// Blast.
    Blast,
    /// Sonic.
    Sonic,
    /// Ronin.
    Ronin,
    /// HyperEVM.
    Hyperevm,
}

impl Chain {
    /// Every chain, in a stable order.
    pub const ALL: [Chain; 15] = [
        Chain::Solana,
        Chain::Ethereum,
        Chain::Base,
        Chain::Bnb,
        Chain::Arbitrum,
        Chain::Optimism,
        Chain::Polygon,
        Chain::Avalanche,
        Chain::Linea,
        Chain::Scroll,
        Chain::Mantle,
        Chain::Blast,
        Chain::Sonic,
        Chain::Ronin,
        Chain::Hyperevm,
    ];

    /// The five chains the signal products rank tokens on.
    pub const SIGNAL_CHAINS: [Chain; 5] = [Chain::Solana, Chain::Base, Chain::Ethereum, Chain::Bnb, Chain::Arbitrum];

    /// Whether addresses on this chain are 20-byte EVM addresses.
    pub fn is_evm(self) -> bool {
        self != Chain::Solana
    }

    /// The lowercase name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Chain::Solana => "solana",
            Chain::Ethereum => "ethereum",
            Chain::Base => "base",
            Chain::Bnb => "bnb",
            Chain::Arbitrum => "arbitrum",
            Chain::Optimism => "optimism",
            Chain::Polygon => "polygon",
            Chain::Avalanche => "avalanche",
            Chain::Linea => "linea",
            Chain::Scroll => "scroll",
            Chain::Mantle => "mantle",
            Chain::Blast => "blast",
            Chain::Sonic => "sonic",
            Chain::Ronin => "ronin",
            Chain::Hyperevm => "hyperevm",
        }
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Chain {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Chain::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| AddressError::UnknownChain(s.to_owned()))
    }
}

/// A chain that runs the EVM: the type of every `network` field whose route builds or reads EVM
/// transactions, so `solana` there is refused while the input is parsed, with the valid names
/// listed in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EvmChain(Chain);

impl EvmChain {
    /// Base, the default network of the EVM routes.
    pub const BASE: EvmChain = EvmChain(Chain::Base);

    /// The chain itself.
    pub fn chain(self) -> Chain {
        self.0
    }

    /// The lowercase name used on the wire.
    pub fn as_str(self) -> &'static str {
        self.0.as_str()
    }
}

impl TryFrom<Chain> for EvmChain {
    type Error = AddressError;

    fn try_from(chain: Chain) -> Result<Self, Self::Error> {
        if chain.is_evm() { Ok(EvmChain(chain)) } else { Err(AddressError::NotEvm(chain.as_str().to_owned())) }
    }
}

impl FromStr for EvmChain {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<Chain>()?.try_into()
    }
}

impl fmt::Display for EvmChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EvmChain {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EvmChain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for EvmChain {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EvmChain".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Chain::ALL.into_iter().filter(|c| c.is_evm()).map(Chain::as_str).collect();
        schemars::json_schema!({ "type": "string", "enum": names, "description": "An EVM chain." })
    }
}

/// Why a string is not an address (or not a chain).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Not `0x` followed by 40 hex digits.
    #[error("not an EVM address (expected 0x followed by 40 hex digits)")]
    Evm,
    /// Not base58 of 32 bytes.
    #[error("not a Solana address (expected base58 of 32 bytes)")]
    Solana,
    /// A chain name we do not serve.
    #[error("unknown chain {0:?}")]
    UnknownChain(String),
    /// A chain that does not run the EVM where an EVM chain is needed.
    #[error("{0:?} is not an EVM network")]
    NotEvm(String),
}

/// A 20-byte EVM address, kept lowercase so equal addresses compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EvmAddress(String);

impl EvmAddress {
    /// The lowercase `0x…` form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for EvmAddress {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).ok_or(AddressError::Evm)?;
        if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(AddressError::Evm);
        }
        Ok(EvmAddress(format!("0x{}", hex.to_ascii_lowercase())))
    }
}

/// A 32-byte Solana public key in base58.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SolanaAddress(String);

impl SolanaAddress {
    /// The base58 form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SolanaAddress {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Base58 of 32 bytes is 32 to 44 characters; checking the length first bounds the work.
        if !(32..=44).contains(&s.len()) {
            return Err(AddressError::Solana);
        }
        let mut buf = [0u8; 32];
        match bs58::decode(s).onto(&mut buf) {
            Ok(32) => Ok(SolanaAddress(s.to_owned())),
            _ => Err(AddressError::Solana),
        }
    }
}

/// An address on some chain: the shape is decided by the chain it is used with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// An EVM address.
    Evm(EvmAddress),
    /// A Solana address.
    Solana(SolanaAddress),
}

impl Address {
    /// Parses `s` as an address valid on `chain`.
    pub fn parse_for(chain: Chain, s: &str) -> Result<Address, AddressError> {
        if chain.is_evm() { s.parse().map(Address::Evm) } else { s.parse().map(Address::Solana) }
    }

    /// Parses either shape, for fields that take an address of any chain.
    pub fn parse_any(s: &str) -> Result<Address, AddressError> {
        if s.starts_with("0x") || s.starts_with("0X") {
            s.parse().map(Address::Evm)
        } else {
            s.parse().map(Address::Solana)
        }
    }

    /// The canonical text form.
    pub fn as_str(&self) -> &str {
        match self {
            Address::Evm(a) => a.as_str(),
            Address::Solana(a) => a.as_str(),
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! string_codec {
    ($ty:ty, $name:literal, $pattern:literal, $desc:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "pattern": $pattern, "description": $desc })
            }
        }
    };
}

string_codec!(EvmAddress, "EvmAddress", "^0[xX][0-9a-fA-F]{40}$", "A 20-byte EVM address, 0x-prefixed hex.");
string_codec!(
    SolanaAddress,
    "SolanaAddress",
    "^[1-9A-HJ-NP-Za-km-z]{32,44}$",
    "A 32-byte Solana public key in base58."
);
string_codec!(
    Address,
    "Address",
    "^(0[xX][0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$",
    "An EVM address (0x + 40 hex) or a Solana address (base58 of 32 bytes)."
);

impl FromStr for Address {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Address::parse_any(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const USDC_SOLANA: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

    #[test]
    fn an_evm_chain_refuses_solana_and_lists_only_evm_names() {
        assert_eq!("base".parse::<EvmChain>().map(EvmChain::chain), Ok(Chain::Base));
        assert_eq!("solana".parse::<EvmChain>(), Err(AddressError::NotEvm("solana".to_owned())));
        assert!(serde_json::from_str::<EvmChain>("\"solana\"").is_err());
        let schema = serde_json::to_value(schemars::schema_for!(EvmChain)).expect("schema");
        let names = schema["enum"].as_array().expect("enum");
        assert_eq!(names.len(), Chain::ALL.len() - 1);
        assert!(!names.contains(&serde_json::json!("solana")));
    }

    #[test]
    fn addresses_are_checked_against_their_chain() {
        assert!(Address::parse_for(Chain::Solana, USDC_SOLANA).is_ok());
        assert_eq!(Address::parse_for(Chain::Solana, USDC_BASE), Err(AddressError::Solana));
        assert_eq!(
            Address::parse_for(Chain::Base, USDC_BASE).map(|a| a.to_string()),
            Ok(USDC_BASE.to_ascii_lowercase())
        );
        assert_eq!(Address::parse_for(Chain::Base, USDC_SOLANA), Err(AddressError::Evm));
    }

    #[test]
    fn near_misses_are_refused() {
        for bad in [
            "0x833589fcd6edb6e08f4c7c32d4f71b54bda0291",
            "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913aa",
            "0xZZ3589fcd6edb6e08f4c7c32d4f71b54bda02913",
            "",
        ] {
            assert!(bad.parse::<EvmAddress>().is_err(), "{bad}");
        }
        // 0, O, I and l are not base58 digits.
        for bad in [
            "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "EPjFWdd5AufqSSqeM2qN1xzy",
            "11111111111111111111111111111111111111111111111",
        ] {
            assert!(bad.parse::<SolanaAddress>().is_err(), "{bad}");
        }
    }

    #[test]
    fn chain_names_round_trip() {
        for c in Chain::ALL {
            assert_eq!(c.as_str().parse::<Chain>(), Ok(c));
            assert_eq!(serde_json::to_string(&c).ok(), Some(format!("\"{c}\"")));
        }
    }

    proptest! {
        #[test]
        fn parsing_arbitrary_text_never_panics(s in ".*") {
            let _ = Address::parse_any(&s);
            let _ = s.parse::<Chain>();
        }
    }
}
