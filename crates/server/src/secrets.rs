//! The key that seals secrets svc must read back (chat-bot tokens, seller agents' signing
//! secrets), loaded once and shared by every part that seals.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use svc_sealed::SecretBox;

/// The key that seals secrets at rest: `SVC_SECRETS_KEY` (64 hex digits, environment only);
/// on a development run without it, a key kept in `<data dir>/secrets.key`, made on first use.
pub fn load(data_dir: &Path, production: bool) -> anyhow::Result<Arc<SecretBox>> {
    key(data_dir, production).map(Arc::new)
}

fn key(data_dir: &Path, production: bool) -> anyhow::Result<SecretBox> {
    if let Ok(hex_key) = std::env::var("SVC_SECRETS_KEY") {
        return SecretBox::from_hex(&hex_key).context("SVC_SECRETS_KEY must be 64 hex digits (32 bytes)");
    }
    anyhow::ensure!(
        !production,
        "--production needs SVC_SECRETS_KEY (64 hex digits) to seal secrets at rest (chat-bot tokens, seller agents' signing secrets)"
    );
    let path = data_dir.join("secrets.key");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return SecretBox::from_hex(&text).with_context(|| format!("{} is not 64 hex digits", path.display()));
    }
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    let key = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(key.as_bytes())?;
    tracing::warn!(path = %path.display(), "SVC_SECRETS_KEY is not set: secrets are sealed with a key kept beside the data");
    SecretBox::from_hex(&key).context("the new key")
}
