//! Sign-In-With-X, the x402 `sign-in-with-x` extension, for EVM wallets: before it pays, a
//! client proves which wallet it pays from (an EIP-4361 message signed with EIP-191, sent
//! base64 JSON in the `SIGN-IN-WITH-X` header), so the challenge it gets back quotes that
//! wallet's own price.
//!
//! What it proves only changes a quote: the payment that follows is still checked against
//! the payer's tier, so a replayed proof buys nothing. Its nonce is therefore stateless, a
//! keyed digest of the minute the challenge was made, checked with the sign-in secret; the
//! message must name this site (from configuration, never from a request) and be at most
//! five minutes old.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::auth::SignInConfig;

use svc_x402::siwx::Proof;
pub use svc_x402::siwx::SIGN_IN_WITH_X;

/// How long a challenge's sign-in message may be signed and used.
pub const MAX_AGE_MS: i64 = 5 * 60 * 1000;

/// Challenges made within one window share their message time and nonce, so they can be
/// cached like any other challenge.
pub const WINDOW_MS: i64 = 60 * 1000;

/// Why a proof was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SiwxError {
    /// Not base64 JSON of the extension's shape.
    #[error("the sign-in-with-x header is not base64 JSON of a sign-in message")]
    Malformed,
    /// It names another site.
    #[error("the sign-in message names another site")]
    Site,
    /// Only EVM wallets sign in here.
    #[error("the sign-in message is not for an EVM chain (eip155:<id>)")]
    Chain,
    /// Too old, not yet valid, or expired.
    #[error("the sign-in message is expired or not yet valid; sign the newest challenge's")]
    Time,
    /// Not a nonce this service gave.
    #[error("the sign-in message's nonce is not one this service gave")]
    Nonce,
    /// The signature is not the address's.
    #[error("the sign-in message's signature is not its address's")]
    Signature,
}

/// The extension a challenge for `resource` (its full URL) advertises at `now_ms`, offering
/// sign-in on `chains` (CAIP-2 `eip155:<id>` networks).
pub fn advertised(config: &SignInConfig, resource: &str, chains: &[&str], now_ms: i64) -> Value {
    let issued_ms = now_ms - now_ms.rem_euclid(WINDOW_MS);
    let issued_at = rfc3339(issued_ms);
    let supported: Vec<Value> = chains.iter().map(|chain| json!({"chainId": chain, "type": "eip191"})).collect();
    json!({
        "info": {
            "domain": config.site().domain(),
            "uri": resource,
            "version": "1",
            "nonce": nonce(config, &issued_at),
            "issuedAt": issued_at,
            "expirationTime": rfc3339(issued_ms + MAX_AGE_MS),
            "statement": STATEMENT,
            "resources": [resource],
        },
        "supportedChains": supported,
        "schema": schema(),
    })
}

/// What the wallet holder agrees to by signing.
pub const STATEMENT: &str = "Sign in to svc to be quoted your own price.";

/// The wallet a `SIGN-IN-WITH-X` header proves (lowercase `0x…`), if the proof holds.
pub fn verify(config: &SignInConfig, header: &[u8], now_ms: i64) -> Result<String, SiwxError> {
    let json = base64::engine::general_purpose::STANDARD.decode(header).map_err(|_| SiwxError::Malformed)?;
    let proof: Proof = serde_json::from_slice(&json).map_err(|_| SiwxError::Malformed)?;
    let site = config.site();
    let same_origin = proof.uri == site.uri() || proof.uri.strip_prefix(site.uri()).is_some_and(|p| p.starts_with('/'));
    if proof.domain != site.domain() || !same_origin {
        return Err(SiwxError::Site);
    }
    proof.evm_chain_id().ok_or(SiwxError::Chain)?;
    let issued_ms = unix_ms(&proof.issued_at).ok_or(SiwxError::Malformed)?;
    let expired = proof.expiration_time.as_deref().map(unix_ms).map(|at| at.is_none_or(|at| at <= now_ms));
    let early = proof.not_before.as_deref().map(unix_ms).map(|at| at.is_none_or(|at| at > now_ms));
    if issued_ms > now_ms || now_ms - issued_ms > MAX_AGE_MS || expired == Some(true) || early == Some(true) {
        return Err(SiwxError::Time);
    }
    let expected = hex::decode(&proof.nonce).map_err(|_| SiwxError::Nonce)?;
    let mut mac = nonce_mac(config, &proof.issued_at);
    if expected.is_empty() || mac_verify(&mut mac, &expected).is_err() {
        return Err(SiwxError::Nonce);
    }
    let message = proof.message().ok_or(SiwxError::Malformed)?;
    let mut signature = [0u8; 65];
    let hex_sig = proof.signature.strip_prefix("0x").unwrap_or(&proof.signature);
    if hex::decode_to_slice(hex_sig, &mut signature).is_err() || message.verify_eip191(&signature).is_err() {
        return Err(SiwxError::Signature);
    }
    Ok(format!("0x{}", hex::encode(message.address)))
}

/// The nonce of messages issued at `issued_at`: 16 bytes of a keyed digest of it.
fn nonce(config: &SignInConfig, issued_at: &str) -> String {
    hex::encode(&nonce_mac(config, issued_at).finalize().into_bytes()[..16])
}

fn nonce_mac(config: &SignInConfig, issued_at: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(config.secret()).unwrap_or_else(|_| {
        unreachable!("HMAC takes keys of any length");
    });
    mac.update(b"sign-in-with-x nonce\0");
    mac.update(issued_at.as_bytes());
    mac
}

/// Checks `expected` against the leading bytes of the digest, in constant time.
fn mac_verify(mac: &mut Hmac<Sha256>, expected: &[u8]) -> Result<(), hmac::digest::MacError> {
    mac.clone().verify_truncated_left(expected)
}

fn rfc3339(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|at| at.format(&Rfc3339).ok())
        .unwrap_or_default()
}

fn unix_ms(text: &str) -> Option<i64> {
    let at = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
}

/// The JSON Schema of a proof, as the extension declares it.
fn schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "domain": {"type": "string"},
            "address": {"type": "string"},
            "statement": {"type": "string"},
            "uri": {"type": "string", "format": "uri"},
            "version": {"type": "string"},
            "chainId": {"type": "string"},
            "type": {"type": "string"},
            "nonce": {"type": "string"},
            "issuedAt": {"type": "string", "format": "date-time"},
            "expirationTime": {"type": "string", "format": "date-time"},
            "notBefore": {"type": "string", "format": "date-time"},
            "requestId": {"type": "string"},
            "resources": {"type": "array", "items": {"type": "string", "format": "uri"}},
            "signature": {"type": "string"},
        },
        "required": ["domain", "address", "uri", "version", "chainId", "type", "nonce", "issuedAt", "signature"],
    })
}
