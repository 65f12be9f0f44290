//! The signature on every call svc forwards to a seller, so the seller can tell a call came
//! from svc and was paid: `X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
//! `<t>.<raw body>`, with the agent's own secret (shown to its seller once).

use ring::hmac;
use ring::rand::{SecureRandom as _, SystemRandom};
use svc_catalogue::routes::sellers::Signing;

/// The header the signature travels in.
pub const HEADER: &str = "x-svc-signature";

/// How old a signature a seller should accept, seconds (what docs/sellers.md advises).
pub const TOLERANCE_SECS: i64 = 300;

/// A fresh secret: `whsec_` and 32 random bytes, hex.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    // The system's random source does not fail on the platforms svc runs on.
    let _ = SystemRandom::new().fill(&mut bytes);
    format!("whsec_{}", hex::encode(bytes))
}

/// The secret as its seller is shown it, with how to check a call.
pub fn shown(secret: String) -> Signing {
    Signing {
        secret,
        header: "X-Svc-Signature".to_owned(),
        scheme: format!(
            "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<raw request body>\")>; compare in constant time and \
             refuse a t more than {TOLERANCE_SECS} s old"
        ),
    }
}

/// The header value for `body` sent at `t` (unix seconds).
pub fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(t.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    format!("t={t},v1={}", hex::encode(ctx.sign().as_ref()))
}

/// Whether `header` signs `body` with `secret` within the tolerance of `now_secs`: what a
/// seller does on its side (and the tests, as a seller).
pub fn verify(secret: &[u8], header: &str, body: &[u8], now_secs: i64) -> bool {
    let mut t = None;
    let mut v1 = None;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = value.parse::<i64>().ok(),
            Some(("v1", value)) => v1 = hex::decode(value).ok(),
            _ => {}
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else { return false };
    if (now_secs - t).abs() > TOLERANCE_SECS {
        return false;
    }
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let mut message = t.to_string().into_bytes();
    message.push(b'.');
    message.extend_from_slice(body);
    hmac::verify(&key, &message, &v1).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_checks_only_with_its_secret_body_and_time() {
        let secret = new_secret();
        assert!(secret.starts_with("whsec_") && secret.len() == 6 + 64);
        assert_ne!(secret, new_secret());
        let header = sign(secret.as_bytes(), 1_000, b"{\"query\":\"hi\"}");
        assert!(verify(secret.as_bytes(), &header, b"{\"query\":\"hi\"}", 1_010));
        assert!(!verify(secret.as_bytes(), &header, b"{\"query\":\"ho\"}", 1_010), "another body");
        assert!(!verify(b"whsec_other", &header, b"{\"query\":\"hi\"}", 1_010), "another secret");
        assert!(!verify(secret.as_bytes(), &header, b"{\"query\":\"hi\"}", 1_000 + TOLERANCE_SECS + 1), "too old");
        assert!(!verify(secret.as_bytes(), "t=1000", b"{}", 1_000));
        assert!(!verify(secret.as_bytes(), "garbage", b"{}", 1_000));
    }
}
