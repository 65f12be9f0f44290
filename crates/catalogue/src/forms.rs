//! Every route's input as a form for people: its fields, read from the input's JSON Schema,
//! and a submitted form turned back into the JSON the route takes. The console draws its
//! forms from here, so a field, its limits and its words are written once, on the input type.

use serde_json::{Map, Value};

use crate::discovery::inline_schema;
use crate::route::RouteSpec;

/// One field of a route's form.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    /// The input's field name, also the form control's.
    pub name: String,
    /// What it is, from the input type's documentation.
    pub description: String,
    /// Whether the route needs it.
    pub required: bool,
    /// What control it takes.
    pub kind: FieldKind,
    /// Whether the route never shows the value back (`writeOnly`, a token): typed unseen and
    /// never filled in.
    pub secret: bool,
}

/// The control a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A line of text.
    Text {
        /// Fewest characters.
        min: Option<u64>,
        /// Most characters.
        max: Option<u64>,
    },
    /// A whole number.
    Integer {
        /// Smallest allowed.
        min: Option<i64>,
        /// Largest allowed.
        max: Option<i64>,
    },
    /// A yes or no.
    Boolean,
    /// One or several of named values, each explained.
    Choice {
        /// The values and what each means.
        options: Vec<Choice>,
        /// Whether several may be picked.
        many: bool,
    },
    /// A list of lines of text (an array of strings).
    List,
    /// A list of whole numbers, one a line (an array of integers: ids).
    Numbers,
    /// Anything else, written as JSON.
    Json,
}

/// One value a choice offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value sent.
    pub value: String,
    /// What it means.
    pub description: String,
}

/// The fields of `route`'s input, in the input type's order; path parameters are not fields
/// (a form's address carries them), nor are fields marked `deprecated`.
pub fn form_fields(route: &RouteSpec) -> Vec<FormField> {
    let in_path: Vec<&str> = route.path_params().collect();
    let schema = inline_schema(route.input.schema);
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    properties
        .iter()
        .filter(|(name, _)| !in_path.contains(&name.as_str()))
        // A field the route refuses (kept to answer a common mistake clearly) is no control.
        .filter(|(_, field)| field.get("deprecated") != Some(&Value::Bool(true)))
        .map(|(name, field)| FormField {
            name: name.clone(),
            description: text(field, "description"),
            required: required.contains(&name.as_str()),
            kind: kind_of(field),
            secret: field.get("writeOnly") == Some(&Value::Bool(true)),
        })
        .collect()
}

fn text(schema: &Value, key: &str) -> String {
    schema.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The schema's type, `null` aside (an optional field's type is `[T, "null"]`).
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(one) => Some(one),
        Value::Array(many) => many.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

fn kind_of(schema: &Value) -> FieldKind {
    if let Some(options) = choices(schema) {
        return FieldKind::Choice { options, many: false };
    }
    match type_of(schema) {
        Some("string") => FieldKind::Text {
            min: schema.get("minLength").and_then(Value::as_u64),
            max: schema.get("maxLength").and_then(Value::as_u64),
        },
        Some("integer") => FieldKind::Integer {
            min: schema.get("minimum").and_then(Value::as_i64),
            max: schema.get("maximum").and_then(Value::as_i64),
        },
        Some("boolean") => FieldKind::Boolean,
        Some("array") => match schema.get("items") {
            Some(items) if choices(items).is_some() => {
                FieldKind::Choice { options: choices(items).unwrap_or_default(), many: true }
            }
            Some(items) if type_of(items) == Some("string") => FieldKind::List,
            Some(items) if type_of(items) == Some("integer") => FieldKind::Numbers,
            _ => FieldKind::Json,
        },
        _ => FieldKind::Json,
    }
}

/// The named values of an enumeration (`enum`, or `oneOf` of documented constants).
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let options = values.iter().filter_map(Value::as_str);
        return Some(options.map(|v| Choice { value: v.to_owned(), description: String::new() }).collect());
    }
    let variants = schema.get("oneOf").and_then(Value::as_array)?;
    variants
        .iter()
        .map(|v| {
            let value = v.get("const").and_then(Value::as_str)?;
            Some(Choice { value: value.to_owned(), description: text(v, "description") })
        })
        .collect()
}

/// Why a submitted form is not the route's input yet: the field, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormError {
    /// The field.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// The JSON body a submitted form stands for: each field by its kind (a list, a line an item);
/// an empty optional field is left out, so the route applies its default. Pairs of no field of the route are ignored
/// (the form's own token). What the values mean is left to the route's validation.
pub fn form_to_json(fields: &[FormField], pairs: &[(String, String)]) -> Result<Value, FormError> {
    let mut body = Map::new();
    for field in fields {
        let values: Vec<&str> = pairs.iter().filter(|(k, _)| *k == field.name).map(|(_, v)| v.as_str()).collect();
        let first = values.first().copied().unwrap_or_default();
        let wrong = |message: &str| FormError { field: field.name.clone(), message: message.to_owned() };
        let value = match &field.kind {
            FieldKind::Choice { many: true, .. } if values.is_empty() => continue,
            FieldKind::Choice { many: true, .. } => Value::from(values.clone()),
            FieldKind::Boolean => Value::Bool(matches!(first, "on" | "true")),
            _ if first.trim().is_empty() && !field.required => continue,
            FieldKind::Text { .. } | FieldKind::Choice { many: false, .. } => Value::from(first),
            FieldKind::Integer { .. } => {
                Value::from(first.trim().parse::<i64>().map_err(|_| wrong("must be a whole number"))?)
            }
            FieldKind::List => Value::from(lines(first).collect::<Vec<_>>()),
            FieldKind::Numbers => Value::from(
                lines(first)
                    .map(str::parse::<i64>)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| wrong("must be whole numbers, one a line"))?,
            ),
            FieldKind::Json => serde_json::from_str(first).map_err(|_| wrong("must be JSON"))?,
        };
        body.insert(field.name.clone(), value);
    }
    Ok(Value::Object(body))
}

/// The non-blank lines of a text area, trimmed.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_form() -> Vec<FormField> {
        let catalogue = crate::Catalogue::load().expect("catalogue");
        form_fields(catalogue.get(crate::ids::account::KEY_CREATE).expect("route"))
    }

    #[test]
    fn a_routes_form_has_its_inputs_fields_limits_and_words() {
        let fields = key_form();
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["name", "scopes", "expires_in_days"]);
        assert!(fields[0].required && !fields[1].required);
        assert_eq!(fields[0].kind, FieldKind::Text { min: Some(1), max: Some(64) });
        assert_eq!(fields[2].kind, FieldKind::Integer { min: Some(1), max: Some(365) });
        let FieldKind::Choice { options, many: true } = &fields[1].kind else { panic!("{:?}", fields[1]) };
        let gateway = options.iter().find(|o| o.value == "gateway").expect("gateway scope");
        assert!(gateway.description.contains("agent gateway"), "{gateway:?}");
    }

    #[test]
    fn path_parameters_are_not_fields_and_lists_of_text_are_lines() {
        let catalogue = crate::Catalogue::load().expect("catalogue");
        let fields = form_fields(catalogue.get(crate::ids::sellers::UPDATE).expect("route"));
        assert!(fields.iter().all(|f| f.name != "agent_id"), "{fields:?}");
        let tags = fields.iter().find(|f| f.name == "tags").expect("tags");
        assert_eq!(tags.kind, FieldKind::List);
        let sent = vec![("name".to_owned(), "a".to_owned()), ("tags".to_owned(), "defi\r\n\r\n yield \n".to_owned())];
        let body = form_to_json(&fields, &sent).expect("json");
        assert_eq!(body["tags"], serde_json::json!(["defi", "yield"]));
    }

    #[test]
    fn a_token_the_route_never_shows_back_is_a_secret_field() {
        let catalogue = crate::Catalogue::load().expect("catalogue");
        let fields = form_fields(catalogue.get(crate::ids::agentbox::TELEGRAM_CONFIG_SET).expect("route"));
        let secret: Vec<&str> = fields.iter().filter(|f| f.secret).map(|f| f.name.as_str()).collect();
        assert_eq!(secret, ["bot_token"]);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["bot_token", "dm_policy", "group_policy", "allowed_groups"],
            "refused fields are no controls"
        );
        assert_eq!(fields[3].kind, FieldKind::Numbers);
        let sent = vec![("allowed_groups".to_owned(), "-1001\r\n\n 42 \n".to_owned())];
        assert_eq!(form_to_json(&fields[3..], &sent).expect("json")["allowed_groups"], serde_json::json!([-1001, 42]));
        let junk = vec![("allowed_groups".to_owned(), "-1001\nabc".to_owned())];
        assert_eq!(form_to_json(&fields[3..], &junk).expect_err("junk").field, "allowed_groups");
        assert!(key_form().iter().all(|f| !f.secret));
    }

    #[test]
    fn a_submitted_form_becomes_the_routes_json() {
        let fields = key_form();
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };
        let sent = pairs(&[
            ("csrf", "x"),
            ("name", "bot"),
            ("scopes", "data"),
            ("scopes", "gateway"),
            ("expires_in_days", ""),
        ]);
        assert_eq!(form_to_json(&fields, &sent), Ok(serde_json::json!({"name": "bot", "scopes": ["data", "gateway"]})));
        let sent = pairs(&[("name", ""), ("expires_in_days", " 30 ")]);
        assert_eq!(form_to_json(&fields, &sent), Ok(serde_json::json!({"name": "", "expires_in_days": 30})));
        let refused = form_to_json(&fields, &pairs(&[("name", "a"), ("expires_in_days", "ten")]));
        assert_eq!(refused.map_err(|e| e.field), Err("expires_in_days".to_owned()));
    }
}
