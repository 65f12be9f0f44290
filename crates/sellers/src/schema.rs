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

/// The largest compiled pattern, and the lazy DFA's cache per pattern, in bytes: a pattern
/// like `a{1000}{1000}` is refused when saved instead of building a huge automaton.
const REGEX_BYTES: usize = 1024 * 1024;
const REGEX_DFA_BYTES: usize = 1024 * 1024;

/// The most patterns one schema may hold: each compiles to an automaton, and every body is
/// matched against all that apply.
const MAX_PATTERNS: usize = 32;

/// How every seller schema is compiled: `pattern` and `patternProperties` run on the
/// linear-time `regex` engine, so neither a seller's pattern nor a buyer's string can make
/// matching back-track (a back-reference costs a back-tracking engine ~40 ms per 10 KB string
/// before anything is paid). Back-references and look-around do not compile there.
fn compile(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    let patterns = jsonschema::PatternOptions::regex().size_limit(REGEX_BYTES).dfa_size_limit(REGEX_DFA_BYTES);
    jsonschema::options().with_pattern_options(patterns).build(schema)
}

/// Checks a seller's schema: an object schema, small, and compiling without fetching anything
/// (references to other documents are refused, never retrieved) and with every pattern in the
/// linear-time dialect.
pub fn check(schema: &Value, loc: &str) -> Result<(), FieldError> {
    let error = |msg: String| FieldError::new([Loc::from("body"), Loc::from(loc)], msg, "value_error");
    let size = serde_json::to_vec(schema).map_or(usize::MAX, |v| v.len());
    if size > MAX_SCHEMA_BYTES {
        return Err(error(format!("the schema is {size} bytes; at most {MAX_SCHEMA_BYTES}")));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(error("the schema must describe a JSON object (\"type\": \"object\")".to_owned()));
    }
    let mut patterns = 0;
    if let Some(refused) = refused_pattern(schema, &mut String::new(), &mut patterns) {
        return Err(error(refused));
    }
    if patterns > MAX_PATTERNS {
        return Err(error(format!("the schema has {patterns} patterns; at most {MAX_PATTERNS}")));
    }
    compile(schema).map(|_| ()).map_err(|e| error(format!("not a valid JSON Schema: {}", e.masked())))
}

/// The first pattern (a `pattern` string or a `patternProperties` key) the linear-time engine
/// cannot run, said so a seller can fix it: where it is and why.
fn refused_pattern(schema: &Value, at: &mut String, patterns: &mut usize) -> Option<String> {
    let explain = |pattern: &str, at: &str, why: regex::Error| {
        let why = match why {
            regex::Error::CompiledTooBig(_) => "it compiles to an automaton over the size limit".to_owned(),
            other => {
                let said = other.to_string();
                let last = said.lines().last().unwrap_or_default().trim();
                last.strip_prefix("error: ").unwrap_or(last).to_owned()
            }
        };
        format!(
            "the pattern {pattern:?} at {at} cannot be used: {why} (patterns are matched in linear time, so \
             back-references such as \\1 and look-around such as (?= (?! (?<= (?<! are not supported)"
        )
    };
    let linear = |pattern: &str, patterns: &mut usize| {
        *patterns += 1;
        regex::RegexBuilder::new(pattern).size_limit(REGEX_BYTES).build().err()
    };
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                // Values, not schemas: a "pattern" inside them is data.
                if matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    continue;
                }
                let len = at.len();
                at.push('/');
                at.push_str(key);
                if let (true, Value::String(pattern)) = (key == "pattern", value)
                    && let Some(why) = linear(pattern, patterns)
                {
                    return Some(explain(pattern, at, why));
                }
                if let (true, Value::Object(properties)) = (key == "patternProperties", value)
                    && let Some((pattern, why)) =
                        properties.keys().find_map(|p| linear(p, patterns).map(|why| (p, why)))
                {
                    return Some(explain(pattern, at, why));
                }
                let found = refused_pattern(value, at, patterns);
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = at.len();
            at.push_str(&format!("/{i}"));
            let found = refused_pattern(item, at, patterns);
            at.truncate(len);
            found
        }),
        _ => None,
    }
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
        let validator = compile(&schema).map_err(|e| e.masked().to_string())?;
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
    fn a_pattern_the_linear_engine_cannot_run_is_refused_with_where_and_why() {
        let with =
            |pattern: &str| json!({"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}});
        for (pattern, why) in [
            (r"^(a+)\1$", "backreferences are not supported"),
            (r"(?=a)b", "look-around"),
            (r"(?<!a)b", "look-around"),
            (r"a{1000}{1000}", "size limit"),
            (r"[", "unclosed character class"),
        ] {
            let refused = check(&with(pattern), "input_schema").expect_err(pattern);
            assert!(refused.msg.contains(why) && refused.msg.contains("/properties/q/pattern"), "{}", refused.msg);
        }
        let keyed = json!({"type": "object", "patternProperties": {"(?=x)": {"type": "string"}}});
        assert!(check(&keyed, "input_schema").expect_err("look-around key").msg.contains("/patternProperties"));
        assert!(check(&with(r"^(a+)+$"), "input_schema").is_ok(), "nested repetition is linear here");
        assert!(check(&with(r"^[A-Za-z0-9_-]{1,64}$"), "input_schema").is_ok());
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
