//! The chat-bot channel's records: each account's bot (its token sealed, found by hash) and
//! the updates the chat platform delivered, held until the agent confirms them.

use crate::batch::Arg;
use crate::{Store, StoreError, with_pool};

/// An account's bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramBot {
    /// The owning account.
    pub account_id: String,
    /// SHA-256 of the token, hex: the lookup key and the relay URL's last segment.
    pub token_hash: String,
    /// The token, sealed.
    pub token_sealed: Vec<u8>,
    /// The bot's numeric id.
    pub bot_id: i64,
    /// The bot's username.
    pub username: String,
    /// SHA-256 of the webhook's secret token, hex.
    pub secret_hash: String,
    /// Group chats the agent answers in, as a JSON array of chat ids.
    pub allowed_groups: String,
    /// Whether the platform's webhook is set (`set`), or why not.
    pub relay_status: String,
    /// When it was first saved, unix ms.
    pub created_at: i64,
    /// When it was last saved, unix ms.
    pub updated_at: i64,
}

/// How saving a bot ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotSaved {
    /// Saved for the account.
    Saved,
    /// The token is another account's bot.
    TakenByAnother,
}

type BotRow = (String, String, Vec<u8>, i64, String, String, String, String, i64, i64);

macro_rules! select_bot {
    ($rest:literal) => {
        concat!(
            "SELECT account_id, token_hash, token_sealed, bot_id, username, secret_hash, allowed_groups, \
             relay_status, created_at, updated_at FROM telegram_bots ",
            $rest
        )
    };
}

fn bot(row: BotRow) -> TelegramBot {
    let (account_id, token_hash, token_sealed, bot_id, username, secret_hash, allowed_groups, relay_status, c, u) = row;
    TelegramBot {
        account_id,
        token_hash,
        token_sealed,
        bot_id,
        username,
        secret_hash,
        allowed_groups,
        relay_status,
        created_at: c,
        updated_at: u,
    }
}

impl Store {
    /// Saves the account's bot, replacing its earlier one; refused when the token is another
    /// account's.
    pub async fn save_telegram_bot(&self, bot: &TelegramBot) -> Result<BotSaved, StoreError> {
        if let Some(owner) = self.telegram_bot_by_hash(&bot.token_hash).await?
            && owner.account_id != bot.account_id
        {
            return Ok(BotSaved::TakenByAnother);
        }
        const SQL: &str = "INSERT INTO telegram_bots (account_id, token_hash, token_sealed, bot_id, username, \
                           secret_hash, allowed_groups, relay_status, created_at, updated_at) \
                           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (account_id) DO UPDATE SET \
                           token_hash = $2, token_sealed = $3, bot_id = $4, username = $5, secret_hash = $6, \
                           allowed_groups = $7, relay_status = $8, updated_at = $9";
        let args = vec![
            Arg::Text(bot.account_id.clone()),
            Arg::Text(bot.token_hash.clone()),
            Arg::Blob(bot.token_sealed.clone()),
            Arg::Int(bot.bot_id),
            Arg::Text(bot.username.clone()),
            Arg::Text(bot.secret_hash.clone()),
            Arg::Text(bot.allowed_groups.clone()),
            Arg::Text(bot.relay_status.clone()),
            Arg::Int(bot.updated_at),
        ];
        match self.write(SQL, args).await {
            Ok(_) => Ok(BotSaved::Saved),
            // Another account saved the same token between the check and the write.
            Err(StoreError::Database(sqlx::Error::Database(e)))
                if e.kind() == sqlx::error::ErrorKind::UniqueViolation =>
            {
                Ok(BotSaved::TakenByAnother)
            }
            Err(err) => Err(err),
        }
    }

    /// Records whether the platform's webhook is set for the account's bot.
    pub async fn set_telegram_relay_status(&self, account_id: &str, status: &str) -> Result<(), StoreError> {
        const SQL: &str = "UPDATE telegram_bots SET relay_status = $2 WHERE account_id = $1";
        self.write(SQL, vec![Arg::Text(account_id.to_owned()), Arg::Text(status.to_owned())]).await?;
        Ok(())
    }

    /// The account's bot.
    pub async fn telegram_bot(&self, account_id: &str) -> Result<Option<TelegramBot>, StoreError> {
        const SQL: &str = select_bot!("WHERE account_id = $1");
        let row: Option<BotRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(account_id).fetch_optional(p).await)?;
        Ok(row.map(bot))
    }

    /// The bot whose token hashes to `token_hash`.
    pub async fn telegram_bot_by_hash(&self, token_hash: &str) -> Result<Option<TelegramBot>, StoreError> {
        const SQL: &str = select_bot!("WHERE token_hash = $1");
        let row: Option<BotRow> =
            with_pool!(&self.db, |p| sqlx::query_as(SQL).bind(token_hash).fetch_optional(p).await)?;
        Ok(row.map(bot))
    }

    /// Keeps an update the platform delivered; false when it was delivered before.
    pub async fn add_telegram_update(
        &self,
        token_hash: &str,
        update_id: i64,
        body: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        const SQL: &str = "INSERT INTO telegram_updates (token_hash, update_id, body, received_at) \
                           VALUES ($1, $2, $3, $4) ON CONFLICT (token_hash, update_id) DO NOTHING";
        let args =
            vec![Arg::Text(token_hash.to_owned()), Arg::Int(update_id), Arg::Text(body.to_owned()), Arg::Int(now_ms)];
        Ok(self.write(SQL, args).await? == 1)
    }

    /// Up to `limit` kept updates from `offset` on, oldest first: `(update_id, body)`.
    pub async fn telegram_updates(
        &self,
        token_hash: &str,
        offset: i64,
        limit: u32,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        const SQL: &str = "SELECT update_id, body FROM telegram_updates WHERE token_hash = $1 AND update_id >= $2 \
                           ORDER BY update_id LIMIT $3";
        let rows: Vec<(i64, String)> = with_pool!(&self.db, |p| sqlx::query_as(SQL)
            .bind(token_hash)
            .bind(offset)
            .bind(i64::from(limit))
            .fetch_all(p)
            .await)?;
        Ok(rows)
    }

    /// Forgets the updates below `offset`: the agent has them.
    pub async fn confirm_telegram_updates(&self, token_hash: &str, offset: i64) -> Result<u64, StoreError> {
        const SQL: &str = "DELETE FROM telegram_updates WHERE token_hash = $1 AND update_id < $2";
        self.write(SQL, vec![Arg::Text(token_hash.to_owned()), Arg::Int(offset)]).await
    }

    /// Forgets updates of a bot received before `before_ms`: what its agent never came for.
    pub async fn drop_stale_telegram_updates(&self, token_hash: &str, before_ms: i64) -> Result<u64, StoreError> {
        const SQL: &str = "DELETE FROM telegram_updates WHERE token_hash = $1 AND received_at < $2";
        self.write(SQL, vec![Arg::Text(token_hash.to_owned()), Arg::Int(before_ms)]).await
    }

    /// How many updates of a bot wait for its agent.
    pub async fn pending_telegram_updates(&self, token_hash: &str) -> Result<u64, StoreError> {
        const SQL: &str = "SELECT COUNT(*) FROM telegram_updates WHERE token_hash = $1";
        let count: i64 = with_pool!(&self.db, |p| sqlx::query_scalar(SQL).bind(token_hash).fetch_one(p).await)?;
        crate::to_u64(count, "pending updates")
    }
}
