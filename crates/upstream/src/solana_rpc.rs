//! A Solana node's JSON-RPC API (`POST` to the node's URL itself): the mint and freeze
//! authorities of token mints, read with `getMultipleAccounts` in `jsonParsed` encoding, up
//! to [`MAX_ACCOUNTS_PER_CALL`] mints per call. The node is the one svc settles Solana
//! payments through (`SVC_SOLANA_RPC_URL`), or the public mainnet node.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::json;
use svc_domain::{Clock, SolanaAddress};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// Most accounts one `getMultipleAccounts` call may name; a node refuses more.
pub const MAX_ACCOUNTS_PER_CALL: usize = 100;

/// How long a mint's authorities are kept. A revoked authority can never be set again, so a
/// cached "revoked" stays true; a live one may be revoked meanwhile, and a stale answer then
/// only makes the token look riskier than it is, never safer.
const AUTHORITIES_TTL: Duration = Duration::from_secs(60 * 60);

/// The token programs whose mints carry the two authorities.
const TOKEN_PROGRAMS: [&str; 2] = ["spl-token", "spl-token-2022"];

/// A mint's authorities as the chain holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MintAuthorities {
    /// Who may mint more of the token; `None` once revoked (the supply can no longer grow).
    pub mint_authority: Option<String>,
    /// Who may freeze any holder's token account; `None` once revoked.
    pub freeze_authority: Option<String>,
}

/// A JSON-RPC answer: a result, or an error object (which nodes send with HTTP 200).
#[derive(Debug, Deserialize)]
pub struct WireReply<T> {
    /// The method's result.
    pub result: Option<T>,
    /// The node's refusal.
    pub error: Option<WireRpcError>,
}

/// A JSON-RPC error object.
#[derive(Debug, Deserialize)]
pub struct WireRpcError {
    /// JSON-RPC error code (`-32602` invalid params, `-32005` node behind, ...).
    pub code: i64,
}

/// The result of `getMultipleAccounts`: one entry per address asked, `null` where the node
/// holds no account.
#[derive(Debug, Deserialize)]
pub struct WireAccounts {
    /// The accounts, in the order asked.
    pub value: Vec<Option<WireAccount>>,
}

/// One account.
#[derive(Debug, Deserialize)]
pub struct WireAccount {
    /// The account's data: parsed by the node where it knows the owning program, otherwise
    /// `[data, encoding]`.
    pub data: WireData,
}

/// An account's data in `jsonParsed` encoding.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum WireData {
    /// Data the node parsed: `{"program", "parsed": {"type", "info"}, "space"}`.
    Parsed {
        /// The owning program's name (`spl-token`, `spl-token-2022`, ...).
        program: String,
        /// What the program's account holds.
        parsed: WireParsed,
    },
    /// Anything else (raw bytes the node could not parse).
    Other(serde_json::Value),
}

/// A parsed account: its type and fields.
#[derive(Debug, Deserialize)]
pub struct WireParsed {
    /// `mint`, `account`, `multisig`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields of that type.
    #[serde(default)]
    pub info: serde_json::Value,
}

/// A token program's mint, as `jsonParsed` shows it. A revoked authority is `null` (or left
/// out, as newer nodes do).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireMint {
    /// The mint authority, absent or `null` when revoked.
    #[serde(default)]
    pub mint_authority: Option<String>,
    /// The freeze authority, absent or `null` when revoked.
    #[serde(default)]
    pub freeze_authority: Option<String>,
    /// Whether the mint was initialised.
    pub is_initialized: bool,
}

/// The authorities an account holds, when it is an initialised token mint; `None` for
/// anything else (a missing account, another program's account, a token account), which
/// says nothing about a mint's authorities.
pub fn authorities_of(account: Option<WireAccount>) -> Option<MintAuthorities> {
    let WireData::Parsed { program, parsed } = account?.data else { return None };
    if !TOKEN_PROGRAMS.contains(&program.as_str()) || parsed.kind != "mint" {
        return None;
    }
    let mint: WireMint = serde_json::from_value(parsed.info).ok()?;
    mint.is_initialized
        .then_some(MintAuthorities { mint_authority: mint.mint_authority, freeze_authority: mint.freeze_authority })
}

/// The Solana node adapter.
pub struct SolanaRpc {
    client: VendorClient,
    cache: TtlCache<MintAuthorities>,
}

impl std::fmt::Debug for SolanaRpc {
    /// Never prints the node's URL: providers put their API key in it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolanaRpc").finish_non_exhaustive()
    }
}

impl SolanaRpc {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        // Node providers take their key in the URL; no key header is sent.
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let client = VendorClient::new(Vendor::SolanaRpc, config, headers)?;
        Ok(SolanaRpc { client, cache: TtlCache::new(Vendor::SolanaRpc.family(), clock, 4096) })
    }

    /// The authorities of each of `mints`, in the order given: `None` where the address is
    /// not a Solana address or holds no initialised token mint (unknown, never clean). Mints
    /// answered within the last hour are not asked again; the rest go in as few calls as the
    /// node allows. Any call failing fails the whole answer.
    pub async fn mint_authorities(&self, mints: &[String]) -> Result<Vec<Option<MintAuthorities>>, UpstreamError> {
        let mut found: Vec<Option<MintAuthorities>> = mints.iter().map(|m| self.cache.get(m)).collect();
        let mut ask: Vec<&str> = Vec::new();
        for (mint, known) in mints.iter().zip(&found) {
            if known.is_none() && mint.parse::<SolanaAddress>().is_ok() && !ask.contains(&mint.as_str()) {
                ask.push(mint);
            }
        }
        let answers =
            futures::future::try_join_all(ask.chunks(MAX_ACCOUNTS_PER_CALL).map(|chunk| self.accounts(chunk))).await?;
        let mut answered: HashMap<&str, MintAuthorities> = HashMap::new();
        for (mint, answer) in ask.iter().zip(answers.into_iter().flatten()) {
            if let Some(authorities) = answer {
                self.cache.put((*mint).to_owned(), authorities.clone(), AUTHORITIES_TTL);
                answered.insert(mint, authorities);
            }
        }
        for (slot, mint) in found.iter_mut().zip(mints) {
            if slot.is_none() {
                *slot = answered.get(mint.as_str()).cloned();
            }
        }
        Ok(found)
    }

    /// One `getMultipleAccounts` call for `mints` (at most [`MAX_ACCOUNTS_PER_CALL`]).
    async fn accounts(&self, mints: &[&str]) -> Result<Vec<Option<MintAuthorities>>, UpstreamError> {
        let body = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "getMultipleAccounts",
            "params": [mints, {"encoding": "jsonParsed", "commitment": "confirmed"}],
        });
        // The node's URL is the endpoint itself (it may carry a key in its path or query).
        let reply: WireReply<WireAccounts> = self.client.post_json("", &body).await?;
        if let Some(error) = reply.error {
            return Err(UpstreamError::Rpc { vendor: Vendor::SolanaRpc, code: error.code });
        }
        let accounts = reply.result.ok_or_else(|| UpstreamError::Decode {
            vendor: Vendor::SolanaRpc,
            cause: "neither result nor error".into(),
        })?;
        if accounts.value.len() != mints.len() {
            return Err(UpstreamError::Decode {
                vendor: Vendor::SolanaRpc,
                cause: format!("{} accounts for {} addresses", accounts.value.len(), mints.len()),
            });
        }
        Ok(accounts.value.into_iter().map(authorities_of).collect())
    }
}
