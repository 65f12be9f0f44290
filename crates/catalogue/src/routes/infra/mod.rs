//! Infrastructure: swap quotes (Solana aggregators, EVM router), DeFi discovery and quotes,
//! token prices, transaction simulation and validation, two derivatives-exchange proxies and
//! a launchpad lookup.
//!
//! One module per family (the routes' documentation tag), each with its entries and their
//! input and output types; every type is re-exported here, so `routes::infra::X` names it.

mod defi;
mod launchpad;
mod orderbookdex;
mod perpdex;
mod shield;
mod swap;

pub use defi::*;
pub use launchpad::*;
pub use orderbookdex::*;
pub use perpdex::*;
pub use shield::*;
pub use swap::*;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{Chain, EvmAddress, EvmChain};

use crate::{FieldError, Group, Loc, RouteSpec};

/// The infrastructure routes.
pub fn routes() -> Vec<RouteSpec> {
    [swap::routes(), defi::routes(), shield::routes(), orderbookdex::routes(), perpdex::routes(), launchpad::routes()]
        .into_iter()
        .flatten()
        .collect()
}

/// An entry of the infrastructure group, under its family's documentation tag.
fn infra(route: RouteSpec, tag: &'static str) -> RouteSpec {
    route.group(Group::Infrastructure).tag(tag)
}

/// The chain EVM inputs default to.
fn base() -> Chain {
    Chain::Base
}

/// The EVM chain EVM inputs default to.
fn evm_base() -> EvmChain {
    EvmChain::BASE
}

/// `field`'s error when `value` is not a positive decimal amount such as `1.5`.
fn decimal_amount_errors(field: &str, value: &str) -> Vec<FieldError> {
    let valid = !value.is_empty()
        && value.split_once('.').map_or(value.bytes().all(|b| b.is_ascii_digit()), |(w, f)| {
            !w.is_empty() && !f.is_empty() && (w.bytes().chain(f.bytes())).all(|b| b.is_ascii_digit())
        })
        && value.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if valid {
        Vec::new()
    } else {
        vec![FieldError::new([Loc::from(field)], "a positive decimal amount such as \"1.5\"", "value_error")]
    }
}

/// An EVM token: an address or `eth` for the native coin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EvmToken {
    /// The native coin, written `eth`.
    Native(NativeEth),
    /// An ERC-20 contract.
    Contract(EvmAddress),
}

/// The literal `eth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NativeEth {
    /// Native ETH.
    Eth,
}

/// A transaction to sign.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EvmTx {
    /// Sender.
    pub from: Option<String>,
    /// Contract called.
    pub to: String,
    /// Calldata.
    pub data: String,
    /// Value in wei.
    pub value: String,
}
