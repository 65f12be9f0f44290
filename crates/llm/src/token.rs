//! LLM-proxy tokens: `svc_<account_id>_<signature>`, the signature an HMAC-SHA256 over the
//! account id and the account's token version.
//!
//! Nothing is stored per token: a token verifies when its signature matches the account's
//! current version, so rotating (one more version) invalidates every earlier token at once,
//! without a deny-list. The signature is compared in constant time, and every refusal —
//! malformed, forged, rotated — is the same `None`.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The tokens' first field.
pub const PREFIX: &str = "svc";

/// The server secret tokens are signed with.
#[derive(Clone)]
pub struct TokenKey(Vec<u8>);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

/// A token, split into its account and its signature (not yet verified).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presented<'a> {
    /// The account the token claims.
    pub account_id: &'a str,
    signature: Vec<u8>,
}

impl TokenKey {
    /// A key from a secret (at least 32 bytes; the caller checks).
    pub fn new(secret: impl Into<Vec<u8>>) -> Self {
        TokenKey(secret.into())
    }

    /// A key of 256 random bits: tokens then end with the process.
    pub fn ephemeral() -> Self {
        let mut secret = uuid::Uuid::new_v4().as_bytes().to_vec();
        secret.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        TokenKey(secret)
    }

    fn mac(&self, account_id: &str, version: u64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
        mac.update(b"svc-llm-token\0");
        mac.update(account_id.as_bytes());
        mac.update(b"\0");
        mac.update(&version.to_be_bytes());
        mac
    }

    /// The token of `account_id` at `version`.
    pub fn issue(&self, account_id: &str, version: u64) -> String {
        let signature = self.mac(account_id, version).finalize().into_bytes();
        format!("{PREFIX}_{account_id}_{}", hex::encode(signature))
    }

    /// Whether `token` is the one of its account at `version`, in constant time.
    pub fn verify(&self, token: &Presented<'_>, version: u64) -> bool {
        self.mac(token.account_id, version).verify_slice(&token.signature).is_ok()
    }
}

/// Splits `token` on its first and last `_`; `None` unless it has the shape of a token.
pub fn parse(token: &str) -> Option<Presented<'_>> {
    let rest = token.strip_prefix(PREFIX)?.strip_prefix('_')?;
    let (account_id, signature) = rest.rsplit_once('_')?;
    let well_formed = account_id.len() <= 64
        && account_id.starts_with("acct_")
        && account_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !well_formed || signature.len() != 64 {
        return None;
    }
    Some(Presented { account_id, signature: hex::decode(signature).ok()? })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const ACCOUNT: &str = "acct_0193aa00bb11cc22dd33ee44ff556677";

    #[test]
    fn a_token_verifies_at_its_version_only() {
        let key = TokenKey::new(vec![7u8; 32]);
        let token = key.issue(ACCOUNT, 3);
        let presented = parse(&token).expect("parses");
        assert_eq!(presented.account_id, ACCOUNT);
        assert!(key.verify(&presented, 3));
        assert!(!key.verify(&presented, 4), "a rotated token must not verify");
        assert!(!TokenKey::new(vec![8u8; 32]).verify(&presented, 3), "another server's token must not verify");
    }

    #[test]
    fn a_signature_moved_to_another_account_does_not_verify() {
        let key = TokenKey::new(vec![7u8; 32]);
        let token = key.issue(ACCOUNT, 0);
        let forged = token.replace(ACCOUNT, "acct_0193aa00bb11cc22dd33ee44ff556678");
        assert!(!key.verify(&parse(&forged).expect("parses"), 0));
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        let key = TokenKey::new(vec![7u8; 32]);
        let token = key.issue(ACCOUNT, 0);
        for bad in [
            "",
            "svc",
            "svc__",
            &token[..token.len() - 1],
            &token.replacen("svc_", "sk_", 1),
            &format!("{token}0"),
            &token.replace(ACCOUNT, "acct_x/../y"),
            &format!("{}g", &token[..token.len() - 1]),
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_only_well_formed_tokens_parse(s in ".{0,200}") {
            if let Some(p) = parse(&s) {
                prop_assert!(p.account_id.starts_with("acct_"));
                prop_assert_eq!(p.signature.len(), 32);
            }
        }
    }
}
