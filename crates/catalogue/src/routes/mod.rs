//! The route table, one module per family. Each module declares its input and output types
//! next to its entries, so a route reads top to bottom in one place.

/// A path under `{tools}` (`/api/x402/svc-tools`), as a `&'static str`.
macro_rules! tools {
    ($rest:literal) => {
        concat!("/api/x402/svc-tools", $rest)
    };
}

/// A path under `{alpha}` (`/api/x402/alpha`), as a `&'static str`.
macro_rules! alpha {
    ($rest:literal) => {
        concat!("/api/x402/alpha", $rest)
    };
}

pub mod account;
pub mod agentbox;
pub mod chaindata;
pub mod common;
pub mod infra;
pub mod llm;
pub mod predmkt;
pub mod public;
pub mod sellers;
pub mod signals;
pub mod social;

use crate::RouteSpec;

/// Every route svc serves.
pub fn all() -> Vec<RouteSpec> {
    [
        signals::routes(),
        chaindata::routes(),
        infra::routes(),
        predmkt::routes(),
        social::routes(),
        public::routes(),
        account::routes(),
        agentbox::routes(),
        sellers::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
