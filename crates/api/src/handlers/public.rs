//! Free routes.

use svc_catalogue::ids;
use svc_catalogue::routes::common::{NoInput, Timestamp};
use svc_catalogue::routes::public::{TokenStat, TokenStatsResponse};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;
use svc_domain::{Chain, rfc3339};

/// How many tokens the stats route lists.
const TOKEN_STATS_LIMIT: u32 = 100;

/// The chains the market overview covers.
const TOKEN_STATS_CHAINS: [Chain; 5] = [Chain::Solana, Chain::Ethereum, Chain::Base, Chain::Bnb, Chain::Arbitrum];

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::public::TOKENS_STATS, list_token_stats);
}

/// `GET /api/public/tokens/stats`: the largest tokens from the chain-data token screener
/// (cached for a minute by the adapter). When that source fails, the last rows the store
/// holds are served instead, so a free overview page never breaks on a vendor outage.
async fn list_token_stats(state: AppState, _: NoInput) -> Result<TokenStatsResponse, ApiError> {
    match state.upstreams.chaindata.token_stats(&TOKEN_STATS_CHAINS, TOKEN_STATS_LIMIT).await {
        Ok(stats) => Ok(stats),
        Err(err) => {
            tracing::warn!(vendor = err.vendor().family(), error = %err, "token stats: serving stored rows");
            stored_token_stats(&state).await
        }
    }
}

/// The token stats the store holds (written by a market-data feed; none on a fresh install).
async fn stored_token_stats(state: &AppState) -> Result<TokenStatsResponse, ApiError> {
    let rows = state.store.token_stats(TOKEN_STATS_LIMIT).await?;
    let as_of = rows.iter().map(|r| r.updated_at).max().map(|ms| Timestamp(rfc3339(ms)));
    let number = |s: &Option<String>| s.as_deref().and_then(|v| v.parse::<f64>().ok());
    let tokens = rows
        .into_iter()
        .filter_map(|r| {
            Some(TokenStat {
                chain: r.chain.parse().ok()?,
                price_usd: r.price_usd.parse().ok()?,
                change_24h_pct: number(&r.change_24h_pct),
                volume_24h_usd: number(&r.volume_24h_usd),
                market_cap_usd: number(&r.market_cap_usd),
                liquidity_usd: number(&r.liquidity_usd),
                updated_at: Timestamp(rfc3339(r.updated_at)),
                address: r.address,
                symbol: r.symbol,
                name: r.name,
            })
        })
        .collect();
    Ok(TokenStatsResponse { source: "store".into(), as_of, tokens })
}
