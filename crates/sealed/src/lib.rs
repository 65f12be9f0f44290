//! Secrets svc must read back (a chat bot's token, a seller agent's signing secret), sealed at
//! rest with AES-256-GCM (ring): a random 96-bit nonce per seal, stored before the ciphertext.
//! The key comes from the environment; a sealed value is useless without it, so a leaked
//! database holds no secret.

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// Seals and opens secrets with one key.
pub struct SecretBox {
    key: LessSafeKey,
    /// The same key material, for values derived from it ([`SecretBox::derive`]).
    mac: ring::hmac::Key,
    rng: SystemRandom,
}

/// A sealed value that does not open: another key, or tampered with.
#[derive(Debug, thiserror::Error)]
#[error("a sealed secret did not open (another key, or altered)")]
pub struct Unsealable;

impl SecretBox {
    /// A box over a 32-byte key.
    pub fn new(key: &[u8; 32]) -> Self {
        let unbound =
            UnboundKey::new(&AES_256_GCM, key).unwrap_or_else(|_| unreachable!("32 bytes is AES-256's key size"));
        SecretBox {
            key: LessSafeKey::new(unbound),
            mac: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key),
            rng: SystemRandom::new(),
        }
    }

    /// A box over a fresh random key: for tests, and processes that keep nothing.
    pub fn ephemeral() -> Self {
        let mut key = [0u8; 32];
        let _ = SystemRandom::new().fill(&mut key);
        SecretBox::new(&key)
    }

    /// A key from 64 hex digits.
    pub fn from_hex(hex_key: &str) -> Option<Self> {
        let bytes = hex::decode(hex_key.trim()).ok()?;
        let key: [u8; 32] = bytes.try_into().ok()?;
        Some(SecretBox::new(&key))
    }

    /// `plain` sealed, bound to `context` (what the secret is for, so a sealed value cannot be
    /// moved to another row).
    pub fn seal(&self, plain: &[u8], context: &str) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        let _ = self.rng.fill(&mut nonce);
        let mut sealed = plain.to_vec();
        // Sealing in place fails only for inputs beyond AES-GCM's limit (64 GiB).
        let _ = self.key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(context), &mut sealed);
        let mut out = nonce.to_vec();
        out.extend(sealed);
        out
    }

    /// A secret derived from the key for `label`, hex: the same for the same label on every
    /// replica and every call, and nothing anyone without the key can compute.
    pub fn derive(&self, label: &str) -> String {
        hex::encode(ring::hmac::sign(&self.mac, label.as_bytes()).as_ref())
    }

    /// The plain value of `sealed`, sealed with this key and `context`.
    pub fn open(&self, sealed: &[u8], context: &str) -> Result<Vec<u8>, Unsealable> {
        if sealed.len() < NONCE_LEN {
            return Err(Unsealable);
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unsealable)?;
        let mut body = body.to_vec();
        let plain = self.key.open_in_place(nonce, Aad::from(context), &mut body).map_err(|_| Unsealable)?;
        Ok(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_context_and_never_shows_in_the_clear() {
        let sealed_box = SecretBox::from_hex(&"ab".repeat(32)).expect("key");
        let token = b"123456:AAE-secret-bot-token";
        let sealed = sealed_box.seal(token, "telegram:acct_1");
        assert!(!sealed.windows(token.len()).any(|w| w == token), "not in the clear");
        assert_ne!(sealed, sealed_box.seal(token, "telegram:acct_1"), "a fresh nonce each time");
        assert_eq!(sealed_box.open(&sealed, "telegram:acct_1").expect("opens"), token);
        assert!(sealed_box.open(&sealed, "telegram:acct_2").is_err(), "bound to its row");
        assert!(SecretBox::ephemeral().open(&sealed, "telegram:acct_1").is_err(), "another key");
        let mut tampered = sealed.clone();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert!(sealed_box.open(&tampered, "telegram:acct_1").is_err());
        assert!(sealed_box.open(&[1, 2, 3], "x").is_err());
        assert!(SecretBox::from_hex("abc").is_none() && SecretBox::from_hex(&"zz".repeat(32)).is_none());
        let derived = sealed_box.derive("telegram-webhook:abc");
        assert_eq!(derived, sealed_box.derive("telegram-webhook:abc"), "stable");
        assert_ne!(derived, sealed_box.derive("telegram-webhook:abd"));
        assert_ne!(derived, SecretBox::ephemeral().derive("telegram-webhook:abc"), "keyed");
    }
}
