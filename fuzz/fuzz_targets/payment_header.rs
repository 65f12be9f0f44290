//! The payment header (`PAYMENT-SIGNATURE` / `X-PAYMENT`) as a client can send it: any bytes.
//! Decoding must never panic, and whatever decodes names the one scheme it was read as.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|header: &[u8]| {
    if let Some(decoded) = svc_x402::codec::decode_payment(header) {
        // Reading it back must not panic either (the paywall logs and keys on it).
        let _ = format!("{decoded:?}");
    }
});
