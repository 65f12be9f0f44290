//! DeFi: yield pools, deposit/withdraw/borrow/repay quotes, non-tokenized positions, and EVM
//! token prices.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{Chain, EvmAddress, EvmChain};

use super::{EvmToken, EvmTx, base, decimal_amount_errors, evm_base, infra};
use crate::routes::common::Timestamp;
use crate::{FieldError, InputSource, Loc, RouteInput, RouteSpec, ids};

/// The defi routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![
        infra(
            RouteSpec::post::<DefiDiscoverRequest, DefiDiscoverResponse>(
                ids::infra::DEFI_DISCOVER,
                tools!("/defi/discover"),
                "Find yield pools by network, protocol, APY and TVL, on Solana or any EVM chain.",
            )
            .source(InputSource::OptionalBody),
            "defi",
        ),
        infra(
            RouteSpec::post::<DefiQuoteRequest, DefiQuoteResponse>(
                ids::infra::DEFI_QUOTE,
                tools!("/defi/quote"),
                "Quote a deposit, withdrawal, borrow or repayment on a DeFi protocol, with the transaction and approvals to sign.",
            ),
            "defi",
        ),
        infra(
            RouteSpec::post::<DefiNontokenizedRequest, DefiNontokenizedResponse>(
                ids::infra::DEFI_NONTOKENIZED,
                tools!("/defi/nontokenized"),
                "List non-tokenized DeFi positions (vaults, lending markets) by network and protocol.",
            )
            .source(InputSource::OptionalBody),
            "defi",
        ),
        infra(
            RouteSpec::post::<TokenPriceRequest, TokenPriceResponse>(
                ids::infra::EVM_TOKEN_PRICE,
                tools!("/evm/token-price"),
                "USD price of an EVM token with its symbol, name and decimals.",
            ),
            "defi",
        ),
    ]
}

fn twenty() -> u32 {
    20
}

/// Input of `POST {tools}/defi/discover` (body optional).
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct DefiDiscoverRequest {
    /// `solana` or an EVM chain (default `base`).
    #[serde(default = "base")]
    #[garde(skip)]
    pub network: Chain,
    /// Protocol slugs to include (e.g. `aave-v3`); all when absent.
    // garde's `inner` on an `Option` reaches the list, schemars' the list's items: each says it its way.
    #[garde(length(max = 20), inner(inner(length(min = 1, max = 64))))]
    #[schemars(inner(length(min = 1, max = 64)))]
    pub protocols: Option<Vec<String>>,
    /// Minimum APY, percent (EVM only).
    #[garde(range(min = 0.0))]
    pub min_apy: Option<f64>,
    /// Minimum TVL, USD (EVM only).
    #[garde(range(min = 0.0))]
    pub min_tvl: Option<f64>,
    /// Pools per page (1–100, default 20).
    #[serde(default = "twenty")]
    #[garde(range(min = 1, max = 100))]
    pub page_size: u32,
}

impl RouteInput for DefiDiscoverRequest {
    fn check(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if !self.network.is_evm() {
            for (field, given) in [("min_apy", self.min_apy.is_some()), ("min_tvl", self.min_tvl.is_some())] {
                if given {
                    errors.push(FieldError::new([Loc::from(field)], "only applies to EVM networks", "value_error"));
                }
            }
        }
        errors
    }
}

/// DeFi actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefiAction {
    /// Supply tokens.
    Deposit,
    /// Take supplied tokens back.
    Withdraw,
    /// Borrow against collateral.
    Borrow,
    /// Repay a loan.
    Repay,
}

/// Input of `POST {tools}/defi/quote`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct DefiQuoteRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// Protocol slug, e.g. `aave-v3`.
    #[garde(pattern("^[a-z0-9][a-z0-9-]{0,63}$"))]
    pub protocol: String,
    /// What to do.
    #[garde(skip)]
    pub action: DefiAction,
    /// Amount in human units (`"100"`).
    #[garde(length(max = 78))]
    pub amount: String,
    /// Token moved (address or `eth`); the protocol's main asset when absent.
    #[garde(skip)]
    pub token: Option<EvmToken>,
    /// Wallet that will sign the transaction.
    #[garde(skip)]
    pub from_address: Option<EvmAddress>,
}

impl RouteInput for DefiQuoteRequest {
    fn check(&self) -> Vec<FieldError> {
        decimal_amount_errors("amount", &self.amount)
    }
}

/// Input of `POST {tools}/defi/nontokenized` (body optional).
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct DefiNontokenizedRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// Protocol slugs; all when absent.
    // garde's `inner` on an `Option` reaches the list, schemars' the list's items: each says it its way.
    #[garde(length(max = 20), inner(inner(length(min = 1, max = 64))))]
    #[schemars(inner(length(min = 1, max = 64)))]
    pub protocols: Option<Vec<String>>,
}

impl RouteInput for DefiNontokenizedRequest {}

/// Input of `POST {tools}/evm/token-price`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct TokenPriceRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// Token contract.
    #[garde(skip)]
    pub token_address: EvmAddress,
}

impl RouteInput for TokenPriceRequest {}

/// Answer of `defi/discover`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiDiscoverResponse {
    /// Pools, highest APY first.
    pub pools: Vec<DefiPool>,
    /// Page size applied.
    pub page_size: u32,
    /// Pools matching in total.
    pub total: u64,
}

/// A yield pool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiPool {
    /// Chain.
    pub chain: String,
    /// Protocol slug.
    pub protocol: String,
    /// Pool name or symbol.
    pub symbol: String,
    /// Pool address or id.
    pub pool: String,
    /// Total APY, percent.
    pub apy: Option<f64>,
    /// Base APY, percent.
    pub apy_base: Option<f64>,
    /// Reward APY, percent.
    pub apy_reward: Option<f64>,
    /// TVL, USD.
    pub tvl_usd: f64,
    /// Underlying token addresses.
    pub underlying_tokens: Vec<String>,
}

/// Answer of `defi/quote`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiQuoteResponse {
    /// Network.
    pub network: EvmChain,
    /// Protocol.
    pub protocol: String,
    /// Action.
    pub action: DefiAction,
    /// Amount in, atomic units.
    pub amount_in: String,
    /// Amounts out by token address.
    pub amounts_out: BTreeMap<String, String>,
    /// Price impact, percent.
    pub price_impact: Option<f64>,
    /// Gas estimate.
    pub gas: Option<String>,
    /// Transaction to sign; absent when no `from_address` was given.
    pub tx: Option<EvmTx>,
    /// Token approvals needed first.
    pub approvals: Vec<DefiApproval>,
}

/// A token approval.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiApproval {
    /// Token.
    pub token: String,
    /// Spender.
    pub spender: String,
    /// Amount, atomic units.
    pub amount: String,
}

/// Answer of `defi/nontokenized`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiNontokenizedResponse {
    /// Positions.
    pub positions: Vec<DefiPosition>,
}

/// A non-tokenized position.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DefiPosition {
    /// Chain id.
    pub chain_id: u64,
    /// Project.
    pub project: String,
    /// Protocol slug.
    pub protocol: String,
    /// Position contract.
    pub address: String,
    /// Position id within the contract.
    pub position_id: Option<String>,
    /// Name.
    pub name: String,
    /// Underlying tokens.
    pub underlying_tokens: Vec<String>,
}

/// Answer of `evm/token-price`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TokenPriceResponse {
    /// Network.
    pub network: EvmChain,
    /// Token.
    pub address: String,
    /// Ticker.
    pub symbol: String,
    /// Name.
    pub name: String,
    /// Decimals.
    pub decimals: u8,
    /// Price, USD.
    pub price_usd: f64,
    /// When priced.
    pub timestamp: Timestamp,
}
