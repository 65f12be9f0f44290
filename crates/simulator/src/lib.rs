//! A synthetic crypto market that moves with the clock, and fake vendor servers that serve
//! it in each vendor's exact wire format.
//!
//! It is the default upstream of a fresh install (so every route answers with coherent data
//! offline, through the real adapters) and the network-edge fake of every test. The world is
//! a pure function of a seed and the time: two simulators with the same seed agree, and a
//! test that moves its clock sees the market move.

mod faults;
mod keys;
pub mod sandboxes;
pub mod vendors;
pub mod world;

pub use faults::{Fault, Faults};
pub use keys::{PERPDEX_AGENT_KEY, SIMULATED_KEY, SIMULATED_PASSPHRASE, SIMULATED_SECRET, perpdex_agent_address};
pub use vendors::chaindata::REVOKED_KEY as CHAINDATA_REVOKED_KEY;
pub use vendors::llm::LlmGate;
pub use vendors::social::ACCEPTED_BEARER as SOCIAL_BEARER;
pub use vendors::{Simulator, no_delay};
pub use world::World;

/// The seed of the default world.
pub const DEFAULT_SEED: u64 = 402;
