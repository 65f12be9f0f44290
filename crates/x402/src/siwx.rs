//! The `sign-in-with-x` proof as the extension's clients send it (base64 JSON in the
//! `SIGN-IN-WITH-X` header), and the EIP-4361 message its fields spell: one definition for
//! the paying client that signs it and the server that checks it, so the two cannot drift.

use serde::{Deserialize, Serialize};

/// The extension's name, and the request header a proof comes in.
pub const SIGN_IN_WITH_X: &str = "sign-in-with-x";

/// A proof: the server's offer, completed with the wallet and its signature.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proof {
    /// The site's authority (`host[:port]`).
    pub domain: String,
    /// The signing wallet, EIP-55.
    pub address: String,
    /// What the holder agrees to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// The resource signed in for.
    pub uri: String,
    /// `1`.
    pub version: String,
    /// CAIP-2 chain, `eip155:<id>`.
    pub chain_id: String,
    /// `eip191`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The server's nonce.
    pub nonce: String,
    /// RFC 3339.
    pub issued_at: String,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<String>,
    /// The server's correlation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Resources the sign-in covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    /// EIP-191 signature of [`Proof::message`], 0x-hex.
    pub signature: String,
}

impl Proof {
    /// The numeric EVM chain id, for an `eip155:<id>` chain.
    pub fn evm_chain_id(&self) -> Option<u64> {
        self.chain_id.strip_prefix("eip155:")?.parse().ok()
    }

    /// The EIP-4361 message the fields spell, as the wallet signs it; `None` when a field does
    /// not parse (or the chain is not EVM).
    pub fn message(&self) -> Option<siwe::Message> {
        let mut address = [0u8; 20];
        hex::decode_to_slice(self.address.strip_prefix("0x")?, &mut address).ok()?;
        let stamp = |text: &str| text.parse::<siwe::TimeStamp>().ok();
        let optional_stamp = |text: &Option<String>| match text {
            Some(at) => stamp(at).map(Some),
            None => Some(None),
        };
        let resources = match &self.resources {
            Some(list) => list.iter().map(|r| r.parse().ok()).collect::<Option<Vec<_>>>()?,
            None => Vec::new(),
        };
        (self.version == "1").then_some(())?;
        Some(siwe::Message {
            domain: self.domain.parse().ok()?,
            address,
            statement: self.statement.clone(),
            uri: self.uri.parse().ok()?,
            version: siwe::Version::V1,
            chain_id: self.evm_chain_id()?,
            nonce: self.nonce.clone(),
            issued_at: stamp(&self.issued_at)?,
            expiration_time: optional_stamp(&self.expiration_time)?,
            not_before: optional_stamp(&self.not_before)?,
            request_id: self.request_id.clone(),
            resources,
        })
    }
}
