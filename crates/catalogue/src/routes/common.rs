//! Types shared by several route families.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::Chain;

use crate::RouteInput;

/// The input of a route that takes none. Unknown query parameters are ignored, as FastAPI does.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, garde::Validate)]
pub struct NoInput {}

impl RouteInput for NoInput {}

/// An RFC 3339 UTC timestamp such as `2026-11-22T10:30:00Z`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Timestamp(pub String);

impl JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "format": "date-time", "description": "RFC 3339 UTC timestamp." })
    }
}

/// Health of one upstream source behind a computed answer, so a client can tell fresh data
/// from data served while a source was failing.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SourceStatus {
    /// The source, e.g. `chaindata.smart-money.netflow`.
    pub source: String,
    /// Whether the source answered at its last poll.
    pub status: SourceState,
    /// When the source last answered successfully.
    pub as_of: Option<Timestamp>,
    /// Why the source is degraded, without vendor internals.
    pub detail: Option<String>,
}

/// State of an upstream source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceState {
    /// Answered at the last poll.
    Ok,
    /// Answered earlier but not at the last poll; its data is older than usual.
    Degraded,
    /// Has not answered; dimensions depending on it are marked.
    Failed,
}

/// A token as the signal and data products name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenRef {
    /// Chain the token lives on.
    pub chain: Chain,
    /// Contract address (EVM) or mint (Solana).
    pub address: String,
    /// Ticker symbol.
    pub symbol: String,
    /// Display name.
    pub name: String,
}

/// A wallet with the label the analytics provider gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LabelledWallet {
    /// Wallet address.
    pub address: String,
    /// Label such as `Smart Trader` or `Fund: Example Capital`; absent when unlabelled.
    pub label: Option<String>,
    /// Net USD flow of this wallet in the token over the window (negative = selling).
    pub net_flow_usd: f64,
}
