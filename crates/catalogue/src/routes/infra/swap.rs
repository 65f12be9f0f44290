//! Swap quotes: Solana aggregators queried in parallel, and the EVM router from human amounts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{EvmAddress, SolanaAddress};

use super::{EvmToken, EvmTx, decimal_amount_errors, infra};
use crate::{FieldError, Loc, RouteInput, RouteSpec, ids};

/// The swap routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![
        infra(
            RouteSpec::post::<SwapQuoteRequest, SwapQuoteResponse>(
                ids::infra::SWAP_QUOTE,
                tools!("/swap-quote"),
                "Solana swap quote from two aggregators queried in parallel: the preferred one if it answers, else the best output, and both quotes.",
            ),
            "swap",
        ),
        infra(
            RouteSpec::post::<EvmSwapQuoteRequest, EvmSwapQuoteResponse>(
                ids::infra::EVM_SWAP_QUOTE,
                tools!("/evm/swap-quote"),
                "EVM swap quote on Base or Ethereum from human amounts: output, minimum out, price impact, gas and the transaction to sign.",
            ),
            "swap",
        ),
    ]
}

fn fifty() -> u32 {
    50
}

fn slippage_default() -> String {
    "50".to_owned()
}

/// Which Solana aggregator to prefer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aggregator {
    /// The default.
    #[default]
    Jupiter,
    /// The second aggregator.
    Okx,
}

/// Input of `POST {tools}/swap-quote`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SwapQuoteRequest {
    /// Mint to sell.
    #[garde(skip)]
    pub input_mint: SolanaAddress,
    /// Mint to buy.
    #[garde(skip)]
    pub output_mint: SolanaAddress,
    /// Amount to sell, in the input token's smallest unit.
    #[garde(range(min = 1))]
    pub amount: u64,
    /// Slippage tolerance in basis points (0–10000, default 50).
    #[serde(default = "fifty")]
    #[garde(range(max = 10_000))]
    pub slippage_bps: u32,
    /// Aggregator to prefer when it answers.
    #[serde(default)]
    #[garde(skip)]
    pub preferred_aggregator: Aggregator,
}

impl RouteInput for SwapQuoteRequest {
    fn check(&self) -> Vec<FieldError> {
        if self.input_mint == self.output_mint {
            return vec![FieldError::new([Loc::from("output_mint")], "must differ from input_mint", "value_error")];
        }
        Vec::new()
    }
}

/// Networks of the EVM swap quote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SwapNetwork {
    /// Base (default).
    #[default]
    Base,
    /// Ethereum mainnet.
    Ethereum,
}

/// Input of `POST {tools}/evm/swap-quote`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct EvmSwapQuoteRequest {
    /// Network (default `base`).
    #[serde(default)]
    #[garde(skip)]
    pub network: SwapNetwork,
    /// Token to sell: an address or `eth`.
    #[garde(skip)]
    pub token_in: EvmToken,
    /// Token to buy: an address or `eth`.
    #[garde(skip)]
    pub token_out: EvmToken,
    /// Amount to sell in human units (`"1.5"`), converted by the token's decimals.
    #[garde(length(max = 78))]
    pub amount: String,
    /// Slippage in basis points as a string (0–10000, default `"50"`).
    #[serde(default = "slippage_default")]
    #[garde(pattern("^[0-9]{1,5}$"))]
    pub slippage: String,
    /// Wallet that will sign; without it the answer is a quote with no transaction, since
    /// a transaction built for nobody would send the output nowhere.
    #[serde(default)]
    #[garde(skip)]
    pub from_address: Option<EvmAddress>,
}

impl RouteInput for EvmSwapQuoteRequest {
    fn check(&self) -> Vec<FieldError> {
        let mut errors = decimal_amount_errors("amount", &self.amount);
        if self.token_in == self.token_out {
            errors.push(FieldError::new([Loc::from("token_out")], "must differ from token_in", "value_error"));
        }
        if self.slippage.parse::<u32>().is_ok_and(|s| s > 10_000) {
            errors.push(FieldError::new([Loc::from("slippage")], "at most 10000 basis points", "value_error"));
        }
        errors
    }
}

/// A quote from one aggregator.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SwapAggregatorQuote {
    /// Aggregator.
    pub aggregator: Aggregator,
    /// Output amount, smallest units, when it answered.
    pub out_amount: Option<String>,
    /// How it answered.
    pub status: SwapQuoteStatus,
    /// Time taken, ms.
    pub latency_ms: u64,
}

/// How an aggregator answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SwapQuoteStatus {
    /// Quoted.
    Ok,
    /// Failed.
    Error,
    /// Too slow.
    Timeout,
}

/// Answer of `swap-quote`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SwapQuoteResponse {
    /// Aggregator whose quote is returned.
    pub aggregator: Aggregator,
    /// Mint sold.
    pub input_mint: String,
    /// Mint bought.
    pub output_mint: String,
    /// Amount sold, smallest units.
    pub in_amount: String,
    /// Amount bought, smallest units.
    pub out_amount: String,
    /// Minimum bought after slippage.
    pub other_amount_threshold: String,
    /// Price impact, percent.
    pub price_impact_pct: f64,
    /// Slippage applied, bps.
    pub slippage_bps: u32,
    /// Venues the route goes through, in order.
    pub route: Vec<String>,
    /// Every aggregator's answer.
    pub quotes: Vec<SwapAggregatorQuote>,
}

/// Answer of `evm/swap-quote`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EvmSwapQuoteResponse {
    /// Network.
    pub network: SwapNetwork,
    /// Token sold (address, or `eth`).
    pub token_in: String,
    /// Token bought.
    pub token_out: String,
    /// Amount sold, atomic units.
    pub amount_in: String,
    /// Expected amount bought, atomic units.
    pub amount_out: String,
    /// Minimum bought after slippage.
    pub min_amount_out: String,
    /// Price impact, percent.
    pub price_impact: Option<f64>,
    /// Gas estimate.
    pub gas: Option<String>,
    /// The transaction to sign; absent when no `from_address` was given.
    pub tx: Option<EvmTx>,
}
