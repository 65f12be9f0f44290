//! x402: pay per HTTP call with a signed stablecoin transfer.
//!
//! The server answers an unpaid request with 402 and a [`PaymentRequired`] challenge listing
//! the ways it accepts payment ([`PaymentRequirements`], one per network). The client signs a
//! transfer for one of them and retries with the payment in a header; the server matches the
//! client's choice against requirements it rebuilds itself ([`matching`]), has a
//! [`Facilitator`] verify it, serves, and settles.
//!
//! This crate is the protocol only: it knows nothing of HTTP frameworks, routes or storage, so
//! the paywall in the API crate and the `svc pay` client share it.

pub mod builtin;
pub mod client;
pub mod codec;
pub mod extensions;
pub mod facilitator;
pub mod http;
pub mod ledger;
pub mod matching;
pub mod network;
pub mod siwx;
/// The x402 v2 messages.
pub use svc_x402_wire as wire;

pub use builtin::BuiltinFacilitator;
pub use codec::{DecodedPayment, decode_payment, encode_header};
pub use facilitator::{Facilitator, FacilitatorError, Resolution, SETTLEMENT_PENDING, Settled, Unresolved, Verified};
pub use http::HttpFacilitator;
pub use ledger::{EvmLedger, Ledgers, SolanaLedger};
pub use matching::find_match;
pub use network::{NetworkError, NetworkKind, Offer, PaymentNetwork};
pub use wire::{
    PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse, SupportedKind,
    SupportedResponse, X402_VERSION,
};

/// The header a v2 client sends its payment in.
pub const PAYMENT_SIGNATURE: &str = "payment-signature";
/// The header v1 clients (and the contract's own examples) send the payment in.
pub const X_PAYMENT: &str = "x-payment";
/// The header carrying the base64 challenge on a 402.
pub const PAYMENT_REQUIRED: &str = "payment-required";
/// The header carrying the base64 settlement result.
pub const PAYMENT_RESPONSE: &str = "payment-response";
/// Seconds a challenge stays valid, from the contract.
pub const MAX_TIMEOUT_SECONDS: u64 = 300;
