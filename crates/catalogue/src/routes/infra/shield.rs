//! Transaction security: an EVM transaction simulated or validated before it is signed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{EvmAddress, EvmChain};

use super::{evm_base, infra};
use crate::{RouteInput, RouteSpec, ids};

/// The shield routes, in catalogue order.
pub(super) fn routes() -> Vec<RouteSpec> {
    vec![
        infra(
            RouteSpec::post::<ShieldSimulateRequest, ShieldScanResponse>(
                ids::infra::SHIELD_SIMULATE,
                tools!("/shield/simulate"),
                "Simulate an EVM transaction before signing: asset changes in USD and a security verdict.",
            ),
            "shield",
        ),
        infra(
            RouteSpec::post::<ShieldValidateRequest, ShieldScanResponse>(
                ids::infra::SHIELD_VALIDATE,
                tools!("/shield/validate"),
                "Security verdict on an EVM transaction (benign, warning, malicious) with the features found.",
            ),
            "shield",
        ),
    ]
}

fn empty_calldata() -> String {
    "0x".to_owned()
}

/// An EVM transaction to scan.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldTxData {
    /// Sender (defaults to `from_address`).
    #[garde(skip)]
    pub from: Option<EvmAddress>,
    /// Recipient or contract.
    #[garde(skip)]
    pub to: EvmAddress,
    /// Calldata, `0x`-prefixed hex (default `0x`, a plain transfer), up to 64 KiB of it.
    // `0x` and 64 KiB as hex: the largest body the schema allows fits svc's default body
    // limit (256 KiB), so whatever validates can be paid for.
    #[serde(default = "empty_calldata")]
    #[garde(pattern("^0x([0-9a-fA-F]{2})*$"), length(max = 131_074))]
    pub data: String,
    /// Value in wei, hex (`0x…`) or decimal.
    #[garde(pattern("^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$"))]
    pub value: Option<String>,
}

/// Input of `POST {tools}/shield/simulate`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldSimulateRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// The transaction.
    #[garde(dive)]
    pub tx_data: ShieldTxData,
    /// Account whose balance changes are reported.
    #[garde(skip)]
    pub from_address: EvmAddress,
}

impl RouteInput for ShieldSimulateRequest {}

/// Input of `POST {tools}/shield/validate`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct ShieldValidateRequest {
    /// EVM network (default `base`).
    #[serde(default = "evm_base")]
    #[garde(skip)]
    pub network: EvmChain,
    /// The transaction.
    #[garde(dive)]
    pub tx_data: ShieldTxData,
}

impl RouteInput for ShieldValidateRequest {}

/// Security verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ShieldVerdict {
    /// Nothing found.
    Benign,
    /// Worth a look.
    Warning,
    /// Do not sign.
    Malicious,
    /// The scan failed.
    Error,
}

/// Answer of `shield/simulate` and `shield/validate`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldScanResponse {
    /// Verdict.
    pub result_type: ShieldVerdict,
    /// Attack class, when malicious.
    pub classification: Option<String>,
    /// Explanation.
    pub description: Option<String>,
    /// Findings.
    pub features: Vec<ShieldFeature>,
    /// Balance changes (simulate only).
    pub simulation: Option<ShieldSimulation>,
}

/// A finding.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldFeature {
    /// Severity: Malicious, Warning, Benign or Info.
    #[serde(rename = "type")]
    pub kind: String,
    /// Finding id.
    pub feature_id: String,
    /// Explanation.
    pub description: String,
    /// Address concerned.
    pub address: Option<String>,
}

/// Simulated balance changes of the account.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldSimulation {
    /// Per asset.
    pub assets_diffs: Vec<ShieldAssetDiff>,
    /// Totals, USD.
    pub total_usd_diff: ShieldUsdDiff,
}

/// One asset's change.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldAssetDiff {
    /// Token address (absent for the native coin).
    pub address: Option<String>,
    /// Ticker.
    pub symbol: String,
    /// Received, human units.
    pub amount_in: String,
    /// Sent, human units.
    pub amount_out: String,
    /// Net value, USD.
    pub usd: f64,
}

/// USD totals.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ShieldUsdDiff {
    /// Received.
    #[serde(rename = "in")]
    pub received: f64,
    /// Sent.
    pub out: f64,
    /// Net.
    pub total: f64,
}
