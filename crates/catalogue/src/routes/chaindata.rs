//! Placeholder, filled in by its family author.

use crate::RouteSpec;

/// The routes of this family.
pub fn routes() -> Vec<RouteSpec> {
    Vec::new()
}

/// Path prefix of the chain-data proxy routes.
pub const CHAINDATA_PREFIX: &str = "/api/x402/svc-tools/data-provider/chaindata/";

/// The `{path}` values the proxy serves, derived from [`routes`].
pub fn allowed_paths() -> Vec<&'static str> {
    routes().iter().filter_map(|r| r.path.strip_prefix(CHAINDATA_PREFIX)).collect()
}
