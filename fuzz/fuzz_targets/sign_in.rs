//! The sign-in messages a client can send: the fuzzer's text as a sign-in (EIP-4361) message,
//! and its bytes as a `SIGN-IN-WITH-X` header. Neither may panic, and no forged header proves
//! a wallet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_accounts::auth::{SignInConfig, Site};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(message) = text.parse::<siwe::Message>()
    {
        // What sign-in reads of a parsed message.
        let _ = (message.domain.as_str(), message.address, message.nonce.len(), message.to_string());
    }
    let site = Site::from_url("http://127.0.0.1:8402").expect("a valid site");
    let config = SignInConfig::new(vec![7u8; 32]).for_site(site);
    // Any fixed time: the proof's own times are what is fuzzed.
    let proved = svc_accounts::siwx::verify(&config, data, 1_795_564_800_000);
    assert!(proved.is_err(), "a header the fuzzer made up proved a wallet: {proved:?}");
});
