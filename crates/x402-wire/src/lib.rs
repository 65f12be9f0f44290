//! The x402 v2 messages, field for field as the official SDKs write them: one definition that
//! the paywall sends, the client reads and the OpenAPI document describes, so the documented
//! 402 cannot drift from the one sent. Optional fields are omitted when empty, as the
//! reference server does, and unknown fields are kept where a message is passed on, so
//! nothing a client sent is lost on the way to a facilitator.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version this crate speaks (v1 payloads are read, never written).
pub const X402_VERSION: u8 = 2;

/// The x402 v2 challenge a paid route answers 402 with: in the body as JSON and, base64
/// encoded, in the `PAYMENT-REQUIRED` header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequired {
    /// Protocol version, 2.
    pub x402_version: u8,
    /// Why payment is (still) required, for humans; clients must not parse it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The resource being paid for.
    pub resource: ResourceInfo,
    /// Payment methods accepted, one per network.
    pub accepts: Vec<PaymentRequirements>,
    /// Protocol extensions (`bazaar` carries the route's input and output schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}

/// What a payment buys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// The URL requested, query included.
    pub url: String,
    /// The route's description (optional in the protocol; svc always sends it).
    #[serde(default)]
    pub description: String,
    /// Media type of the paid answer (optional in the protocol; svc always sends it).
    #[serde(default)]
    pub mime_type: String,
}

// Built deterministically from configuration and price, because the client's copy is
// matched against a rebuild when it pays.
/// One accepted way to pay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// A v2 payment as the client sent it. `payload` stays raw: its shape depends on the scheme
/// and network, and it is checked by the chain crates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentPayload {
    /// 2.
    pub x402_version: u8,
    /// The resource, copied from the challenge (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Value>,
    /// The requirement the client chose, copied from `accepts`.
    pub accepted: PaymentRequirements,
    /// The signed authorization.
    pub payload: Value,
    /// Extensions echoed and added by the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}

/// The result of settling, in the `PAYMENT-RESPONSE` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettleResponse {
    /// Whether the payment went through.
    pub success: bool,
    /// Reason code on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_reason: Option<String>,
    /// Human text on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Who paid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// Transaction hash (EVM) or signature (Solana); empty when nothing was sent.
    pub transaction: String,
    /// CAIP-2 network.
    pub network: String,
}

/// One (version, scheme, network) a facilitator handles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupportedKind {
    /// Protocol version.
    pub x402_version: u8,
    /// Scheme.
    pub scheme: String,
    /// CAIP-2 network.
    pub network: String,
    /// Scheme data the server must copy into its requirements (`feePayer` on Solana).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

/// A facilitator's `GET /supported`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SupportedResponse {
    /// What it can verify and settle.
    pub kinds: Vec<SupportedKind>,
    /// Extensions it understands.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Its signing addresses by CAIP-2 family (`eip155:*`).
    #[serde(default)]
    pub signers: Map<String, Value>,
}
