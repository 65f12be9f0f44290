//! The payment header (`PAYMENT-SIGNATURE` / `X-PAYMENT`) as a client can send it: any bytes.
//! Decoding must never panic, and whatever decodes names the one scheme it was read as.
//! The property is `svc_fuzz_properties::payment_header`, which `cargo test` also runs on every input
//! kept in `fuzz/corpus/payment_header/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzz_properties::payment_header(data));
