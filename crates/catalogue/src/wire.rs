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

/// The x402 v2 challenge a paid route answers 402 with: in the body as JSON and, base64
/// encoded, in the `PAYMENT-REQUIRED` header.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequired {
    /// Protocol version, 2.
    pub x402_version: u8,
    /// Why payment is (still) required, for humans; clients must not parse it.
    pub error: Option<String>,
    /// The resource being paid for.
    pub resource: ResourceInfo,
    /// Payment methods accepted, one per network.
    pub accepts: Vec<PaymentRequirements>,
    /// Protocol extensions (`bazaar` carries the route's input and output schema).
    pub extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What a payment buys.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// The URL requested, query included.
    pub url: String,
    /// The route's description.
    pub description: String,
    /// Media type of the paid answer.
    pub mime_type: String,
}

/// One accepted way to pay.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequirements {
    /// Payment scheme, `exact`.
    pub scheme: String,
    /// CAIP-2 network, e.g. `eip155:8453`.
    pub network: String,
    /// Price in the asset's atomic units, as a decimal string.
    pub amount: String,
    /// Token contract (EVM) or mint (Solana).
    pub asset: String,
    /// Recipient.
    pub pay_to: String,
    /// Seconds the challenge stays valid (300).
    pub max_timeout_seconds: u64,
    /// Scheme-specific data: EIP-712 `name`/`version` on EVM, `feePayer` on Solana.
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
}
