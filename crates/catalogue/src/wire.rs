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
