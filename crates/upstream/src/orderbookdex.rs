//! The order-book exchange's public indexer (v4): the market list, normalised and cached, and
//! a read-only proxy to four public paths. Every path is rebuilt from a parsed
//! [`IndexerEndpoint`], never taken from the client's text, so no request can leave for
//! another host or another path.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use svc_catalogue::routes::infra::{
    IndexerEndpoint, OrderbookCandle, OrderbookFunding, OrderbookLevel, OrderbookMarket, OrderbookMarketsResponse,
    OrderbookProxyData, OrderbookProxyResponse, OrderbookTrade, ProxyParam,
};
use svc_domain::Clock;

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// Market parameters change rarely and prices are a snapshot anyway: refreshed every minute.
const MARKETS_TTL: Duration = Duration::from_secs(60);
/// Books and trades move by the second.
const LIVE_TTL: Duration = Duration::from_secs(2);
/// Candles and funding close at most once a minute.
const HISTORY_TTL: Duration = Duration::from_secs(15);

/// The indexer adapter.
#[derive(Debug)]
pub struct Orderbookdex {
    client: VendorClient,
    markets: TtlCache<OrderbookMarketsResponse>,
    proxied: TtlCache<OrderbookProxyData>,
}

/// `GET /v4/perpetualMarkets` as the indexer sends it.
#[derive(Debug, Deserialize)]
pub struct WireMarkets {
    /// Markets by ticker.
    pub markets: BTreeMap<String, WireMarket>,
}

/// One market; numbers are decimal strings. Fields svc does not use are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireMarket {
    /// Ticker.
    pub ticker: String,
    /// `ACTIVE`, `PAUSED`, `CANCEL_ONLY`, `POST_ONLY`, `INITIALIZING`, `FINAL_SETTLEMENT`.
    pub status: String,
    /// Oracle price.
    pub oracle_price: Option<String>,
    /// 24 h price change.
    #[serde(rename = "priceChange24H")]
    pub price_change_24h: Option<String>,
    /// 24 h volume, USD.
    #[serde(rename = "volume24H")]
    pub volume_24h: Option<String>,
    /// Next funding rate.
    pub next_funding_rate: Option<String>,
    /// Open interest.
    pub open_interest: Option<String>,
    /// Price increment.
    pub tick_size: Option<String>,
    /// Size increment.
    pub step_size: Option<String>,
    /// Initial margin fraction.
    pub initial_margin_fraction: Option<String>,
    /// Maintenance margin fraction.
    pub maintenance_margin_fraction: Option<String>,
}

/// A decimal string as a number; absent or unreadable is 0 (a market that has not traded).
fn number(value: Option<&String>) -> f64 {
    value.and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite()).unwrap_or(0.0)
}

impl From<WireMarket> for OrderbookMarket {
    fn from(m: WireMarket) -> Self {
        OrderbookMarket {
            oracle_price: number(m.oracle_price.as_ref()),
            price_change_24h: number(m.price_change_24h.as_ref()),
            volume_24h: number(m.volume_24h.as_ref()),
            open_interest: number(m.open_interest.as_ref()),
            next_funding_rate: number(m.next_funding_rate.as_ref()),
            tick_size: number(m.tick_size.as_ref()),
            step_size: number(m.step_size.as_ref()),
            initial_margin_fraction: number(m.initial_margin_fraction.as_ref()),
            maintenance_margin_fraction: number(m.maintenance_margin_fraction.as_ref()),
            ticker: m.ticker,
            status: m.status,
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireBook {
    bids: Vec<OrderbookLevel>,
    asks: Vec<OrderbookLevel>,
}

#[derive(Debug, Deserialize)]
struct WireCandles {
    candles: Vec<OrderbookCandle>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFunding {
    historical_funding: Vec<OrderbookFunding>,
}

#[derive(Debug, Deserialize)]
struct WireTrades {
    trades: Vec<OrderbookTrade>,
}

impl Orderbookdex {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let client = VendorClient::new(Vendor::Orderbookdex, config, headers)?;
        Ok(Orderbookdex {
            client,
            markets: TtlCache::new(Vendor::Orderbookdex.family(), clock.clone(), 2),
            proxied: TtlCache::new(Vendor::Orderbookdex.family(), clock, 4096),
        })
    }

    /// Every perpetual market, by ticker order.
    pub async fn markets(&self) -> Result<OrderbookMarketsResponse, UpstreamError> {
        self.markets
            .get_or_fetch("markets".into(), MARKETS_TTL, || async {
                let wire: WireMarkets = self.client.get_json("/v4/perpetualMarkets", &[]).await?;
                Ok(OrderbookMarketsResponse { markets: wire.markets.into_values().map(Into::into).collect() })
            })
            .await
    }

    /// A read of one public path. `endpoint` and `params` were checked by the catalogue; they
    /// are parsed again here so this adapter cannot be led elsewhere by any caller.
    pub async fn proxy(
        &self,
        endpoint: &str,
        params: &BTreeMap<String, ProxyParam>,
    ) -> Result<OrderbookProxyResponse, ProxyError> {
        let parsed = IndexerEndpoint::parse(endpoint).ok_or(ProxyError::Refused)?;
        if !parsed.check_params(params).is_empty() {
            return Err(ProxyError::Refused);
        }
        let path = parsed.path();
        let query = IndexerEndpoint::query(params);
        let key = format!("{path}?{query:?}");
        let ttl = match parsed {
            IndexerEndpoint::Orderbook(_) | IndexerEndpoint::Trades(_) => LIVE_TTL,
            IndexerEndpoint::Candles(_) | IndexerEndpoint::Funding(_) => HISTORY_TTL,
        };
        let data = self
            .proxied
            .get_or_fetch(key, ttl, || async {
                let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let bytes = match self.client.call(http::Method::GET, &path, &pairs).await {
                    Err(UpstreamError::Status { status: 404, vendor }) => {
                        return Err(UpstreamError::NotFound { vendor, what: "market", id: parsed.ticker().to_owned() });
                    }
                    other => other?,
                };
                Ok(match parsed {
                    IndexerEndpoint::Orderbook(_) => {
                        let book: WireBook = self.client.decode(&bytes)?;
                        OrderbookProxyData::Orderbook { bids: book.bids, asks: book.asks }
                    }
                    IndexerEndpoint::Candles(_) => {
                        OrderbookProxyData::Candles { candles: self.client.decode::<WireCandles>(&bytes)?.candles }
                    }
                    IndexerEndpoint::Funding(_) => OrderbookProxyData::Funding {
                        historical_funding: self.client.decode::<WireFunding>(&bytes)?.historical_funding,
                    },
                    IndexerEndpoint::Trades(_) => {
                        OrderbookProxyData::Trades { trades: self.client.decode::<WireTrades>(&bytes)?.trades }
                    }
                })
            })
            .await?;
        Ok(OrderbookProxyResponse { endpoint: path, status: 200, data })
    }
}

/// Why a proxy call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The path or parameters are not on the allow-list (422; the catalogue refuses these
    /// first, so this is the second line of defence).
    #[error("endpoint or parameters are not an allowed public indexer read")]
    Refused,
    /// The vendor failed.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}
