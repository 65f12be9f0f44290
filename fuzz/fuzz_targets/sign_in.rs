//! The sign-in messages a client can send: the fuzzer's text as a sign-in (EIP-4361) message,
//! and its bytes as a `SIGN-IN-WITH-X` header. Neither may panic, and no forged header proves
//! a wallet.
//! The property is `svc_fuzz_properties::sign_in`, which `cargo test` also runs on every input
//! kept in `fuzz/corpus/sign_in/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzz_properties::sign_in(data));
