//! Accounts: opening them, their API keys and who presents one, signing in with a wallet,
//! and paying for calls with their credits.
//!
//! # Layout
//! - this module: accounts, API keys and their scopes; `opening`: opening an account, by name
//!   or for a wallet on its first need.
//! - [`auth`]: sign-in with a wallet, and the tokens it gives.
//! - [`credits`]: charging a call's price to an account's credits.
//! - [`siwx`]: sign-in-with-x, a payer proving its wallet before it pays, to be quoted its price.
//! - [`sessions`]: the console's sessions, signed in with the wallet or a key.
//! - [`views`]: the account routes' answers, as the catalogue defines them.
//!
//! A key is `svck_` and 64 hex digits (256 random bits); only its SHA-256 and its first
//! characters are stored, so a leaked database holds no usable key and the owner can still
//! tell keys apart. Lookup is by hash, so the secret is never compared byte by byte; every
//! refusal takes the same path and answers the same way, whatever the reason.

pub mod auth;
pub mod credits;
mod opening;
pub mod sessions;
pub mod siwx;
pub mod views;

use sha2::{Digest, Sha256};
use svc_store::{Account, ApiKeyRecord, NewApiKey, Store, StoreError};

pub use opening::{open_account, wallet_account};

/// What a key may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The credit-billed data routes (`/api/svc-tools/*`).
    Data,
    /// An agent sandbox reading its gateway.
    GatewayRead,
    /// An agent sandbox calling data routes through its gateway.
    GatewayData,
    /// An agent sandbox moving funds from its wallet.
    GatewayWalletWrite,
    /// Starting, stopping and watching the account's agent gateway (what an owner's tool
    /// needs; a sandbox's own key never has it).
    Gateway,
    /// Managing the account's seller agents: their configs, revenue and withdrawals.
    Agents,
}

impl Scope {
    /// Every scope, by name.
    pub const ALL: [Scope; 6] =
        [Scope::Data, Scope::GatewayRead, Scope::GatewayData, Scope::GatewayWalletWrite, Scope::Gateway, Scope::Agents];

    /// The scope's name in keys and requests.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Data => "data",
            Scope::GatewayRead => "gateway:read",
            Scope::GatewayData => "gateway:data",
            Scope::GatewayWalletWrite => "gateway:wallet_write",
            Scope::Gateway => "gateway",
            Scope::Agents => "agents",
        }
    }

    /// The scope named `name`.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The scopes `names` name, as the catalogue writes a route's (unknown names skipped).
    pub fn named(names: &[&str]) -> Vec<Scope> {
        names.iter().filter_map(|name| Scope::parse(name)).collect()
    }
}

/// Scopes a key may hold, one of which a route needs: small and `Copy`, so a refusal can
/// name every scope that would have been accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    /// The set of `scopes`.
    pub fn of(scopes: &[Scope]) -> Self {
        Scopes(scopes.iter().fold(0, |bits, scope| bits | Self::bit(*scope)))
    }

    fn bit(scope: Scope) -> u8 {
        1 << Scope::ALL.iter().position(|s| *s == scope).unwrap_or_default()
    }

    /// Whether `scope` is in the set.
    pub fn contains(self, scope: Scope) -> bool {
        self.0 & Self::bit(scope) != 0
    }

    /// The scopes' names, in [`Scope::ALL`]'s order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Scope::ALL.into_iter().filter(move |scope| self.contains(*scope)).map(Scope::as_str)
    }
}

impl std::fmt::Display for Scopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.names().collect();
        match names.split_last() {
            None => f.write_str("no scope"),
            Some((last, [])) => write!(f, "the {last} scope"),
            Some((last, rest)) => write!(f, "one of the {} or {last} scopes", rest.join(", ")),
        }
    }
}

/// Adds `amount` credits to an account by an operator's decision; `reference` makes a
/// repeated grant (a retried script) add once. Returns whether this call added them.
pub async fn grant_credits(
    store: &Store,
    account_id: &str,
    amount: svc_domain::Money,
    reference: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let credit = svc_store::NewCredit {
        id: &format!("cl_{}", uuid::Uuid::now_v7().simple()),
        account_id,
        amount: amount.atomic(),
        kind: "grant",
        route_id: None,
        reference: Some(reference),
        now_ms,
    };
    store.add_credits(&credit).await
}

/// The visible start of every key, so secret scanners and people recognise one.
pub const KEY_PREFIX: &str = "svck_";
/// Characters of a key shown in listings.
const SHOWN: usize = KEY_PREFIX.len() + 8;

/// A key just made: the secret, shown once, and what is stored of it.
#[derive(Debug)]
pub struct IssuedKey {
    /// The whole key; never stored, never logged.
    pub secret: String,
    /// The stored record.
    pub record: NewApiKey,
}

/// Makes a key for `account_id` with `scopes`, valid until `expires_at` (unix ms) if given,
/// and stores its hash.
pub async fn issue_key(
    store: &Store,
    account_id: &str,
    name: &str,
    scopes: &[Scope],
    expires_at: Option<i64>,
    now_ms: i64,
) -> Result<IssuedKey, StoreError> {
    // Two v4 UUIDs: 244 bits from the operating system's CSPRNG.
    let secret = format!("{KEY_PREFIX}{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let record = NewApiKey {
        id: format!("key_{}", uuid::Uuid::now_v7().simple()),
        account_id: account_id.to_owned(),
        name: name.to_owned(),
        prefix: secret[..SHOWN].to_owned(),
        hash: key_hash(&secret),
        scopes: names.join(" "),
        created_at: now_ms,
        expires_at,
    };
    store.create_api_key(&record).await?;
    Ok(IssuedKey { secret, record })
}

/// SHA-256 of a presented key, lowercase hex: how keys are looked up.
pub fn key_hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Who is calling with an API key.
#[derive(Debug, Clone)]
pub struct KeyHolder {
    /// The account.
    pub account: Account,
    /// The key used.
    pub key: ApiKeyRecord,
}

/// Why a presented key is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No key was presented.
    Missing,
    /// Unknown, revoked or expired: one answer for all, so a caller learns nothing about
    /// which keys exist.
    Invalid,
    /// A valid key without a scope the route needs: the scopes it would accept.
    Scope(Scopes),
    /// An account route called without a valid sign-in token (or, where keys are accepted,
    /// key).
    NotSignedIn,
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case, any
/// spacing), whatever kind of token it is.
pub fn bearer_token(authorization: Option<&str>) -> Option<&str> {
    let (scheme, token) = authorization?.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The key in `X-API-Key`, or in `Authorization: Bearer` when it has the key prefix (other
/// bearer tokens are sign-in tokens, not keys).
pub fn presented_key<'a>(api_key: Option<&'a str>, authorization: Option<&'a str>) -> Option<&'a str> {
    if let Some(key) = api_key {
        return Some(key.trim());
    }
    bearer_token(authorization).filter(|token| token.starts_with(KEY_PREFIX))
}

/// The holder of `key` if it is live and carries one of `accepted` scopes.
pub async fn authenticate(
    store: &Store,
    key: Option<&str>,
    accepted: &[Scope],
    now_ms: i64,
) -> Result<Result<KeyHolder, Refusal>, StoreError> {
    let Some(key) = key else { return Ok(Err(Refusal::Missing)) };
    // Hashed whatever it looks like, so a malformed key costs the same as a wrong one.
    let Some(record) = store.api_key_by_hash(&key_hash(key)).await? else { return Ok(Err(Refusal::Invalid)) };
    let Some(holder) = live_holder(store, record, now_ms).await? else { return Ok(Err(Refusal::Invalid)) };
    Ok(holder.may_use(accepted).map(|()| holder))
}

/// The holder of the key `record`, if the key is live and its account exists.
async fn live_holder(store: &Store, record: ApiKeyRecord, now_ms: i64) -> Result<Option<KeyHolder>, StoreError> {
    let live = record.revoked_at.is_none() && record.expires_at.is_none_or(|at| at > now_ms);
    if !live {
        return Ok(None);
    }
    let Some(account) = store.account(&record.account_id).await? else { return Ok(None) };
    // "Last used" is a courtesy: failing to write it refuses no call.
    if let Err(err) = store.key_used(&record.id, now_ms).await {
        tracing::warn!(key = %record.id, error = %err, "could not note a key's use");
    }
    Ok(Some(KeyHolder { account, key: record }))
}

impl KeyHolder {
    /// Whether the key carries one of `accepted` scopes.
    pub fn may_use(&self, accepted: &[Scope]) -> Result<(), Refusal> {
        let held: Vec<Option<Scope>> = self.key.scopes.split_whitespace().map(Scope::parse).collect();
        if accepted.iter().any(|scope| held.contains(&Some(*scope))) {
            Ok(())
        } else {
            Err(Refusal::Scope(Scopes::of(accepted)))
        }
    }
}

/// Who acts on an account: someone signed in with its wallet, or the holder of one of its
/// keys. The one rule of what each may call is [`Holder::may_call`].
#[derive(Debug, Clone)]
pub enum Holder {
    /// Signed in with the account's wallet: every account route.
    SignedIn(Account),
    /// Holding a live key: the routes that take keys with one of its scopes.
    Key(KeyHolder),
}

impl Holder {
    /// The account acted on.
    pub fn account(&self) -> &Account {
        match self {
            Holder::SignedIn(account) => account,
            Holder::Key(holder) => &holder.account,
        }
    }

    /// Whether this holder may call `route`: any route not for accounts; an account route
    /// when signed in, or with a key holding one of the scopes the route takes keys with.
    pub fn may_call(&self, route: &svc_catalogue::RouteSpec) -> Result<(), Refusal> {
        if !route.access.needs_account() {
            return Ok(());
        }
        match self {
            Holder::SignedIn(_) => Ok(()),
            Holder::Key(holder) => match keys_accepted(route) {
                KeysAccepted::No => Err(Refusal::NotSignedIn),
                KeysAccepted::WithScope(scopes) => holder.may_use(&scopes),
            },
        }
    }
}

/// The holder of `key`, if it is a live key, whatever its scopes: who signs in to the console
/// with it (and may then do only what its scopes allow).
pub async fn live_key(store: &Store, key: &str, now_ms: i64) -> Result<Option<KeyHolder>, StoreError> {
    let Some(record) = store.api_key_by_hash(&key_hash(key.trim())).await? else { return Ok(None) };
    live_holder(store, record, now_ms).await
}

/// The holder of key `key_id` of `account_id`, if that key is still live.
pub async fn key_holder(
    store: &Store,
    account_id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<Option<KeyHolder>, StoreError> {
    let Some(record) = store.api_key(key_id).await?.filter(|k| k.account_id == account_id) else { return Ok(None) };
    live_holder(store, record, now_ms).await
}

/// The keys `route` takes besides a sign-in token.
fn keys_accepted(route: &svc_catalogue::RouteSpec) -> KeysAccepted<Vec<Scope>> {
    let scopes = Scope::named(route.key_scopes);
    match route.access {
        svc_catalogue::Access::Account if !scopes.is_empty() => KeysAccepted::WithScope(scopes),
        _ => KeysAccepted::No,
    }
}

/// Which API keys an account route takes besides a sign-in token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysAccepted<S> {
    /// None: sign-in tokens only.
    No,
    /// Keys holding one of these scopes.
    WithScope(S),
}

/// The account calling an account route: by sign-in token, or by a live key of the account
/// where `keys` accepts it.
pub async fn calling_account(
    store: &Store,
    sign_in: &crate::auth::SignInConfig,
    api_key: Option<&str>,
    authorization: Option<&str>,
    keys: KeysAccepted<&[Scope]>,
    now_ms: i64,
) -> Result<Result<Account, Refusal>, StoreError> {
    if let Some(key) = presented_key(api_key, authorization) {
        let scopes = match keys {
            KeysAccepted::No => return Ok(Err(Refusal::NotSignedIn)),
            KeysAccepted::WithScope(scopes) => scopes,
        };
        return Ok(authenticate(store, Some(key), scopes, now_ms).await?.map(|holder| holder.account));
    }
    let Some(id) = bearer_token(authorization).and_then(|token| crate::auth::account_of(sign_in, token, now_ms)) else {
        return Ok(Err(Refusal::NotSignedIn));
    };
    Ok(store.account(&id).await?.ok_or(Refusal::NotSignedIn))
}

/// The account calling `route`, on routes for accounts (`None` on others): by sign-in token,
/// or by a live key of the account holding one of the route's key scopes. A route that names
/// no scope takes no key: what an agent's key may do is always written down.
pub async fn route_account(
    store: &Store,
    sign_in: &crate::auth::SignInConfig,
    route: &svc_catalogue::RouteSpec,
    api_key: Option<&str>,
    authorization: Option<&str>,
    now_ms: i64,
) -> Result<Result<Option<Account>, Refusal>, StoreError> {
    if !route.access.needs_account() {
        return Ok(Ok(None));
    }
    let keys = keys_accepted(route);
    let keys = match &keys {
        KeysAccepted::No => KeysAccepted::No,
        KeysAccepted::WithScope(scopes) => KeysAccepted::WithScope(scopes.as_slice()),
    };
    let found = calling_account(store, sign_in, api_key, authorization, keys, now_ms).await?;
    Ok(found.map(Some))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_x_api_key_or_a_bearer_token_with_the_key_prefix() {
        assert_eq!(presented_key(Some(" svck_1 "), Some("Bearer svck_2")), Some("svck_1"));
        assert_eq!(presented_key(None, Some("Bearer svck_2")), Some("svck_2"));
        assert_eq!(presented_key(None, Some("bearer   svck_3")), Some("svck_3"));
        assert_eq!(presented_key(None, Some("Bearer eyJhbGciOi.jwt")), None, "a sign-in token is not a key");
        assert_eq!(presented_key(None, Some("Basic svck_4")), None);
        assert_eq!(presented_key(None, Some("Bé")), None, "no panic on short or non-ASCII headers");
        assert_eq!(presented_key(None, None), None);
    }

    #[test]
    fn a_bearer_token_is_read_whatever_the_scheme_case_and_spacing() {
        assert_eq!(bearer_token(Some("Bearer svc_acct_1_ab")), Some("svc_acct_1_ab"));
        assert_eq!(bearer_token(Some("  BEARER   eyJ.x  ")), Some("eyJ.x"));
        assert_eq!(bearer_token(Some("Basic abc")), None);
        assert_eq!(bearer_token(Some("Bearer")), None);
        assert_eq!(bearer_token(None), None);
    }

    #[test]
    fn scopes_round_trip_by_name() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(Scope::parse("admin"), None);
    }
}
