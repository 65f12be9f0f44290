//! Free routes.

use svc_catalogue::routes::common::{NoInput, Timestamp};
use svc_catalogue::routes::public::{TokenStat, TokenStatsResponse};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;
use svc_domain::rfc3339;

/// How many tokens the stats route lists.
const TOKEN_STATS_LIMIT: u32 = 100;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add("public.tokens_stats", list_token_stats);
}

/// `GET /api/public/tokens/stats`: market data from the store. The rows are written by the
/// market-data feed; a fresh install has none and answers an empty list with `as_of: null`.
async fn list_token_stats(state: AppState, _: NoInput) -> Result<TokenStatsResponse, ApiError> {
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
