//! The OpenAPI 3.1 document, generated from the catalogue. Schemas come from the route types
//! through schemars (JSON Schema 2020-12, which OpenAPI 3.1 uses as is), so the document
//! describes exactly what validation enforces and what handlers return.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use crate::input::InputSource;
use crate::route::{Access, HttpMethod, PreviewPolicy, PriceRule, RouteSpec};
use crate::wire::{ErrorBody, HttpValidationError, PaymentRequired, PreviewInfo};
use crate::{Catalogue, input};

/// Version of the interface description, from the contract.
pub const API_VERSION: &str = "3.0.0";

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "#/components/schemas/".into();
            s.meta_schema = None;
        })
        .into_generator()
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The properties of a route's input object, with the names that are required.
fn input_object(route: &RouteSpec, schemas: &mut SchemaGenerator) -> (Map<String, Value>, Vec<String>) {
    let reference = (route.input.schema)(schemas);
    let name = (route.input.name)();
    let def = schemas.definitions().get(name.as_ref()).cloned();
    let object = match (def, reference.as_object()) {
        (Some(def), _) => def,
        (None, Some(inline)) => Value::Object(inline.clone()),
        (None, None) => Value::Null,
    };
    let props = object.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    (props, required)
}

fn price_extension(rule: PriceRule) -> Value {
    let money = |m: svc_domain::Money| json!({ "usd": m.to_string(), "atomic": m.atomic().to_string() });
    match rule {
        PriceRule::Fixed(m) => json!({ "rule": "fixed", "asset": "USDC", "amount": money(m) }),
        PriceRule::PerUnit { unit, max } => {
            json!({ "rule": "per_unit", "asset": "USDC", "unit": money(unit), "max": money(max) })
        }
    }
}

fn parameters(route: &RouteSpec, schemas: &mut SchemaGenerator, preview: bool) -> Vec<Value> {
    let (props, required) = input_object(route, schemas);
    let path_names: Vec<&str> = route.path_params().collect();
    let mut params = Vec::new();
    for name in &path_names {
        let schema = props.get(*name).cloned().unwrap_or_else(|| json!({ "type": "string" }));
        let description = schema.get("description").cloned().unwrap_or(Value::Null);
        params.push(
            json!({ "name": name, "in": "path", "required": true, "description": description, "schema": schema }),
        );
    }
    if matches!(route.source, InputSource::Query | InputSource::QueryOrBody) {
        for (name, schema) in &props {
            if path_names.contains(&name.as_str()) {
                continue;
            }
            let description = schema.get("description").cloned().unwrap_or(Value::Null);
            params.push(json!({
                "name": name,
                "in": "query",
                "required": required.contains(name),
                "description": description,
                "schema": schema,
            }));
        }
    }
    if preview {
        params.push(json!({
            "name": "preview",
            "in": "query",
            "required": false,
            "description": "`true` for a free, truncated preview of real data with the price (5 per hour per IP).",
            "schema": { "type": "boolean" },
        }));
    }
    params.iter_mut().for_each(|p| {
        if let Some(obj) = p.as_object_mut() {
            obj.retain(|_, v| !v.is_null());
        }
    });
    params
}

fn request_body(route: &RouteSpec, schemas: &mut SchemaGenerator) -> Option<Value> {
    let required = match route.source {
        InputSource::Body => true,
        InputSource::OptionalBody => false,
        InputSource::Query | InputSource::QueryOrBody => return None,
    };
    let path_names: Vec<&str> = route.path_params().collect();
    let schema = if path_names.is_empty() {
        (route.input.schema)(schemas).to_value()
    } else {
        // Path parameters are part of the input type but not of the body.
        let (mut props, required_fields) = input_object(route, schemas);
        props.retain(|k, _| !path_names.contains(&k.as_str()));
        let required_fields: Vec<String> =
            required_fields.into_iter().filter(|k| !path_names.contains(&k.as_str())).collect();
        json!({ "type": "object", "properties": props, "required": required_fields })
    };
    // Fields the input does not name are refused (422), and documented so.
    let schema = match schema {
        Value::Object(mut object) if !route.open_body => {
            let key = if object.contains_key("$ref") { "unevaluatedProperties" } else { "additionalProperties" };
            object.entry(key).or_insert(Value::Bool(false));
            Value::Object(object)
        }
        other => other,
    };
    Some(json!({ "required": required, "content": { "application/json": { "schema": schema } } }))
}

/// A 422 in the validation shape, `{"detail": [{loc, msg, type}]}`.
fn validation_response(description: &str) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema_ref("HTTPValidationError") } } })
}

fn error_response(description: &str) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema_ref("ErrorBody") } } })
}

fn operation(route: &RouteSpec, schemas: &mut SchemaGenerator, credits: bool) -> Value {
    let output = (route.output.schema)(schemas).to_value();
    let mut responses = Map::new();
    let success = if route.access == Access::Paid && !credits {
        json!({
            "description": "Success: the whole answer, or with `?preview=true` the free preview (the second schema).",
            "content": { "application/json": { "schema": { "anyOf": [output, schema_ref(&preview_name(route))] } } },
        })
    } else {
        json!({ "description": "Success.", "content": { "application/json": { "schema": output } } })
    };
    responses.insert("200".into(), success);
    let mut op = Map::new();
    op.insert("operationId".into(), json!(if credits { format!("{}.credits", route.id) } else { route.id.to_owned() }));
    op.insert("summary".into(), json!(route.description));
    op.insert("tags".into(), json!([route.tag]));
    match (route.access, credits) {
        (Access::Free, _) => {}
        (Access::Account, _) => {
            responses.insert("401".into(), error_response("Missing or invalid sign-in token or API key."));
            responses.insert("403".into(), error_response(&scope_refusal(route.key_scopes)));
            op.insert("security".into(), json!([{ "signIn": [] }, { "apiKey": [] }, { "bearer": [] }]));
        }
        (Access::SignedIn, _) => {
            responses.insert("401".into(), error_response("Missing, invalid or expired sign-in token."));
            op.insert("security".into(), json!([{ "signIn": [] }]));
        }
        (Access::Paid, false) => {
            responses.insert(
                "402".into(),
                json!({
                    "description": "Payment required: the x402 challenge, also base64-encoded in the PAYMENT-REQUIRED header.",
                    "headers": { "PAYMENT-REQUIRED": { "schema": { "type": "string" }, "description": "Base64 of the JSON challenge." } },
                    "content": { "application/json": { "schema": schema_ref("PaymentRequired") } },
                }),
            );
            responses.insert("429".into(), error_response("Rate or preview quota exceeded."));
            // Without a payment the route answers its challenge (or a free preview): the
            // payment is optional to call it, not to be served.
            op.insert("security".into(), json!([{ "x402": [] }, {}]));
            op.insert("x-price".into(), price_extension(route.price));
        }
        (Access::Paid, true) => {
            responses.insert("401".into(), error_response("Missing, unknown, revoked or expired API key."));
            responses.insert("403".into(), error_response(&scope_refusal(route.twin_key_scopes())));
            responses.insert("402".into(), error_response("Insufficient credits."));
            responses.insert("429".into(), error_response("Rate limit exceeded."));
            op.insert("security".into(), json!([{ "apiKey": [] }, { "bearer": [] }]));
            op.insert(
                "x-price".into(),
                json!({ "rule": "credits", "asset": "USD credits", "amount": {
                    "usd": route.credit_price.to_string(), "atomic": route.credit_price.atomic().to_string() } }),
            );
        }
    }
    responses.insert("422".into(), validation_response("Validation error."));
    responses.insert("default".into(), error_response("Any other error."));
    let params = parameters(route, schemas, route.access == Access::Paid && !credits);
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    if let Some(body) = request_body(route, schemas) {
        op.insert("requestBody".into(), body);
    }
    op.insert("responses".into(), Value::Object(responses));
    Value::Object(op)
}

/// What a 403 means on a route whose keys need one of `scopes`.
fn scope_refusal(scopes: &[&str]) -> String {
    format!("An API key without one of the scopes {}.", scopes.join(", "))
}

/// The component name of `route`'s preview answer.
fn preview_name(route: &RouteSpec) -> String {
    format!("{}.preview", route.id)
}

/// The schema of `route`'s preview answer, derived from its answer's schema `output` as the
/// preview cuts it (see `PreviewPolicy`): fields it omits are gone at every depth, and the
/// answer gains `preview` (wrapped as `{data, preview}` when it is not an object). A route
/// that acts answers only `{preview}`.
fn preview_schema(route: &RouteSpec, output: &Value, definitions: &Map<String, Value>) -> Value {
    let info = schema_ref("PreviewInfo");
    let omit = match route.preview {
        PreviewPolicy::QuoteOnly => {
            return json!({
                "type": "object", "required": ["preview"], "properties": { "preview": info },
                "additionalProperties": false,
            });
        }
        PreviewPolicy::Truncate { omit, .. } => omit,
    };
    let answer =
        if omit.is_empty() { resolved(output, definitions).clone() } else { without(output, definitions, omit, 0) };
    match answer {
        Value::Object(mut object) if object.get("type") == Some(&json!("object")) && !object.contains_key("allOf") => {
            let properties = object.entry("properties").or_insert_with(|| json!({}));
            if let Some(properties) = properties.as_object_mut() {
                properties.insert("preview".into(), info);
            }
            let required = object.entry("required").or_insert_with(|| json!([]));
            if let Some(required) = required.as_array_mut() {
                required.push(json!("preview"));
            }
            Value::Object(object)
        }
        answer if is_object(&answer, definitions, 0) => json!({
            "allOf": [answer, { "type": "object", "required": ["preview"], "properties": { "preview": info } }],
        }),
        data => json!({
            "type": "object", "required": ["data", "preview"],
            "properties": { "data": data, "preview": info },
        }),
    }
}

/// Whether every value `schema` admits is a JSON object (an object type, a choice of
/// objects, or a conjunction with one), so a preview adds its field instead of wrapping.
fn is_object(schema: &Value, definitions: &Map<String, Value>, depth: usize) -> bool {
    let schema = resolved(schema, definitions);
    let branches = |key: &str| schema.get(key).and_then(Value::as_array).filter(|b| !b.is_empty());
    if depth > 8 {
        return false;
    }
    schema.get("type") == Some(&json!("object"))
        || ["oneOf", "anyOf"]
            .iter()
            .any(|key| branches(key).is_some_and(|b| b.iter().all(|s| is_object(s, definitions, depth + 1))))
        || branches("allOf").is_some_and(|b| b.iter().any(|s| is_object(s, definitions, depth + 1)))
}

/// The definition a `$ref` to `#/components/schemas/...` names, or `schema` itself.
fn resolved<'a>(schema: &'a Value, definitions: &'a Map<String, Value>) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .and_then(|name| definitions.get(name))
        .unwrap_or(schema)
}

/// `schema` with every reference inlined and the properties named in `omit` removed (and no
/// longer required) at every depth. Values that are data, not schemas (`enum`, `const`,
/// `default`, `examples`), are kept as they are.
fn without(schema: &Value, definitions: &Map<String, Value>, omit: &[&str], depth: usize) -> Value {
    // Deeper than any answer type nests: a recursive type keeps its reference from here on.
    const MAX_DEPTH: usize = 32;
    match schema {
        Value::Object(object) if depth < MAX_DEPTH => {
            let target = resolved(schema, definitions);
            if !std::ptr::eq(target, schema) && !names_any(target, definitions, omit, depth + 1) {
                // Nothing under the reference is cut: it stays a reference.
                return schema.clone();
            }
            if !std::ptr::eq(target, schema) {
                let mut inlined = without(target, definitions, omit, depth + 1);
                let beside: Map<String, Value> =
                    object.iter().filter(|(key, _)| *key != "$ref").map(|(k, v)| (k.clone(), v.clone())).collect();
                // Annotations beside the reference (a field's description) are kept on the
                // inlined schema; constraints beside it apply too, as a conjunction.
                let annotations = ["description", "title", "default", "examples", "deprecated"];
                if beside.keys().all(|key| annotations.contains(&key.as_str())) {
                    if let Value::Object(inlined) = &mut inlined {
                        inlined.extend(beside);
                    }
                    return inlined;
                }
                let beside = without(&Value::Object(beside), definitions, omit, depth + 1);
                return json!({ "allOf": [inlined, beside] });
            }
            let mut out = Map::new();
            for (key, value) in object {
                let value = match key.as_str() {
                    "enum" | "const" | "default" | "examples" | "example" => value.clone(),
                    "properties" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .filter(|(name, _)| !omit.contains(&name.as_str()))
                            .map(|(name, field)| (name.clone(), without(field, definitions, omit, depth + 1)))
                            .collect(),
                    ),
                    "required" => Value::Array(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|name| !name.as_str().is_some_and(|name| omit.contains(&name)))
                            .cloned()
                            .collect(),
                    ),
                    _ => without(value, definitions, omit, depth + 1),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) if depth < MAX_DEPTH => {
            Value::Array(items.iter().map(|item| without(item, definitions, omit, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

/// Whether `schema`, or any schema it refers to, has a property named in `names`.
fn names_any(schema: &Value, definitions: &Map<String, Value>, names: &[&str], depth: usize) -> bool {
    const MAX_DEPTH: usize = 32;
    if depth >= MAX_DEPTH {
        return false;
    }
    match schema {
        Value::Object(object) => {
            let target = resolved(schema, definitions);
            if !std::ptr::eq(target, schema) && names_any(target, definitions, names, depth + 1) {
                return true;
            }
            object.iter().any(|(key, value)| match key.as_str() {
                "enum" | "const" | "default" | "examples" | "example" => false,
                "properties" => value.as_object().is_some_and(|properties| {
                    properties.iter().any(|(name, field)| {
                        names.contains(&name.as_str()) || names_any(field, definitions, names, depth + 1)
                    })
                }),
                _ => names_any(value, definitions, names, depth + 1),
            })
        }
        Value::Array(items) => items.iter().any(|item| names_any(item, definitions, names, depth + 1)),
        _ => false,
    }
}

fn method_key(m: HttpMethod) -> &'static str {
    match m {
        HttpMethod::Get => "get",
        HttpMethod::Post => "post",
        HttpMethod::Put => "put",
        HttpMethod::Delete => "delete",
        HttpMethod::Patch => "patch",
    }
}

fn insert_component<T: JsonSchema>(schemas: &mut SchemaGenerator) {
    let _: Schema = schemas.subschema_for::<T>();
}

/// `GET /api/agentbox/gateway/logs`: the account's gateway log as server-sent events.
pub fn logs_operation() -> Value {
    json!({
        "operationId": "agentbox.logs",
        "tags": ["agentbox"],
        "summary": "The account's gateway log as server-sent events.",
        "description": "The newest lines first, then new ones as the gateway writes them. Each event's `id` is the log \
            position after its line: reconnect with `Last-Event-ID` to resume exactly there. A `heartbeat` comment \
            every 15 s; an `end` event once the gateway has stopped or failed. Sign-in token, or an API key with the \
            `gateway` or `gateway:read` scope.",
        "security": [{ "signIn": [] }, { "apiKey": [] }, { "bearer": [] }],
        "parameters": [{
            "name": "Last-Event-ID", "in": "header", "required": false,
            "description": "The id of the last event received: the stream resumes after it.",
            "schema": { "type": "string", "pattern": "^[0-9]+$" },
        }],
        "responses": {
            "200": {
                "description": "`text/event-stream`: `id: <position>` and `data: <line>` per log line.",
                "content": { "text/event-stream": { "schema": { "type": "string" } } },
            },
            "401": error_response("Missing or invalid sign-in token or API key."),
            "403": error_response(&scope_refusal(crate::routes::agentbox::READ)),
            "404": error_response("The account has no gateway."),
            "422": validation_response("Last-Event-ID is not a position this stream sent, or the query holds a control character."),
            "503": error_response("Agent sandboxes are not available on this server."),
        },
    })
}

/// `POST /api/agentbox/telegram/webhook/{token_hash}`: the chat platform's deliveries.
pub fn telegram_relay_operation() -> Value {
    json!({
        "operationId": "agentbox.telegram_webhook",
        "tags": ["agentbox"],
        "summary": "Inbound chat-bot updates, as the chat platform delivers them.",
        "description": "Set by svc as the bot's webhook when its config is saved; not for clients. Authenticated by \
            the secret svc gave the platform (`X-Telegram-Bot-Api-Secret-Token`), compared in constant time. \
            Answered at once; each update is kept (once per `update_id`) until the agent confirms it.",
        "security": [],
        "parameters": [
            { "name": "token_hash", "in": "path", "required": true, "schema": { "type": "string" },
              "description": "SHA-256 of the bot's token, hex." },
            { "name": "X-Telegram-Bot-Api-Secret-Token", "in": "header", "required": true, "schema": { "type": "string" } },
        ],
        "requestBody": { "required": true, "content": { "application/json": { "schema": {
            "type": "object", "required": ["update_id"], "properties": { "update_id": { "type": "integer" } } } } } },
        "responses": {
            "200": { "description": "Kept.", "content": { "application/json": { "schema": {
                "type": "object", "properties": { "ok": { "type": "boolean" } } } } } },
            "401": error_response("The secret does not match this bot's webhook."),
            "404": error_response("No bot is relayed at this hash."),
            "413": error_response("An update larger than 1 MiB."),
            "422": validation_response("Not an update with an integer update_id, or a control character in the path."),
        },
    })
}

/// `POST /x402/agents/{agent_id}/invoke`: a seller agent's paid invoke. Its body schema and
/// price are the seller's, so the operation names where to read them.
pub fn invoke_operation() -> Value {
    json!({
        "operationId": "sellers.invoke",
        "tags": ["marketplace"],
        "summary": "Invokes a seller's agent, paid per call over x402.",
        "description": "The body must match the agent's input schema (GET /marketplace/agents/{agent_id} shows it; a \
            422 comes before any payment is asked for), and the agent's limits are checked before the challenge (429 \
            with Retry-After). Without a payment: 402 with the agent's price. With one: the call is forwarded to the \
            seller, signed, and only a successful JSON answer is settled and returned; a seller error, timeout or \
            oversized answer is a 502 or 504 that charges nothing. `?preview=true`: the agent's examples and price, \
            free, without calling the seller.",
        "security": [{ "x402": [] }, {}],
        "parameters": [
            { "name": "agent_id", "in": "path", "required": true, "schema": { "type": "string" } },
            { "name": "preview", "in": "query", "required": false, "schema": { "type": "boolean" },
              "description": "Examples and price only, free (5 per hour per IP)." },
        ],
        "requestBody": { "required": true, "content": { "application/json": { "schema": {
            "type": "object", "description": "As the agent's input_schema says (default: {query: string})." } } } },
        "responses": {
            "200": { "description": "The seller's answer, as it sent it.", "content": { "application/json": {
                "schema": { "description": "The seller's JSON." } } } },
            "402": { "description": "Payment required: the x402 challenge, priced by the seller.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/PaymentRequired" } } } },
            "404": error_response("No agent at this id (unknown or deleted), or one that is not for sale (the detail says why)."),
            "413": error_response("A body larger than the limit."),
            "422": { "description": "The body does not match the agent's input schema.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/HTTPValidationError" } } } },
            "429": error_response("The client's rate limit, or the agent's per-minute or daily limit, is reached (Retry-After says when to retry)."),
            "502": error_response("The seller failed or answered something other than JSON; nothing was charged."),
            "504": error_response("The seller did not answer in time; nothing was charged."),
        },
    })
}

/// The LLM proxy's two routes, in OpenAI's wire format: its request and answer are described
/// by their main fields (OpenAI's own reference has the rest, all passed through), and its
/// errors are OpenAI's `{"error": {...}}` body.
pub fn llm_operations() -> [(&'static str, Value); 2] {
    use crate::routes::llm;
    let openai_error = |description: &str| {
        json!({ "description": description, "content": { "application/json": { "schema": {
            "type": "object", "required": ["error"], "properties": { "error": {
                "type": "object", "required": ["message", "type"],
                "properties": {
                    "message": { "type": "string" }, "type": { "type": "string" },
                    "code": { "type": ["string", "null"] }, "param": { "type": ["string", "null"] },
                },
            } },
        } } } })
    };
    let message = json!({
        "type": "object", "required": ["role"],
        "properties": {
            "role": { "type": "string", "enum": ["system", "developer", "user", "assistant", "tool"] },
            "content": { "description": "A string, or a list of content parts." },
            "tool_calls": { "type": "array" }, "tool_call_id": { "type": "string" },
        },
    });
    let chat = json!({
        "operationId": "llm.chat_completions",
        "tags": ["llm"],
        "summary": llm::CHAT_COMPLETIONS_SUMMARY,
        "description": llm::CHAT_COMPLETIONS_DESCRIPTION,
        "security": [{ "llmToken": [] }],
        "parameters": [{
            "name": "PAYMENT-SIGNATURE", "in": "header", "required": false, "schema": { "type": "string" },
            "description": "An x402 payment answering this route's 402 top-up challenge (X-PAYMENT is also accepted).",
        }],
        "requestBody": { "required": true, "content": { "application/json": { "schema": {
            "type": "object", "required": ["model", "messages"],
            "properties": {
                "model": { "type": "string", "description": "A model id from GET /api/v1/llm/models." },
                "messages": { "type": "array", "minItems": 1, "items": message },
                "stream": { "type": "boolean" },
                "stream_options": { "type": "object", "properties": { "include_usage": { "type": "boolean" } } },
                "max_completion_tokens": { "type": "integer", "minimum": 1 },
                "max_tokens": { "type": "integer", "minimum": 1 },
                "n": { "type": "integer", "minimum": 1, "maximum": 8 },
                "tools": { "type": "array" },
                "tool_choice": {},
                "temperature": { "type": "number" },
            },
            "additionalProperties": true,
        } } } },
        "responses": {
            "200": {
                "description": "A chat.completion object, or with stream: true `text/event-stream` chat.completion.chunk events ending with `data: [DONE]`.",
                "content": {
                    "application/json": { "schema": {
                        "type": "object", "required": ["id", "object", "choices"],
                        "properties": {
                            "id": { "type": "string" }, "object": { "const": "chat.completion" },
                            "model": { "type": "string" }, "choices": { "type": "array" },
                            "usage": { "type": "object" },
                        },
                    } },
                    "text/event-stream": { "schema": { "type": "string" } },
                },
            },
            "400": openai_error("A malformed request, or the model provider's own refusal."),
            "401": openai_error("A missing, malformed, forged or rotated LLM token (invalid_api_key)."),
            "402": openai_error("The credits do not cover the call (insufficient_credits); with automatic top-up on, the PAYMENT-REQUIRED header carries an x402 challenge that buys them."),
            "404": openai_error("No such model (model_not_found)."),
            "413": openai_error("A body over 8 MB."),
            "429": openai_error("The account's calls per minute or spend per day is reached (Retry-After says when)."),
            "502": openai_error("The model provider failed; nothing was charged."),
            "504": openai_error("The model provider did not answer in time; nothing was charged."),
        },
    });
    let models = json!({
        "operationId": "llm.models",
        "tags": ["llm"],
        "summary": llm::MODELS_SUMMARY,
        "security": [],
        "responses": {
            "200": { "description": "OpenAI's list shape: `{object: list, data: [model]}`.", "content": { "application/json": { "schema": {
                "type": "object", "required": ["object", "data"],
                "properties": { "object": { "const": "list" }, "data": { "type": "array", "items": {
                    "type": "object", "required": ["id", "object", "pricing"],
                    "properties": {
                        "id": { "type": "string" }, "object": { "const": "model" },
                        "context_window": { "type": "integer" }, "max_output_tokens": { "type": "integer" },
                        "pricing": { "type": "object" },
                    },
                } } },
            } } } },
        },
    });
    [(llm::CHAT_COMPLETIONS_PATH, json!({ "post": chat })), (llm::MODELS_PATH, json!({ "get": models }))]
}

/// The whole document.
pub fn document(catalogue: &Catalogue) -> Value {
    let mut schemas = generator();
    let mut paths: Map<String, Value> = Map::new();
    for route in catalogue.routes() {
        let entry = paths.entry(route.path.to_owned()).or_insert_with(|| json!({}));
        if let Some(obj) = entry.as_object_mut() {
            obj.insert(method_key(route.method).into(), operation(route, &mut schemas, false));
        }
        if let Some(twin) = route.credits_path() {
            let entry = paths.entry(twin).or_insert_with(|| json!({}));
            if let Some(obj) = entry.as_object_mut() {
                obj.insert(method_key(route.method).into(), operation(route, &mut schemas, true));
            }
        }
    }
    paths.insert(crate::routes::agentbox::LOGS_PATH.to_owned(), json!({ "get": logs_operation() }));
    paths.insert(
        format!("{}/webhook/{{token_hash}}", crate::routes::agentbox::TELEGRAM_PATH),
        json!({ "post": telegram_relay_operation() }),
    );
    paths.insert(crate::routes::sellers::INVOKE_PATH.to_owned(), json!({ "post": invoke_operation() }));
    for (path, item) in llm_operations() {
        paths.insert(path.to_owned(), item);
    }
    insert_component::<ErrorBody>(&mut schemas);
    insert_component::<HttpValidationError>(&mut schemas);
    insert_component::<PaymentRequired>(&mut schemas);
    insert_component::<input::FieldError>(&mut schemas);
    insert_component::<PreviewInfo>(&mut schemas);
    let mut tags: Vec<&str> = catalogue.routes().iter().map(|r| r.tag).collect();
    tags.push("llm");
    tags.dedup();
    let mut seen = std::collections::HashSet::new();
    tags.retain(|t| seen.insert(*t));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "svc",
            "version": API_VERSION,
            "description": "Crypto market data and on-chain actions for software agents, paid per call in USDC over x402 \
                (HTTP 402 challenge, signed EIP-3009 payment, retry), or in account credits under /api/svc-tools/*. \
                Every paid route accepts ?preview=true for a free, truncated preview (5 per hour per IP).",
        },
        "servers": [{ "url": "/" }],
        "tags": tags.iter().map(|t| json!({ "name": t })).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "schemas": with_previews(catalogue, &paths, schemas.take_definitions(true)),
            "securitySchemes": {
                "x402": {
                    "type": "apiKey", "in": "header", "name": "PAYMENT-SIGNATURE",
                    "description": "x402 v2 payment: base64 JSON PaymentPayload answering the 402 challenge (X-PAYMENT is also accepted).",
                },
                "apiKey": { "type": "apiKey", "in": "header", "name": "X-API-Key", "description": "Account API key (credit-billed routes)." },
                "bearer": { "type": "http", "scheme": "bearer", "description": "Account API key as a bearer token." },
                "signIn": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "Sign-in token from POST /api/auth/verify (sign-in with Ethereum)." },
                "llmToken": { "type": "http", "scheme": "bearer", "description": "The account's LLM token (POST /api/account/llm-token), as an OpenAI SDK sends its api_key." },
            },
        },
    })
}

/// `definitions` with the preview schema of every paid route, derived from the answer schema
/// its operation documents.
fn with_previews(catalogue: &Catalogue, paths: &Map<String, Value>, mut definitions: Map<String, Value>) -> Value {
    for route in catalogue.routes().iter().filter(|r| r.access == Access::Paid) {
        let output = &paths[route.path][method_key(route.method)]["responses"]["200"]["content"]["application/json"]["schema"]
            ["anyOf"][0];
        let preview = preview_schema(route, output, &definitions);
        definitions.insert(preview_name(route), preview);
    }
    Value::Object(definitions)
}

/// The document as pretty JSON with a trailing newline, as committed in `openapi.json`.
pub fn document_text(catalogue: &Catalogue) -> String {
    let mut text = serde_json::to_string_pretty(&document(catalogue)).unwrap_or_default();
    text.push('\n');
    text
}
