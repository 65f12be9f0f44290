//! Sign-in with an Ethereum wallet (EIP-4361) and the short-lived tokens it gives.
//!
//! The server hands out a nonce, stored with its expiry; the wallet signs a message naming
//! this site (from configuration, never from a request header) and that nonce; the nonce is used up by the one UPDATE that accepts it, so a
//! signed message signs in once, on any replica. The token is an HS256 JWT whose algorithm,
//! issuer and audience are pinned, and whose expiry is checked against the service's clock.

use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use svc_store::{Account, Store, StoreError};

/// Token issuer and audience: tokens are for this service's account routes only.
const ISSUER: &str = "svc";
const AUDIENCE: &str = "svc-account";
/// What the message asks the wallet holder to agree to.
pub const STATEMENT: &str = "Sign in to svc to manage API keys and credits.";
/// The chain the message names; any EVM wallet signs the same way.
pub const CHAIN_ID: u64 = 8453;

/// How sign-in works on this deployment.
#[derive(Clone)]
pub struct SignInConfig {
    /// The HS256 key. From the environment in production; random per process otherwise, so
    /// tokens then end with the process.
    secret: Vec<u8>,
    /// The site messages must name.
    site: Site,
    /// How long a token works.
    pub token_ttl: Duration,
    /// How long a nonce may wait to be signed.
    pub nonce_ttl: Duration,
}

impl SignInConfig {
    /// Tokens signed with `secret` (at least 32 bytes), valid for an hour.
    pub fn new(secret: impl Into<Vec<u8>>) -> Self {
        SignInConfig {
            secret: secret.into(),
            site: Site::default(),
            token_ttl: Duration::from_secs(3600),
            nonce_ttl: Duration::from_secs(600),
        }
    }

    /// A secret of 256 random bits, for a single process.
    pub fn ephemeral() -> Self {
        Self::new(format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple()))
    }

    /// Messages must name `site`: the deployment's public URL, or its listen address on a
    /// development run.
    pub fn for_site(self, site: Site) -> Self {
        SignInConfig { site, ..self }
    }

    /// The site messages must name.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The key tokens and sign-in-with-x nonces are made with.
    pub(crate) fn secret(&self) -> &[u8] {
        &self.secret
    }
}

/// The site a sign-in message names (EIP-4361 `domain` and `URI`). It comes from
/// configuration alone: taken from a request's `Host`, a message a victim signed for another
/// site could be replayed here with that `Host` and open the victim's account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    domain: String,
    uri: String,
}

impl Site {
    /// The site of a base URL such as `https://api.example.com` or `http://127.0.0.1:8402`.
    pub fn from_url(url: &str) -> Result<Self, InvalidSite> {
        let trimmed = url.trim_end_matches('/');
        let parsed: http::Uri = trimmed.parse().map_err(|_| InvalidSite(url.to_owned()))?;
        let scheme_ok = matches!(parsed.scheme_str(), Some("http" | "https"));
        let bare = parsed.path_and_query().is_none_or(|p| p.as_str().is_empty() || p.as_str() == "/");
        match parsed.authority() {
            Some(authority) if scheme_ok && bare && !authority.as_str().contains('@') => {
                Ok(Site { domain: authority.as_str().to_ascii_lowercase(), uri: trimmed.to_owned() })
            }
            _ => Err(InvalidSite(url.to_owned())),
        }
    }

    /// The authority messages must name (`api.example.com`, `127.0.0.1:8402`).
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The URI messages carry.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl Default for Site {
    /// The default listen address of a development run.
    fn default() -> Self {
        Site { domain: "127.0.0.1:8402".into(), uri: "http://127.0.0.1:8402".into() }
    }
}

/// A public URL that cannot name a sign-in site.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0:?} is not a base URL such as https://api.example.com (http or https, a host, no path)")]
pub struct InvalidSite(String);

impl std::fmt::Debug for SignInConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInConfig")
            .field("secret", &"<redacted>")
            .field("site", &self.site)
            .field("token_ttl", &self.token_ttl)
            .field("nonce_ttl", &self.nonce_ttl)
            .finish()
    }
}

/// Why a sign-in is refused. Each names its cause: none of them reveals anything a caller
/// could not see in its own message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    /// Not an EIP-4361 message.
    #[error("the message is not a sign-in-with-Ethereum (EIP-4361) message")]
    Malformed,
    /// The message names another site: a signature phished for it must not work here.
    #[error("the message is for another domain; sign the message_template of POST /api/auth/nonce")]
    WrongDomain,
    /// The nonce was never handed out, or is used, or expired.
    #[error("the nonce is unknown, already used or expired; ask POST /api/auth/nonce for a new one")]
    Nonce,
    /// The message's own validity window excludes now.
    #[error("the message is expired or not yet valid")]
    OutOfTime,
    /// The signature is not the message's address's.
    #[error("the signature does not match the message's address")]
    Signature,
}

/// Claims of a sign-in token.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iat: i64,
    exp: i64,
    iss: String,
    aud: String,
}

/// A new sign-in nonce and when it expires (unix ms).
pub async fn new_nonce(store: &Store, config: &SignInConfig, now_ms: i64) -> Result<(String, i64), StoreError> {
    // EIP-4361 nonces are at least 8 alphanumeric characters; 32 hex digits carry 128 bits.
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let expires_at = now_ms + millis(config.nonce_ttl);
    store.create_sign_in_nonce(&nonce, expires_at, now_ms).await?;
    Ok((nonce, expires_at))
}

/// The message a wallet signs for `nonce`, with `{address}` and `{issued_at}` to fill in.
pub fn message_template(domain: &str, uri: &str, nonce: &str) -> String {
    format!(
        "{domain} wants you to sign in with your Ethereum account:\n{{address}}\n\n{STATEMENT}\n\nURI: {uri}\nVersion: 1\n\
         Chain ID: {CHAIN_ID}\nNonce: {nonce}\nIssued At: {{issued_at}}"
    )
}

/// The message the wallet at `address` (hex, any case) signs for `nonce`, issued at `now_ms`:
/// the template filled in, the address written as EIP-55 asks. `None` for an address that is
/// not 20 bytes of hex. For browsers, which have no Keccak at hand to write the address so.
pub fn message_for(config: &SignInConfig, address: &str, nonce: &str, now_ms: i64) -> Option<String> {
    let mut bytes = [0u8; 20];
    let digits = address.trim().strip_prefix("0x").unwrap_or(address.trim());
    hex::decode_to_slice(digits, &mut bytes).ok()?;
    let template = message_template(config.site.domain(), config.site.uri(), nonce);
    Some(template.replace("{address}", &siwe::eip55(&bytes)).replace("{issued_at}", &svc_domain::rfc3339(now_ms)))
}

/// Checks a signed message and opens or finds the wallet's account. The nonce is used up
/// only when everything else holds, so a message refused for its signature cannot burn
/// someone else's nonce.
pub async fn sign_in(
    store: &Store,
    config: &SignInConfig,
    message: &str,
    signature: &str,
    now_ms: i64,
) -> Result<Result<Account, SignInError>, StoreError> {
    let Ok(parsed) = message.parse::<siwe::Message>() else { return Ok(Err(SignInError::Malformed)) };
    if !parsed.domain.as_str().eq_ignore_ascii_case(config.site.domain()) {
        return Ok(Err(SignInError::WrongDomain));
    }
    let Ok(now) = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000) else {
        return Ok(Err(SignInError::OutOfTime));
    };
    if !parsed.valid_at(&now) || *parsed.issued_at.as_ref() > now + time::Duration::minutes(5) {
        return Ok(Err(SignInError::OutOfTime));
    }
    let mut bytes = [0u8; 65];
    let hex_sig = signature.strip_prefix("0x").unwrap_or(signature);
    if hex::decode_to_slice(hex_sig, &mut bytes).is_err() || parsed.verify_eip191(&bytes).is_err() {
        return Ok(Err(SignInError::Signature));
    }
    if !store.use_sign_in_nonce(&parsed.nonce, now_ms).await? {
        return Ok(Err(SignInError::Nonce));
    }
    let wallet = format!("0x{}", hex::encode(parsed.address));
    Ok(Ok(crate::wallet_account(store, &wallet, now_ms).await?))
}

/// A token for `account`, and when it expires (unix ms).
pub fn token_for(config: &SignInConfig, account_id: &str, now_ms: i64) -> (String, i64) {
    let exp_ms = now_ms + millis(config.token_ttl);
    let claims = Claims {
        sub: account_id.to_owned(),
        iat: now_ms / 1000,
        exp: exp_ms / 1000,
        iss: ISSUER.into(),
        aud: AUDIENCE.into(),
    };
    let token =
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(&config.secret))
            .unwrap_or_else(|e| unreachable!("HS256 encoding of plain claims cannot fail: {e}"));
    (token, exp_ms)
}

/// The account id a token was given for, if the token is ours, untampered and unexpired.
pub fn account_of(config: &SignInConfig, token: &str, now_ms: i64) -> Option<String> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[AUDIENCE]);
    validation.set_required_spec_claims(&["exp", "sub", "iss", "aud"]);
    // Expiry is checked against the service's clock below, not the machine's.
    validation.validate_exp = false;
    let data = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(&config.secret), &validation).ok()?;
    (data.claims.exp * 1000 > now_ms).then_some(data.claims.sub)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_a_bare_http_base_url() {
        let site = Site::from_url("https://API.example.com/").expect("site");
        assert_eq!((site.domain(), site.uri()), ("api.example.com", "https://API.example.com"));
        let local = Site::from_url("http://127.0.0.1:9000").expect("site");
        assert_eq!(local.domain(), "127.0.0.1:9000");
        for bad in
            ["api.example.com", "ftp://x.example", "https://x.example/app", "https://u@x.example", "", "https://"]
        {
            assert!(Site::from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_token_names_its_account_until_it_expires() {
        let config = SignInConfig::new("a".repeat(32));
        let (token, exp) = token_for(&config, "acct_1", 1_000_000);
        assert_eq!(account_of(&config, &token, 1_000_000).as_deref(), Some("acct_1"));
        assert_eq!(account_of(&config, &token, exp), None, "expired at its expiry");
        assert_eq!(account_of(&SignInConfig::new("b".repeat(32)), &token, 1_000_000), None, "another secret");
    }

    #[test]
    fn tokens_with_another_algorithm_or_audience_are_refused() {
        let config = SignInConfig::new("a".repeat(32));
        let claims = |aud: &str| Claims {
            sub: "acct_1".into(),
            iat: 0,
            exp: 9_999_999_999,
            iss: ISSUER.into(),
            aud: aud.into(),
        };
        let key = EncodingKey::from_secret(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        let hs512 = jsonwebtoken::encode(&Header::new(Algorithm::HS512), &claims(AUDIENCE), &key).expect("encode");
        assert_eq!(account_of(&config, &hs512, 0), None, "the algorithm is pinned");
        let other = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims("other"), &key).expect("encode");
        assert_eq!(account_of(&config, &other, 0), None);
        // An unsigned token ("alg": "none") is not even parsed as ours.
        let none = format!("eyJhbGciOiJub25lIn0.{}.", hs512.split('.').nth(1).expect("payload"));
        assert_eq!(account_of(&config, &none, 0), None);
    }
}
