//! The official client's Solana payment (fixtures/x402/svm-solana-mainnet-exact.json) and the
//! addresses it names, shared by the tests that check it and build it.

pub const VECTOR: &str = include_str!("../../../../fixtures/x402/svm-solana-mainnet-exact.json");
pub const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub const FEE_PAYER: &str = "HreMf6X5nAv9evt728Gf3TSuUNEnEXDPhdpCC1GJ5sv9";
pub const PAY_TO: &str = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";

/// The vector, parsed.
pub fn vector() -> serde_json::Value {
    serde_json::from_str(VECTOR).expect("vector")
}
