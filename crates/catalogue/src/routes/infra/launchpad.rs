//! The launchpad: a coin's bonding-curve state by mint.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::SolanaAddress;

use super::infra;
use crate::routes::common::Timestamp;
use crate::{RouteInput, RouteSpec, ids};

/// The launchpad routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![infra(
        RouteSpec::get::<LaunchpadCoinPath, LaunchpadCoinResponse>(
            ids::infra::LAUNCHPAD_COIN,
            tools!("/launchpad/coin/{mint}"),
            "State of a launchpad coin by mint: bonding-curve progress, reserves, market cap, creator and pool.",
        ),
        "launchpad",
    )]
}

/// Path of `GET {tools}/launchpad/coin/{mint}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct LaunchpadCoinPath {
    /// Coin mint.
    #[garde(skip)]
    pub mint: SolanaAddress,
}

impl RouteInput for LaunchpadCoinPath {}

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
