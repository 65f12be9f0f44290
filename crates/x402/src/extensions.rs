//! Extension echoes (x402 §9.6): a v2 client copies the challenge's `extensions` into its
//! payment, adding what it owns (a payment id). What we advertised must still be there,
//! unchanged; a client that rewrote it is refused with `extension_echo_mismatch`, as the
//! reference server does.

use serde_json::{Map, Value};

/// The reason code for an echo that contradicts the challenge.
pub const ECHO_MISMATCH: &str = "extension_echo_mismatch";

/// The first advertised extension whose echo contradicts it, if any. Extensions the client
/// echoes but we did not advertise, and extensions it does not echo, are not checked.
pub fn echo_mismatch<'a>(advertised: &Map<String, Value>, echoed: &'a Map<String, Value>) -> Option<&'a str> {
    echoed.iter().find_map(|(key, echo)| {
        let ours = advertised.get(key)?;
        (!contains(info(ours), info(echo))).then_some(key.as_str())
    })
}

/// The `payment-identifier` extension as a challenge declares it: optional, so clients that do
/// not know it pay as usual.
pub fn payment_identifier() -> Value {
    serde_json::json!({
        "info": {"required": false},
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "required": {"type": "boolean"},
                "id": {"type": "string", "minLength": 16, "maxLength": 128, "pattern": "^[a-zA-Z0-9_-]+$"},
            },
            "required": ["required"],
        },
    })
}

/// An extension's `info`, or the value itself when it has none.
fn info(value: &Value) -> &Value {
    value.as_object().and_then(|o| o.get("info")).unwrap_or(value)
}

/// Whether `actual` holds everything in `expected`: objects may gain keys, everything else
/// must be equal.
fn contains(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(expected), Value::Object(actual)) => {
            expected.iter().all(|(key, value)| actual.get(key).is_some_and(|found| contains(value, found)))
        }
        (Value::Object(_), _) => false,
        _ => expected == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn an_echo_may_add_but_not_change() {
        let advertised = map(json!({
            "payment-identifier": {"info": {"required": false}, "schema": {}},
            "bazaar": {"info": {"input": {"type": "http", "method": "GET", "queryParams": {"q": "sol"}}}, "schema": {}},
        }));
        let faithful = map(json!({
            "payment-identifier": {"info": {"required": false, "id": "pay_0123456789abcdef"}},
            "bazaar": {"info": {"input": {"type": "http", "method": "GET", "queryParams": {"q": "sol"}}}, "schema": {}},
            "unknown": {"info": 1},
        }));
        assert_eq!(echo_mismatch(&advertised, &faithful), None);

        let rewritten = map(json!({
            "bazaar": {"info": {"input": {"type": "http", "method": "GET", "queryParams": {"q": "eth"}}}},
        }));
        assert_eq!(echo_mismatch(&advertised, &rewritten), Some("bazaar"));
        let dropped = map(json!({"payment-identifier": {"info": {}}}));
        assert_eq!(echo_mismatch(&advertised, &dropped), Some("payment-identifier"));
        let not_an_object = map(json!({"bazaar": "yes"}));
        assert_eq!(echo_mismatch(&advertised, &not_an_object), Some("bazaar"));
        assert_eq!(echo_mismatch(&advertised, &Map::new()), None);
    }
}
