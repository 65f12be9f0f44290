//! Every route's input validation, as a client can call it: the first two bytes pick a route
//! of the catalogue, the rest are split at 0xFF into path values, the query string and the
//! body. Validation must never panic, and a valid input is priced within its route's rule.
//! The property is `svc_fuzz_properties::route_input`, which `cargo test` also runs on every input
//! kept in `fuzz/corpus/route_input/`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzz_properties::route_input(data));
