//! What a 402 challenge offers and says of it: a catalogue route, a seller's agent or a credit
//! top-up, its description, and its `bazaar` extension, which echoes the request being paid for when that
//! is small enough. Prices, networks, sign-in offers and the encoding on the wire are the HTTP
//! layer's.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};
use svc_domain::Money;

use crate::discovery::{bazaar_extension, bazaar_post_extension};
use crate::input::InputEcho;
use crate::route::RouteSpec;

/// The most input a challenge echoes, in bytes of JSON.
const MAX_ECHO_BYTES: usize = 4096;

/// The echo of an input too large to copy.
static NO_ECHO: LazyLock<InputEcho> = LazyLock::new(InputEcho::default);

/// Whether advertised extensions carry their schemas: a challenge does; the check of a
/// payment's echo compares only what they say (`info`), and copying a route's whole schema
/// for it would cost every paid call.
#[derive(Debug, Clone, Copy)]
pub enum Schemas {
    /// With their schemas, as a challenge advertises them.
    Included,
    /// Without, as a payment's echo is checked against them.
    Omitted,
}

impl Schemas {
    /// `schema` as advertised: itself, or `null` when schemas are omitted.
    fn shown(self, schema: &Value) -> &Value {
        match self {
            Schemas::Included => schema,
            Schemas::Omitted => &Value::Null,
        }
    }
}

/// What a challenge offers.
#[derive(Debug, Clone, Copy)]
pub enum Offered<'a> {
    /// A catalogue route, with the request's fields as received.
    Route {
        /// The route.
        route: &'static RouteSpec,
        /// The request's fields, for the `bazaar` example.
        echo: &'a InputEcho,
    },
    /// A seller's agent: its own description and input schema, and the body being paid for.
    Agent {
        /// One line about it.
        description: &'a str,
        /// Its input schema.
        schema: &'a Value,
        /// The body being paid for.
        body: &'a Value,
    },
    /// Account credits, bought by an automatic top-up so that the call carrying the payment
    /// can proceed (the LLM proxy's): not a discovery resource, so no `bazaar`.
    TopUp {
        /// The credits it buys.
        amount: Money,
    },
}

impl Offered<'_> {
    /// One line about what is offered.
    pub fn description(&self) -> Cow<'_, str> {
        match self {
            Offered::Route { route, .. } => Cow::Borrowed(route.description),
            Offered::Agent { description, .. } => Cow::Borrowed(description),
            Offered::TopUp { amount } => {
                Cow::Owned(format!("Buys {amount} USD of account credits for the LLM proxy (automatic top-up)."))
            }
        }
    }

    /// Whether a payer's volume discount applies: catalogue routes billed as data.
    pub fn discountable(&self) -> bool {
        matches!(self, Offered::Route { route, .. } if route.billed_as_data)
    }

    /// The `bazaar` extension: for a route, from its `route_schema` ([`crate::discovery::bazaar_schema`],
    /// computed once; none, no extension). `body_bytes` and `query_bytes` are the request's
    /// sizes: the client copies the challenge's extensions into its payment header, so an echo
    /// of a large input would make a payment too large to send; past the bound the example
    /// carries no fields.
    pub fn bazaar(
        &self,
        route_schema: Option<&Value>,
        schemas: Schemas,
        body_bytes: usize,
        query_bytes: usize,
    ) -> Option<Value> {
        match *self {
            Offered::Route { route, echo } => route_schema.map(|schema| {
                let echo = if echo_fits(echo, body_bytes + query_bytes) { echo } else { &NO_ECHO };
                bazaar_extension(route, schemas.shown(schema), echo)
            }),
            Offered::Agent { schema, body, .. } => {
                let example = if body_bytes <= MAX_ECHO_BYTES { body.clone() } else { Value::Object(Map::new()) };
                Some(bazaar_post_extension(schemas.shown(schema), &example))
            }
            Offered::TopUp { .. } => None,
        }
    }
}

/// Whether a request of `request_bytes` (body and query) is small enough to echo, or else its
/// fields as JSON are.
fn echo_fits(echo: &InputEcho, request_bytes: usize) -> bool {
    if request_bytes <= MAX_ECHO_BYTES {
        return true;
    }
    let size = |fields: &Map<String, Value>| serde_json::to_vec(fields).map_or(usize::MAX, |v| v.len());
    size(&echo.path).saturating_add(size(&echo.query)).saturating_add(size(&echo.body)) <= MAX_ECHO_BYTES
}
