//! What one catalogue entry says about a route. Every fact a router, a paywall, a validator or
//! a document needs is here, so none of them is written twice.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use svc_domain::Money;

use crate::input::{self, InputError, InputShape, Scalar, ValidInput};
pub use crate::input::{InputSource, RouteInput, path_param_names};

/// The HTTP methods the catalogue uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// Reads, with inputs in the path and query.
    Get,
    /// Everything with a JSON body.
    Post,
    /// Replaces what the path names with the JSON body.
    Put,
    /// Removes what the path names; inputs in the path.
    Delete,
    /// Changes some fields of what the path names, from the JSON body.
    Patch,
}

impl HttpMethod {
    /// Upper-case method name.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Patch => "PATCH",
        }
    }
}

/// The product group of a route; the contract quotes a price band per group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Signal products computed by svc (0.05–0.50).
    Signals,
    /// Data resold or reshaped from upstream vendors.
    Data,
    /// Quotes, simulations and exchange actions.
    Infrastructure,
    /// No payment needed.
    Free,
}

/// How a route is paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Paid per call over x402, with a credit-billed twin under `/api/svc-tools/*`.
    Paid,
    /// Free for everyone.
    Free,
    /// Free, for an account: a sign-in token or one of the account's API keys.
    Account,
    /// Free, for an account signed in with its wallet; API keys are refused, so a leaked key
    /// cannot make more keys.
    SignedIn,
}

impl Access {
    /// Whether a caller must say which account it is.
    pub fn needs_account(self) -> bool {
        matches!(self, Access::Account | Access::SignedIn)
    }
}

/// How the per-call x402 price is derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceRule {
    /// The same price for every call.
    Fixed(Money),
    /// `unit` times the input's [`RouteInput::price_units`], capped at `max`; for actions whose
    /// cost grows with their size (orders in one exchange request).
    PerUnit {
        /// Price of one unit.
        unit: Money,
        /// The most one call can cost.
        max: Money,
    },
}

impl PriceRule {
    /// The list price for an input of `units` units.
    pub fn price(self, units: u64) -> Money {
        match self {
            PriceRule::Fixed(m) => m,
            PriceRule::PerUnit { unit, max } => unit.checked_mul(units.max(1)).map_or(max, |p| p.min(max)),
        }
    }

    /// The lowest price a call can have, as quoted in listings.
    pub fn min(self) -> Money {
        self.price(1)
    }

    /// The highest price a call can have.
    pub fn max(self) -> Money {
        match self {
            PriceRule::Fixed(m) => m,
            PriceRule::PerUnit { max, .. } => max,
        }
    }
}

/// What a free preview returns: real data, cut down, so an agent can judge it before paying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewPolicy {
    /// Keep at most `max_items` of every array in the answer and drop the named fields.
    Truncate {
        /// Items kept per array.
        max_items: usize,
        /// Fields removed wherever they appear (e.g. `thesis`).
        omit: &'static [&'static str],
    },
    /// Validate and quote the price only; the route acts (an order, a transaction) and a
    /// preview must never act.
    QuoteOnly,
}

/// The rate limit a route applies per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatePolicy {
    /// The configured default.
    Default,
    /// A fixed number of requests per minute (top picks: 30, from the contract).
    PerMinute(u32),
}

/// An output type of a route: what a 200 carries.
pub trait RouteOutput: Serialize + JsonSchema + Send + 'static {}
impl<T: Serialize + JsonSchema + Send + 'static> RouteOutput for T {}

/// A schema for a type, either as a `$ref` into a shared generator or standalone.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// Parses raw request parts into a validated, type-erased input.
pub type ParseFn = fn(&InputShape<'_>, &input::RawInput<'_>) -> Result<ValidInput, InputError>;

/// Type-level facts about a route's input or output, captured when the entry is declared.
#[derive(Clone, Copy)]
pub struct TypeSpec {
    /// The Rust type, so a handler registered for the wrong type is caught at start-up.
    pub type_id: fn() -> TypeId,
    /// The schema's name, e.g. `TopPicksResponse`.
    pub name: fn() -> std::borrow::Cow<'static, str>,
    /// The schema (a `$ref` when the generator collects definitions).
    pub schema: SchemaFn,
}

impl std::fmt::Debug for TypeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&(self.name)())
    }
}

impl TypeSpec {
    fn of<T: JsonSchema + Any>() -> Self {
        TypeSpec { type_id: TypeId::of::<T>, name: T::schema_name, schema: |g| g.subschema_for::<T>() }
    }
}

/// One route: the single place its facts live.
#[derive(Debug, Clone)]
pub struct RouteSpec {
    /// Stable identifier, also the OpenAPI operation id and the key of the price table.
    pub id: &'static str,
    /// HTTP method.
    pub method: HttpMethod,
    /// Path template (`{name}` for parameters) under `/api/x402/...` or `/api/public/...`.
    pub path: &'static str,
    /// Product group.
    pub group: Group,
    /// Paid or free.
    pub access: Access,
    /// Whether volume discounts and the credit-billed twin apply; not for buying credits,
    /// whose price is the credits bought.
    pub billed_as_data: bool,
    /// x402 price rule, from the price table.
    pub price: PriceRule,
    /// Price of the credit-billed twin, from the price table.
    pub credit_price: Money,
    /// Where input fields come from.
    pub source: InputSource,
    /// The input type.
    pub input: TypeSpec,
    /// The 200 output type.
    pub output: TypeSpec,
    /// One line for humans and agents.
    pub description: &'static str,
    /// Preview behaviour.
    pub preview: PreviewPolicy,
    /// Rate limit.
    pub rate: RatePolicy,
    /// Tag grouping routes in documents (`signals`, `chaindata`, `social`, ...).
    pub tag: &'static str,
    /// On account routes, the scopes one of which a key needs (none: sign-in tokens only).
    pub key_scopes: &'static [&'static str],
    /// Whether a call moves funds or places orders rather than quoting them: its credit twin
    /// needs a key that may trade ([`RouteSpec::twin_key_scopes`]).
    pub moves_funds: bool,
    pub(crate) parse: ParseFn,
    pub(crate) scalars: Arc<HashMap<String, Scalar>>,
    /// Whether the input takes body fields it does not name (a flattened map).
    pub(crate) open_body: bool,
}

impl RouteSpec {
    /// Declares a route. Prices start unset and are filled from the price table when the
    /// catalogue is assembled; a route missing from the table fails the catalogue's tests.
    pub fn new<I: RouteInput, O: RouteOutput>(
        id: &'static str,
        method: HttpMethod,
        path: &'static str,
        source: InputSource,
        description: &'static str,
    ) -> Self {
        RouteSpec {
            id,
            method,
            path,
            group: Group::Data,
            access: Access::Paid,
            billed_as_data: true,
            price: PriceRule::Fixed(Money::ZERO),
            credit_price: Money::ZERO,
            source,
            input: TypeSpec::of::<I>(),
            output: TypeSpec::of::<O>(),
            description,
            preview: PreviewPolicy::Truncate { max_items: 3, omit: &[] },
            rate: RatePolicy::Default,
            tag: "",
            key_scopes: &[],
            moves_funds: false,
            parse: input::parse::<I>,
            scalars: Arc::new(input::scalar_kinds::<I>()),
            open_body: input::takes_any_field::<I>(),
        }
    }

    /// A paid `GET` whose inputs are path and query parameters.
    pub fn get<I: RouteInput, O: RouteOutput>(id: &'static str, path: &'static str, description: &'static str) -> Self {
        Self::new::<I, O>(id, HttpMethod::Get, path, InputSource::Query, description)
    }

    /// A paid `POST` with a required JSON body.
    pub fn post<I: RouteInput, O: RouteOutput>(
        id: &'static str,
        path: &'static str,
        description: &'static str,
    ) -> Self {
        Self::new::<I, O>(id, HttpMethod::Post, path, InputSource::Body, description)
    }

    /// Sets the group.
    pub fn group(mut self, group: Group) -> Self {
        self.group = group;
        if group == Group::Free {
            self.access = Access::Free;
        }
        self
    }

    /// A paid route that is not a data call: list price always, no credit twin.
    pub fn not_data(mut self) -> Self {
        self.billed_as_data = false;
        self
    }

    /// A free route for signed-in accounts (see [`Access`]).
    pub fn for_account(mut self, access: Access) -> Self {
        self.group = Group::Free;
        self.access = access;
        self
    }

    /// A route that replaces what its path names with its JSON body.
    pub fn put<I: RouteInput, O: RouteOutput>(id: &'static str, path: &'static str, description: &'static str) -> Self {
        Self::new::<I, O>(id, HttpMethod::Put, path, InputSource::Body, description)
    }

    /// A route that removes what its path names.
    pub fn delete<I: RouteInput, O: RouteOutput>(
        id: &'static str,
        path: &'static str,
        description: &'static str,
    ) -> Self {
        Self::new::<I, O>(id, HttpMethod::Delete, path, InputSource::Query, description)
    }

    /// On an account route that takes API keys, the scopes one of which a key must hold.
    pub fn key_scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.key_scopes = scopes;
        self
    }

    /// Marks a route that moves funds or places orders (see [`RouteSpec::moves_funds`]).
    pub fn moves_funds(mut self) -> Self {
        self.moves_funds = true;
        self
    }

    /// The scopes one of which a key needs to call the credit twin: data scopes (the owner's
    /// `data`, a sandbox's `gateway:data`), or on a route that moves funds `gateway:wallet_write`
    /// alone, which only a trading agent's key and keys made for trading hold.
    pub fn twin_key_scopes(&self) -> &'static [&'static str] {
        if self.moves_funds { &["gateway:wallet_write"] } else { &["data", "gateway:data"] }
    }

    /// Sets the documentation tag.
    pub fn tag(mut self, tag: &'static str) -> Self {
        self.tag = tag;
        self
    }

    /// Sets the input source (e.g. an optional body).
    pub fn source(mut self, source: InputSource) -> Self {
        self.source = source;
        self
    }

    /// Sets the preview policy.
    pub fn preview(mut self, preview: PreviewPolicy) -> Self {
        self.preview = preview;
        self
    }

    /// Sets the rate policy.
    pub fn rate(mut self, rate: RatePolicy) -> Self {
        self.rate = rate;
        self
    }

    /// Parses and validates raw request parts into this route's input type.
    pub fn parse_input(&self, raw: &input::RawInput<'_>) -> Result<ValidInput, InputError> {
        (self.parse)(&self.input_shape(), raw)
    }

    /// What parsing needs of this route besides its input type.
    fn input_shape(&self) -> InputShape<'_> {
        InputShape { source: self.source, scalars: &self.scalars, open_body: self.open_body, path: self.path }
    }

    /// Names of the path parameters, in order.
    pub fn path_params(&self) -> impl Iterator<Item = &'static str> {
        path_param_names(self.path)
    }

    /// The path of the credit-billed twin: `/api/x402/svc-tools/X` and `/api/x402/alpha/X`
    /// both become `/api/svc-tools/X`. Free routes have none.
    pub fn credits_path(&self) -> Option<String> {
        if self.access != Access::Paid || !self.billed_as_data {
            return None;
        }
        credits_twin(self.path)
    }

    /// What a call of `units` units costs in credits: the credit price, or for per-unit routes
    /// the same per-unit price as over x402.
    pub fn credit_price_for(&self, units: u64) -> Money {
        match self.price {
            PriceRule::PerUnit { .. } => self.price.price(units),
            PriceRule::Fixed(_) => self.credit_price,
        }
    }

    /// Whether a route is paid.
    pub fn is_paid(&self) -> bool {
        self.access == Access::Paid
    }
}

/// The credit-billed twin of a paid path (template or concrete): `/api/x402/svc-tools/X` and
/// `/api/x402/alpha/X` both become `/api/svc-tools/X`. One mapping, used by the router and by
/// anything that needs to name the twin of a request it holds.
pub fn credits_twin(path: &str) -> Option<String> {
    X402_PREFIXES.iter().find_map(|prefix| path.strip_prefix(prefix)).map(|rest| format!("{CREDITS_PREFIX}{rest}"))
}

/// The way back: the pay-per-call path of `path`, a concrete credit-billed path of `route`.
pub fn x402_twin(route: &RouteSpec, path: &str) -> Option<String> {
    let rest = path.strip_prefix(CREDITS_PREFIX)?;
    X402_PREFIXES.iter().find(|prefix| route.path.starts_with(**prefix)).map(|prefix| format!("{prefix}{rest}"))
}

/// Where paid routes with a credit twin live.
const X402_PREFIXES: [&str; 2] = ["/api/x402/svc-tools/", "/api/x402/alpha/"];

/// Where the credit-billed twins of paid routes live.
pub const CREDITS_PREFIX: &str = "/api/svc-tools/";
