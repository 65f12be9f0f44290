//! The catalogue: one table of every route svc serves, and everything derived from it.
//!
//! A route's facts (method, path, group, prices, input and output types with their JSON
//! Schemas, description, preview and rate policy) are written once, in [`routes`]. The router,
//! validation, the 402 challenge's discovery schema, previews, the credit-billed mirror, the
//! OpenAPI document, `/api/x402/catalogue`, `/.well-known/x402` and `/llms.txt` are all
//! generated from that table, so they cannot drift apart.
//!
//! # Layout
//! - [`route`]: [`RouteSpec`] and the policies it carries.
//! - [`input`]: raw request parts → validated input, or FastAPI-style 422 errors.
//! - [`price`]: the price table (`prices.toml`).
//! - [`preview`]: free previews: whether one is asked for, and an answer cut down to one.
//! - [`routes`]: the entries, one module per route family, with their input and output types;
//!   [`ids`]: every route's id as a constant.
//! - [`openapi`]: the OpenAPI 3.1 document.
//! - [`wire`]: the error bodies, defined once for the HTTP layer and the document.
//! - [`discovery`]: the catalogue JSON, the `.well-known` manifest, `llms.txt` and the
//!   `bazaar` extension of a route.
//! - [`challenge`]: what a 402 challenge offers, and the `bazaar` extension it advertises.
//! - [`operational`]: the free operational routes' paths; [`skills`]: the agents' skill files;
//!   [`tools`]: every route as an MCP tool; [`forms`]: every route's input as a form for people.

pub mod challenge;
pub mod discovery;
pub mod forms;
pub mod ids;
pub mod input;
pub mod openapi;
pub mod operational;
pub mod preview;
pub mod price;
pub mod route;
pub mod routes;
pub mod skills;
pub mod tools;
pub mod wire;

use std::collections::HashMap;
use std::sync::LazyLock;

pub use input::{FieldError, InputEcho, InputError, InputSource, Loc, RawInput, RouteInput, ValidInput};
pub use operational::Operational;
pub use route::{Access, Group, HttpMethod, PreviewPolicy, PriceRule, RatePolicy, RouteSpec, credits_twin};

/// Why the catalogue could not be assembled. Only a broken build can cause one; the
/// catalogue's tests assemble it, so a release never meets them.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// The price table is malformed.
    #[error(transparent)]
    Price(#[from] price::PriceError),
    /// A route has no entry in the price table.
    #[error("route {0:?} has no price in prices.toml")]
    Unpriced(&'static str),
    /// The price table prices a route that does not exist.
    #[error("prices.toml prices unknown route {0:?}")]
    UnknownPrice(String),
    /// Two routes share an id or a method and path.
    #[error("duplicate route {0:?}")]
    Duplicate(String),
}

/// Every route, with prices applied.
#[derive(Debug)]
pub struct Catalogue {
    routes: Vec<RouteSpec>,
    by_id: HashMap<&'static str, usize>,
}

impl Catalogue {
    /// Assembles the catalogue from the route table and the embedded price table.
    pub fn load() -> Result<Self, CatalogueError> {
        let mut prices = price::parse_prices(price::PRICES_TOML)?;
        let mut routes = routes::all();
        let mut by_id = HashMap::new();
        let mut seen_paths = std::collections::HashSet::new();
        for (i, route) in routes.iter_mut().enumerate() {
            if by_id.insert(route.id, i).is_some() || !seen_paths.insert((route.method, route.path)) {
                return Err(CatalogueError::Duplicate(route.id.to_owned()));
            }
            match (route.access, prices.remove(route.id)) {
                (Access::Free | Access::Account | Access::SignedIn, None) => {}
                (Access::Paid, Some(p)) => {
                    route.price = p.x402;
                    route.credit_price = p.credits;
                }
                (Access::Free | Access::Account | Access::SignedIn, Some(_)) => {
                    return Err(CatalogueError::UnknownPrice(route.id.to_owned()));
                }
                (Access::Paid, None) => return Err(CatalogueError::Unpriced(route.id)),
            }
        }
        if let Some(id) = prices.into_keys().next() {
            return Err(CatalogueError::UnknownPrice(id));
        }
        Ok(Catalogue { routes, by_id })
    }

    /// All routes, in declaration order.
    pub fn routes(&self) -> &[RouteSpec] {
        &self.routes
    }

    /// A route by id.
    pub fn get(&self, id: &str) -> Option<&RouteSpec> {
        self.by_id.get(id).map(|&i| &self.routes[i])
    }

    /// What each paid route costs `payer` (its key, if named), who made `calls` paid calls in
    /// the discount window: so an agent can budget before it pays and see how far it is from
    /// the next volume tier.
    pub fn pricing(&self, payer: Option<String>, calls: u64) -> routes::public::PricingResponse {
        let tier = svc_domain::DiscountTier::for_calls(calls);
        let routes = self
            .routes
            .iter()
            .filter(|r| r.is_paid())
            .map(|r| routes::public::RoutePrice {
                id: r.id.to_owned(),
                method: r.method.as_str().to_owned(),
                path: r.path.to_owned(),
                list: r.price.min(),
                price: tier.apply(r.price.min()),
                max: r.price.max(),
                credits: r.credit_price,
            })
            .collect();
        routes::public::PricingResponse {
            payer,
            tier,
            percent_off: tier.percent_off(),
            calls_in_window: calls,
            window_days: svc_domain::discount::DISCOUNT_WINDOW_DAYS,
            calls_to_next_tier: svc_domain::DiscountTier::calls_to_next(calls),
            routes,
        }
    }
}

/// The catalogue of this build, assembled once.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: LazyLock<Catalogue> =
        LazyLock::new(|| Catalogue::load().expect("the embedded catalogue is verified by its tests"));
    &CATALOGUE
}
