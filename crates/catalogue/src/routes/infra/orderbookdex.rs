//! The order-book derivatives exchange: its markets, and read-only access to the public
//! indexer paths (each path and its parameters checked before anything is forwarded).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::infra;
use crate::routes::common::NoInput;
use crate::{FieldError, InputSource, Loc, RouteInput, RouteSpec, ids};

/// The orderbookdex routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![
        infra(RouteSpec::post::<NoInput, OrderbookMarketsResponse>(ids::infra::ORDERBOOKDEX_MARKETS, tools!("/orderbookdex/markets"),
            "Perpetual markets of the order-book exchange: prices, 24 h change and volume, open interest, funding, tick and step sizes.")
            .source(InputSource::OptionalBody), "orderbookdex"),
        infra(RouteSpec::post::<OrderbookProxyRequest, OrderbookProxyResponse>(ids::infra::ORDERBOOKDEX_PROXY, tools!("/orderbookdex/proxy"),
            "Read-only access to public indexer paths of the order-book exchange (order books, candles, funding, trades)."), "orderbookdex"),
    ]
}

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
