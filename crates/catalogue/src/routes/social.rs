//! Placeholder, filled in by its family author.

use crate::RouteSpec;

/// The routes of this family.
pub fn routes() -> Vec<RouteSpec> {
    Vec::new()
}
