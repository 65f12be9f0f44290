//! A Solana `exact` payment's transaction as a client can send it: the fuzzer's bytes are the
//! wire transaction, base64-encoded as the payload carries it (so the search explores the
//! binary decoder, not base64). Reading the replay key and the full check must never panic.
//! The property is `svc_fuzz_properties::solana_transaction`, which `cargo test` also runs on every input
//! kept in `fuzz/corpus/solana_transaction/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzz_properties::solana_transaction(data));
