//! Pure domain values of svc. Nothing here performs I/O, so the rules that cost money
//! (amounts, prices, discount tiers) are tested in milliseconds.
//!
//! # Layout
//! - [`money`]: [`Money`], USDC atomic units (6 decimals) with checked arithmetic and a decimal codec.
//! - [`chain`]: [`Chain`], the chains whose data we sell, and the address types valid on each.
//! - [`clock`]: [`Clock`], injected time, so expiry and windows are testable without sleeping.
//! - [`discount`]: volume-discount tiers by trailing 30-day paid calls.
//! - [`media`]: which content types are JSON.
//! - [`text`]: text written for others to read: one line of characters that show.

pub mod chain;
pub mod clock;
pub mod discount;
pub mod media;
pub mod money;
pub mod text;

pub use chain::{Address, AddressError, Chain, EvmAddress, EvmChain, SolanaAddress};
pub use clock::{Clock, FixedClock, SystemClock, rfc3339};
pub use discount::DiscountTier;
pub use money::{Money, MoneyError};
