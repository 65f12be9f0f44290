//! The token launchpad's coin API (`GET /coins/{mint}`): a coin's bonding-curve state.

use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue, ORIGIN};
use serde::Deserialize;
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::routes::infra::{LaunchpadCoinResponse, LaunchpadSocials};
use svc_domain::{Clock, rfc3339};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// Reserves move with every trade on the curve; a few seconds of staleness is what a
/// polling client would see anyway.
const COIN_TTL: Duration = Duration::from_secs(10);

/// The launchpad adapter.
#[derive(Debug)]
pub struct Launchpad {
    client: VendorClient,
    cache: TtlCache<LaunchpadCoinResponse>,
}

/// A coin as the launchpad sends it. Lenient: fields we do not use are ignored, optional
/// ones may be absent or null.
#[derive(Debug, Deserialize)]
pub struct WireCoin {
    /// Mint address.
    pub mint: String,
    /// Coin name.
    pub name: String,
    /// Ticker.
    pub symbol: String,
    /// Creator's description.
    #[serde(default)]
    pub description: Option<String>,
    /// Image link.
    #[serde(default)]
    pub image_uri: Option<String>,
    /// Creator wallet.
    pub creator: String,
    /// Creation time, unix ms.
    pub created_timestamp: i64,
    /// The curve is finished and the coin trades in a pool.
    #[serde(default)]
    pub complete: bool,
    /// Pool on the older AMM, once graduated.
    #[serde(default)]
    pub raydium_pool: Option<String>,
    /// Pool on the launchpad's own AMM, once graduated.
    #[serde(default)]
    pub pump_swap_pool: Option<String>,
    /// Market cap in USD.
    pub usd_market_cap: f64,
    /// Virtual SOL reserves, lamports.
    pub virtual_sol_reserves: u64,
    /// Virtual token reserves, smallest units.
    pub virtual_token_reserves: u64,
    /// Total supply, smallest units.
    pub total_supply: u64,
    /// When the coin became king of the hill, unix ms.
    #[serde(default)]
    pub king_of_the_hill_timestamp: Option<i64>,
    /// X profile link.
    #[serde(default)]
    pub twitter: Option<String>,
    /// Telegram link.
    #[serde(default)]
    pub telegram: Option<String>,
    /// Website.
    #[serde(default)]
    pub website: Option<String>,
}

impl From<WireCoin> for LaunchpadCoinResponse {
    fn from(coin: WireCoin) -> Self {
        // The launchpad sends "" as often as null for a missing link.
        let present = |s: Option<String>| s.filter(|v| !v.trim().is_empty());
        LaunchpadCoinResponse {
            mint: coin.mint,
            name: coin.name,
            symbol: coin.symbol,
            description: present(coin.description),
            image_uri: present(coin.image_uri),
            creator: coin.creator,
            created_at: Timestamp(rfc3339(coin.created_timestamp)),
            complete: coin.complete,
            pool: present(coin.pump_swap_pool).or(present(coin.raydium_pool)),
            market_cap_usd: coin.usd_market_cap,
            virtual_sol_reserves: coin.virtual_sol_reserves,
            virtual_token_reserves: coin.virtual_token_reserves,
            total_supply: coin.total_supply,
            king_of_the_hill_at: coin.king_of_the_hill_timestamp.map(|ms| Timestamp(rfc3339(ms))),
            socials: LaunchpadSocials {
                twitter: present(coin.twitter),
                telegram: present(coin.telegram),
                website: present(coin.website),
            },
        }
    }
}

impl Launchpad {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        // The public API sits behind a bot filter that wants a browser-like origin.
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(ORIGIN, HeaderValue::from_static("https://pump.fun"));
        let client = VendorClient::new(Vendor::Launchpad, config, headers)?;
        Ok(Launchpad { client, cache: TtlCache::new(Vendor::Launchpad.family(), clock, 4096) })
    }

    /// The coin with this mint. `mint` has been validated as a Solana address, so it is
    /// base58 and cannot leave the path segment.
    pub async fn coin(&self, mint: &str) -> Result<LaunchpadCoinResponse, UpstreamError> {
        self.cache
            .get_or_fetch(mint.to_owned(), COIN_TTL, || async {
                let path = format!("/coins/{mint}");
                match self.client.get_json::<WireCoin>(&path, &[]).await {
                    Ok(coin) => Ok(coin.into()),
                    Err(UpstreamError::Status { status: 404, vendor }) => {
                        Err(UpstreamError::NotFound { vendor, what: "coin with mint", id: mint.to_owned() })
                    }
                    Err(err) => Err(err),
                }
            })
            .await
    }
}
