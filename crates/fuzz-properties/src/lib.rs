//! The properties the fuzz targets check, one function each, over any bytes a client can send.
//!
//! Each function panics when its property fails, and only then. The libFuzzer campaign in
//! `fuzz/` (a script run for minutes before a release: `fuzz/run.sh`) calls them on the inputs
//! it generates and keeps the interesting ones in `fuzz/corpus/<target>/`; this crate's test
//! replays every kept input through the same function in the ordinary `cargo test`, so what
//! the campaign once found stays found without building the fuzzer.

use base64::Engine as _;
use svc_accounts::auth::{SignInConfig, Site};
use svc_catalogue::RawInput;
use svc_chain_solana::{ExactSvmPayload, ExactSvmRequirement, replay_key, verify_exact};

/// A property over any bytes: it panics when, and only when, the property fails.
pub type Property = fn(&[u8]);

/// The fuzz targets, by the name their corpus directory and `cargo fuzz` use.
pub const TARGETS: [(&str, Property); 4] = [
    ("payment_header", payment_header),
    ("route_input", route_input),
    ("sign_in", sign_in),
    ("solana_transaction", solana_transaction),
];

/// The payment header (`PAYMENT-SIGNATURE` / `X-PAYMENT`) as a client can send it: decoding
/// never panics, and neither does reading back what decoded (the paywall logs and keys on it).
pub fn payment_header(header: &[u8]) {
    if let Some(decoded) = svc_x402::codec::decode_payment(header) {
        let _ = format!("{decoded:?}");
    }
}

/// Every route's input validation, as a client can call it: the first two bytes pick a route
/// of the catalogue, the rest are split at 0xFF into path values, the query string and the
/// body. Validation never panics, and a valid input is priced within its route's rule.
pub fn route_input(data: &[u8]) {
    let routes = svc_catalogue::catalogue().routes();
    let Some((pick, rest)) = data.split_first_chunk::<2>() else { return };
    let route = &routes[usize::from(u16::from_le_bytes(*pick)) % routes.len()];
    let mut parts = rest.split(|&b| b == 0xFF);
    let names: Vec<&str> = route.path_params().collect();
    let values: Vec<String> =
        names.iter().map(|_| String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned()).collect();
    let path: Vec<(&str, &str)> = names.iter().copied().zip(values.iter().map(String::as_str)).collect();
    let query = parts.next().map(String::from_utf8_lossy);
    let body = parts.next();
    let raw = RawInput { path: &path, query: query.as_deref(), body };
    if let Ok(input) = route.parse_input(&raw) {
        let price = route.price.price(input.price_units());
        assert!(price <= route.price.max(), "{}: priced {price} over its maximum", route.id);
        assert!(price >= route.price.min(), "{}: priced {price} under its minimum", route.id);
    }
}

/// The sign-in messages a client can send: the bytes as a sign-in (EIP-4361) message and as a
/// `SIGN-IN-WITH-X` header. Neither panics, and no made-up header proves a wallet.
pub fn sign_in(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(message) = text.parse::<siwe::Message>()
    {
        // What sign-in reads of a parsed message.
        let _ = (message.domain.as_str(), message.address, message.nonce.len(), message.to_string());
    }
    let site = Site::from_url("http://127.0.0.1:8402").expect("the fixed site is a valid URL");
    let config = SignInConfig::new(vec![7u8; 32]).for_site(site);
    // Any fixed time: the proof's own times are what is fuzzed.
    let proved = svc_accounts::siwx::verify(&config, data, 1_795_564_800_000);
    assert!(proved.is_err(), "a header nobody signed proved a wallet: {proved:?}");
}

/// A Solana `exact` payment's transaction as a client can send it: the bytes are the wire
/// transaction, base64-encoded as the payload carries it (so a fuzzer explores the binary
/// decoder, not base64). Reading the replay key and the full check never panic.
pub fn solana_transaction(wire: &[u8]) {
    const FEE_PAYER: &str = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd";
    const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    let transaction = base64::engine::general_purpose::STANDARD.encode(wire);
    let _ = replay_key(&transaction);
    let requirement = ExactSvmRequirement {
        amount: 10_000,
        asset: USDC,
        decimals: 6,
        pay_to: PAY_TO,
        fee_payer: Some(FEE_PAYER),
        memo: None,
    };
    let _ = verify_exact(&ExactSvmPayload { transaction: &transaction }, &requirement, &[FEE_PAYER.into()]);
}
