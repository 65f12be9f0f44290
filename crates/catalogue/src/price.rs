//! The price table: every route's price lives in `prices.toml`, one reviewed file, so a price
//! change is a one-line diff that a reviewer sees. The catalogue refuses to assemble if a
//! route has no price or the table names a route that does not exist.

use std::collections::BTreeMap;

use serde::Deserialize;
use svc_domain::Money;

use crate::route::PriceRule;

/// The table as embedded in the binary.
pub const PRICES_TOML: &str = include_str!("../prices.toml");

/// One route's prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoutePrice {
    /// The x402 rule.
    pub x402: PriceRule,
    /// The credit-billed twin's price.
    pub credits: Money,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Entry {
    /// `"0.012"`: the same price over x402 and in credits.
    Same(Money),
    /// `{ x402 = "0.50", credits = "0.02" }` or `{ unit = "0.01", max = "0.05" }`.
    Table { x402: Option<Money>, credits: Option<Money>, unit: Option<Money>, max: Option<Money> },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    prices: BTreeMap<String, Entry>,
}

/// Why the price table is unusable.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    /// Not valid TOML, or an amount that is not a USDC decimal.
    #[error("price table: {0}")]
    Parse(#[from] toml::de::Error),
    /// An entry mixes fixed and per-unit prices, or gives neither.
    #[error("price table: route {0:?} needs either `x402` or both `unit` and `max`")]
    Shape(String),
}

/// Parses the table into route id → prices.
pub fn parse_prices(text: &str) -> Result<BTreeMap<String, RoutePrice>, PriceError> {
    let file: File = toml::from_str(text)?;
    file.prices
        .into_iter()
        .map(|(id, entry)| {
            let price = match entry {
                Entry::Same(m) => RoutePrice { x402: PriceRule::Fixed(m), credits: m },
                Entry::Table { x402: Some(m), credits, unit: None, max: None } => {
                    RoutePrice { x402: PriceRule::Fixed(m), credits: credits.unwrap_or(m) }
                }
                Entry::Table { x402: None, credits, unit: Some(unit), max: Some(max) } if unit <= max => {
                    RoutePrice { x402: PriceRule::PerUnit { unit, max }, credits: credits.unwrap_or(unit) }
                }
                Entry::Table { .. } => return Err(PriceError::Shape(id)),
            };
            Ok((id, price))
        })
        .collect()
}
