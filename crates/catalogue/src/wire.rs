//! The error bodies every route can answer with, defined once so the HTTP layer serialises
//! exactly what the OpenAPI document describes. The shapes follow FastAPI, which the original
//! service spoke, so its clients keep parsing our errors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::input::FieldError;

/// Every non-422 error: `{"detail": "...", "code": "..."}` plus fields the error needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// What went wrong, for a human.
    pub detail: String,
    /// What went wrong, for a machine: `not_found`, `method_not_allowed`, `payload_too_large`,
    /// `unsupported_media_type`, `rate_limited`, `not_implemented`, `internal_error`, ...
    pub code: String,
    /// Extra facts some errors carry (`balance`, `price`, `retry_after`, `allowed`, ...).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The 422 body: `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "HTTPValidationError")]
pub struct HttpValidationError {
    /// Every invalid field found.
    pub detail: Vec<FieldError>,
}

pub use svc_x402_wire::{PaymentRequired, PaymentRequirements, ResourceInfo};

/// What a free preview (`?preview=true`) says of itself, in its answer's `preview` field:
/// the price to pay for the whole answer, the caller's remaining quota, and what was cut. One
/// type, so the preview schema OpenAPI documents for every paid route is the one served.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PreviewInfo {
    /// What the whole answer costs.
    pub price: PreviewPrice,
    /// When the preview was served (RFC 3339, UTC).
    pub served_at: String,
    /// Previews left in the caller's hourly quota; `null` when previews are not limited.
    pub remaining: Option<u32>,
    /// When the oldest preview in the window frees a slot; `null` when not limited.
    pub resets_at: Option<String>,
    /// How to get the whole answer.
    pub pay: String,
    /// Whether anything of the answer was left out.
    pub truncated: bool,
    /// Why a route that acts shows no data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Items kept of each list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<usize>,
    /// Every list that was cut: where it is, how long it is, and how much is shown. Counts
    /// inside the answer (`total`, `result_count`) describe the whole answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<Vec<PreviewList>>,
    /// Fields left out wherever they appear (`thesis`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Vec<String>>,
    /// When the data was made, as the answer says (`generated_at`, `as_of`, ...), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_as_of: Option<String>,
}

/// The price a preview quotes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PreviewPrice {
    /// List price in USD, decimal.
    pub usd: String,
    /// List price in USDC atomic units (6 decimals).
    pub atomic: String,
    /// Always `USDC`.
    pub asset: String,
    /// The credit price under `/api/svc-tools/*`, in USD, decimal.
    pub credits: String,
    /// The caller's discount tier, when it presented a live API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub your_tier: Option<svc_domain::DiscountTier>,
    /// The caller's credit price after its discount, when it presented a live API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub your_credits: Option<String>,
}

/// One list a preview cut.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PreviewList {
    /// JSON pointer to the list in the answer (`/` for the answer itself).
    pub path: String,
    /// Its length in the whole answer.
    pub total: usize,
    /// How many items the preview shows.
    pub shown: usize,
}
