//! The EVM router (`Authorization: Bearer`): token prices and decimals, DeFi positions
//! (tokenized and not), swap routes and action bundles. Amounts go to it in atomic units;
//! the native coin is its sentinel address.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::routes::infra::{DefiPool, DefiPosition, EvmTx, TokenPriceResponse};
use svc_domain::{Chain, Clock, EvmChain, rfc3339};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// The address the router takes for the chain's native coin.
pub const NATIVE: &str = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";

/// Decimals of the native coin on every EVM chain served.
pub const NATIVE_DECIMALS: u8 = 18;

/// Prices move every block; half a minute is what a price feed poller would see.
const PRICE_TTL: Duration = Duration::from_secs(30);
/// A token's decimals never change.
const DECIMALS_TTL: Duration = Duration::from_secs(24 * 3600);
/// Yields and TVL move slowly.
const POSITIONS_TTL: Duration = Duration::from_secs(60);
/// Non-tokenized position listings change when protocols add markets.
const NONTOKENIZED_TTL: Duration = Duration::from_secs(300);
/// Routes go stale with every block.
const ROUTE_TTL: Duration = Duration::from_secs(5);

/// The chain id the router knows `chain` by.
pub fn chain_id(chain: EvmChain) -> u64 {
    match chain.chain() {
        Chain::Ethereum => 1,
        Chain::Base => 8453,
        Chain::Bnb => 56,
        Chain::Arbitrum => 42161,
        Chain::Optimism => 10,
        Chain::Polygon => 137,
        Chain::Avalanche => 43114,
        Chain::Linea => 59144,
        Chain::Scroll => 534_352,
        Chain::Mantle => 5000,
        Chain::Blast => 81457,
        Chain::Sonic => 146,
        Chain::Ronin => 2020,
        Chain::Hyperevm => 999,
        Chain::Solana => unreachable!("an EvmChain is never Solana"),
    }
}

/// A token price.
#[derive(Debug, Clone, Deserialize)]
pub struct WirePrice {
    /// Decimals.
    pub decimals: u8,
    /// USD price.
    pub price: f64,
    /// Address.
    pub address: String,
    /// Ticker.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Unix seconds.
    pub timestamp: i64,
}

/// A page of results.
#[derive(Debug, Clone, Deserialize)]
pub struct WirePage<T> {
    /// Items.
    pub data: Vec<T>,
    /// Paging.
    #[serde(default)]
    pub meta: Option<WireMeta>,
}

/// Paging of a list.
#[derive(Debug, Clone, Deserialize)]
pub struct WireMeta {
    /// Items in all pages.
    #[serde(default)]
    pub total: Option<u64>,
}

/// A token inside a position.
#[derive(Debug, Clone, Deserialize)]
pub struct WireToken {
    /// Address.
    pub address: String,
    /// Decimals.
    #[serde(default)]
    pub decimals: Option<u8>,
    /// Ticker.
    #[serde(default)]
    pub symbol: Option<String>,
}

/// A tokenized DeFi position.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WirePosition {
    /// Position token.
    pub address: String,
    /// Chain id.
    pub chain_id: u64,
    /// Position token decimals.
    pub decimals: u8,
    /// Ticker.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// What it holds.
    #[serde(default)]
    pub underlying_tokens: Option<Vec<WireToken>>,
    /// Protocol slug.
    #[serde(default)]
    pub protocol: Option<String>,
    /// Total APY, percent.
    #[serde(default)]
    pub apy: Option<f64>,
    /// Base APY, percent.
    #[serde(default)]
    pub apy_base: Option<f64>,
    /// Reward APY, percent.
    #[serde(default)]
    pub apy_reward: Option<f64>,
    /// TVL, USD.
    #[serde(default)]
    pub tvl: Option<f64>,
    /// Contract deposits go to.
    #[serde(default)]
    pub primary_address: Option<String>,
}

/// A non-tokenized position. Its underlying tokens may come as objects or as addresses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireNontokenized {
    /// Chain id.
    pub chain_id: u64,
    /// Project.
    #[serde(default)]
    pub project: Option<String>,
    /// Protocol slug.
    pub protocol: String,
    /// Position manager.
    pub address: String,
    /// Position id.
    #[serde(default)]
    pub position_id: Option<Value>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Underlying tokens.
    #[serde(default)]
    pub underlying_tokens: Vec<Value>,
}

/// A transaction the router built.
#[derive(Debug, Clone, Deserialize)]
pub struct WireTx {
    /// Recipient.
    pub to: String,
    /// Sender.
    #[serde(default)]
    pub from: Option<String>,
    /// Calldata.
    pub data: String,
    /// Wei, decimal string (a number from some deployments).
    #[serde(deserialize_with = "string_or_number")]
    pub value: String,
}

/// A swap route.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireRoute {
    /// Gas estimate.
    #[serde(default, deserialize_with = "opt_string_or_number")]
    pub gas: Option<String>,
    /// Expected output.
    #[serde(deserialize_with = "string_or_number")]
    pub amount_out: String,
    /// Least output after slippage.
    #[serde(default, deserialize_with = "opt_string_or_number")]
    pub min_amount_out: Option<String>,
    /// Price impact, basis points.
    #[serde(default)]
    pub price_impact: Option<f64>,
    /// The transaction.
    pub tx: WireTx,
}

/// An action bundle.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireBundle {
    /// Gas estimate.
    #[serde(default, deserialize_with = "opt_string_or_number")]
    pub gas: Option<String>,
    /// Outputs by token.
    #[serde(default)]
    pub amounts_out: BTreeMap<String, Value>,
    /// Price impact, basis points.
    #[serde(default)]
    pub price_impact: Option<f64>,
    /// The transaction.
    pub tx: WireTx,
}

/// One action of a bundle, as the router takes it.
#[derive(Debug, Clone, Serialize)]
pub struct BundleAction {
    /// Protocol slug.
    pub protocol: String,
    /// `deposit`, `withdraw`, `borrow`, `repay`.
    pub action: &'static str,
    /// The action's arguments (`tokenIn`, `amountIn`, `primaryAddress`, …).
    pub args: BTreeMap<&'static str, String>,
}

fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!("expected a string or number, got {other}"))),
    }
}

fn opt_string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Number(n) => Ok(Some(n.to_string())),
        other => Err(serde::de::Error::custom(format!("expected a string or number, got {other}"))),
    }
}

impl From<WireTx> for EvmTx {
    fn from(tx: WireTx) -> Self {
        EvmTx { from: tx.from, to: tx.to, data: tx.data, value: tx.value }
    }
}

impl WirePosition {
    /// The position as a discovery pool on `chain`.
    pub fn into_pool(self, chain: &str) -> DefiPool {
        let underlying = self.underlying_tokens.unwrap_or_default();
        DefiPool {
            chain: chain.to_owned(),
            protocol: self.protocol.unwrap_or_default(),
            symbol: self.symbol.or(self.name).unwrap_or_else(|| self.address.clone()),
            pool: self.address,
            apy: self.apy,
            apy_base: self.apy_base,
            apy_reward: self.apy_reward,
            tvl_usd: self.tvl.unwrap_or(0.0),
            underlying_tokens: underlying.into_iter().map(|t| t.address).collect(),
        }
    }
}

impl From<WireNontokenized> for DefiPosition {
    fn from(p: WireNontokenized) -> Self {
        let underlying = p
            .underlying_tokens
            .iter()
            .filter_map(|t| match t {
                Value::String(address) => Some(address.clone()),
                Value::Object(map) => map.get("address").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            })
            .collect();
        let position_id = match p.position_id {
            Some(Value::String(id)) => Some(id),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        };
        DefiPosition {
            chain_id: p.chain_id,
            project: p.project.unwrap_or_else(|| p.protocol.clone()),
            name: p.name.unwrap_or_else(|| p.protocol.clone()),
            protocol: p.protocol,
            address: p.address,
            position_id,
            underlying_tokens: underlying,
        }
    }
}

/// The router adapter.
#[derive(Debug)]
pub struct Enso {
    client: VendorClient,
    prices: TtlCache<WirePrice>,
    decimals: TtlCache<u8>,
    positions: TtlCache<WirePage<WirePosition>>,
    nontokenized: TtlCache<Vec<DefiPosition>>,
    routes: TtlCache<WireRoute>,
}

impl Enso {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.key {
            let mut bearer = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| UpstreamError::Config {
                vendor: Vendor::Enso,
                cause: "key has characters a header cannot carry".into(),
            })?;
            bearer.set_sensitive(true);
            headers.insert(AUTHORIZATION, bearer);
        }
        let name = Vendor::Enso.family();
        Ok(Enso {
            client: VendorClient::new(Vendor::Enso, config, headers)?,
            prices: TtlCache::new(name, clock.clone(), 4096),
            decimals: TtlCache::new(name, clock.clone(), 8192),
            positions: TtlCache::new(name, clock.clone(), 1024),
            nontokenized: TtlCache::new(name, clock.clone(), 256),
            routes: TtlCache::new(name, clock, 1024),
        })
    }

    /// The price of `address` (lowercase, validated) on `chain`; 404 when the router does
    /// not know the token.
    pub async fn price(&self, chain: EvmChain, address: &str) -> Result<TokenPriceResponse, UpstreamError> {
        let wire = self.wire_price(chain, address).await?;
        Ok(TokenPriceResponse {
            network: chain,
            address: wire.address.to_lowercase(),
            symbol: wire.symbol.unwrap_or_default(),
            name: wire.name.unwrap_or_default(),
            decimals: wire.decimals,
            price_usd: wire.price,
            timestamp: Timestamp(rfc3339(wire.timestamp.saturating_mul(1000))),
        })
    }

    async fn wire_price(&self, chain: EvmChain, address: &str) -> Result<WirePrice, UpstreamError> {
        let id = chain_id(chain);
        let wire = self
            .prices
            .get_or_fetch(format!("{id}:{address}"), PRICE_TTL, || async {
                let path = format!("/api/v1/prices/{id}/{address}");
                match self.client.get_json::<WirePrice>(&path, &[]).await {
                    Err(UpstreamError::Status { status: 404 | 400, vendor }) => {
                        Err(UpstreamError::NotFound { vendor, what: "token", id: format!("{chain}:{address}") })
                    }
                    other => other,
                }
            })
            .await?;
        self.decimals.put(format!("{id}:{address}"), wire.decimals, DECIMALS_TTL);
        Ok(wire)
    }

    /// Decimals of `address` (or [`NATIVE`]) on `chain`, remembered for a day.
    pub async fn decimals(&self, chain: EvmChain, address: &str) -> Result<u8, UpstreamError> {
        if address == NATIVE {
            return Ok(NATIVE_DECIMALS);
        }
        match self.decimals.get(&format!("{}:{address}", chain_id(chain))) {
            Some(decimals) => Ok(decimals),
            None => Ok(self.wire_price(chain, address).await?.decimals),
        }
    }

    /// Tokenized positions on `chain`, of `protocol` (all when `None`), above the given
    /// APY and TVL, holding `underlying` when given; up to `page_size` of them.
    pub async fn positions(
        &self,
        chain: EvmChain,
        protocol: Option<&str>,
        underlying: Option<&str>,
        min_apy: Option<f64>,
        min_tvl: Option<f64>,
        page_size: u32,
    ) -> Result<WirePage<WirePosition>, UpstreamError> {
        let id = chain_id(chain).to_string();
        let (apy, tvl, size) = (min_apy.map(|v| v.to_string()), min_tvl.map(|v| v.to_string()), page_size.to_string());
        let mut query: Vec<(&str, &str)> =
            vec![("type", "defi"), ("chainId", &id), ("pageSize", &size), ("page", "1"), ("includeMetadata", "true")];
        for (name, value) in [
            ("protocolSlug", protocol),
            ("underlyingTokens", underlying),
            ("apyFrom", apy.as_deref()),
            ("tvlFrom", tvl.as_deref()),
        ] {
            if let Some(value) = value {
                query.push((name, value));
            }
        }
        let key = format!("{query:?}");
        self.positions.get_or_fetch(key, POSITIONS_TTL, || self.client.get_json("/api/v1/tokens", &query)).await
    }

    /// Non-tokenized positions on `chain`, of `protocol` (all when `None`).
    pub async fn nontokenized(
        &self,
        chain: EvmChain,
        protocol: Option<&str>,
    ) -> Result<Vec<DefiPosition>, UpstreamError> {
        let id = chain_id(chain).to_string();
        let mut query: Vec<(&str, &str)> = vec![("chainId", &id), ("page", "1"), ("pageSize", "100")];
        if let Some(protocol) = protocol {
            query.push(("protocolSlug", protocol));
        }
        let key = format!("{query:?}");
        self.nontokenized
            .get_or_fetch(key, NONTOKENIZED_TTL, || async {
                let page: WirePage<WireNontokenized> = self.client.get_json("/api/v1/nontokenized", &query).await?;
                Ok(page.data.into_iter().map(DefiPosition::from).collect())
            })
            .await
    }

    /// A swap route of `amount_in` atomic units from `token_in` to `token_out` (addresses or
    /// [`NATIVE`]) for `from`, with `slippage_bps`.
    pub async fn route(
        &self,
        chain: EvmChain,
        token_in: &str,
        token_out: &str,
        amount_in: &str,
        slippage_bps: &str,
        from: &str,
    ) -> Result<WireRoute, UpstreamError> {
        let id = chain_id(chain).to_string();
        let query = [
            ("chainId", id.as_str()),
            ("fromAddress", from),
            ("tokenIn", token_in),
            ("tokenOut", token_out),
            ("amountIn", amount_in),
            ("slippage", slippage_bps),
            ("routingStrategy", "router"),
        ];
        let key = format!("{query:?}");
        self.routes
            .get_or_fetch(key, ROUTE_TTL, || async {
                match self.client.get_json::<WireRoute>("/api/v1/shortcuts/route", &query).await {
                    Err(UpstreamError::Status { status: 400, vendor }) => Err(UpstreamError::NotFound {
                        vendor,
                        what: "swap route for",
                        id: format!("{token_in} -> {token_out} on {chain}"),
                    }),
                    other => other,
                }
            })
            .await
    }

    /// A bundle of `actions` on `chain` for `from`, routed through the router contract.
    /// Not cached: each is built for one signer and one moment.
    pub async fn bundle(
        &self,
        chain: EvmChain,
        from: &str,
        actions: &[BundleAction],
    ) -> Result<WireBundle, UpstreamError> {
        let id = chain_id(chain).to_string();
        let query = [("chainId", id.as_str()), ("fromAddress", from), ("routingStrategy", "router")];
        self.client.post_json_with_query("/api/v1/shortcuts/bundle", &query, &actions).await
    }
}

/// An amount the router sent as a string or a number, as a decimal string.
pub fn amount_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
