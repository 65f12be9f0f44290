//! Agent sandboxes: start a templated agent gateway in an isolated sandbox, watch it, stop
//! it. One gateway per account; every answer is the caller's own. The log stream
//! (`GET /api/agentbox/gateway/logs`, server-sent events) is served beside these routes.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::Money;

use super::common::{NoInput, Timestamp};
use crate::route::Access;
use crate::{InputSource, RouteInput, RouteSpec};

/// Where the log stream hangs. It answers server-sent events, not JSON, so it is served beside
/// the route table; its OpenAPI entry is [`crate::openapi::logs_operation`].
pub const LOGS_PATH: &str = "/api/agentbox/gateway/logs";

/// Where the chat-bot relay (`/webhook/{token_hash}`) and the Bot-API shim the agent polls
/// (`/bot<token>/<method>`) hang, beside the route table.
pub const TELEGRAM_PATH: &str = "/api/agentbox/telegram";

/// Scopes a key needs to read the gateway (its state, its chat bot, its log): the owner's
/// `gateway`, or the sandbox's own `gateway:read`.
pub const READ: &[&str] = &["gateway", "gateway:read"];
/// Scopes a key needs to start or stop it: the owner's `gateway` only, so an agent cannot
/// start more of itself.
const MANAGE: &[&str] = &["gateway"];

/// The sandbox routes.
pub fn routes() -> Vec<RouteSpec> {
    let route = |spec: RouteSpec, scopes| spec.for_account(Access::Account).key_scopes(scopes).tag("agentbox");
    vec![
        route(
            RouteSpec::get::<NoInput, TemplateList>(
                ids::agentbox::TEMPLATES,
                "/api/agentbox/templates",
                "The agent templates a gateway can start with, what each may do, and what a running gateway \
                 costs in credits per minute.",
            ),
            READ,
        ),
        route(
            RouteSpec::get::<NoInput, GatewayView>(
                ids::agentbox::GATEWAY,
                "/api/agentbox/gateway",
                "The account's gateway (the running one, else the latest): state, template, health, memory, \
                 credits burnt, and why it stopped or failed.",
            ),
            READ,
        ),
        route(
            RouteSpec::post::<StartRequest, GatewayView>(
                ids::agentbox::START,
                "/api/agentbox/gateway/start",
                "Starts a gateway with a template in a new sandbox; answers at once in `provisioning` and moves \
                 through configuring, starting and health_check to running (watch GET /api/agentbox/gateway or \
                 the logs). One per account: 409 while one is active.",
            ),
            MANAGE,
        ),
        route(
            RouteSpec::post::<NoInput, GatewayView>(
                ids::agentbox::STOP,
                "/api/agentbox/gateway/stop",
                "Stops the account's gateway: SIGTERM, a grace period, then killed; its key is revoked and its \
                 sandbox removed. Answers in `stopping`.",
            )
            .source(InputSource::OptionalBody),
            MANAGE,
        ),
        route(
            RouteSpec::get::<NoInput, TelegramConfigView>(
                ids::agentbox::TELEGRAM_CONFIG,
                "/api/agentbox/telegram/config",
                "The account's chat bot: its id and username, the channel policies, the relay's state and the \
                 updates waiting for the agent. The token is shown masked only.",
            ),
            READ,
        ),
        route(
            RouteSpec::put::<TelegramConfigRequest, TelegramConfigView>(
                ids::agentbox::TELEGRAM_CONFIG_SET,
                "/api/agentbox/telegram/config",
                "Saves the account's chat bot: the token is checked with the platform (getMe), sealed at rest and \
                 never shown again; svc sets the bot's webhook to its relay, and the agent long-polls svc. The \
                 gateway picks it up at its next start.",
            ),
            MANAGE,
        ),
    ]
}

/// Input of `PUT /api/agentbox/telegram/config`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct TelegramConfigRequest {
    /// The bot's token from the platform's BotFather (`<bot id>:<secret>`).
    #[garde(skip)]
    #[schemars(extend("writeOnly" = true))]
    pub bot_token: String,
    /// Who may talk to the agent in direct messages: `open` (anyone who finds the bot).
    #[garde(skip)]
    pub dm_policy: DmPolicy,
    /// Which groups the agent answers in: `allowlist` (only `allowed_groups`).
    #[garde(skip)]
    pub group_policy: GroupPolicy,
    /// Group chat ids the agent answers in (at most 50).
    #[serde(default)]
    #[garde(length(max = 50))]
    pub allowed_groups: Option<Vec<i64>>,
    /// Not accepted: see the error it gets.
    #[serde(default)]
    #[garde(skip)]
    #[schemars(extend("deprecated" = true))]
    pub webhook_url: Option<String>,
    /// Not accepted: see the error it gets.
    #[serde(default, rename = "webhookUrl")]
    #[garde(skip)]
    #[schemars(extend("deprecated" = true))]
    pub webhook_url_camel: Option<String>,
}

impl RouteInput for TelegramConfigRequest {
    fn check(&self) -> Vec<crate::input::FieldError> {
        let mut errors = Vec::new();
        for (field, value) in [("webhook_url", &self.webhook_url), ("webhookUrl", &self.webhook_url_camel)] {
            if value.is_some() {
                errors.push(crate::input::FieldError::new(
                    vec![field.into()],
                    "a webhook URL cannot be set: the agent long-polls, so the platform would post updates to the \
                     sandbox and get 405, and the agent would hear nothing. svc owns the bot's webhook and relays \
                     updates itself; leave this out",
                    "value_error",
                ));
            }
        }
        let token = self.bot_token.trim();
        let well_formed = token.split_once(':').is_some_and(|(id, secret)| {
            !id.is_empty()
                && id.chars().all(|c| c.is_ascii_digit())
                && (30..=100).contains(&secret.len())
                && secret.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if !well_formed {
            errors.push(crate::input::FieldError::new(
                vec!["bot_token".into()],
                "a bot token is <bot id>:<secret>, as the platform's BotFather gives it",
                "value_error",
            ));
        }
        errors
    }
}

/// Direct-message policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Anyone who finds the bot may talk to the agent.
    Open,
}

/// Group policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicy {
    /// Only the listed groups.
    Allowlist,
}

/// The account's chat bot.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TelegramConfigView {
    /// The bot's numeric id.
    pub bot_id: i64,
    /// The bot's username (talk to it at `t.me/<username>`).
    pub username: String,
    /// The token, masked: its bot id and last 4 characters.
    pub token: String,
    /// `open`.
    pub dm_policy: String,
    /// `allowlist`.
    pub group_policy: String,
    /// Group chat ids the agent answers in.
    pub allowed_groups: Vec<i64>,
    /// svc's relay for the bot.
    pub relay: TelegramRelayView,
}

/// svc's relay for a bot.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TelegramRelayView {
    /// `set` when the platform's webhook points at svc, else why not (`failed: ...`).
    pub status: String,
    /// Where the platform delivers the bot's updates.
    pub webhook_url: String,
    /// Updates kept for the agent, not yet confirmed by it.
    pub pending_updates: u64,
}

/// The templates.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TemplateList {
    /// Every template.
    pub templates: Vec<TemplateView>,
    /// What a running gateway costs per minute, USD in credits, whatever its template.
    pub credits_per_minute: Money,
    /// The memory each sandbox reserves, MiB.
    pub memory_mb: u64,
}

/// One template.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TemplateView {
    /// Its name, for `start`.
    pub name: String,
    /// What it does.
    pub summary: String,
    /// Whether it may trade (its key holds `gateway:wallet_write`).
    pub trades: bool,
    /// The scopes of the key its sandbox gets.
    pub scopes: Vec<String>,
    /// Gateways of this template booted ahead on this server: a start takes one and runs in
    /// about a second (unless the account has a chat bot, whose start boots its own).
    pub warm: u32,
}

/// A template's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TemplateName {
    /// Conservative, risk first, the 10% position-sizing rule.
    Trader,
    /// Aggressive, meme-aware.
    ShitcoinTrader,
    /// High-frequency scanner; never trades.
    Degen,
    /// Deep on-chain research reports.
    Analyst,
}

impl TemplateName {
    /// The name as written.
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateName::Trader => "trader",
            TemplateName::ShitcoinTrader => "shitcoin-trader",
            TemplateName::Degen => "degen",
            TemplateName::Analyst => "analyst",
        }
    }
}

/// Input of `POST /api/agentbox/gateway/start`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// The template to run.
    #[garde(skip)]
    pub template: TemplateName,
}

impl RouteInput for StartRequest {}

/// A gateway.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GatewayView {
    /// Its id.
    pub id: String,
    /// The template it runs.
    pub template: String,
    /// `provisioning`, `configuring`, `starting`, `health_check`, `running`, `stopping`,
    /// `stopped` or `failed`.
    pub state: String,
    /// Why it stopped or failed (credits ran out, a crash, a failed health check, its owner).
    pub reason: Option<String>,
    /// `healthy` or `unhealthy` by its last probe while running; `unknown` otherwise.
    pub health: String,
    /// Whether it sleeps: frozen after a spell with nothing to do, not billed, woken by the
    /// next chat message (its state stays `running`).
    pub asleep: bool,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// When it became healthy.
    pub started_at: Option<Timestamp>,
    /// When it stopped or failed.
    pub ended_at: Option<Timestamp>,
    /// Memory the sandbox uses now, bytes, while it runs and where the machine can tell.
    pub memory_bytes: Option<u64>,
    /// Its memory cap, MiB.
    pub memory_limit_mb: u64,
    /// Credits its running time has taken, USD.
    pub credits_burnt: Money,
    /// What it costs per minute while running, USD in credits.
    pub credits_per_minute: Money,
    /// Its log stream (server-sent events).
    pub logs: String,
}
