//! Console sessions: a browser signed in with the account's wallet or with one of its keys.
//!
//! The browser holds a 256-bit random secret; the store holds its SHA-256, the account, the
//! key (for a key sign-in) and the session's CSRF token. Each request reads the session again,
//! so a sign-out, an expiry or the key's revocation ends it at once, on every replica. A new
//! secret is made at every sign-in and none is ever taken from the browser before it, so a
//! session cannot be fixed on someone. What a session may do is what its wallet sign-in or its
//! key may do ([`Holder::may_call`]): a key's session is never more than the key.

use std::time::Duration;

use svc_store::{NewConsoleSession, Store, StoreError};

use crate::{Holder, key_hash, key_holder};

/// A session just begun: the secret for the browser's cookie, shown nowhere else.
#[derive(Debug)]
pub struct Begun {
    /// The cookie's value.
    pub secret: String,
    /// When it ends, unix ms.
    pub expires_at: i64,
}

/// A live session.
#[derive(Debug, Clone)]
pub struct Session {
    /// Who acts: the wallet's account, or a key of it.
    pub holder: Holder,
    /// The token its forms carry.
    pub csrf: String,
    /// When it ends, unix ms.
    pub expires_at: i64,
}

/// 256 random bits, hex: a session's secret, its CSRF token, the sign-in form's token.
pub fn random_secret() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// Begins a session for `holder`, lasting `ttl` (and no longer than its key).
pub async fn begin(store: &Store, holder: &Holder, ttl: Duration, now_ms: i64) -> Result<Begun, StoreError> {
    let secret = random_secret();
    let csrf = random_secret();
    let mut expires_at = now_ms.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
    let key_id = match holder {
        Holder::SignedIn(_) => None,
        Holder::Key(key) => {
            expires_at = key.key.expires_at.map_or(expires_at, |at| at.min(expires_at));
            Some(key.key.id.as_str())
        }
    };
    let hash = key_hash(&secret);
    let new =
        NewConsoleSession { hash: &hash, account_id: &holder.account().id, key_id, csrf: &csrf, now_ms, expires_at };
    store.create_console_session(&new).await?;
    Ok(Begun { secret, expires_at })
}

/// The live session of `secret`: none for an unknown, ended or expired one, or one whose key
/// has been revoked or has expired.
pub async fn resume(store: &Store, secret: &str, now_ms: i64) -> Result<Option<Session>, StoreError> {
    let Some(found) = store.console_session(&key_hash(secret), now_ms).await? else { return Ok(None) };
    let holder = match &found.key_id {
        None => store.account(&found.account_id).await?.map(Holder::SignedIn),
        Some(key_id) => key_holder(store, &found.account_id, key_id, now_ms).await?.map(Holder::Key),
    };
    Ok(holder.map(|holder| Session { holder, csrf: found.csrf, expires_at: found.expires_at }))
}

/// Ends the session of `secret`, if there is one.
pub async fn end(store: &Store, secret: &str) -> Result<(), StoreError> {
    store.end_console_session(&key_hash(secret)).await.map(|_| ())
}

/// Whether `presented` is the session's CSRF token.
pub fn csrf_matches(session: &Session, presented: &str) -> bool {
    secrets_match(&session.csrf, presented)
}

/// Whether `presented` is `expected`, compared in constant time (an empty one never matches).
pub fn secrets_match(expected: &str, presented: &str) -> bool {
    use subtle::ConstantTimeEq as _;
    let (a, b) = (expected.as_bytes(), presented.as_bytes());
    !a.is_empty() && a.len() == b.len() && bool::from(a.ct_eq(b))
}
