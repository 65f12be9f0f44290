//! Infrastructure: swap quotes (Solana aggregators, EVM router), DeFi discovery and quotes,
//! token prices, transaction simulation and validation, two derivatives-exchange proxies and
//! a launchpad lookup.

use crate::ids;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{Chain, EvmAddress, EvmChain, SolanaAddress};

use super::common::{NoInput, Timestamp};
use crate::{FieldError, Group, InputSource, Loc, PreviewPolicy, RouteInput, RouteSpec};

/// The infrastructure routes.
pub fn routes() -> Vec<RouteSpec> {
    let infra = |r: RouteSpec, tag: &'static str| r.group(Group::Infrastructure).tag(tag);
    vec![
        infra(RouteSpec::post::<SwapQuoteRequest, SwapQuoteResponse>(ids::infra::SWAP_QUOTE, tools!("/swap-quote"),
            "Solana swap quote from two aggregators queried in parallel: the preferred one if it answers, else the best output, and both quotes."), "swap"),
        infra(RouteSpec::post::<EvmSwapQuoteRequest, EvmSwapQuoteResponse>(ids::infra::EVM_SWAP_QUOTE, tools!("/evm/swap-quote"),
            "EVM swap quote on Base or Ethereum from human amounts: output, minimum out, price impact, gas and the transaction to sign."), "swap"),
        infra(RouteSpec::post::<DefiDiscoverRequest, DefiDiscoverResponse>(ids::infra::DEFI_DISCOVER, tools!("/defi/discover"),
            "Find yield pools by network, protocol, APY and TVL, on Solana or any EVM chain.").source(InputSource::OptionalBody), "defi"),
        infra(RouteSpec::post::<DefiQuoteRequest, DefiQuoteResponse>(ids::infra::DEFI_QUOTE, tools!("/defi/quote"),
            "Quote a deposit, withdrawal, borrow or repayment on a DeFi protocol, with the transaction and approvals to sign."), "defi"),
        infra(RouteSpec::post::<DefiNontokenizedRequest, DefiNontokenizedResponse>(ids::infra::DEFI_NONTOKENIZED, tools!("/defi/nontokenized"),
            "List non-tokenized DeFi positions (vaults, lending markets) by network and protocol.").source(InputSource::OptionalBody), "defi"),
        infra(RouteSpec::post::<TokenPriceRequest, TokenPriceResponse>(ids::infra::EVM_TOKEN_PRICE, tools!("/evm/token-price"),
            "USD price of an EVM token with its symbol, name and decimals."), "defi"),
        infra(RouteSpec::post::<ShieldSimulateRequest, ShieldScanResponse>(ids::infra::SHIELD_SIMULATE, tools!("/shield/simulate"),
            "Simulate an EVM transaction before signing: asset changes in USD and a security verdict."), "shield"),
        infra(RouteSpec::post::<ShieldValidateRequest, ShieldScanResponse>(ids::infra::SHIELD_VALIDATE, tools!("/shield/validate"),
            "Security verdict on an EVM transaction (benign, warning, malicious) with the features found."), "shield"),
        infra(RouteSpec::post::<NoInput, OrderbookMarketsResponse>(ids::infra::ORDERBOOKDEX_MARKETS, tools!("/orderbookdex/markets"),
            "Perpetual markets of the order-book exchange: prices, 24 h change and volume, open interest, funding, tick and step sizes.")
            .source(InputSource::OptionalBody), "orderbookdex"),
        infra(RouteSpec::post::<OrderbookProxyRequest, OrderbookProxyResponse>(ids::infra::ORDERBOOKDEX_PROXY, tools!("/orderbookdex/proxy"),
            "Read-only access to public indexer paths of the order-book exchange (order books, candles, funding, trades)."), "orderbookdex"),
        infra(RouteSpec::post::<PerpInfoRequest, PerpInfoResponse>(ids::infra::PERPDEX_INFO, tools!("/perpdex/info"),
            "Read-only market and account data of the perp exchange: metadata, mids, books, candles, positions, fills, funding."), "perpdex"),
        infra(RouteSpec::post::<PerpExchangeRequest, PerpExchangeResponse>(ids::infra::PERPDEX_EXCHANGE, tools!("/perpdex/exchange"),
            "Place or cancel orders or set leverage on the perp exchange; svc builds and signs the action with its own agent key.")
            .preview(PreviewPolicy::QuoteOnly).moves_funds(), "perpdex"),
        infra(RouteSpec::get::<LaunchpadCoinPath, LaunchpadCoinResponse>(ids::infra::LAUNCHPAD_COIN, tools!("/launchpad/coin/{mint}"),
            "State of a launchpad coin by mint: bonding-curve progress, reserves, market cap, creator and pool."), "launchpad"),
    ]
}

fn fifty() -> u32 {
    50
}

fn twenty() -> u32 {
    20
}

fn base() -> Chain {
    Chain::Base
}

fn evm_base() -> EvmChain {
    EvmChain::BASE
}

fn empty_calldata() -> String {
    "0x".to_owned()
}

fn slippage_default() -> String {
    "50".to_owned()
}

fn decimal_amount_errors(field: &str, value: &str) -> Vec<FieldError> {
    let valid = !value.is_empty()
        && value.split_once('.').map_or(value.bytes().all(|b| b.is_ascii_digit()), |(w, f)| {
            !w.is_empty() && !f.is_empty() && (w.bytes().chain(f.bytes())).all(|b| b.is_ascii_digit())
        })
        && value.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if valid {
        Vec::new()
    } else {
        vec![FieldError::new([Loc::from(field)], "a positive decimal amount such as \"1.5\"", "value_error")]
    }
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

/// An EVM token: an address or `eth` for the native coin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EvmToken {
    /// The native coin, written `eth`.
    Native(NativeEth),
    /// An ERC-20 contract.
    Contract(EvmAddress),
}

/// The literal `eth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NativeEth {
    /// Native ETH.
    Eth,
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

/// An EVM transaction to scan.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldTxData {
    /// Sender (defaults to `from_address`).
    #[garde(skip)]
    pub from: Option<EvmAddress>,
    /// Recipient or contract.
    #[garde(skip)]
    pub to: EvmAddress,
    /// Calldata, `0x`-prefixed hex (default `0x`, a plain transfer), up to 64 KiB of it.
    // `0x` and 64 KiB as hex: the largest body the schema allows fits svc's default body
    // limit (256 KiB), so whatever validates can be paid for.
    #[serde(default = "empty_calldata")]
    #[garde(pattern("^0x([0-9a-fA-F]{2})*$"), length(max = 131_074))]
    pub data: String,
    /// Value in wei, hex (`0x…`) or decimal.
    #[garde(pattern("^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$"))]
    pub value: Option<String>,
}

/// Input of `POST {tools}/shield/simulate`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldSimulateRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// The transaction.
    #[garde(dive)]
    pub tx_data: ShieldTxData,
    /// Account whose balance changes are reported.
    #[garde(skip)]
    pub from_address: EvmAddress,
}

impl RouteInput for ShieldSimulateRequest {}

/// Input of `POST {tools}/shield/validate`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldValidateRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// The transaction.
    #[garde(dive)]
    pub tx_data: ShieldTxData,
}

impl RouteInput for ShieldValidateRequest {}

/// Methods of the indexer proxy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ProxyMethod {
    /// Read (the only one proxied).
    #[default]
    Get,
    /// Named by the contract but refused: the indexer is read-only.
    Post,
}

/// A scalar query parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ProxyParam {
    /// Text.
    Text(String),
    /// Number.
    Number(f64),
    /// Flag.
    Flag(bool),
}

/// Input of `POST {tools}/orderbookdex/proxy`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct OrderbookProxyRequest {
    /// Indexer path: `/v4/orderbooks/perpetualMarket/{ticker}`, `/v4/candles/perpetualMarkets/{ticker}`
    /// (with `resolution`), `/v4/historicalFunding/{ticker}` or `/v4/trades/perpetualMarket/{ticker}`.
    #[garde(length(min = 4, max = 200))]
    pub endpoint: String,
    /// `GET` (default); `POST` is refused.
    #[serde(default)]
    #[garde(skip)]
    pub method: ProxyMethod,
    /// Query parameters (at most 20 scalars).
    #[serde(default)]
    #[garde(length(max = 20))]
    pub params: BTreeMap<String, ProxyParam>,
}

impl RouteInput for OrderbookProxyRequest {
    fn check(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        match IndexerEndpoint::parse(&self.endpoint) {
            None => errors.push(FieldError::new(
                [Loc::from("endpoint")],
                "must be one of the public indexer paths /v4/orderbooks/perpetualMarket/{ticker}, \
                 /v4/candles/perpetualMarkets/{ticker}, /v4/historicalFunding/{ticker} or \
                 /v4/trades/perpetualMarket/{ticker}, with a ticker such as BTC-USD",
                "value_error",
            )),
            Some(endpoint) => errors.extend(endpoint.check_params(&self.params)),
        }
        if self.method == ProxyMethod::Post {
            errors.push(FieldError::new([Loc::from("method")], "only GET is proxied", "value_error"));
        }
        errors
    }
}

/// A public indexer path svc proxies, parsed from `endpoint`. Anything that does not parse to
/// one of these (other paths, hosts, schemes, `..`, encodings, whitespace) is refused, so a
/// request can only ever reach the configured indexer at one of these paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexerEndpoint {
    /// `/v4/orderbooks/perpetualMarket/{ticker}`.
    Orderbook(String),
    /// `/v4/candles/perpetualMarkets/{ticker}` (needs `resolution`).
    Candles(String),
    /// `/v4/historicalFunding/{ticker}`.
    Funding(String),
    /// `/v4/trades/perpetualMarket/{ticker}`.
    Trades(String),
}

/// Candle resolutions the indexer knows.
const CANDLE_RESOLUTIONS: [&str; 7] = ["1MIN", "5MINS", "15MINS", "30MINS", "1HOUR", "4HOURS", "1DAY"];

impl IndexerEndpoint {
    /// The endpoint `endpoint` names, if it is exactly one of the allowed paths.
    pub fn parse(endpoint: &str) -> Option<Self> {
        let rest = endpoint.strip_prefix("/v4/")?;
        let parts: Vec<&str> = rest.split('/').collect();
        let parsed = match parts.as_slice() {
            ["orderbooks", "perpetualMarket", ticker] => IndexerEndpoint::Orderbook((*ticker).to_owned()),
            ["candles", "perpetualMarkets", ticker] => IndexerEndpoint::Candles((*ticker).to_owned()),
            ["historicalFunding", ticker] => IndexerEndpoint::Funding((*ticker).to_owned()),
            ["trades", "perpetualMarket", ticker] => IndexerEndpoint::Trades((*ticker).to_owned()),
            _ => return None,
        };
        valid_ticker(parsed.ticker()).then_some(parsed)
    }

    /// The market's ticker.
    pub fn ticker(&self) -> &str {
        match self {
            IndexerEndpoint::Orderbook(t)
            | IndexerEndpoint::Candles(t)
            | IndexerEndpoint::Funding(t)
            | IndexerEndpoint::Trades(t) => t,
        }
    }

    /// The path under the indexer's base URL, rebuilt from the parsed parts.
    pub fn path(&self) -> String {
        match self {
            IndexerEndpoint::Orderbook(t) => format!("/v4/orderbooks/perpetualMarket/{t}"),
            IndexerEndpoint::Candles(t) => format!("/v4/candles/perpetualMarkets/{t}"),
            IndexerEndpoint::Funding(t) => format!("/v4/historicalFunding/{t}"),
            IndexerEndpoint::Trades(t) => format!("/v4/trades/perpetualMarket/{t}"),
        }
    }

    /// Query parameters this path takes.
    pub fn allowed_params(&self) -> &'static [&'static str] {
        match self {
            IndexerEndpoint::Orderbook(_) => &[],
            IndexerEndpoint::Candles(_) => &["resolution", "limit", "fromISO", "toISO"],
            IndexerEndpoint::Funding(_) => &["limit", "effectiveBeforeOrAt", "effectiveBeforeOrAtHeight"],
            IndexerEndpoint::Trades(_) => &["limit", "createdBeforeOrAt", "createdBeforeOrAtHeight"],
        }
    }

    /// The parameters as query pairs, after [`Self::check_params`] accepted them.
    pub fn query(params: &BTreeMap<String, ProxyParam>) -> Vec<(String, String)> {
        params.iter().filter_map(|(k, v)| Some((k.clone(), param_text(v)?))).collect()
    }

    /// Errors in `params` for this path: unknown names, malformed values, a missing
    /// `resolution` for candles.
    pub fn check_params(&self, params: &BTreeMap<String, ProxyParam>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let at = |key: &str| [Loc::from("params"), Loc::Key(key.to_owned())];
        for (key, value) in params {
            if !self.allowed_params().contains(&key.as_str()) {
                let allowed = self.allowed_params().join(", ");
                let msg = if allowed.is_empty() {
                    "this path takes no parameters".to_owned()
                } else {
                    format!("unknown parameter; this path takes {allowed}")
                };
                errors.push(FieldError::new(at(key), msg, "value_error"));
                continue;
            }
            let text = param_text(value).unwrap_or_default();
            let valid = match key.as_str() {
                "limit" => text.parse::<u32>().is_ok_and(|n| (1..=100).contains(&n)),
                "resolution" => CANDLE_RESOLUTIONS.contains(&text.as_str()),
                k if k.ends_with("Height") => {
                    !text.is_empty() && text.len() <= 12 && text.bytes().all(|b| b.is_ascii_digit())
                }
                _ => is_utc_timestamp(&text),
            };
            if !valid {
                let msg = match key.as_str() {
                    "limit" => "an integer from 1 to 100".to_owned(),
                    "resolution" => format!("one of {}", CANDLE_RESOLUTIONS.join(", ")),
                    k if k.ends_with("Height") => "a block height (digits)".to_owned(),
                    _ => "a UTC time such as 2026-11-22T10:00:00Z".to_owned(),
                };
                errors.push(FieldError::new(at(key), msg, "value_error"));
            }
        }
        if matches!(self, IndexerEndpoint::Candles(_)) && !params.contains_key("resolution") {
            errors.push(FieldError::new(
                at("resolution"),
                format!("candles need a resolution, one of {}", CANDLE_RESOLUTIONS.join(", ")),
                "missing",
            ));
        }
        errors
    }
}

/// A market ticker: `BASE-QUOTE`, letters and digits, e.g. `BTC-USD`.
fn valid_ticker(ticker: &str) -> bool {
    let alnum = |s: &str, max: usize| !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_alphanumeric());
    ticker.split_once('-').is_some_and(|(base, quote)| alnum(base, 20) && alnum(quote, 10))
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`, nothing else.
fn is_utc_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let fraction = text.get(19..text.len().saturating_sub(1)).is_some_and(|f| {
        f.is_empty()
            || f.strip_prefix('.').is_some_and(|d| (1..=9).contains(&d.len()) && d.bytes().all(|c| c.is_ascii_digit()))
    });
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && text.ends_with('Z')
        && fraction
}

/// A parameter as query text; flags are not a value any proxied parameter takes.
fn param_text(value: &ProxyParam) -> Option<String> {
    match value {
        ProxyParam::Text(t) => Some(t.clone()),
        ProxyParam::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => Some(format!("{n:.0}")),
        ProxyParam::Number(n) => Some(n.to_string()),
        ProxyParam::Flag(_) => None,
    }
}

/// Input of `POST {tools}/perpdex/info`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct PerpInfoRequest {
    /// The read-only request.
    #[garde(dive)]
    pub body: PerpInfoQuery,
}

impl RouteInput for PerpInfoRequest {}

/// Read-only info requests, by `type`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PerpInfoQuery {
    /// Perp universe.
    Meta,
    /// Universe with live contexts (funding, open interest, prices).
    MetaAndAssetCtxs,
    /// Mid prices of every coin.
    AllMids,
    /// Spot universe.
    SpotMeta,
    /// Order book of a coin.
    L2Book {
        /// Coin, e.g. `BTC`.
        #[garde(length(min = 1, max = 32))]
        coin: String,
    },
    /// Candles of a coin.
    CandleSnapshot {
        /// Candle request.
        #[garde(dive)]
        req: PerpCandleRequest,
    },
    /// Funding history of a coin.
    FundingHistory {
        /// Coin.
        #[garde(length(min = 1, max = 32))]
        coin: String,
        /// From, unix ms.
        #[serde(rename = "startTime")]
        #[garde(skip)]
        start_time: u64,
        /// To, unix ms.
        #[serde(rename = "endTime")]
        #[garde(skip)]
        end_time: Option<u64>,
    },
    /// Positions and margin of a user.
    ClearinghouseState {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Spot balances of a user.
    SpotClearinghouseState {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Open orders of a user.
    OpenOrders {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Fills of a user.
    UserFills {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
    },
    /// Funding payments of a user.
    UserFunding {
        /// User address.
        #[garde(skip)]
        user: EvmAddress,
        /// From, unix ms.
        #[serde(rename = "startTime")]
        #[garde(skip)]
        start_time: u64,
    },
}

/// A candle request.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(rename_all = "camelCase")]
pub struct PerpCandleRequest {
    /// Coin.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Interval: 1m 5m 15m 1h 4h 1d.
    #[garde(pattern("^(1m|3m|5m|15m|30m|1h|2h|4h|8h|12h|1d|3d|1w|1M)$"))]
    pub interval: String,
    /// From, unix ms.
    #[garde(skip)]
    pub start_time: u64,
    /// To, unix ms.
    #[garde(skip)]
    pub end_time: u64,
}

/// Input of `POST {tools}/perpdex/exchange`: an action svc signs itself. Client signatures
/// are refused: unknown fields (`signature`, `nonce`, `action`) are an error.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpExchangeRequest {
    /// The action.
    #[garde(dive)]
    pub body: PerpAction,
}

impl RouteInput for PerpExchangeRequest {
    fn price_units(&self) -> u64 {
        match &self.body {
            PerpAction::Order { orders } => orders.len() as u64,
            PerpAction::Cancel { cancels } => cancels.len() as u64,
            PerpAction::UpdateLeverage { .. } => 1,
        }
    }
}

/// Exchange actions, by `type`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum PerpAction {
    /// Place 1–20 orders.
    Order {
        /// The orders.
        #[garde(length(min = 1, max = 20), dive)]
        orders: Vec<PerpOrder>,
    },
    /// Cancel 1–20 orders.
    Cancel {
        /// The cancels.
        #[garde(length(min = 1, max = 20), dive)]
        cancels: Vec<PerpCancel>,
    },
    /// Set a coin's leverage.
    UpdateLeverage {
        /// Coin.
        #[garde(length(min = 1, max = 32))]
        coin: String,
        /// Cross (true) or isolated margin.
        #[garde(skip)]
        is_cross: bool,
        /// Leverage, 1–50.
        #[garde(range(min = 1, max = 50))]
        leverage: u32,
    },
}

/// One order.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpOrder {
    /// Coin, e.g. `ETH`.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Buy (true) or sell.
    #[garde(skip)]
    pub is_buy: bool,
    /// Size in coin units, decimal string.
    #[garde(pattern("^[0-9]{1,12}(\\.[0-9]{1,8})?$"))]
    pub sz: String,
    /// Limit price, decimal string.
    #[garde(pattern("^[0-9]{1,12}(\\.[0-9]{1,8})?$"))]
    pub limit_px: String,
    /// Time in force (default `Gtc`).
    #[serde(default)]
    #[garde(skip)]
    pub tif: PerpTif,
    /// Only reduce a position.
    #[serde(default)]
    #[garde(skip)]
    pub reduce_only: bool,
    /// Client order id, `0x` and 32 hex digits.
    #[garde(pattern("^0x[0-9a-fA-F]{32}$"))]
    pub cloid: Option<String>,
}

/// Time in force.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PerpTif {
    /// Good till cancelled.
    #[default]
    Gtc,
    /// Immediate or cancel.
    Ioc,
    /// Add liquidity only.
    Alo,
}

/// One cancel.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct PerpCancel {
    /// Coin.
    #[garde(length(min = 1, max = 32))]
    pub coin: String,
    /// Order id.
    #[garde(skip)]
    pub oid: u64,
}

/// Path of `GET {tools}/launchpad/coin/{mint}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct LaunchpadCoinPath {
    /// Coin mint.
    #[garde(skip)]
    pub mint: SolanaAddress,
}

impl RouteInput for LaunchpadCoinPath {}

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

/// A transaction to sign.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EvmTx {
    /// Sender.
    pub from: Option<String>,
    /// Contract called.
    pub to: String,
    /// Calldata.
    pub data: String,
    /// Value in wei.
    pub value: String,
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

/// Security verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ShieldVerdict {
    /// Nothing found.
    Benign,
    /// Worth a look.
    Warning,
    /// Do not sign.
    Malicious,
    /// The scan failed.
    Error,
}

/// Answer of `shield/simulate` and `shield/validate`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldScanResponse {
    /// Verdict.
    pub result_type: ShieldVerdict,
    /// Attack class, when malicious.
    pub classification: Option<String>,
    /// Explanation.
    pub description: Option<String>,
    /// Findings.
    pub features: Vec<ShieldFeature>,
    /// Balance changes (simulate only).
    pub simulation: Option<ShieldSimulation>,
}

/// A finding.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldFeature {
    /// Severity: Malicious, Warning, Benign or Info.
    #[serde(rename = "type")]
    pub kind: String,
    /// Finding id.
    pub feature_id: String,
    /// Explanation.
    pub description: String,
    /// Address concerned.
    pub address: Option<String>,
}

/// Simulated balance changes of the account.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldSimulation {
    /// Per asset.
    pub assets_diffs: Vec<ShieldAssetDiff>,
    /// Totals, USD.
    pub total_usd_diff: ShieldUsdDiff,
}

/// One asset's change.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldAssetDiff {
    /// Token address (absent for the native coin).
    pub address: Option<String>,
    /// Ticker.
    pub symbol: String,
    /// Received, human units.
    pub amount_in: String,
    /// Sent, human units.
    pub amount_out: String,
    /// Net value, USD.
    pub usd: f64,
}

/// USD totals.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldUsdDiff {
    /// Received.
    #[serde(rename = "in")]
    pub received: f64,
    /// Sent.
    pub out: f64,
    /// Net.
    pub total: f64,
}

/// Answer of `orderbookdex/markets`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OrderbookMarketsResponse {
    /// Markets.
    pub markets: Vec<OrderbookMarket>,
}

/// A perpetual market.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OrderbookMarket {
    /// Ticker, e.g. `BTC-USD`.
    pub ticker: String,
    /// Trading status.
    pub status: String,
    /// Oracle price, USD.
    pub oracle_price: f64,
    /// 24-hour price change, USD.
    pub price_change_24h: f64,
    /// 24-hour volume, USD.
    pub volume_24h: f64,
    /// Open interest, base units.
    pub open_interest: f64,
    /// Next funding rate.
    pub next_funding_rate: f64,
    /// Price increment.
    pub tick_size: f64,
    /// Size increment.
    pub step_size: f64,
    /// Initial margin fraction.
    pub initial_margin_fraction: f64,
    /// Maintenance margin fraction.
    pub maintenance_margin_fraction: f64,
}

/// Answer of `orderbookdex/proxy`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OrderbookProxyResponse {
    /// Path requested.
    pub endpoint: String,
    /// Upstream HTTP status.
    pub status: u16,
    /// The indexer's answer.
    pub data: OrderbookProxyData,
}

/// The indexer answers svc proxies.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OrderbookProxyData {
    /// `/v4/orderbooks/perpetualMarket/{ticker}`.
    Orderbook {
        /// Bids.
        bids: Vec<OrderbookLevel>,
        /// Asks.
        asks: Vec<OrderbookLevel>,
    },
    /// `/v4/candles/perpetualMarkets/{ticker}`.
    Candles {
        /// Candles.
        candles: Vec<OrderbookCandle>,
    },
    /// `/v4/historicalFunding/{ticker}`.
    Funding {
        /// Funding rates.
        #[serde(rename = "historicalFunding")]
        historical_funding: Vec<OrderbookFunding>,
    },
    /// `/v4/trades/perpetualMarket/{ticker}`.
    Trades {
        /// Trades.
        trades: Vec<OrderbookTrade>,
    },
}

/// A book level (strings as the indexer sends them).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OrderbookLevel {
    /// Price.
    pub price: String,
    /// Size.
    pub size: String,
}

/// A candle.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderbookCandle {
    /// Start.
    pub started_at: String,
    /// Open.
    pub open: String,
    /// High.
    pub high: String,
    /// Low.
    pub low: String,
    /// Close.
    pub close: String,
    /// Volume, USD.
    pub usd_volume: String,
}

/// A funding rate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderbookFunding {
    /// Ticker.
    pub ticker: String,
    /// Rate.
    pub rate: String,
    /// Oracle price.
    pub price: String,
    /// When.
    pub effective_at: String,
}

/// A trade.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderbookTrade {
    /// Trade id.
    pub id: String,
    /// BUY or SELL.
    pub side: String,
    /// Size.
    pub size: String,
    /// Price.
    pub price: String,
    /// When.
    pub created_at: String,
}

/// Answer of `perpdex/info`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpInfoResponse {
    /// The request type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The exchange's answer.
    pub data: PerpInfoData,
}

/// Answers of the info types svc forwards.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PerpInfoData {
    /// `meta`: the perp universe.
    Meta {
        /// Assets.
        universe: Vec<PerpAsset>,
    },
    /// `metaAndAssetCtxs`: the universe and each asset's live context, index for index.
    Markets {
        /// Assets.
        universe: Vec<PerpAsset>,
        /// Live context of each asset, in universe order.
        #[serde(rename = "assetCtxs")]
        asset_ctxs: Vec<PerpAssetCtx>,
    },
    /// `spotMeta`: spot pairs and tokens.
    SpotMeta {
        /// Pairs.
        universe: Vec<PerpSpotPair>,
        /// Tokens.
        tokens: Vec<PerpSpotToken>,
    },
    /// `spotClearinghouseState`: spot balances.
    SpotBalances {
        /// Balances.
        balances: Vec<PerpSpotBalance>,
    },
    /// `l2Book`.
    Book {
        /// Coin.
        coin: String,
        /// `[bids, asks]`.
        levels: Vec<Vec<PerpLevel>>,
        /// Time, unix ms.
        time: u64,
    },
    /// `clearinghouseState`: positions and margin.
    Account {
        /// Positions.
        #[serde(rename = "assetPositions")]
        asset_positions: Vec<PerpAssetPosition>,
        /// Withdrawable USD.
        withdrawable: String,
    },
    /// `candleSnapshot`, `userFills`, `openOrders`, `fundingHistory`, `userFunding`: rows of
    /// scalars, with the fields of a nested object (`userFunding`'s `delta`) lifted into the row.
    Rows(Vec<BTreeMap<String, PerpScalar>>),
    /// `allMids` and other name → value maps.
    Map(BTreeMap<String, String>),
}

/// A scalar cell of a row answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PerpScalar {
    /// Text or decimal string.
    Text(String),
    /// Number.
    Number(f64),
    /// Flag.
    Flag(bool),
}

/// A perp asset.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpAsset {
    /// Coin.
    pub name: String,
    /// Size decimals.
    pub sz_decimals: u8,
    /// Largest leverage.
    pub max_leverage: u32,
}

/// An asset's live context (decimal strings, as the exchange sends them).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpAssetCtx {
    /// Current hourly funding rate.
    pub funding: String,
    /// Open interest, coin units.
    pub open_interest: String,
    /// Mark 24 hours ago.
    pub prev_day_px: String,
    /// Notional volume over 24 hours, USD.
    pub day_ntl_vlm: String,
    /// Premium of mark over oracle, when quoted.
    pub premium: Option<String>,
    /// Oracle price.
    pub oracle_px: String,
    /// Mark price.
    pub mark_px: String,
    /// Mid of the book, when it has both sides.
    pub mid_px: Option<String>,
}

/// A spot pair.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotPair {
    /// Pair name, e.g. `PURR/USDC`, or `@index`.
    pub name: String,
    /// Pair index (spot asset id is 10000 + index).
    pub index: u32,
    /// Base and quote token indexes.
    pub tokens: Vec<u32>,
    /// Listed under its canonical name.
    pub is_canonical: bool,
}

/// A spot token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotToken {
    /// Token name.
    pub name: String,
    /// Token index.
    pub index: u32,
    /// Size decimals.
    pub sz_decimals: u8,
    /// On-chain decimals.
    pub wei_decimals: u8,
    /// Token id, hex.
    pub token_id: String,
}

/// A spot balance.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpSpotBalance {
    /// Token name.
    pub coin: String,
    /// Token index.
    pub token: u32,
    /// Held by open orders.
    pub hold: String,
    /// Total.
    pub total: String,
    /// Entry notional, USD.
    pub entry_ntl: String,
}

/// A book level.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpLevel {
    /// Price.
    pub px: String,
    /// Size.
    pub sz: String,
    /// Orders at this level.
    pub n: u32,
}

/// A position.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpAssetPosition {
    /// Position details.
    pub position: PerpPosition,
}

/// Position details.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PerpPosition {
    /// Coin.
    pub coin: String,
    /// Signed size.
    pub szi: String,
    /// Entry price.
    pub entry_px: Option<String>,
    /// Liquidation price.
    pub liquidation_px: Option<String>,
    /// Unrealised PnL, USD.
    pub unrealized_pnl: String,
    /// Position value, USD.
    pub position_value: String,
}

/// Answer of `perpdex/exchange`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PerpExchangeResponse {
    /// `ok` or `err`.
    pub status: String,
    /// One status per order or cancel.
    pub statuses: Vec<PerpOrderStatus>,
    /// Nonce svc signed with.
    pub nonce: u64,
}

/// The outcome of one order or cancel.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PerpOrderStatus {
    /// Resting on the book.
    Resting {
        /// Order id.
        oid: u64,
    },
    /// Filled.
    Filled {
        /// Size filled.
        total_sz: String,
        /// Average price.
        avg_px: String,
        /// Order id.
        oid: u64,
    },
    /// Cancelled or accepted without a fill.
    Success,
    /// Refused.
    Error(String),
}

/// Answer of `launchpad/coin/{mint}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LaunchpadCoinResponse {
    /// Mint.
    pub mint: String,
    /// Name.
    pub name: String,
    /// Ticker.
    pub symbol: String,
    /// Description.
    pub description: Option<String>,
    /// Image.
    pub image_uri: Option<String>,
    /// Creator wallet.
    pub creator: String,
    /// Created.
    pub created_at: Timestamp,
    /// Bonding curve finished (graduated to a pool).
    pub complete: bool,
    /// Pool address once graduated.
    pub pool: Option<String>,
    /// Market cap, USD.
    pub market_cap_usd: f64,
    /// Virtual SOL reserves, lamports.
    pub virtual_sol_reserves: u64,
    /// Virtual token reserves, smallest units.
    pub virtual_token_reserves: u64,
    /// Total supply, smallest units.
    pub total_supply: u64,
    /// Became king of the hill.
    pub king_of_the_hill_at: Option<Timestamp>,
    /// Social links.
    pub socials: LaunchpadSocials,
}

/// Social links of a coin.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct LaunchpadSocials {
    /// X profile.
    pub twitter: Option<String>,
    /// Telegram.
    pub telegram: Option<String>,
    /// Website.
    pub website: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_four_public_indexer_paths_parse() {
        let parsed = IndexerEndpoint::parse("/v4/candles/perpetualMarkets/BTC-USD");
        assert_eq!(parsed, Some(IndexerEndpoint::Candles("BTC-USD".into())));
        assert_eq!(parsed.map(|p| p.path()).as_deref(), Some("/v4/candles/perpetualMarkets/BTC-USD"));
        for bad in [
            "/v4/perpetualMarkets",
            "/v4/addresses/dydx1abc/subaccountNumber/0",
            "/v4/orderbooks/perpetualMarket/BTC-USD/",
            "/v4/orderbooks/perpetualMarket/../BTC-USD",
            "/v4/trades/perpetualMarket/BTC_USD",
            "/v4/historicalFunding/BTC-USD?x=1",
            "https://indexer.example/v4/historicalFunding/BTC-USD",
        ] {
            assert_eq!(IndexerEndpoint::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn parameters_are_checked_per_path() {
        let candles = IndexerEndpoint::Candles("ETH-USD".into());
        let params = |pairs: &[(&str, &str)]| -> BTreeMap<String, ProxyParam> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), ProxyParam::Text((*v).to_owned()))).collect()
        };
        assert!(
            candles.check_params(&params(&[("resolution", "1HOUR"), ("fromISO", "2026-11-22T10:00:00Z")])).is_empty()
        );
        assert_eq!(candles.check_params(&params(&[])).len(), 1, "resolution is required");
        assert_eq!(candles.check_params(&params(&[("resolution", "1H"), ("limit", "500"), ("x", "1")])).len(), 3);
        let mut numeric = params(&[("resolution", "1DAY")]);
        numeric.insert("limit".into(), ProxyParam::Number(10.0));
        assert!(candles.check_params(&numeric).is_empty());
        assert_eq!(
            IndexerEndpoint::query(&numeric),
            vec![("limit".into(), "10".into()), ("resolution".into(), "1DAY".into())]
        );
    }
}
