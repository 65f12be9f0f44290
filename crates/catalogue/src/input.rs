//! Turning raw request parts into a route's validated input, or into the 422 a client can act
//! on. Path, query and body fields are gathered into one JSON object, query strings are
//! coerced by the input's own schema (as FastAPI does: `max_results=20` is an integer because
//! the schema says so), then serde and the type's `garde` rules run. Every error carries a
//! `loc` such as `["body","payload","chains"]`, so the client knows which field to fix.
//!
//! Before any of that, text a client names things with is refused when it carries control
//! characters ([`check_names`], [`check_body_text`], [`text_errors`]): path parameters, query names and values
//! and object keys may carry none (C0, DEL, C1: they are identifiers and scalars, never prose),
//! and body strings may not carry NUL, which PostgreSQL refuses in text (so it would be a 500
//! there and something else on SQLite) and no text needs. Newlines and tabs stay legitimate in
//! body strings: sign-in messages and chat messages are made of lines.

use std::any::Any;
use std::collections::HashMap;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Where a route's input fields come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    /// Path and query parameters only.
    Query,
    /// Path and query parameters; a JSON body may carry the same fields (query wins).
    QueryOrBody,
    /// Path parameters and a JSON object body that must be present.
    Body,
    /// Path parameters and a JSON object body that may be absent (all fields optional).
    OptionalBody,
}

/// An input type of a route: deserialised from the request, validated by its `garde` rules
/// and by [`RouteInput::check`], described by its JSON Schema.
pub trait RouteInput: DeserializeOwned + JsonSchema + garde::Validate<Context = ()> + Send + Sync + 'static {
    /// Rules across fields that attribute rules cannot express ("`walletAddresses` or
    /// `entityId`"). Locations are relative to the input's root.
    fn check(&self) -> Vec<FieldError> {
        Vec::new()
    }

    /// How many price units this input costs under [`crate::PriceRule::PerUnit`].
    fn price_units(&self) -> u64 {
        1
    }
}

/// What parsing needs to know of a route besides its input type, lent by the route for one
/// parse: the route owns these facts, and the parser sits below it.
#[derive(Debug, Clone, Copy)]
pub struct InputShape<'a> {
    /// Where the fields come from.
    pub source: InputSource,
    /// The JSON type of each top-level field, for coercing query strings.
    pub(crate) scalars: &'a HashMap<String, Scalar>,
    /// Whether the input takes body fields it does not name (a flattened map).
    pub open_body: bool,
    /// The path template, whose `{name}` segments are path parameters.
    pub path: &'static str,
}

/// Names of `{param}` segments in a path template, in order.
pub fn path_param_names(path: &'static str) -> impl Iterator<Item = &'static str> {
    path.split('/').filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
}

/// Query parameters that steer svc itself and are never part of a route's input.
pub const RESERVED_QUERY: &[&str] = &["preview"];

/// Raw request parts, as the HTTP layer found them.
#[derive(Debug, Default, Clone, Copy)]
pub struct RawInput<'a> {
    /// Path parameters by name, as matched by the router (already percent-decoded).
    pub path: &'a [(&'a str, &'a str)],
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    /// The raw body; `None` or empty when there is none.
    pub body: Option<&'a [u8]>,
}

/// One step of an error location: a field name or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Loc {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl From<&str> for Loc {
    fn from(s: &str) -> Self {
        Loc::Key(s.to_owned())
    }
}

/// One invalid field, in the FastAPI shape clients of the original service parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "ValidationError")]
pub struct FieldError {
    /// Where: `["body","payload","chains"]`, `["query","max_results"]`, `["path","tweet_id"]`.
    pub loc: Vec<Loc>,
    /// What is wrong, for a human.
    pub msg: String,
    /// What is wrong, for a machine: `missing`, `enum`, `type_error`, `value_error`, `json_invalid`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl FieldError {
    /// An error at a location relative to the input's root (the origin is added later).
    pub fn new(loc: impl IntoIterator<Item = Loc>, msg: impl Into<String>, kind: &'static str) -> Self {
        FieldError { loc: loc.into_iter().collect(), msg: msg.into(), kind }
    }
}

/// A request whose input is invalid: answered 422 with every error found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid request: {} error(s)", errors.len())]
pub struct InputError {
    /// The errors, at least one.
    pub errors: Vec<FieldError>,
}

impl InputError {
    fn one(err: FieldError) -> Self {
        InputError { errors: vec![err] }
    }
}

/// A validated input, its type erased so one pipeline serves every route. The handler takes
/// it back with [`ValidInput::downcast`]; the catalogue checks at start-up that each handler
/// is registered for its route's input type.
pub struct ValidInput {
    value: Box<dyn Any + Send + Sync>,
    units: u64,
    /// `None` when the request carried no fields, the common case: nothing to allocate.
    echo: Option<Box<InputEcho>>,
}

/// The input fields as the request carried them (after query coercion), by where they came
/// from: the 402 challenge echoes them in its `bazaar` extension, so a catalogue built from
/// payments shows a real, valid example of each route.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputEcho {
    /// Path parameters.
    pub path: Map<String, Value>,
    /// Query parameters.
    pub query: Map<String, Value>,
    /// Body fields.
    pub body: Map<String, Value>,
}

impl std::fmt::Debug for ValidInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValidInput").field("units", &self.units).finish_non_exhaustive()
    }
}

impl ValidInput {
    /// Wraps an input (for tests and internal callers).
    pub fn new<T: RouteInput>(input: T) -> Self {
        let units = input.price_units();
        ValidInput { value: Box::new(input), units, echo: None }
    }

    /// The fields as received, by origin.
    pub fn echo(&self) -> &InputEcho {
        static NONE: std::sync::LazyLock<InputEcho> = std::sync::LazyLock::new(InputEcho::default);
        self.echo.as_deref().unwrap_or(&NONE)
    }

    /// Takes the fields as received out of the input, for a caller that still needs them
    /// once the handler has taken the input (a challenge made after a payment is refused).
    pub fn take_echo(&mut self) -> InputEcho {
        self.echo.take().map(|echo| *echo).unwrap_or_default()
    }

    /// Price units for [`crate::PriceRule::PerUnit`].
    pub fn price_units(&self) -> u64 {
        self.units
    }

    /// The input as its concrete type, if it is one.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref::<T>()
    }

    /// Takes the input back as its concrete type.
    pub fn downcast<T: 'static>(self) -> Result<T, Self> {
        match self.value.downcast::<T>() {
            Ok(v) => Ok(*v),
            Err(value) => Err(ValidInput { value, units: self.units, echo: self.echo }),
        }
    }
}

/// The JSON type a top-level input field has, for coercing query strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    Integer,
    Number,
    Boolean,
    Text,
    /// Comma-separated or repeated values of the inner kind.
    List(ScalarItem),
}

/// Item kind of a list field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarItem {
    Integer,
    Number,
    Text,
}

/// Reads the top-level property kinds of `T`'s schema.
pub(crate) fn scalar_kinds<T: schemars::JsonSchema>() -> HashMap<String, Scalar> {
    let schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut kinds = HashMap::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            kinds.insert(name.clone(), scalar_of(prop));
        }
    }
    kinds
}

/// Whether `T` takes fields it does not name (a flattened map): only then may a body carry
/// fields outside its properties.
pub(crate) fn takes_any_field<T: schemars::JsonSchema>() -> bool {
    let schema = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>();
    schema.get("additionalProperties").is_some_and(|extra| extra != &Value::Bool(false))
}

fn json_types(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.as_str()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = schema.get(key) {
            for sub in subs {
                out.extend(json_types(sub));
            }
        }
    }
    out
}

fn scalar_of(schema: &Value) -> Scalar {
    let types = json_types(schema);
    if types.contains(&"array") {
        let item = schema.get("items").map(json_types).unwrap_or_default();
        return Scalar::List(if item.contains(&"integer") {
            ScalarItem::Integer
        } else if item.contains(&"number") {
            ScalarItem::Number
        } else {
            ScalarItem::Text
        });
    }
    if types.contains(&"integer") {
        Scalar::Integer
    } else if types.contains(&"number") {
        Scalar::Number
    } else if types.contains(&"boolean") {
        Scalar::Boolean
    } else {
        Scalar::Text
    }
}

/// Coerces a query or path string by the field's schema kind. A string that does not parse
/// stays a string, so serde reports the type error with its location.
fn coerce(kind: Option<&Scalar>, raw: &str) -> Value {
    fn number(raw: &str, integer: bool) -> Option<Value> {
        if integer {
            raw.parse::<i64>().ok().map(Value::from).or_else(|| raw.parse::<u64>().ok().map(Value::from))
        } else {
            raw.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
        }
    }
    let item = |raw: &str, kind: ScalarItem| -> Value {
        let parsed = match kind {
            ScalarItem::Integer => number(raw, true),
            ScalarItem::Number => number(raw, false),
            ScalarItem::Text => None,
        };
        parsed.unwrap_or_else(|| Value::String(raw.to_owned()))
    };
    match kind {
        Some(Scalar::Integer) => number(raw, true).unwrap_or_else(|| raw.into()),
        Some(Scalar::Number) => number(raw, false).unwrap_or_else(|| raw.into()),
        Some(Scalar::Boolean) => match raw {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => raw.into(),
        },
        Some(Scalar::List(k)) => Value::Array(raw.split(',').filter(|s| !s.is_empty()).map(|s| item(s, *k)).collect()),
        Some(Scalar::Text) | None => raw.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Path,
    Query,
    Body,
}

impl Origin {
    fn name(self) -> &'static str {
        match self {
            Origin::Path => "path",
            Origin::Query => "query",
            Origin::Body => "body",
        }
    }
}

/// The message of a name or value carrying control characters.
const CONTROL_MSG: &str = "must not contain control characters (U+0000 to U+001F, U+007F to U+009F)";

/// The message of a body string carrying NUL.
const NUL_MSG: &str = "must not contain the NUL character (U+0000)";

/// The most control-character errors one answer lists: enough to name every field of a real
/// request, and no more for a body made of thousands of them.
const MAX_REPORTED: usize = 20;

/// Refuses path parameters (already percent-decoded) and query names and values that carry a
/// control character, each error naming its field (`["path","agent_id"]`,
/// `["query","q"]`). A clean request costs one pass over its bytes and allocates nothing.
pub fn check_names(path: &[(&str, &str)], query: Option<&str>) -> Result<(), InputError> {
    let mut errors: Vec<FieldError> = path
        .iter()
        .filter(|(_, value)| value.chars().any(char::is_control))
        .map(|(name, _)| FieldError::new([Loc::from("path"), Loc::from(*name)], CONTROL_MSG, "value_error"))
        .collect();
    if let Some(query) = query.filter(|q| query_has_control(q)) {
        // Decoded only now that one is there; a query that does not decode is left to the
        // route's own reading, which says so.
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
        for (name, value) in pairs {
            if name.chars().chain(value.chars()).any(char::is_control) && errors.len() < MAX_REPORTED {
                errors.push(FieldError::new([Loc::from("query"), Loc::Key(name)], CONTROL_MSG, "value_error"));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(InputError { errors }) }
}

/// Whether a raw query string decodes to text with a control character: a C0 control or DEL
/// (`%00`..`%1F`, `%7F`), a C1 control (`%C2%80`..`%C2%9F`, UTF-8 of U+0080..U+009F), written
/// escaped or as is. Read without decoding, so a clean query allocates nothing.
fn query_has_control(query: &str) -> bool {
    let bytes = query.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut after_c2 = false;
    let mut i = 0;
    while i < bytes.len() {
        let mut byte = bytes[i];
        if byte == b'%'
            && let (Some(high), Some(low)) =
                (bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex))
        {
            byte = high << 4 | low;
            i += 2;
        }
        if byte < 0x20 || byte == 0x7f || (after_c2 && (0x80..0xa0).contains(&byte)) {
            return true;
        }
        after_c2 = byte == 0xc2;
        i += 1;
    }
    false
}

/// Refuses a JSON body that carries NUL in a string or a control character in an object key,
/// each error naming its field under `body` (`["body","payload","name"]`).
pub fn check_body_text(body: &Value) -> Result<(), InputError> {
    let errors = text_errors(body);
    if errors.is_empty() {
        return Ok(());
    }
    let rooted = errors
        .into_iter()
        .map(|mut err| {
            err.loc.insert(0, Loc::from("body"));
            err
        })
        .collect();
    Err(InputError { errors: rooted })
}

/// Where `value` carries NUL in a string or a control character in an object key, located from
/// `value` itself, at most 20; none for a clean value, which is walked once and
/// allocates nothing. For surfaces that name fields their own way (the LLM proxy's `param`).
pub fn text_errors(value: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if has_hostile_text(value) {
        hostile_text_at(value, &mut Vec::new(), &mut errors);
    }
    errors
}

/// Whether `value` has a NUL in a string or a control character in a key, anywhere in it.
fn has_hostile_text(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(has_hostile_text),
        Value::Object(fields) => {
            fields.iter().any(|(key, value)| key.chars().any(char::is_control) || has_hostile_text(value))
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// One step down a JSON value, borrowed while it is walked.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Collects where [`has_hostile_text`] found something, up to [`MAX_REPORTED`], `at` being the
/// way down to `value`. One pass: a body of any depth is read once, here as in the check.
fn hostile_text_at<'a>(value: &'a Value, at: &mut Vec<Step<'a>>, errors: &mut Vec<FieldError>) {
    let here = |at: &[Step<'_>]| -> Vec<Loc> {
        at.iter()
            .map(|step| match step {
                Step::Key(key) => Loc::Key((*key).to_owned()),
                Step::Index(index) => Loc::Index(*index),
            })
            .collect()
    };
    match value {
        Value::String(text) if text.contains('\0') => errors.push(FieldError::new(here(at), NUL_MSG, "value_error")),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if errors.len() >= MAX_REPORTED {
                    return;
                }
                at.push(Step::Index(index));
                hostile_text_at(item, at, errors);
                at.pop();
            }
        }
        Value::Object(fields) => {
            for (key, value) in fields {
                if errors.len() >= MAX_REPORTED {
                    return;
                }
                at.push(Step::Key(key));
                if key.chars().any(char::is_control) {
                    errors.push(FieldError::new(here(at), format!("field names {CONTROL_MSG}"), "value_error"));
                } else {
                    hostile_text_at(value, at, errors);
                }
                at.pop();
            }
        }
        _ => {}
    }
}

/// Parses and validates `raw` as input type `I` of a route shaped `spec`.
pub(crate) fn parse<I: RouteInput>(spec: &InputShape<'_>, raw: &RawInput<'_>) -> Result<ValidInput, InputError> {
    // Every route's query is read for control characters, its own fields and `preview` alike,
    // even where the route's input takes none of it.
    check_names(raw.path, raw.query)?;
    let kinds = spec.scalars;
    let mut fields = Map::new();
    let mut origins: HashMap<String, Origin> = HashMap::new();

    for (name, value) in raw.path {
        fields.insert((*name).to_owned(), coerce(kinds.get(*name), value));
        origins.insert((*name).to_owned(), Origin::Path);
    }

    if matches!(spec.source, InputSource::Query | InputSource::QueryOrBody) {
        let query = raw.query.filter(|q| !q.is_empty());
        let pairs: Vec<(String, String)> = query.map_or(Ok(Vec::new()), serde_urlencoded::from_str).map_err(|_| {
            InputError::one(FieldError::new(
                [Loc::from("query")],
                "the query string is not valid URL encoding",
                "value_error",
            ))
        })?;
        for (name, value) in pairs {
            if RESERVED_QUERY.contains(&name.as_str()) || origins.get(&name) == Some(&Origin::Path) {
                continue;
            }
            let coerced = coerce(kinds.get(&name), &value);
            match (fields.get_mut(&name), kinds.get(&name)) {
                // A repeated list parameter (`?ids=1&ids=2`) appends.
                (Some(Value::Array(items)), Some(Scalar::List(_))) => {
                    if let Value::Array(more) = coerced {
                        items.extend(more);
                    }
                }
                (Some(_), _) => {}
                (None, _) => {
                    fields.insert(name.clone(), coerced);
                    origins.insert(name, Origin::Query);
                }
            }
        }
    }

    let body = raw.body.filter(|b| !b.iter().all(u8::is_ascii_whitespace));
    match (spec.source, body) {
        (InputSource::Body, None) => {
            return Err(InputError::one(FieldError::new(
                [Loc::from("body")],
                "Field required: a JSON object body",
                "missing",
            )));
        }
        (InputSource::Body | InputSource::OptionalBody | InputSource::QueryOrBody, Some(bytes)) => {
            let value: Value = serde_json::from_slice(bytes).map_err(|e| {
                InputError::one(FieldError::new([Loc::from("body")], format!("JSON decode error: {e}"), "json_invalid"))
            })?;
            check_body_text(&value)?;
            let Value::Object(object) = value else {
                return Err(InputError::one(FieldError::new(
                    [Loc::from("body")],
                    "Input should be a JSON object",
                    "model_attributes_type",
                )));
            };
            for (name, value) in object {
                if fields.contains_key(&name) {
                    // Path and query win over the body.
                    continue;
                }
                origins.insert(name.clone(), Origin::Body);
                fields.insert(name, value);
            }
        }
        _ => {}
    }

    // A body field the input does not name is refused, not ignored: it would be echoed into
    // the challenge and the payment, and a client that misspelt a field should hear so.
    if !spec.open_body {
        let mut unknown: Vec<&String> = origins
            .iter()
            .filter(|(name, origin)| **origin == Origin::Body && !kinds.contains_key(*name))
            .map(|(n, _)| n)
            .collect();
        if !unknown.is_empty() {
            unknown.sort();
            let errors = unknown
                .into_iter()
                .map(|name| {
                    FieldError::new(
                        [Loc::from("body"), Loc::from(name.as_str())],
                        "Extra inputs are not permitted",
                        "extra_forbidden",
                    )
                })
                .collect();
            return Err(InputError { errors });
        }
    }

    let default_origin = match spec.source {
        InputSource::Query | InputSource::QueryOrBody => Origin::Query,
        InputSource::Body | InputSource::OptionalBody => Origin::Body,
    };
    let root = |first: Option<&Loc>| -> Loc {
        let origin = match first {
            Some(Loc::Key(k)) if path_param_names(spec.path).any(|name| name == k) => Origin::Path,
            Some(Loc::Key(k)) => origins.get(k).copied().unwrap_or(default_origin),
            _ => default_origin,
        };
        Loc::from(origin.name())
    };
    let rooted = |mut err: FieldError| -> FieldError {
        let first = root(err.loc.first());
        err.loc.insert(0, first);
        err
    };

    let mut echo = InputEcho::default();
    for (name, value) in &fields {
        let side = match origins.get(name) {
            Some(Origin::Path) => &mut echo.path,
            Some(Origin::Query) => &mut echo.query,
            _ => &mut echo.body,
        };
        side.insert(name.clone(), value.clone());
    }

    let input: I = serde_path_to_error::deserialize(Value::Object(fields))
        .map_err(|e| InputError::one(rooted(serde_error(&e))))?;

    let mut errors: Vec<FieldError> = match garde::Validate::validate(&input) {
        Ok(()) => Vec::new(),
        Err(report) => report.iter().map(|(path, error)| garde_error(path, error)).collect(),
    };
    errors.extend(input.check());
    if errors.is_empty() {
        let mut valid = ValidInput::new(input);
        let carried = !(echo.path.is_empty() && echo.query.is_empty() && echo.body.is_empty());
        valid.echo = carried.then(|| Box::new(echo));
        Ok(valid)
    } else {
        Err(InputError { errors: errors.into_iter().map(rooted).collect() })
    }
}

/// Maps a serde error with its path into a field error relative to the input root.
fn serde_error(err: &serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    use serde_path_to_error::Segment;
    let mut loc: Vec<Loc> = err
        .path()
        .iter()
        .filter_map(|seg| match seg {
            Segment::Seq { index } => Some(Loc::Index(*index)),
            Segment::Map { key } => Some(Loc::Key(key.clone())),
            Segment::Enum { variant } => Some(Loc::Key(variant.clone())),
            Segment::Unknown => None,
        })
        .collect();
    let text = err.inner().to_string();
    // serde_json appends " at line 1 column 2" only for text input; we deserialise a Value, so
    // the message is the bare reason.
    if let Some(field) = between_backticks(&text, "missing field `") {
        loc.push(Loc::Key(field));
        return FieldError::new(loc, "Field required", "missing");
    }
    let kind = if text.starts_with("unknown variant") {
        "enum"
    } else if text.starts_with("invalid type") || text.starts_with("invalid length") {
        "type_error"
    } else {
        "value_error"
    };
    FieldError::new(loc, text, kind)
}

fn between_backticks(text: &str, prefix: &str) -> Option<String> {
    let rest = text.strip_prefix(prefix)?;
    rest.split_once('`').map(|(name, _)| name.to_owned())
}

fn garde_error(path: &garde::Path, error: &garde::Error) -> FieldError {
    // garde's Path serialises as [[kind, component], ...] from the root down.
    let loc = serde_json::to_value(path)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pair| {
            let kind = pair.get(0).and_then(Value::as_str)?.to_owned();
            let comp = pair.get(1).and_then(Value::as_str)?.to_owned();
            match kind.as_str() {
                "index" => comp.parse().ok().map(Loc::Index),
                "key" => Some(Loc::Key(comp)),
                _ => None,
            }
        })
        .collect::<Vec<_>>();
    FieldError::new(loc, error.message().to_owned(), "value_error")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn named(result: Result<(), InputError>) -> Vec<Vec<Loc>> {
        result.err().map(|e| e.errors.into_iter().map(|e| e.loc).collect()).unwrap_or_default()
    }

    #[test]
    fn control_characters_in_a_query_are_found_escaped_or_not() {
        for query in ["a=%00", "a=x%1fy", "a=%7F", "a=%C2%85", "a=%c2%9f", "a=\u{1}", "a=\u{85}", "%0A=1", "b=1&a=%09"]
        {
            assert!(query_has_control(query), "{query}");
        }
        for query in ["", "a=1&b=two", "a=%2500", "a=%C3%85", "a=%C2%A0", "a=%C2", "a=%C2%41", "a=%", "a=%0", "a=+%20"]
        {
            assert!(!query_has_control(query), "{query}");
        }
    }

    #[test]
    fn each_field_with_a_control_character_is_named() {
        let path = [("agent_id", "ab\u{0}cd"), ("mint", "fine")];
        let refused = named(check_names(&path, Some("q=ok&tag=a%1Bb&%00=1")));
        assert_eq!(
            refused,
            [
                vec![Loc::from("path"), Loc::from("agent_id")],
                vec![Loc::from("query"), Loc::from("tag")],
                vec![Loc::from("query"), Loc::from("\u{0}")],
            ]
        );
        assert!(check_names(&[("id", "plain")], Some("a=line%20one")).is_ok());
    }

    #[test]
    fn a_body_may_hold_newlines_but_no_nul_and_no_control_in_a_name() {
        assert!(check_body_text(&json!({"message": "line one\nline two\t\r\n", "n": [1, {"x": "\u{85}"}]})).is_ok());
        let body = json!({"a": ["ok", {"b": "x\u{0}"}], "c\u{7f}": 1, "d": "\u{0}"});
        assert_eq!(
            named(check_body_text(&body)),
            [
                vec![Loc::from("body"), Loc::from("a"), Loc::Index(1), Loc::from("b")],
                vec![Loc::from("body"), Loc::from("c\u{7f}")],
                vec![Loc::from("body"), Loc::from("d")],
            ]
        );
    }

    #[test]
    fn a_body_full_of_nul_is_answered_with_a_bounded_list() {
        let body = Value::Array((0..10_000).map(|_| json!("\u{0}")).collect());
        assert_eq!(text_errors(&body).len(), MAX_REPORTED);
    }
}
