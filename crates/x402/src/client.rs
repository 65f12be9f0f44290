//! The paying side: answer a challenge with a signed payment, as the official clients do (an
//! EIP-3009 authorization on EVM networks, a partially signed transfer on Solana). Used by
//! `svc pay` and by tests that must pay the server exactly like a real client.

use std::str::FromStr;

use serde_json::{Value, json};
use svc_chain_evm::{Address, B256, Payer, TokenDomain, U256};
use svc_chain_solana::{BuildError, ExactSvmPayment, ExactSvmRequirement, Keypair};

use crate::siwx::{Proof, SIGN_IN_WITH_X};
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
    /// The Solana transaction could not be built.
    #[error("the Solana transaction could not be built: {0}")]
    Solana(#[from] BuildError),
}

/// USDC's mint on Solana devnet (and testnet); mainnet's is [`crate::network::SOLANA_USDC`].
const SOLANA_DEVNET_USDC: &str = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";

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
    Ok(envelope(challenge, requirement, json!(payload)))
}

/// The first Solana `exact` requirement of `challenge` that names a fee payer, optionally on
/// `network` only: a CAIP-2 id as the challenge lists it, or `solana` for any Solana network.
pub fn choose_solana<'a>(challenge: &'a PaymentRequired, network: Option<&str>) -> Option<&'a PaymentRequirements> {
    challenge.accepts.iter().find(|r| {
        r.scheme == "exact"
            && r.network.starts_with("solana:")
            && network.is_none_or(|n| n == "solana" || r.network == n)
            && r.extra.as_ref().is_some_and(|e| e.get("feePayer").is_some_and(Value::is_string))
    })
}

/// The decimals of a Solana requirement's asset as far as the challenge tells: its
/// `extra.decimals`, else 6 for USDC's mints on mainnet and devnet. `None` for another mint,
/// whose decimals only a node can tell (the official client always reads them from the mint).
pub fn solana_decimals(requirement: &PaymentRequirements) -> Option<u8> {
    let stated = requirement.extra.as_ref().and_then(|e| e.get("decimals")).and_then(|d| match d {
        Value::Number(n) => n.as_u64().and_then(|n| u8::try_from(n).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    });
    stated.or_else(|| {
        [crate::network::SOLANA_USDC, SOLANA_DEVNET_USDC].contains(&requirement.asset.as_str()).then_some(6)
    })
}

/// A `PAYMENT-SIGNATURE` header paying the Solana `requirement` from `payer`: the transaction
/// the official client builds ([`svc_chain_solana::build_exact`]), with the asset's
/// `decimals` and `payment`'s token program, blockhash and nonce, in the envelope
/// [`pay_header`] sends.
pub fn pay_header_solana(
    challenge: &PaymentRequired,
    requirement: &PaymentRequirements,
    payer: &Keypair,
    decimals: u8,
    payment: &ExactSvmPayment<'_>,
) -> Result<String, PayError> {
    let extra = requirement.extra.as_ref().ok_or(PayError::Malformed("feePayer"))?;
    let text = |key: &str| extra.get(key).and_then(Value::as_str);
    let required = ExactSvmRequirement {
        amount: requirement.amount.parse().map_err(|_| PayError::Malformed("amount"))?,
        asset: &requirement.asset,
        decimals,
        pay_to: &requirement.pay_to,
        fee_payer: Some(text("feePayer").ok_or(PayError::Malformed("feePayer"))?),
        memo: text("memo"),
    };
    let transaction = svc_chain_solana::build_exact(&required, payer, payment)?;
    Ok(envelope(challenge, requirement, json!({"transaction": transaction})))
}

/// The x402 v2 payment message around `payload`: the challenge's resource, the accepted
/// requirement echoed, and the challenge's extensions copied, as the official clients send.
fn envelope(challenge: &PaymentRequired, requirement: &PaymentRequirements, payload: Value) -> String {
    let mut message = json!({
        "x402Version": 2,
        "payload": payload,
        "resource": challenge.resource,
        "accepted": requirement,
    });
    if let Some(extensions) = &challenge.extensions {
        message["extensions"] = Value::Object(extensions.clone());
    }
    crate::encode_header(&message)
}

/// The `SIGN-IN-WITH-X` header proving `payer`'s wallet on `network`, when the challenge
/// offers sign-in there: a server that takes it quotes the wallet its own price. `None` when
/// the challenge offers no sign-in on that network.
pub fn sign_in_header(challenge: &PaymentRequired, network: &str, payer: &Payer) -> Option<Result<String, PayError>> {
    let offer = challenge.extensions.as_ref()?.get(SIGN_IN_WITH_X)?;
    let chain = offer.get("supportedChains")?.as_array()?.iter().find(|c| {
        c.get("chainId").and_then(Value::as_str) == Some(network) && c.get("type") == Some(&json!("eip191"))
    })?;
    let info = offer.get("info")?;
    Some(sign_in_proof(info, chain, payer))
}

fn sign_in_proof(info: &Value, chain: &Value, payer: &Payer) -> Result<String, PayError> {
    let text = |key: &'static str| info.get(key).and_then(Value::as_str).ok_or(PayError::Malformed(key));
    let optional = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut proof = Proof {
        domain: text("domain")?.to_owned(),
        address: payer.address().to_checksum(None),
        statement: optional("statement"),
        uri: text("uri")?.to_owned(),
        version: text("version")?.to_owned(),
        chain_id: chain.get("chainId").and_then(Value::as_str).ok_or(PayError::Malformed("chainId"))?.to_owned(),
        kind: "eip191".to_owned(),
        nonce: text("nonce")?.to_owned(),
        issued_at: text("issuedAt")?.to_owned(),
        expiration_time: optional("expirationTime"),
        not_before: optional("notBefore"),
        request_id: optional("requestId"),
        resources: info
            .get("resources")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        signature: String::new(),
    };
    let message = proof.message().ok_or(PayError::Malformed("sign-in-with-x offer"))?;
    proof.signature = payer.sign_message(&message.to_string()).map_err(|e| PayError::Sign(e.to_string()))?;
    Ok(crate::codec::encode_header(&proof))
}
