//! A Solana `exact` payment's transaction as a client can send it: the fuzzer's bytes are the
//! wire transaction, base64-encoded as the payload carries it (so the search explores the
//! binary decoder, not base64). Reading the replay key and the full check must never panic.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;
use svc_chain_solana::{ExactSvmPayload, ExactSvmRequirement, replay_key, verify_exact};

const FEE_PAYER: &str = "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd";
const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fuzz_target!(|wire: &[u8]| {
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
});
