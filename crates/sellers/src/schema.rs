//! An agent's input schema: a seller's JSON Schema, checked when saved, and every invoke's body
//! checked against it before anything is priced or paid.

use serde_json::{Value, json};
use svc_catalogue::{FieldError, Loc};

/// The largest schema a seller may save, bytes of JSON. It travels in every challenge's
/// `bazaar` extension, in a header, and clients copy it into their payment header: HTTP stacks
/// refuse headers much past 16 KB, and svc's own payment bound is 32 KiB.
pub const MAX_SCHEMA_BYTES: usize = 4 * 1024;

/// The schema an agent takes when its seller names none.
pub fn default_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "query": { "type": "string", "minLength": 1, "maxLength": 4000 } },
        "required": ["query"],
    })
}

/// Checks a seller's schema: an object schema, small, and compiling without fetching anything
/// (references to other documents are refused, never retrieved).
pub fn check(schema: &Value, loc: &str) -> Result<(), FieldError> {
    let error = |msg: String| FieldError::new([Loc::from("body"), Loc::from(loc)], msg, "value_error");
    let size = serde_json::to_vec(schema).map_or(usize::MAX, |v| v.len());
    if size > MAX_SCHEMA_BYTES {
        return Err(error(format!("the schema is {size} bytes; at most {MAX_SCHEMA_BYTES}")));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(error("the schema must describe a JSON object (\"type\": \"object\")".to_owned()));
    }
    jsonschema::validator_for(schema).map(|_| ()).map_err(|e| error(format!("not a valid JSON Schema: {}", e.masked())))
}

/// A compiled schema, with the JSON it was compiled from (what challenges and previews show).
pub struct InputSchema {
    validator: jsonschema::Validator,
    json: Value,
}

impl std::fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputSchema")
    }
}

/// At most this many errors are reported for one body.
const MAX_ERRORS: usize = 20;

impl InputSchema {
    /// Compiles a schema saved by [`check`].
    pub fn compile(schema: Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(&schema).map_err(|e| e.masked().to_string())?;
        Ok(InputSchema { validator, json: schema })
    }

    /// The schema as JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Every way `body` fails the schema, located under `body`.
    pub fn errors(&self, body: &Value) -> Vec<FieldError> {
        self.validator
            .iter_errors(body)
            .take(MAX_ERRORS)
            .map(|e| {
                let mut loc = vec![Loc::from("body")];
                loc.extend(e.instance_path().iter().map(|segment| match segment {
                    jsonschema::paths::LocationSegment::Property(name) => Loc::Key(name.into_owned()),
                    jsonschema::paths::LocationSegment::Index(i) => Loc::Index(i),
                }));
                FieldError::new(loc, e.masked().to_string(), "schema")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_must_describe_an_object_compile_and_fetch_nothing() {
        assert!(check(&default_schema(), "input_schema").is_ok());
        assert!(check(&json!({"type": "string"}), "input_schema").is_err());
        assert!(check(&json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}), "s").is_err());
        let remote = json!({"type": "object", "properties": {"a": {"$ref": "http://169.254.169.254/latest"}}});
        assert!(check(&remote, "s").is_err(), "a remote reference is refused, not fetched");
        let huge = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(check(&huge, "s").is_err());
    }

    #[test]
    fn a_body_is_checked_with_each_error_located() {
        let schema = InputSchema::compile(default_schema()).expect("compiles");
        assert!(schema.errors(&json!({"query": "hi"})).is_empty());
        let errors = schema.errors(&json!({"query": 5}));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].loc, vec![Loc::from("body"), Loc::from("query")]);
        assert!(!schema.errors(&json!({})).is_empty());
    }
}
