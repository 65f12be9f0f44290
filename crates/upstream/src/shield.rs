//! The transaction scanner (`POST /v0/evm/transaction/scan`, header `X-API-Key`): one call
//! whose `options` choose simulation (balance changes) and/or validation (a verdict).

use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};
use svc_catalogue::routes::infra::{
    ShieldAssetDiff, ShieldFeature, ShieldScanResponse, ShieldSimulation, ShieldUsdDiff, ShieldVerdict,
};
use svc_domain::{Chain, Clock, EvmChain};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig, units};

/// A scan is of one transaction against the chain's state now; a few seconds absorbs a
/// client's retry without serving a stale simulation.
const SCAN_TTL: Duration = Duration::from_secs(5);

/// What to ask the scanner for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanMode {
    /// Balance changes and the verdict.
    Simulate,
    /// The verdict only.
    Validate,
}

/// The transaction to scan, as validated input.
#[derive(Debug, Clone)]
pub struct ScanRequest<'a> {
    /// Chain.
    pub chain: EvmChain,
    /// The account whose changes are reported.
    pub account: &'a str,
    /// Sender.
    pub from: &'a str,
    /// Recipient or contract.
    pub to: &'a str,
    /// Calldata, `0x…`.
    pub data: &'a str,
    /// Value in wei, hex or decimal.
    pub value: Option<&'a str>,
}

/// The scanner's answer; everything is optional because each part depends on `options`.
#[derive(Debug, Clone, Deserialize)]
pub struct WireScan {
    /// The verdict.
    #[serde(default)]
    pub validation: Option<WireValidation>,
    /// The balance changes.
    #[serde(default)]
    pub simulation: Option<WireSimulation>,
}

/// The verdict part.
#[derive(Debug, Clone, Deserialize)]
pub struct WireValidation {
    /// `Success` or `Error`.
    #[serde(default)]
    pub status: Option<String>,
    /// `Benign`, `Warning`, `Malicious`, `Error`.
    #[serde(default)]
    pub result_type: Option<String>,
    /// Attack class.
    #[serde(default)]
    pub classification: Option<String>,
    /// Explanation.
    #[serde(default)]
    pub description: Option<String>,
    /// Why the scan failed.
    #[serde(default)]
    pub error: Option<String>,
    /// Findings.
    #[serde(default)]
    pub features: Vec<WireFeature>,
}

/// One finding.
#[derive(Debug, Clone, Deserialize)]
pub struct WireFeature {
    /// Severity.
    #[serde(rename = "type")]
    pub kind: String,
    /// Finding id.
    pub feature_id: String,
    /// Explanation.
    #[serde(default)]
    pub description: String,
    /// Address concerned.
    #[serde(default)]
    pub address: Option<String>,
}

/// The simulation part.
#[derive(Debug, Clone, Deserialize)]
pub struct WireSimulation {
    /// `Success` or `Error`.
    #[serde(default)]
    pub status: Option<String>,
    /// The scanned account's changes.
    #[serde(default)]
    pub account_summary: Option<WireAccountSummary>,
    /// Why the simulation failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// The scanned account's changes.
#[derive(Debug, Clone, Deserialize)]
pub struct WireAccountSummary {
    /// Per asset.
    #[serde(default)]
    pub assets_diffs: Vec<WireAssetDiff>,
    /// USD totals, as numbers or decimal strings.
    #[serde(default)]
    pub total_usd_diff: Option<Value>,
}

/// One asset's change.
#[derive(Debug, Clone, Deserialize)]
pub struct WireAssetDiff {
    /// The asset.
    pub asset: WireAsset,
    /// Received.
    #[serde(default, rename = "in")]
    pub received: Vec<WireTransfer>,
    /// Sent.
    #[serde(default)]
    pub out: Vec<WireTransfer>,
}

/// An asset.
#[derive(Debug, Clone, Deserialize)]
pub struct WireAsset {
    /// `NATIVE`, `ERC20`, …
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Contract (absent for the native coin).
    #[serde(default)]
    pub address: Option<String>,
    /// Decimals.
    #[serde(default)]
    pub decimals: Option<u8>,
    /// Ticker.
    #[serde(default)]
    pub symbol: Option<String>,
}

/// One movement of an asset; amounts as strings or numbers.
#[derive(Debug, Clone, Deserialize)]
pub struct WireTransfer {
    /// Atomic amount, hex `0x…` or decimal.
    #[serde(default)]
    pub raw_value: Option<Value>,
    /// Human amount.
    #[serde(default)]
    pub value: Option<Value>,
    /// USD value of the movement.
    #[serde(default)]
    pub usd_price: Option<Value>,
}

/// The scanner adapter.
#[derive(Debug)]
pub struct Shield {
    client: VendorClient,
    cache: TtlCache<ShieldScanResponse>,
}

/// The scanner's name for `chain`.
pub fn chain_name(chain: EvmChain) -> &'static str {
    match chain.chain() {
        Chain::Bnb => "bsc",
        Chain::Avalanche => "avalanche",
        other => other.as_str(),
    }
}

/// Decimal or `0x` hex wei as `0x` hex, for any width up to 78 digits, exactly.
pub fn wei_hex(value: &str) -> Option<String> {
    if let Some(hex) = value.strip_prefix("0x") {
        let trimmed = hex.trim_start_matches('0');
        return hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| format!("0x{}", if trimmed.is_empty() { "0" } else { trimmed }.to_lowercase()));
    }
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Long division by 16 on the decimal digits.
    let mut digits: Vec<u8> = value.bytes().map(|b| b - b'0').collect();
    let mut hex = Vec::new();
    while digits.iter().any(|d| *d != 0) {
        let mut remainder = 0u32;
        let mut quotient = Vec::with_capacity(digits.len());
        for d in &digits {
            let current = remainder * 10 + u32::from(*d);
            quotient.push(u8::try_from(current / 16).unwrap_or(0));
            remainder = current % 16;
        }
        hex.push(char::from_digit(remainder, 16).unwrap_or('0'));
        digits = quotient.into_iter().skip_while(|d| *d == 0).collect();
    }
    if hex.is_empty() {
        hex.push('0');
    }
    Some(format!("0x{}", hex.iter().rev().collect::<String>()))
}

fn number(value: Option<&Value>) -> f64 {
    match value {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn atomic(value: Option<&Value>) -> Option<u128> {
    match value? {
        Value::Number(n) => n.as_u64().map(u128::from),
        Value::String(s) => match s.strip_prefix("0x") {
            Some(hex) => u128::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        },
        _ => None,
    }
}

/// The human total of `transfers`: exact from the atomic amounts when the decimals are
/// known, else the sum of the human amounts.
fn human_total(transfers: &[WireTransfer], decimals: Option<u8>) -> String {
    if transfers.is_empty() {
        return "0".to_owned();
    }
    let exact: Option<u128> =
        transfers.iter().map(|t| atomic(t.raw_value.as_ref())).try_fold(0u128, |sum, v| sum.checked_add(v?));
    match (exact, decimals) {
        (Some(sum), Some(decimals)) => units::to_human(&sum.to_string(), decimals),
        _ => {
            let sum: f64 = transfers.iter().map(|t| number(t.value.as_ref())).sum();
            sum.to_string()
        }
    }
}

/// The scanner's answer in the service's shape.
pub fn to_response(scan: WireScan, mode: ScanMode) -> ShieldScanResponse {
    let validation = scan.validation;
    let failed = validation.as_ref().is_none_or(|v| v.status.as_deref().is_some_and(|s| s != "Success"));
    let verdict = match validation.as_ref().and_then(|v| v.result_type.as_deref()) {
        _ if failed => ShieldVerdict::Error,
        Some("Benign") => ShieldVerdict::Benign,
        Some("Warning") => ShieldVerdict::Warning,
        Some("Malicious") => ShieldVerdict::Malicious,
        _ => ShieldVerdict::Error,
    };
    let (classification, description, features) = match validation {
        Some(v) => (
            v.classification.filter(|c| !c.is_empty()),
            v.description.filter(|d| !d.is_empty()).or(v.error),
            v.features
                .into_iter()
                .map(|f| ShieldFeature {
                    kind: f.kind,
                    feature_id: f.feature_id,
                    description: f.description,
                    address: f.address,
                })
                .collect(),
        ),
        None => (None, Some("the scanner returned no verdict".to_owned()), Vec::new()),
    };
    let simulation = match (mode, scan.simulation) {
        (ScanMode::Simulate, Some(sim)) if sim.status.as_deref().is_none_or(|s| s == "Success") => {
            let summary =
                sim.account_summary.unwrap_or(WireAccountSummary { assets_diffs: Vec::new(), total_usd_diff: None });
            let totals = summary.total_usd_diff.unwrap_or(Value::Null);
            Some(ShieldSimulation {
                assets_diffs: summary
                    .assets_diffs
                    .into_iter()
                    .map(|diff| {
                        let usd_in: f64 = diff.received.iter().map(|t| number(t.usd_price.as_ref())).sum();
                        let usd_out: f64 = diff.out.iter().map(|t| number(t.usd_price.as_ref())).sum();
                        ShieldAssetDiff {
                            address: diff.asset.address.filter(|_| diff.asset.kind.as_deref() != Some("NATIVE")),
                            symbol: diff.asset.symbol.unwrap_or_default(),
                            amount_in: human_total(&diff.received, diff.asset.decimals),
                            amount_out: human_total(&diff.out, diff.asset.decimals),
                            usd: usd_in - usd_out,
                        }
                    })
                    .collect(),
                total_usd_diff: ShieldUsdDiff {
                    received: number(totals.get("in")),
                    out: number(totals.get("out")),
                    total: number(totals.get("total")),
                },
            })
        }
        _ => None,
    };
    ShieldScanResponse { result_type: verdict, classification, description, features, simulation }
}

impl Shield {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.key {
            let mut value = HeaderValue::from_str(key).map_err(|_| UpstreamError::Config {
                vendor: Vendor::Blockaid,
                cause: "key has characters a header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Ok(Shield {
            client: VendorClient::new(Vendor::Blockaid, config, headers)?,
            cache: TtlCache::new(Vendor::Blockaid.family(), clock, 1024),
        })
    }

    /// Scans `request` in `mode`.
    pub async fn scan(&self, request: &ScanRequest<'_>, mode: ScanMode) -> Result<ShieldScanResponse, UpstreamError> {
        let value = request.value.and_then(wei_hex).unwrap_or_else(|| "0x0".to_owned());
        let options = match mode {
            ScanMode::Simulate => json!(["simulation", "validation"]),
            ScanMode::Validate => json!(["validation"]),
        };
        let body = json!({
            "chain": chain_name(request.chain),
            "account_address": request.account,
            "data": {"from": request.from, "to": request.to, "data": request.data, "value": value},
            "metadata": {"non_dapp": true},
            "block": "latest",
            "options": options,
        });
        let key = format!("{mode:?}:{body}");
        self.cache
            .get_or_fetch(key, SCAN_TTL, || async {
                let wire: WireScan = self.client.post_json_with_query("/v0/evm/transaction/scan", &[], &body).await?;
                Ok(to_response(wire, mode))
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decimal_wei_becomes_the_same_number_in_hex(wei in any::<u128>()) {
            prop_assert_eq!(wei_hex(&wei.to_string()), Some(format!("0x{wei:x}")));
            prop_assert_eq!(wei_hex(&format!("0x{wei:X}")), Some(format!("0x{wei:x}")));
        }
    }

    #[test]
    fn wei_converts_to_hex_exactly_at_any_width() {
        assert_eq!(wei_hex("0").as_deref(), Some("0x0"));
        assert_eq!(wei_hex("255").as_deref(), Some("0xff"));
        assert_eq!(wei_hex("1500000000000000000").as_deref(), Some("0x14d1120d7b160000"));
        assert_eq!(wei_hex("0x00FF").as_deref(), Some("0xff"));
        let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        assert_eq!(wei_hex(max), Some(format!("0x{}", "f".repeat(64))));
        assert_eq!(wei_hex("12a"), None);
    }
}
