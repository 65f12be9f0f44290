//! Token market data behind the free stats route. Numbers are kept as decimal text, exactly
//! as the feed gave them; the route decides how to present them.

use serde::{Deserialize, Serialize};

use crate::batch::Arg;
use crate::{Store, StoreError, with_pool};

/// One token's market data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct TokenStat {
    /// Chain name (`solana`, `base`, ...).
    pub chain: String,
    /// Contract address or mint.
    pub address: String,
    /// Ticker.
    pub symbol: String,
    /// Display name.
    pub name: String,
    /// Price in USD, decimal text.
    pub price_usd: String,
    /// 24-hour change, percent.
    pub change_24h_pct: Option<String>,
    /// 24-hour volume, USD.
    pub volume_24h_usd: Option<String>,
    /// Market cap, USD.
    pub market_cap_usd: Option<String>,
    /// Liquidity, USD.
    pub liquidity_usd: Option<String>,
    /// Position in the list, 1 = largest.
    pub rank: i32,
    /// Last update, unix ms.
    pub updated_at: i64,
}

impl Store {
    /// Inserts or replaces a token's row.
    pub async fn upsert_token_stat(&self, t: &TokenStat) -> Result<(), StoreError> {
        const SQL: &str = "INSERT INTO token_stats (chain, address, symbol, name, price_usd, change_24h_pct, \
             volume_24h_usd, market_cap_usd, liquidity_usd, rank, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (chain, address) DO UPDATE SET symbol = excluded.symbol, name = excluded.name, \
             price_usd = excluded.price_usd, change_24h_pct = excluded.change_24h_pct, \
             volume_24h_usd = excluded.volume_24h_usd, market_cap_usd = excluded.market_cap_usd, \
             liquidity_usd = excluded.liquidity_usd, rank = excluded.rank, updated_at = excluded.updated_at";
        let args = vec![
            Arg::Text(t.chain.clone()),
            Arg::Text(t.address.clone()),
            Arg::Text(t.symbol.clone()),
            Arg::Text(t.name.clone()),
            Arg::Text(t.price_usd.clone()),
            Arg::OptText(t.change_24h_pct.clone()),
            Arg::OptText(t.volume_24h_usd.clone()),
            Arg::OptText(t.market_cap_usd.clone()),
            Arg::OptText(t.liquidity_usd.clone()),
            Arg::Int(i64::from(t.rank)),
            Arg::Int(t.updated_at),
        ];
        self.write(SQL, args).await?;
        Ok(())
    }

    /// The top `limit` tokens by rank.
    pub async fn token_stats(&self, limit: u32) -> Result<Vec<TokenStat>, StoreError> {
        const SQL: &str = "SELECT chain, address, symbol, name, price_usd, change_24h_pct, volume_24h_usd, \
             market_cap_usd, liquidity_usd, rank, updated_at FROM token_stats ORDER BY rank, chain, address LIMIT $1";
        Ok(with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(i64::from(limit)).fetch_all(p).await)?)
    }
}
