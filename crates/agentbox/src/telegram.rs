//! The chat-bot channel: people talk to their sandboxed agent through their own Telegram bot,
//! relayed by svc.
//!
//! svc owns the bot's one webhook (`setWebhook` to its relay route, with a random secret the
//! platform sends back on every delivery) and keeps each update in the store until the agent
//! confirms it. The agent's gateway does not talk to the platform: its `apiRoot` is svc's
//! Bot-API shim, which serves `getUpdates` from those kept updates (a long poll up to the
//! asked timeout; `offset` confirms), makes `deleteWebhook` a no-op, refuses `setWebhook`,
//! and forwards every other method (`sendMessage`, `getMe`, files, ...) to the platform. So a
//! sandbox needs no inbound path and no route to the platform, a bot has one poller (no 409),
//! and an update that arrives while svc restarts is kept, not lost.
//!
//! The token is checked with `getMe`, sealed at rest ([`crate::sealed`]) and never shown or
//! logged; the webhook secret is kept as a hash and compared in constant time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq as _;
use svc_catalogue::routes::agentbox::{TelegramConfigRequest, TelegramConfigView, TelegramRelayView};
use svc_domain::Clock;
use svc_store::{BotSaved, Store, TelegramBot};
use tokio::sync::Notify;

use crate::AgentboxError;
use crate::sealed::SecretBox;
use crate::slots::Slots;

pub use svc_catalogue::routes::agentbox::TELEGRAM_PATH;
/// The largest update the relay takes.
pub const MAX_UPDATE_BYTES: usize = 1 << 20;
/// The largest parameters of a `getUpdates` call.
pub const MAX_POLL_PARAMS: usize = 64 * 1024;
/// The largest body forwarded to the platform (its own limit for uploads).
pub const MAX_FORWARD: usize = 50 * 1024 * 1024;
/// The largest file forwarded from the platform (its own download limit).
const MAX_FILE_BYTES: usize = 20 * 1024 * 1024;
/// The longest long poll served.
const MAX_POLL: Duration = Duration::from_secs(50);
/// How long an update waits for its agent, as the platform keeps undelivered updates.
const KEEP_MS: i64 = 24 * 3_600_000;
/// At most one automatic "your agent is not running" reply per chat this often.
const REPLY_EVERY_MS: i64 = 10 * 60_000;

/// What the channel needs.
pub struct TelegramConfig {
    /// The platform's Bot API root (`https://api.telegram.org`; the simulator's on a default run).
    pub api_url: String,
    /// svc's address as the platform reaches it, for the webhook.
    pub public_url: String,
    /// Seals bot tokens at rest.
    pub sealed: std::sync::Arc<SecretBox>,
}

/// The channel.
pub struct Telegram {
    config: TelegramConfig,
    store: Store,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
    /// Wakes the long polls of a bot, by token hash.
    arrivals: Mutex<HashMap<String, Arc<Notify>>>,
    /// When each chat last got an automatic reply, by (token hash, chat).
    replied: Mutex<HashMap<(String, i64), i64>>,
    /// Long polls waiting, by token hash.
    polls: Slots,
}

/// Long polls one bot may hold at once; the platform allows one, and a gateway restarting its
/// poll may briefly hold two.
const MAX_POLLS: usize = 2;

/// Why the relay refused a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayRefusal {
    /// No bot has this hash (404).
    UnknownBot,
    /// The secret header is missing or wrong (401).
    BadSecret,
    /// The body is not an update (422).
    Malformed,
    /// The store could not keep it (503): the platform delivers it again.
    NotKept,
}

/// What the shim does with a method, decided before any body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShimMethod {
    /// Serve `getUpdates` from the kept updates of the bot with this token hash.
    GetUpdates {
        /// The bot's token hash.
        hash: String,
    },
    /// Answer this (status, body) at once.
    Answer(u16, Vec<u8>),
    /// Forward to the platform as this method.
    Forward {
        /// The method's name, as asked.
        method: String,
    },
}

/// An answer of the Bot-API shim: status, JSON body.
pub type ShimAnswer = (u16, Vec<u8>);

/// SHA-256 of a bot token, hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The token with all but its bot id and last 4 characters hidden.
pub fn masked(token: &str) -> String {
    let id = token.split(':').next().unwrap_or("");
    let tail: String = token.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
    format!("{id}:…{tail}")
}

fn sealing_context(account_id: &str) -> String {
    format!("telegram:{account_id}")
}

impl Telegram {
    /// The channel over `store`.
    pub fn new(config: TelegramConfig, store: Store, clock: Arc<dyn Clock>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Telegram {
            config,
            store,
            clock,
            http,
            arrivals: Mutex::default(),
            replied: Mutex::default(),
            polls: Slots::new(MAX_POLLS),
        }
    }

    fn method_url(&self, token: &str, method: &str) -> String {
        format!("{}/bot{token}/{method}", self.config.api_url.trim_end_matches('/'))
    }

    /// Calls a Bot API method; the platform's `result`, or its description of the refusal.
    async fn call(&self, token: &str, method: &str, params: &Value) -> Result<Value, (u16, String)> {
        let response = self
            .http
            .post(self.method_url(token, method))
            .json(params)
            .send()
            .await
            .map_err(|e| (0, format!("the chat platform could not be reached: {}", e.without_url())))?;
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if body["ok"] == true {
            Ok(body["result"].clone())
        } else {
            Err((status, body["description"].as_str().unwrap_or("refused").to_owned()))
        }
    }

    /// `PUT /api/agentbox/telegram/config`.
    pub async fn configure(
        &self,
        account_id: &str,
        input: &TelegramConfigRequest,
    ) -> Result<TelegramConfigView, AgentboxError> {
        let token = input.bot_token.trim();
        let me = match self.call(token, "getMe", &json!({})).await {
            Ok(me) => me,
            Err((401 | 404, _)) => return Err(AgentboxError::InvalidBotToken),
            Err((_, why)) => return Err(AgentboxError::ChatPlatform(why)),
        };
        let hash = token_hash(token);
        // Derived, not random: two saves at once (or on two replicas) send the platform the
        // same secret they keep, so the relay never ends up refusing its own bot.
        let secret = self.config.sealed.derive(&format!("telegram-webhook:{hash}"));
        let now = self.clock.now_ms();
        let groups = input.allowed_groups.clone().unwrap_or_default();
        let bot = TelegramBot {
            account_id: account_id.to_owned(),
            token_hash: hash.clone(),
            token_sealed: self.config.sealed.seal(token.as_bytes(), &sealing_context(account_id)),
            bot_id: me["id"].as_i64().unwrap_or(0),
            username: me["username"].as_str().unwrap_or("").to_owned(),
            secret_hash: hex::encode(Sha256::digest(secret.as_bytes())),
            allowed_groups: serde_json::to_string(&groups).unwrap_or_else(|_| "[]".into()),
            relay_status: "setting".into(),
            created_at: now,
            updated_at: now,
        };
        if self.store.save_telegram_bot(&bot).await? == BotSaved::TakenByAnother {
            return Err(AgentboxError::BotTaken);
        }
        let url = self.relay_url(&hash);
        let params = json!({"url": url, "secret_token": secret, "drop_pending_updates": false, "max_connections": 40});
        let status = match self.call(token, "setWebhook", &params).await {
            Ok(_) => "set".to_owned(),
            Err((_, why)) => format!("failed: {why}"),
        };
        self.store.set_telegram_relay_status(account_id, &status).await?;
        self.view(account_id).await
    }

    fn relay_url(&self, hash: &str) -> String {
        format!("{}{TELEGRAM_PATH}/webhook/{hash}", self.config.public_url.trim_end_matches('/'))
    }

    /// `GET /api/agentbox/telegram/config`.
    pub async fn view(&self, account_id: &str) -> Result<TelegramConfigView, AgentboxError> {
        let bot = self.store.telegram_bot(account_id).await?.ok_or(AgentboxError::NoGateway(NO_BOT))?;
        let token = self.open(&bot);
        Ok(TelegramConfigView {
            bot_id: bot.bot_id,
            username: bot.username,
            token: token.as_deref().map(masked).unwrap_or_default(),
            dm_policy: "open".into(),
            group_policy: "allowlist".into(),
            allowed_groups: serde_json::from_str(&bot.allowed_groups).unwrap_or_default(),
            relay: TelegramRelayView {
                status: bot.relay_status,
                webhook_url: self.relay_url(&bot.token_hash),
                pending_updates: u64::try_from(self.store.telegram_updates(&bot.token_hash, 0, 1000).await?.len())
                    .unwrap_or(0),
            },
        })
    }

    fn open(&self, bot: &TelegramBot) -> Option<String> {
        let plain = self.config.sealed.open(&bot.token_sealed, &sealing_context(&bot.account_id)).ok()?;
        String::from_utf8(plain).ok()
    }

    /// The account's bot token and allowed groups, for its sandbox.
    pub async fn sandbox_channel(&self, account_id: &str) -> Result<Option<(String, Vec<i64>)>, AgentboxError> {
        let Some(bot) = self.store.telegram_bot(account_id).await? else { return Ok(None) };
        let groups = serde_json::from_str(&bot.allowed_groups).unwrap_or_default();
        Ok(self.open(&bot).map(|token| (token, groups)))
    }

    /// `POST /api/agentbox/telegram/webhook/{token_hash}`: keeps a delivered update. Answers at
    /// once; the agent picks it up through the shim. While the account's agent is not running,
    /// the chat gets one short automatic reply (at most one per 10 minutes) and the update is
    /// kept for when it runs, for up to 24 hours (as the platform keeps undelivered ones).
    pub async fn relay(&self, hash: &str, secret: Option<&str>, body: &[u8]) -> Result<(), RelayRefusal> {
        let bot = match self.store.telegram_bot_by_hash(hash).await {
            Ok(Some(bot)) => bot,
            Ok(None) => return Err(RelayRefusal::UnknownBot),
            Err(e) => {
                tracing::error!(error = %e, "could not look up a chat bot");
                return Err(RelayRefusal::NotKept);
            }
        };
        let presented = hex::encode(Sha256::digest(secret.unwrap_or("").as_bytes()));
        let matches: bool = presented.as_bytes().ct_eq(bot.secret_hash.as_bytes()).into();
        if secret.is_none() || !matches {
            return Err(RelayRefusal::BadSecret);
        }
        let update: Value = serde_json::from_slice(body).map_err(|_| RelayRefusal::Malformed)?;
        let id = update["update_id"].as_i64().ok_or(RelayRefusal::Malformed)?;
        let now = self.clock.now_ms();
        let text = String::from_utf8_lossy(body);
        if let Err(e) = self.store.drop_stale_telegram_updates(hash, now - KEEP_MS).await {
            tracing::warn!(error = %e, "could not drop stale chat updates");
        }
        match self.store.add_telegram_update(hash, id, &text, now).await {
            Ok(true) => self.arrival(hash).notify_waiters(),
            Ok(false) => return Ok(()),
            Err(e) => {
                tracing::error!(error = %e, "could not keep a chat update");
                return Err(RelayRefusal::NotKept);
            }
        }
        let running = matches!(self.store.active_gateway(&bot.account_id).await, Ok(Some(g)) if g.state == "running");
        if !running && let Some(chat) = update["message"]["chat"]["id"].as_i64() {
            self.reply_not_running(&bot, chat, now).await;
        }
        Ok(())
    }

    async fn reply_not_running(&self, bot: &TelegramBot, chat: i64, now: i64) {
        {
            let mut replied = self.replied.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let key = (bot.token_hash.clone(), chat);
            if replied.get(&key).is_some_and(|at| now - at < REPLY_EVERY_MS) {
                return;
            }
            replied.insert(key, now);
        }
        let Some(token) = self.open(bot) else { return };
        let text =
            "This agent is not running right now. Your message is kept and it will answer once its owner starts it.";
        if let Err((_, why)) = self.call(&token, "sendMessage", &json!({"chat_id": chat, "text": text})).await {
            tracing::warn!(bot = bot.bot_id, "could not send the automatic reply: {why}");
        }
    }

    fn arrival(&self, hash: &str) -> Arc<Notify> {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(arrivals.entry(hash.to_owned()).or_default())
    }

    /// The hash of `token` when svc relays its bot; the platform's own 401 when not.
    async fn known(&self, token: &str) -> Result<String, ShimAnswer> {
        let hash = token_hash(token);
        match self.store.telegram_bot_by_hash(&hash).await {
            Ok(Some(_)) => Ok(hash),
            Ok(None) => Err(refusal(401, "Unauthorized")),
            Err(e) => {
                tracing::error!(error = %e, "could not look up a chat bot");
                Err(refusal(503, "Service Unavailable"))
            }
        }
    }

    /// The Bot-API shim's decision for `method` of bot `token`: an unknown token is the
    /// platform's 401; method names are matched as the platform matches them (in any case);
    /// the ones that would take the bot away from svc (`setWebhook`, `logOut`, `close`) are
    /// refused, `deleteWebhook` does nothing, and names that are not plain words go nowhere.
    pub async fn shim_method(&self, token: &str, method: &str) -> Result<ShimMethod, ShimAnswer> {
        let hash = self.known(token).await?;
        if method.is_empty() || !method.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(refusal(404, "Not Found: method not found"));
        }
        Ok(match method.to_ascii_lowercase().as_str() {
            "getupdates" => ShimMethod::GetUpdates { hash },
            "deletewebhook" => ShimMethod::Answer(
                200,
                br#"{"ok":true,"result":true,"description":"svc owns this bot's webhook"}"#.to_vec(),
            ),
            "setwebhook" | "logout" | "close" => {
                let (status, body) = refusal(409, "svc owns this bot's webhook; the agent long-polls svc instead");
                ShimMethod::Answer(status, body)
            }
            _ => ShimMethod::Forward { method: method.to_owned() },
        })
    }

    /// `getUpdates` of the bot with token hash `hash`: kept updates from `offset` on, waiting
    /// up to `timeout` seconds (50 at most) for one when there are none.
    pub async fn get_updates(&self, hash: &str, params: &Value) -> ShimAnswer {
        let number = |key: &str| params[key].as_i64().or_else(|| params[key].as_str().and_then(|s| s.parse().ok()));
        let offset = number("offset").unwrap_or(0);
        let limit = u32::try_from(number("limit").unwrap_or(100).clamp(1, 100)).unwrap_or(100);
        let wait = Duration::from_secs(u64::try_from(number("timeout").unwrap_or(0).max(0)).unwrap_or(0)).min(MAX_POLL);
        let Some(_slot) = self.polls.take(hash) else {
            return refusal(
                409,
                "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
            );
        };
        if offset > 0
            && let Err(e) = self.store.confirm_telegram_updates(hash, offset).await
        {
            tracing::warn!(error = %e, "could not confirm chat updates");
        }
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.arrival(hash);
            let notified = notified.notified();
            let updates = match self.store.telegram_updates(hash, offset, limit).await {
                Ok(updates) => updates,
                Err(e) => {
                    tracing::error!(error = %e, "could not read chat updates");
                    return refusal(500, "Internal Server Error");
                }
            };
            if !updates.is_empty() || tokio::time::Instant::now() >= deadline {
                let result: Vec<Value> =
                    updates.iter().filter_map(|(_, body)| serde_json::from_str(body).ok()).collect();
                return (200, serde_json::to_vec(&json!({"ok": true, "result": result})).unwrap_or_default());
            }
            // Woken by an arrival here, or once a second for one that came in on another replica.
            let _ = tokio::time::timeout(Duration::from_secs(1).min(deadline - tokio::time::Instant::now()), notified)
                .await;
        }
    }

    /// A file a user sent, as the platform serves it (`/file/bot<token>/<path>`): the agent
    /// downloads photos and documents here. At most the platform's own 20 MB.
    pub async fn forward_file(&self, token: &str, path: &str) -> ShimAnswer {
        if let Err(refused) = self.known(token).await {
            return refused;
        }
        if path.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
            return refusal(404, "Not Found");
        }
        let url = format!("{}/file/bot{token}/{path}", self.config.api_url.trim_end_matches('/'));
        let mut response = match self.http.get(url).send().await {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!("the chat platform could not be reached: {}", e.without_url());
                return refusal(502, "Bad Gateway: the chat platform could not be reached");
            }
        };
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_FILE_BYTES {
                return refusal(413, "Request Entity Too Large: files are at most 20 MB");
            }
        }
        (status, body)
    }

    /// Forwards a method call to the platform as it came: its query, body and content type.
    pub async fn forward(
        &self,
        token: &str,
        method: &str,
        query: Option<&str>,
        body: &[u8],
        content_type: &str,
    ) -> ShimAnswer {
        let mut url = self.method_url(token, method);
        if let Some(query) = query {
            url = format!("{url}?{query}");
        }
        let mut request = self.http.post(url).body(body.to_vec());
        if !content_type.is_empty() {
            request = request.header("content-type", content_type);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.bytes().await.map(|b| b.to_vec()).unwrap_or_default())
            }
            Err(e) => {
                tracing::warn!(method, "the chat platform could not be reached: {}", e.without_url());
                refusal(502, "Bad Gateway: the chat platform could not be reached")
            }
        }
    }
}

const NO_BOT: &str = "this account has no chat bot; save one with PUT /api/agentbox/telegram/config";

fn refusal(status: u16, description: &str) -> ShimAnswer {
    (
        status,
        serde_json::to_vec(&json!({"ok": false, "error_code": status, "description": description})).unwrap_or_default(),
    )
}

/// A shim call's parameters as the platform takes them: query string, form or JSON body.
pub fn shim_params(query: Option<&str>, content_type: &str, body: &[u8]) -> Value {
    let mut params = serde_json::Map::new();
    let mut add_pairs = |text: &str| {
        for (key, value) in serde_urlencoded::from_str::<Vec<(String, String)>>(text).unwrap_or_default() {
            params.insert(key, Value::from(value));
        }
    };
    if let Some(query) = query {
        add_pairs(query);
    }
    if content_type.starts_with("application/x-www-form-urlencoded") {
        add_pairs(&String::from_utf8_lossy(body));
    } else if content_type.starts_with("application/json")
        && let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body)
    {
        params.extend(fields);
    }
    Value::Object(params)
}

/// The request path as logged: the chat platform's Bot API puts a bot's token in the path, so
/// on svc's Bot-API shim it is hidden.
pub fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    let shim = TELEGRAM_PATH;
    let Some(rest) = path.strip_prefix(shim).and_then(|rest| rest.strip_prefix('/')) else {
        return std::borrow::Cow::Borrowed(path);
    };
    // Everything there but the config and the relay is the shim, whatever its spelling
    // (`%62ot…` routes there too): only the method is kept.
    if rest == "config" || rest.starts_with("webhook/") {
        return std::borrow::Cow::Borrowed(path);
    }
    let method = rest.rsplit_once('/').map_or("", |(_, method)| method);
    std::borrow::Cow::Owned(format!("{shim}/bot<redacted>/{method}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_masked_to_its_bot_id_and_last_four_and_hashed_stably() {
        assert_eq!(masked("123456:AAE-abcdefghijklmnopqrstuvwxyz0123"), "123456:…0123");
        assert_eq!(token_hash("a"), token_hash("a"));
        assert_ne!(token_hash("a"), token_hash("b"));
        assert_eq!(token_hash("a").len(), 64);
    }

    #[test]
    fn a_bot_token_in_a_shim_path_is_hidden_and_other_paths_are_kept() {
        assert_eq!(
            logged_path("/api/agentbox/telegram/bot7001:AAHsecret/getUpdates"),
            "/api/agentbox/telegram/bot<redacted>/getUpdates"
        );
        assert_eq!(logged_path("/api/agentbox/telegram/bot7001:AAHsecret"), "/api/agentbox/telegram/bot<redacted>/");
        assert_eq!(logged_path("/api/agentbox/telegram/config"), "/api/agentbox/telegram/config");
        assert_eq!(
            logged_path("/api/agentbox/telegram/%62ot7001:AAHsecret/getMe"),
            "/api/agentbox/telegram/bot<redacted>/getMe"
        );
        assert_eq!(logged_path("/api/agentbox/telegram/webhook/abc"), "/api/agentbox/telegram/webhook/abc");
        assert_eq!(logged_path("/api/x402/alpha/top-picks"), "/api/x402/alpha/top-picks");
    }
}
