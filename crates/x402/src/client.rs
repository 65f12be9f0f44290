//! The paying side: answer a challenge with a signed payment, as the official clients do. Used
//! by `svc pay` and by tests that must pay the server exactly like a real client.

use std::str::FromStr;

use serde_json::{Value, json};
use svc_chain_evm::{Address, B256, Payer, TokenDomain, U256};

use crate::wire::{PaymentRequired, PaymentRequirements};

/// Why a challenge could not be paid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayError {
    /// No requirement this client can sign for.
    #[error("no EVM exact requirement with an EIP-712 domain in the challenge")]
    NothingPayable,
    /// A requirement field that does not parse.
    #[error("the challenge's {0} does not parse")]
    Malformed(&'static str),
    /// Signing failed.
    #[error("signing failed: {0}")]
    Sign(String),
}

/// The first requirement of `challenge` an EVM wallet can pay, optionally on `network` only.
pub fn choose<'a>(challenge: &'a PaymentRequired, network: Option<&str>) -> Option<&'a PaymentRequirements> {
    challenge.accepts.iter().find(|r| {
        r.scheme == "exact"
            && r.network.starts_with("eip155:")
            && network.is_none_or(|n| r.network == n)
            && r.extra.as_ref().is_some_and(|e| e.contains_key("name") && e.contains_key("version"))
    })
}

/// A `PAYMENT-SIGNATURE` header value paying `requirement`, valid from 0 until
/// `now + maxTimeoutSeconds`, with the caller's random `nonce`.
pub fn pay_header(
    challenge: &PaymentRequired,
    requirement: &PaymentRequirements,
    payer: &Payer,
    now: u64,
    nonce: B256,
) -> Result<String, PayError> {
    let extra = requirement.extra.as_ref().ok_or(PayError::NothingPayable)?;
    let text = |key: &'static str| extra.get(key).and_then(Value::as_str).ok_or(PayError::Malformed(key));
    let chain_id = requirement
        .network
        .strip_prefix("eip155:")
        .and_then(|id| id.parse().ok())
        .ok_or(PayError::Malformed("network"))?;
    let domain = TokenDomain {
        name: text("name")?.to_owned(),
        version: text("version")?.to_owned(),
        chain_id,
        token: Address::from_str(&requirement.asset).map_err(|_| PayError::Malformed("asset"))?,
    };
    let to = Address::from_str(&requirement.pay_to).map_err(|_| PayError::Malformed("payTo"))?;
    let value = U256::from_str(&requirement.amount).map_err(|_| PayError::Malformed("amount"))?;
    let valid_before = now.saturating_add(requirement.max_timeout_seconds);
    let payload =
        payer.authorize(&domain, to, value, 0, valid_before, nonce).map_err(|e| PayError::Sign(e.to_string()))?;
    let mut message = json!({
        "x402Version": 2,
        "payload": payload,
        "resource": challenge.resource,
        "accepted": requirement,
    });
    if let Some(extensions) = &challenge.extensions {
        message["extensions"] = Value::Object(extensions.clone());
    }
    Ok(crate::encode_header(&message))
}
