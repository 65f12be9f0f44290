//! Agent sandboxes: start a templated agent gateway in an isolated sandbox, watch it, stop
//! it. One gateway per account; every answer is the caller's own. The log stream
//! (`GET /api/agentbox/gateway/logs`, server-sent events) is served beside these routes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::Money;

use super::common::{NoInput, Timestamp};
use crate::route::Access;
use crate::{InputSource, RouteInput, RouteSpec};

/// Where the log stream hangs. It answers server-sent events, not JSON, so it is served beside
/// the route table; its OpenAPI entry is [`crate::openapi::logs_operation`].
pub const LOGS_PATH: &str = "/api/agentbox/gateway/logs";

/// Scopes a key needs to read the gateway: the owner's `gateway`, or the sandbox's own
/// `gateway:read`.
const READ: &[&str] = &["gateway", "gateway:read"];
/// Scopes a key needs to start or stop it: the owner's `gateway` only, so an agent cannot
/// start more of itself.
const MANAGE: &[&str] = &["gateway"];

/// The sandbox routes.
pub fn routes() -> Vec<RouteSpec> {
    let route = |spec: RouteSpec, scopes| spec.for_account(Access::Account).key_scopes(scopes).tag("agentbox");
    vec![
        route(
            RouteSpec::get::<NoInput, TemplateList>(
                "agentbox.templates",
                "/api/agentbox/templates",
                "The agent templates a gateway can start with, what each may do, and what a running gateway \
                 costs in credits per minute.",
            ),
            READ,
        ),
        route(
            RouteSpec::get::<NoInput, GatewayView>(
                "agentbox.gateway",
                "/api/agentbox/gateway",
                "The account's gateway (the running one, else the latest): state, template, health, memory, \
                 credits burnt, and why it stopped or failed.",
            ),
            READ,
        ),
        route(
            RouteSpec::post::<StartRequest, GatewayView>(
                "agentbox.start",
                "/api/agentbox/gateway/start",
                "Starts a gateway with a template in a new sandbox; answers at once in `provisioning` and moves \
                 through configuring, starting and health_check to running (watch GET /api/agentbox/gateway or \
                 the logs). One per account: 409 while one is active.",
            ),
            MANAGE,
        ),
        route(
            RouteSpec::post::<NoInput, GatewayView>(
                "agentbox.stop",
                "/api/agentbox/gateway/stop",
                "Stops the account's gateway: SIGTERM, a grace period, then killed; its key is revoked and its \
                 sandbox removed. Answers in `stopping`.",
            )
            .source(InputSource::OptionalBody),
            MANAGE,
        ),
    ]
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
