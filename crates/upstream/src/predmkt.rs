//! The prediction market: its catalogue API (search, markets, events, displayed prices) and
//! its order-book API (books, best prices, midpoints), joined into the five `predmkt` routes.
//!
//! Neither API wants a key. The catalogue encodes `outcomes`, `outcomePrices` and
//! `clobTokenIds` as JSON arrays inside strings; they are decoded in a second pass. Books
//! come with decimal strings and in no order to rely on, so levels are sorted here.
//! Prices are summed in 1/10000 of the payout (the finest tick the venue uses), so an edge
//! of exactly the threshold is not lost to float rounding.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::routes::predmkt::{
    PredmktArbitrageKind, PredmktArbitrageResponse, PredmktCompareResponse, PredmktComparison, PredmktLeg,
    PredmktLevel, PredmktMarket, PredmktOpportunity, PredmktOrderbookResponse, PredmktOutcome, PredmktQuoteResponse,
    PredmktSearchResponse,
};
use svc_domain::{Clock, rfc3339};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// Search results change as markets open and volumes grow; half a minute is fresh enough to
/// choose a market.
const SEARCH_TTL: Duration = Duration::from_secs(30);
/// A market's outcomes and token ids never change once it is listed.
const MARKET_TTL: Duration = Duration::from_secs(300);
/// Books and best prices move with every order; two seconds absorbs bursts of the same ask.
const BOOK_TTL: Duration = Duration::from_secs(2);
/// The displayed price against the book: a few seconds, like the book.
const COMPARE_TTL: Duration = Duration::from_secs(5);
/// The arbitrage scan reads every open event and every book; ten seconds bounds its cost
/// while edges (which last minutes when they exist) are still seen.
const SCAN_TTL: Duration = Duration::from_secs(10);
/// Events read per search page, and pages read at most per search.
const SEARCH_PAGE: usize = 50;
const SEARCH_PAGES: usize = 4;
/// Open events examined by the arbitrage scan, by volume.
const SCAN_EVENTS: usize = 100;
/// Tokens per batched book request.
const BOOKS_BATCH: usize = 100;
/// Price units per payout: 1/10000, the venue's finest tick.
const UNITS: f64 = 10_000.0;

/// The prediction-market adapter.
#[derive(Debug)]
pub struct Predmkt {
    gamma: VendorClient,
    clob: VendorClient,
    searches: TtlCache<PredmktSearchResponse>,
    markets: TtlCache<ClobMarket>,
    books: TtlCache<Book>,
    quotes: TtlCache<PredmktQuoteResponse>,
    compares: TtlCache<PredmktCompareResponse>,
    scans: TtlCache<Arc<Scan>>,
    clock: Arc<dyn Clock>,
}

/// Reads a list that the catalogue may send as a JSON array or as a JSON array encoded in a
/// string, of strings or numbers, as strings. Absent or null is empty.
fn stringified_list<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<String>, D::Error> {
    let value = Option::<Value>::deserialize(de)?;
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(text)) => serde_json::from_str::<Vec<Value>>(&text).map_err(serde::de::Error::custom)?,
        Some(Value::Array(items)) => items,
        Some(other) => return Err(serde::de::Error::custom(format!("expected a list, got {other}"))),
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            Value::Number(n) => Ok(n.to_string()),
            other => Err(serde::de::Error::custom(format!("expected a string or number, got {other}"))),
        })
        .collect()
}

/// Reads a number the vendor may send as a number or a decimal string; absent, null or
/// empty is `None`.
fn lenient_number<'de, D: Deserializer<'de>>(de: D) -> Result<Option<f64>, D::Error> {
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s.trim().parse().map(Some).map_err(serde::de::Error::custom),
        Some(other) => Err(serde::de::Error::custom(format!("expected a number, got {other}"))),
    }
}

/// Reads an id the vendor may send as a string or a number.
fn lenient_id<'de, D: Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    match Value::deserialize(de)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!("expected an id, got {other}"))),
    }
}

/// A market as the catalogue API sends it (camelCase). Lenient: unused fields are ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireGammaMarket {
    /// Catalogue id.
    #[serde(deserialize_with = "lenient_id")]
    pub id: String,
    /// The question.
    pub question: String,
    /// Condition id.
    pub condition_id: String,
    /// URL slug.
    #[serde(default)]
    pub slug: String,
    /// Resolution date (RFC 3339).
    #[serde(default)]
    pub end_date: Option<String>,
    /// Outcome names (a JSON array in a string).
    #[serde(default, deserialize_with = "stringified_list")]
    pub outcomes: Vec<String>,
    /// Displayed prices, index-aligned with `outcomes` (a JSON array in a string).
    #[serde(default, deserialize_with = "stringified_list")]
    pub outcome_prices: Vec<String>,
    /// Order-book token ids, index-aligned with `outcomes` (a JSON array in a string).
    #[serde(default, deserialize_with = "stringified_list")]
    pub clob_token_ids: Vec<String>,
    /// Volume, USD, as a number.
    #[serde(default, deserialize_with = "lenient_number")]
    pub volume_num: Option<f64>,
    /// Volume, USD, as a decimal string.
    #[serde(default, deserialize_with = "lenient_number")]
    pub volume: Option<f64>,
    /// Liquidity, USD, as a number.
    #[serde(default, deserialize_with = "lenient_number")]
    pub liquidity_num: Option<f64>,
    /// Liquidity, USD, as a decimal string.
    #[serde(default, deserialize_with = "lenient_number")]
    pub liquidity: Option<f64>,
    /// Open for trading.
    #[serde(default)]
    pub active: bool,
    /// Resolved or closed.
    #[serde(default)]
    pub closed: bool,
}

impl WireGammaMarket {
    /// The outcomes with their displayed prices and tokens; outcomes missing a price or a
    /// token are dropped rather than guessed.
    fn outcomes(&self) -> Vec<PredmktOutcome> {
        self.outcomes
            .iter()
            .zip(&self.outcome_prices)
            .zip(&self.clob_token_ids)
            .filter_map(|((name, price), token)| {
                Some(PredmktOutcome { name: name.clone(), price: price.trim().parse().ok()?, token_id: token.clone() })
            })
            .collect()
    }
}

impl From<WireGammaMarket> for PredmktMarket {
    fn from(m: WireGammaMarket) -> Self {
        PredmktMarket {
            outcomes: m.outcomes(),
            condition_id: m.condition_id,
            question: m.question,
            slug: m.slug,
            volume_usd: m.volume_num.or(m.volume).unwrap_or(0.0),
            liquidity_usd: m.liquidity_num.or(m.liquidity).unwrap_or(0.0),
            end_date: m.end_date.filter(|d| !d.is_empty()).map(Timestamp),
            active: m.active,
            closed: m.closed,
        }
    }
}

/// An event as the catalogue API sends it, with its markets embedded.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireGammaEvent {
    /// Catalogue id.
    #[serde(deserialize_with = "lenient_id")]
    pub id: String,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Exactly one of its markets resolves YES.
    #[serde(default)]
    pub neg_risk: Option<bool>,
    /// Its markets.
    #[serde(default)]
    pub markets: Vec<WireGammaMarket>,
}

/// The search answer of the catalogue API.
#[derive(Debug, Deserialize)]
pub struct WireSearch {
    /// Matching events.
    #[serde(default)]
    pub events: Vec<WireGammaEvent>,
    /// Paging.
    #[serde(default)]
    pub pagination: Option<WireSearchPagination>,
}

/// Paging of a search answer.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireSearchPagination {
    /// More pages follow.
    #[serde(default)]
    pub has_more: bool,
    /// Matching events in total.
    #[serde(default)]
    pub total_results: u64,
}

/// A market as the order-book API sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct WireClobMarket {
    /// Condition id.
    pub condition_id: String,
    /// The question.
    #[serde(default)]
    pub question: String,
    /// Smallest order, shares.
    #[serde(default, deserialize_with = "lenient_number")]
    pub minimum_order_size: Option<f64>,
    /// Price increment.
    #[serde(default, deserialize_with = "lenient_number")]
    pub minimum_tick_size: Option<f64>,
    /// The outcome tokens.
    #[serde(default)]
    pub tokens: Vec<WireClobToken>,
}

/// An outcome token of an order-book market.
#[derive(Debug, Clone, Deserialize)]
pub struct WireClobToken {
    /// Token id.
    pub token_id: String,
    /// Outcome name.
    pub outcome: String,
}

/// An order book as the order-book API sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct WireBook {
    /// Condition id.
    #[serde(default)]
    pub market: String,
    /// Token id.
    pub asset_id: String,
    /// When it was read, unix ms as a string.
    #[serde(default, deserialize_with = "lenient_number")]
    pub timestamp: Option<f64>,
    /// Bids, in no guaranteed order.
    #[serde(default)]
    pub bids: Vec<WireLevel>,
    /// Asks, in no guaranteed order.
    #[serde(default)]
    pub asks: Vec<WireLevel>,
    /// Smallest order, shares.
    #[serde(default, deserialize_with = "lenient_number")]
    pub min_order_size: Option<f64>,
    /// Price increment.
    #[serde(default, deserialize_with = "lenient_number")]
    pub tick_size: Option<f64>,
}

/// One level of a book, decimal strings.
#[derive(Debug, Clone, Deserialize)]
pub struct WireLevel {
    /// Price, 0–1.
    #[serde(deserialize_with = "lenient_number")]
    pub price: Option<f64>,
    /// Shares.
    #[serde(deserialize_with = "lenient_number")]
    pub size: Option<f64>,
}

/// A best price (`/price`).
#[derive(Debug, Deserialize)]
struct WirePrice {
    #[serde(deserialize_with = "lenient_number")]
    price: Option<f64>,
}

/// A midpoint (`/midpoint`).
#[derive(Debug, Deserialize)]
struct WireMidpoint {
    #[serde(deserialize_with = "lenient_number")]
    mid: Option<f64>,
}

/// A market's outcomes and book rules, from the order-book API.
#[derive(Debug, Clone)]
pub struct ClobMarket {
    /// Condition id.
    pub condition_id: String,
    /// The question.
    pub question: String,
    /// `(outcome, token id)`, in the market's order.
    pub tokens: Vec<(String, String)>,
    /// Price increment.
    pub tick_size: Option<f64>,
    /// Smallest order.
    pub min_order_size: Option<f64>,
}

impl From<WireClobMarket> for ClobMarket {
    fn from(m: WireClobMarket) -> Self {
        ClobMarket {
            condition_id: m.condition_id,
            question: m.question,
            tokens: m.tokens.into_iter().map(|t| (t.outcome, t.token_id)).collect(),
            tick_size: m.minimum_tick_size,
            min_order_size: m.minimum_order_size,
        }
    }
}

/// A book with its levels sorted best first.
#[derive(Debug, Clone)]
pub struct Book {
    /// Token id.
    pub token_id: String,
    /// Bids, highest first.
    pub bids: Vec<PredmktLevel>,
    /// Asks, lowest first.
    pub asks: Vec<PredmktLevel>,
    /// Price increment.
    pub tick_size: Option<f64>,
    /// Smallest order.
    pub min_order_size: Option<f64>,
    /// When it was read, unix ms.
    pub timestamp_ms: Option<i64>,
}

impl From<WireBook> for Book {
    fn from(b: WireBook) -> Self {
        let levels = |levels: Vec<WireLevel>| -> Vec<PredmktLevel> {
            levels
                .into_iter()
                .filter_map(|l| Some(PredmktLevel { price: l.price?, size: l.size? }))
                .filter(|l| l.size > 0.0)
                .collect()
        };
        let mut bids = levels(b.bids);
        let mut asks = levels(b.asks);
        bids.sort_by(|x, y| y.price.total_cmp(&x.price));
        asks.sort_by(|x, y| x.price.total_cmp(&y.price));
        Book {
            token_id: b.asset_id,
            bids,
            asks,
            tick_size: b.tick_size,
            min_order_size: b.min_order_size,
            timestamp_ms: b.timestamp.map(|t| t as i64),
        }
    }
}

impl Book {
    fn best_bid(&self) -> Option<f64> {
        self.bids.first().map(|l| l.price)
    }

    fn best_ask(&self) -> Option<f64> {
        self.asks.first().map(|l| l.price)
    }
}

/// Rounds a price to the venue's finest tick, so differences of two prices read cleanly.
fn tidy(price: f64) -> f64 {
    (price * UNITS).round() / UNITS
}

/// A price in 1/10000 of the payout.
fn units(price: f64) -> i64 {
    (price * UNITS).round() as i64
}

/// Every open event with its markets and the best ask of every token, as last scanned.
#[derive(Debug)]
struct Scan {
    events: Vec<WireGammaEvent>,
    best_asks: BTreeMap<String, f64>,
}

impl Predmkt {
    pub(crate) fn new(gamma: &VendorConfig, clob: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let family = Vendor::PredmktGamma.family();
        Ok(Predmkt {
            gamma: VendorClient::new(Vendor::PredmktGamma, gamma, headers.clone())?,
            clob: VendorClient::new(Vendor::PredmktClob, clob, headers)?,
            searches: TtlCache::new(family, clock.clone(), 1024),
            markets: TtlCache::new(family, clock.clone(), 4096),
            books: TtlCache::new(family, clock.clone(), 4096),
            quotes: TtlCache::new(family, clock.clone(), 4096),
            compares: TtlCache::new(family, clock.clone(), 1024),
            scans: TtlCache::new(family, clock.clone(), 4),
            clock,
        })
    }

    /// Markets of the events matching `keyword`, in the catalogue's order, `offset` and
    /// `limit` applied over markets. Reads up to four pages of 50 events; `total` counts the
    /// matching markets read, plus one per matching event not read (a lower bound then).
    pub async fn search(&self, keyword: &str, limit: u32, offset: u32) -> Result<PredmktSearchResponse, UpstreamError> {
        let keyword = keyword.trim();
        if keyword.is_empty() {
            return Ok(PredmktSearchResponse { markets: Vec::new(), total: 0 });
        }
        let key = format!("{}|{limit}|{offset}", keyword.to_lowercase());
        self.searches
            .get_or_fetch(key, SEARCH_TTL, || async {
                let wanted = offset as usize + limit as usize;
                let mut markets: Vec<PredmktMarket> = Vec::new();
                let mut events_read = 0u64;
                let mut unread_events = 0u64;
                for page in 1..=SEARCH_PAGES {
                    let page = page.to_string();
                    let per_page = SEARCH_PAGE.to_string();
                    let query = [("q", keyword), ("limit_per_type", per_page.as_str()), ("page", page.as_str())];
                    let answer: WireSearch = self.gamma.get_json("/public-search", &query).await?;
                    events_read += answer.events.len() as u64;
                    let got_none = answer.events.is_empty();
                    markets.extend(answer.events.into_iter().flat_map(|e| e.markets).map(PredmktMarket::from));
                    let (more, total) = answer.pagination.map_or((false, 0), |p| (p.has_more, p.total_results));
                    unread_events = total.saturating_sub(events_read);
                    if !more || got_none || markets.len() >= wanted {
                        break;
                    }
                }
                let total = markets.len() as u64 + unread_events;
                let markets = markets.into_iter().skip(offset as usize).take(limit as usize).collect();
                Ok(PredmktSearchResponse { markets, total })
            })
            .await
    }

    /// A market's outcomes and token ids, from the order-book API.
    pub async fn market(&self, condition_id: &str) -> Result<ClobMarket, UpstreamError> {
        let condition_id = condition_id.to_lowercase();
        self.markets
            .get_or_fetch(condition_id.clone(), MARKET_TTL, || async {
                // The id was validated as 0x and 64 hex digits, so it stays in its segment.
                match self.clob.get_json::<WireClobMarket>(&format!("/markets/{condition_id}"), &[]).await {
                    Ok(market) if !market.tokens.is_empty() => Ok(market.into()),
                    Ok(_) | Err(UpstreamError::Status { status: 404, .. }) => Err(UpstreamError::NotFound {
                        vendor: Vendor::PredmktClob,
                        what: "market with condition id",
                        id: condition_id.clone(),
                    }),
                    Err(err) => Err(err),
                }
            })
            .await
    }

    /// The outcome of `market` named `outcome` (case-insensitive) and its token id.
    pub async fn outcome(&self, condition_id: &str, outcome: &str) -> Result<(String, String), UpstreamError> {
        let market = self.market(condition_id).await?;
        let found = market.tokens.iter().find(|(name, _)| name.eq_ignore_ascii_case(outcome.trim()));
        found.cloned().ok_or_else(|| {
            let names: Vec<&str> = market.tokens.iter().map(|(name, _)| name.as_str()).collect();
            UpstreamError::NotFound {
                vendor: Vendor::PredmktClob,
                what: "outcome",
                id: format!("{outcome:?} in market {} (its outcomes: {})", market.condition_id, names.join(", ")),
            }
        })
    }

    /// Best buy and sell prices and the midpoint of one outcome. The venue's `/price` with
    /// `side=SELL` is the best ask (what a buyer pays), `side=BUY` the best bid.
    pub async fn quote(&self, condition_id: &str, outcome: &str) -> Result<PredmktQuoteResponse, UpstreamError> {
        let (name, token) = self.outcome(condition_id, outcome).await?;
        let condition_id = condition_id.to_lowercase();
        self.quotes
            .get_or_fetch(token.clone(), BOOK_TTL, || async {
                let price = |side: &'static str| {
                    let token = token.clone();
                    async move {
                        let query = [("token_id", token.as_str()), ("side", side)];
                        absent_if_no_book(self.clob.get_json::<WirePrice>("/price", &query).await)
                            .map(|p| p.and_then(|p| p.price))
                    }
                };
                let mid = async {
                    let query = [("token_id", token.as_str())];
                    absent_if_no_book(self.clob.get_json::<WireMidpoint>("/midpoint", &query).await)
                        .map(|m| m.and_then(|m| m.mid))
                };
                let (ask, bid, mid) = tokio::join!(price("SELL"), price("BUY"), mid);
                let (ask, bid, mid) = (ask?, bid?, mid?);
                Ok(PredmktQuoteResponse {
                    condition_id: condition_id.clone(),
                    outcome: name.clone(),
                    token_id: token.clone(),
                    buy_price: ask,
                    sell_price: bid,
                    midpoint: mid,
                    spread: ask.zip(bid).map(|(a, b)| tidy(a - b)),
                })
            })
            .await
    }

    /// The book of one outcome, best levels first.
    pub async fn orderbook(
        &self,
        condition_id: &str,
        outcome: &str,
    ) -> Result<PredmktOrderbookResponse, UpstreamError> {
        let market = self.market(condition_id).await?;
        let (name, token) = self.outcome(condition_id, outcome).await?;
        let book = self
            .books
            .get_or_fetch(token.clone(), BOOK_TTL, || async {
                match self.clob.get_json::<WireBook>("/book", &[("token_id", token.as_str())]).await {
                    Ok(book) => Ok(Book::from(book)),
                    // A listed outcome without a book has no orders yet.
                    Err(UpstreamError::Status { status: 404, .. }) => Ok(Book {
                        token_id: token.clone(),
                        bids: Vec::new(),
                        asks: Vec::new(),
                        tick_size: None,
                        min_order_size: None,
                        timestamp_ms: None,
                    }),
                    Err(err) => Err(err),
                }
            })
            .await?;
        Ok(PredmktOrderbookResponse {
            condition_id: market.condition_id.clone(),
            outcome: name,
            token_id: token,
            bids: book.bids,
            asks: book.asks,
            tick_size: book.tick_size.or(market.tick_size).unwrap_or(0.01),
            min_order_size: book.min_order_size.or(market.min_order_size).unwrap_or(0.0),
            timestamp: Timestamp(rfc3339(book.timestamp_ms.unwrap_or_else(|| self.clock.now_ms()))),
        })
    }

    /// Each outcome's displayed price against its book.
    pub async fn compare(&self, condition_id: &str) -> Result<PredmktCompareResponse, UpstreamError> {
        let condition_id = condition_id.to_lowercase();
        self.compares
            .get_or_fetch(condition_id.clone(), COMPARE_TTL, || async {
                let query = [("condition_ids", condition_id.as_str())];
                let found: Vec<WireGammaMarket> = self.gamma.get_json("/markets", &query).await?;
                let market = found
                    .into_iter()
                    .find(|m| m.condition_id.eq_ignore_ascii_case(&condition_id))
                    .ok_or_else(|| UpstreamError::NotFound {
                        vendor: Vendor::PredmktGamma,
                        what: "market with condition id",
                        id: condition_id.clone(),
                    })?;
                let outcomes = market.outcomes();
                let tokens: Vec<String> = outcomes.iter().map(|o| o.token_id.clone()).collect();
                let books = self.books_of(&tokens).await?;
                let outcomes = outcomes
                    .into_iter()
                    .map(|o| {
                        let book = books.iter().find(|b| b.token_id == o.token_id);
                        let bid = book.and_then(Book::best_bid);
                        let ask = book.and_then(Book::best_ask);
                        let mid = bid.zip(ask).map(|(b, a)| tidy((b + a) / 2.0));
                        PredmktComparison {
                            divergence: mid.map(|m| tidy(o.price - m)),
                            spread: bid.zip(ask).map(|(b, a)| tidy(a - b)),
                            name: o.name,
                            token_id: o.token_id,
                            gamma_price: o.price,
                            clob_bid: bid,
                            clob_ask: ask,
                            clob_mid: mid,
                        }
                    })
                    .collect();
                Ok(PredmktCompareResponse { condition_id: market.condition_id, question: market.question, outcomes })
            })
            .await
    }

    /// Books of `tokens`, batched; tokens without a book are absent from the answer.
    async fn books_of(&self, tokens: &[String]) -> Result<Vec<Book>, UpstreamError> {
        let mut books = Vec::with_capacity(tokens.len());
        for chunk in tokens.chunks(BOOKS_BATCH) {
            let body: Vec<serde_json::Value> = chunk.iter().map(|t| serde_json::json!({"token_id": t})).collect();
            let answer: Vec<WireBook> = self.clob.post_json("/books", &body).await?;
            books.extend(answer.into_iter().map(Book::from));
        }
        Ok(books)
    }

    /// Sets of outcomes that can be bought for less than the payout: YES and NO of one
    /// binary market, or YES of every market of a multi-outcome event, whose best asks sum
    /// to at most `1 - min_spread/100`. Largest edge first, at most `limit`.
    pub async fn arbitrage(&self, min_spread: f64, limit: u32) -> Result<PredmktArbitrageResponse, UpstreamError> {
        let scan = self.scan().await?;
        let mut found: Vec<PredmktOpportunity> = Vec::new();
        let ask = |token: &str| scan.best_asks.get(token).copied();
        let mut scanned = 0u32;
        for event in &scan.events {
            let open: Vec<&WireGammaMarket> = event.markets.iter().filter(|m| m.active && !m.closed).collect();
            scanned += open.len() as u32;
            for market in &open {
                let outcomes = market.outcomes();
                if outcomes.len() != 2 {
                    continue;
                }
                let legs: Option<Vec<PredmktLeg>> = outcomes
                    .iter()
                    .map(|o| {
                        Some(PredmktLeg {
                            outcome: o.name.clone(),
                            token_id: o.token_id.clone(),
                            best_ask: ask(&o.token_id)?,
                        })
                    })
                    .collect();
                if let Some(legs) = legs {
                    found.extend(opportunity(
                        PredmktArbitrageKind::Binary,
                        &market.condition_id,
                        &market.question,
                        legs,
                    ));
                }
            }
            // Outcomes of a multi-outcome event are exclusive only when the venue says so,
            // and the set is complete only if every market of the event is open.
            if event.neg_risk == Some(true) && open.len() >= 2 && open.len() == event.markets.len() {
                let legs: Option<Vec<PredmktLeg>> = open
                    .iter()
                    .map(|m| {
                        let yes = m.outcomes().into_iter().find(|o| o.name.eq_ignore_ascii_case("yes"))?;
                        Some(PredmktLeg {
                            outcome: m.question.clone(),
                            best_ask: ask(&yes.token_id)?,
                            token_id: yes.token_id,
                        })
                    })
                    .collect();
                if let Some(legs) = legs {
                    found.extend(opportunity(PredmktArbitrageKind::MultiOutcome, &event.id, &event.title, legs));
                }
            }
        }
        let threshold = (min_spread * 100.0).round() as i64;
        found.retain(|o| units(o.expected_profit_per_unit) >= threshold.max(1));
        found.sort_by(|a, b| b.spread_pct.total_cmp(&a.spread_pct).then_with(|| a.id.cmp(&b.id)));
        found.truncate(limit as usize);
        Ok(PredmktArbitrageResponse { opportunities: found, min_spread, scanned_markets: scanned })
    }

    /// Every open event by volume and the best ask of each of its tokens.
    async fn scan(&self) -> Result<Arc<Scan>, UpstreamError> {
        self.scans
            .get_or_fetch("open".to_owned(), SCAN_TTL, || async {
                let limit = SCAN_EVENTS.to_string();
                let query = [
                    ("active", "true"),
                    ("closed", "false"),
                    ("limit", limit.as_str()),
                    ("order", "volume"),
                    ("ascending", "false"),
                ];
                let events: Vec<WireGammaEvent> = self.gamma.get_json("/events", &query).await?;
                let tokens: Vec<String> = events
                    .iter()
                    .flat_map(|e| &e.markets)
                    .filter(|m| m.active && !m.closed)
                    .flat_map(|m| m.clob_token_ids.iter().cloned())
                    .collect();
                let books = self.books_of(&tokens).await?;
                let best_asks =
                    books.iter().filter_map(|b| Some((b.token_id.clone(), b.best_ask()?))).collect::<BTreeMap<_, _>>();
                Ok(Arc::new(Scan { events, best_asks }))
            })
            .await
    }
}

/// The opportunity of buying every leg, if their asks sum to less than the payout.
fn opportunity(
    kind: PredmktArbitrageKind,
    id: &str,
    question: &str,
    legs: Vec<PredmktLeg>,
) -> Option<PredmktOpportunity> {
    let cost: i64 = legs.iter().map(|l| units(l.best_ask)).sum();
    let edge = units(1.0) - cost;
    (edge > 0).then(|| PredmktOpportunity {
        kind,
        id: id.to_owned(),
        question: question.to_owned(),
        legs,
        total_cost: cost as f64 / UNITS,
        spread_pct: edge as f64 / 100.0,
        expected_profit_per_unit: edge as f64 / UNITS,
    })
}

/// A best price or midpoint of a token whose book is empty is absent, not an error.
fn absent_if_no_book<T>(result: Result<T, UpstreamError>) -> Result<Option<T>, UpstreamError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(UpstreamError::Status { status: 404, .. }) => Ok(None),
        Err(err) => Err(err),
    }
}
