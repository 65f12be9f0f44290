//! Solana swap quotes from two aggregators asked at once: the first aggregator's keyless
//! `GET /swap/v1/quote`, and the second's signed `GET /api/v6/dex/aggregator/quote`. The
//! preferred one's quote is returned when it answers in time, else the best output; both
//! answers are reported.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use http::Method;
use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::Value;
use sha2::Sha256;
use svc_catalogue::routes::infra::{
    Aggregator, SwapAggregatorQuote, SwapQuoteRequest, SwapQuoteResponse, SwapQuoteStatus,
};
use svc_domain::{Clock, rfc3339};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig, units};

/// Quotes go stale with every block; a few seconds absorbs an agent's retry storm only.
const QUOTE_TTL: Duration = Duration::from_secs(3);

/// How long the fan-out waits for each aggregator before reporting it as too slow.
const FAN_OUT_WAIT: Duration = Duration::from_millis(1500);

/// The second aggregator's chain index for Solana.
const OKX_SOLANA: &str = "501";

/// The first aggregator's quote. Amounts are decimal strings; unknown fields are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JupiterQuote {
    /// Mint sold.
    pub input_mint: String,
    /// Amount sold, smallest units.
    pub in_amount: String,
    /// Mint bought.
    pub output_mint: String,
    /// Amount bought, smallest units.
    pub out_amount: String,
    /// Least bought after slippage.
    pub other_amount_threshold: String,
    /// Slippage applied.
    #[serde(default)]
    pub slippage_bps: u32,
    /// Price impact as a fraction, as a decimal string.
    #[serde(default)]
    pub price_impact_pct: Option<String>,
    /// The hops.
    #[serde(default)]
    pub route_plan: Vec<JupiterHop>,
}

/// One hop of the first aggregator's route.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JupiterHop {
    /// The hop's venue.
    pub swap_info: JupiterSwapInfo,
}

/// A hop's venue.
#[derive(Debug, Deserialize)]
pub struct JupiterSwapInfo {
    /// Venue name.
    #[serde(default)]
    pub label: Option<String>,
}

/// The first aggregator's error body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JupiterError {
    #[serde(default)]
    error_code: Option<String>,
}

/// The second aggregator's envelope: `code` "0" is success, anything else an error.
#[derive(Debug, Deserialize)]
pub struct OkxEnvelope<T> {
    /// "0" on success.
    pub code: String,
    /// Error message.
    #[serde(default)]
    pub msg: String,
    /// Results.
    #[serde(default = "Vec::new")]
    pub data: Vec<T>,
}

/// The second aggregator's quote.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OkxQuote {
    /// Amount sold, smallest units.
    pub from_token_amount: String,
    /// Amount bought, smallest units.
    pub to_token_amount: String,
    /// Price impact in percent (negative when the price moves against the trade).
    #[serde(default, alias = "priceImpactPercentage")]
    pub price_impact_percent: Option<String>,
    /// Route legs; their shape differs between API versions, so venue names are searched
    /// for wherever they sit.
    #[serde(default)]
    pub dex_router_list: Vec<Value>,
}

/// The fan-out adapter over both aggregators.
#[derive(Debug)]
pub struct SolanaSwap {
    jupiter: VendorClient,
    okx: VendorClient,
    okx_credential: Option<OkxCredential>,
    clock: Arc<dyn Clock>,
    cache: TtlCache<SwapQuoteResponse>,
}

/// The second aggregator's key, secret and passphrase.
struct OkxCredential {
    key: HeaderValue,
    secret: Vec<u8>,
    passphrase: HeaderValue,
}

impl std::fmt::Debug for OkxCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OkxCredential(<redacted>)")
    }
}

impl OkxCredential {
    /// Parses `key:secret:passphrase`.
    fn parse(text: &str) -> Result<Self, UpstreamError> {
        let misconfigured = |cause: &str| UpstreamError::Config { vendor: Vendor::Okx, cause: cause.to_owned() };
        let mut parts = text.splitn(3, ':');
        let (Some(key), Some(secret), Some(passphrase)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(misconfigured("the key must be key:secret:passphrase"));
        };
        let header = |value: &str| {
            let mut header =
                HeaderValue::from_str(value).map_err(|_| misconfigured("key has characters a header cannot carry"))?;
            header.set_sensitive(true);
            Ok::<_, UpstreamError>(header)
        };
        if key.is_empty() || secret.is_empty() || passphrase.is_empty() {
            return Err(misconfigured("the key must be key:secret:passphrase, none empty"));
        }
        Ok(OkxCredential { key: header(key)?, secret: secret.as_bytes().to_vec(), passphrase: header(passphrase)? })
    }

    /// Base64(HMAC-SHA256(secret, timestamp + method + path_and_query)), the vendor's
    /// request signature.
    fn sign(&self, timestamp: &str, method: &Method, path_and_query: &str) -> HeaderValue {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).unwrap_or_else(|_| unreachable!("any key length"));
        mac.update(timestamp.as_bytes());
        mac.update(method.as_str().as_bytes());
        mac.update(path_and_query.as_bytes());
        let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        let mut header = HeaderValue::from_str(&signature).unwrap_or_else(|_| unreachable!("base64 is a valid header"));
        header.set_sensitive(true);
        header
    }
}

/// One aggregator's outcome in the fan-out.
struct Leg {
    aggregator: Aggregator,
    result: Result<SwapQuoteResponse, UpstreamError>,
    timed_out: bool,
    latency_ms: u64,
}

impl SolanaSwap {
    pub(crate) fn new(
        jupiter: &VendorConfig,
        okx: &VendorConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let mut jupiter_headers = headers.clone();
        if let Some(key) = &jupiter.key {
            let mut value = HeaderValue::from_str(key).map_err(|_| UpstreamError::Config {
                vendor: Vendor::Jupiter,
                cause: "key has characters a header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            jupiter_headers.insert("x-api-key", value);
        }
        let okx_credential = okx.key.as_deref().map(OkxCredential::parse).transpose()?;
        Ok(SolanaSwap {
            jupiter: VendorClient::new(Vendor::Jupiter, jupiter, jupiter_headers)?,
            okx: VendorClient::new(Vendor::Okx, okx, headers)?,
            okx_credential,
            cache: TtlCache::new(Vendor::Jupiter.family(), clock.clone(), 4096),
            clock,
        })
    }

    /// Both aggregators' quotes for `request`, merged.
    pub async fn quote(&self, request: &SwapQuoteRequest) -> Result<SwapQuoteResponse, UpstreamError> {
        let key = format!(
            "{}>{}:{}:{}:{:?}",
            request.input_mint.as_str(),
            request.output_mint.as_str(),
            request.amount,
            request.slippage_bps,
            request.preferred_aggregator
        );
        self.cache.get_or_fetch(key, QUOTE_TTL, || self.fan_out(request)).await
    }

    async fn fan_out(&self, request: &SwapQuoteRequest) -> Result<SwapQuoteResponse, UpstreamError> {
        let (jupiter, okx) = tokio::join!(
            timed(Aggregator::Jupiter, Vendor::Jupiter, self.jupiter_quote(request)),
            timed(Aggregator::Okx, Vendor::Okx, self.okx_quote(request)),
        );
        pick(vec![jupiter, okx], request.preferred_aggregator)
    }

    async fn jupiter_quote(&self, request: &SwapQuoteRequest) -> Result<SwapQuoteResponse, UpstreamError> {
        let amount = request.amount.to_string();
        let slippage = request.slippage_bps.to_string();
        let query = [
            ("inputMint", request.input_mint.as_str()),
            ("outputMint", request.output_mint.as_str()),
            ("amount", amount.as_str()),
            ("slippageBps", slippage.as_str()),
            ("swapMode", "ExactIn"),
        ];
        let bytes = match self.jupiter.call(Method::GET, "/swap/v1/quote", &query).await {
            Err(UpstreamError::Status { status: 400, vendor }) => {
                // The vendor says why in its body, which the client does not keep; ask
                // again is pointless, so a 400 means no route between these mints.
                return Err(UpstreamError::NotFound {
                    vendor,
                    what: "swap route for",
                    id: format!("{} -> {}", request.input_mint.as_str(), request.output_mint.as_str()),
                });
            }
            other => other?,
        };
        if let Ok(error) = serde_json::from_slice::<JupiterError>(&bytes)
            && error.error_code.is_some()
        {
            return Err(UpstreamError::Decode { vendor: Vendor::Jupiter, cause: "error body with status 200".into() });
        }
        let quote: JupiterQuote = self.jupiter.decode(&bytes)?;
        Ok(from_jupiter(quote))
    }

    async fn okx_quote(&self, request: &SwapQuoteRequest) -> Result<SwapQuoteResponse, UpstreamError> {
        let Some(credential) = &self.okx_credential else {
            return Err(UpstreamError::Config { vendor: Vendor::Okx, cause: "no key configured".into() });
        };
        let amount = request.amount.to_string();
        let query = [
            ("chainIndex", OKX_SOLANA),
            ("amount", amount.as_str()),
            ("fromTokenAddress", request.input_mint.as_str()),
            ("toTokenAddress", request.output_mint.as_str()),
            ("swapMode", "exactIn"),
        ];
        let path = "/api/v6/dex/aggregator/quote";
        let signed_path = format!("{path}?{}", encode_query(&query));
        let sign = |builder: reqwest::RequestBuilder| {
            // Signed per attempt: the vendor refuses stale timestamps.
            let timestamp = rfc3339(self.clock.now_ms());
            let signature = credential.sign(&timestamp, &Method::GET, &signed_path);
            let timestamp = HeaderValue::from_str(&timestamp).unwrap_or_else(|_| HeaderValue::from_static(""));
            builder
                .header("OK-ACCESS-KEY", credential.key.clone())
                .header("OK-ACCESS-SIGN", signature)
                .header("OK-ACCESS-TIMESTAMP", timestamp)
                .header("OK-ACCESS-PASSPHRASE", credential.passphrase.clone())
        };
        let bytes = self.okx.call_with(Method::GET, path, &query, &sign).await?;
        let envelope: OkxEnvelope<OkxQuote> = self.okx.decode(&bytes)?;
        from_okx(envelope, request)
    }
}

/// The query string exactly as the client will send it, for the signature.
fn encode_query(query: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse("http://signing.invalid/").unwrap_or_else(|_| unreachable!("static URL"));
    url.query_pairs_mut().extend_pairs(query);
    url.query().unwrap_or_default().to_owned()
}

async fn timed(
    aggregator: Aggregator,
    vendor: Vendor,
    call: impl Future<Output = Result<SwapQuoteResponse, UpstreamError>>,
) -> Leg {
    let started = Instant::now();
    let (result, timed_out) = match tokio::time::timeout(FAN_OUT_WAIT, call).await {
        Ok(Err(UpstreamError::Timeout { vendor })) => (Err(UpstreamError::Timeout { vendor }), true),
        Ok(result) => (result, false),
        Err(_) => (Err(UpstreamError::Timeout { vendor }), true),
    };
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Leg { aggregator, result, timed_out, latency_ms }
}

/// The preferred leg's quote when it answered, else the largest output; fails only when
/// no leg answered, with a not-found when any leg said there is no route.
fn pick(legs: Vec<Leg>, preferred: Aggregator) -> Result<SwapQuoteResponse, UpstreamError> {
    let quotes: Vec<SwapAggregatorQuote> = legs
        .iter()
        .map(|leg| SwapAggregatorQuote {
            aggregator: leg.aggregator,
            out_amount: leg.result.as_ref().ok().map(|q| q.out_amount.clone()),
            status: match (&leg.result, leg.timed_out) {
                (Ok(_), _) => SwapQuoteStatus::Ok,
                (Err(_), true) => SwapQuoteStatus::Timeout,
                (Err(_), false) => SwapQuoteStatus::Error,
            },
            latency_ms: leg.latency_ms,
        })
        .collect();
    let amount = |q: &SwapQuoteResponse| q.out_amount.parse::<u128>().unwrap_or(0);
    let mut answered: Vec<SwapQuoteResponse> = Vec::new();
    let mut errors = Vec::new();
    for leg in legs {
        match leg.result {
            Ok(quote) => answered.push(quote),
            Err(err) => errors.push((leg.aggregator, err)),
        }
    }
    let chosen = match answered.iter().position(|q| q.aggregator == preferred) {
        Some(index) => Some(answered.swap_remove(index)),
        None => answered.into_iter().max_by_key(amount),
    };
    match chosen {
        Some(mut quote) => {
            quote.quotes = quotes;
            Ok(quote)
        }
        None => {
            let not_found = errors.iter().position(|(_, e)| matches!(e, UpstreamError::NotFound { .. }));
            let index = not_found.or_else(|| errors.iter().position(|(a, _)| *a == preferred)).unwrap_or(0);
            Err(errors.swap_remove(index).1)
        }
    }
}

/// The first aggregator's quote in the service's shape (impact fraction → percent).
pub fn from_jupiter(quote: JupiterQuote) -> SwapQuoteResponse {
    let impact = quote.price_impact_pct.as_deref().and_then(|p| p.parse::<f64>().ok()).unwrap_or(0.0);
    SwapQuoteResponse {
        aggregator: Aggregator::Jupiter,
        input_mint: quote.input_mint,
        output_mint: quote.output_mint,
        in_amount: quote.in_amount,
        out_amount: quote.out_amount,
        other_amount_threshold: quote.other_amount_threshold,
        price_impact_pct: (impact * 100.0).abs(),
        slippage_bps: quote.slippage_bps,
        route: quote.route_plan.into_iter().filter_map(|hop| hop.swap_info.label).collect(),
        quotes: Vec::new(),
    }
}

/// The second aggregator's envelope in the service's shape. It quotes no minimum, so the
/// threshold is the output less the requested slippage, in exact integer arithmetic.
pub fn from_okx(
    envelope: OkxEnvelope<OkxQuote>,
    request: &SwapQuoteRequest,
) -> Result<SwapQuoteResponse, UpstreamError> {
    let route_error = || UpstreamError::NotFound {
        vendor: Vendor::Okx,
        what: "swap route for",
        id: format!("{} -> {}", request.input_mint.as_str(), request.output_mint.as_str()),
    };
    match envelope.code.as_str() {
        "0" => {}
        // No liquidity or an untradable token: there is no route.
        "82000" | "82001" | "82003" | "82004" => return Err(route_error()),
        other => {
            return Err(UpstreamError::Decode {
                vendor: Vendor::Okx,
                cause: format!("error code {other}: {}", envelope.msg.chars().take(120).collect::<String>()),
            });
        }
    }
    let Some(quote) = envelope.data.into_iter().next() else { return Err(route_error()) };
    let threshold = units::after_slippage(&quote.to_token_amount, request.slippage_bps).ok_or_else(|| {
        UpstreamError::Decode { vendor: Vendor::Okx, cause: "toTokenAmount is not an integer".into() }
    })?;
    let mut route = Vec::new();
    for leg in &quote.dex_router_list {
        venue_names(leg, &mut route);
    }
    Ok(SwapQuoteResponse {
        aggregator: Aggregator::Okx,
        input_mint: request.input_mint.as_str().to_owned(),
        output_mint: request.output_mint.as_str().to_owned(),
        in_amount: quote.from_token_amount,
        out_amount: quote.to_token_amount,
        other_amount_threshold: threshold,
        price_impact_pct: quote.price_impact_percent.and_then(|p| p.parse::<f64>().ok()).unwrap_or(0.0).abs(),
        slippage_bps: request.slippage_bps,
        route,
        quotes: Vec::new(),
    })
}

/// Every `dexName` under `value`, in order.
fn venue_names(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("dexName", Value::String(name)) => out.push(name.clone()),
                    _ => venue_names(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| venue_names(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_matches_the_vendors_documented_example() {
        // HMAC-SHA256 with secret "secret" over "2020-12-08T09:08:57.715ZGET/api/v5/account/balance?ccy=BTC".
        let credential = OkxCredential::parse("key:secret:pass").expect("credential");
        let signed = credential.sign("2020-12-08T09:08:57.715Z", &Method::GET, "/api/v5/account/balance?ccy=BTC");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"secret").expect("mac");
        mac.update(b"2020-12-08T09:08:57.715ZGET/api/v5/account/balance?ccy=BTC");
        let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        assert_eq!(signed.to_str().expect("ascii"), expected);
        assert!(signed.is_sensitive());
    }

    #[test]
    fn a_credential_needs_three_parts_and_never_prints() {
        assert!(OkxCredential::parse("only-a-key").is_err());
        assert!(OkxCredential::parse("key::pass").is_err());
        let credential = OkxCredential::parse("k:s3cret:p:with:colons").expect("passphrase may hold colons");
        assert_eq!(credential.passphrase.to_str().expect("ascii"), "p:with:colons");
        assert!(!format!("{credential:?}").contains("s3cret"));
    }

    #[test]
    fn the_signed_query_is_the_one_sent() {
        assert_eq!(encode_query(&[("a", "b c"), ("d", "e/f")]), "a=b+c&d=e%2Ff");
    }
}
