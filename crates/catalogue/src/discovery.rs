//! Documents agents read to find and pay for routes: `/api/x402/catalogue` (catalogue
//! version 1), `/.well-known/x402` (the discovery manifest agents and indexers look for) and
//! `/llms.txt` (a plain-text guide). All are generated from the catalogue.

use std::fmt::Write as _;

use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::route::{Access, PreviewPolicy, PriceRule, RouteSpec};
use crate::routes::sellers::MarketplaceAgent;
use crate::{Catalogue, HttpMethod, Operational};

/// Version of the catalogue document, from the contract.
pub const CATALOGUE_VERSION: u32 = 1;

/// A standalone JSON Schema (no `$ref`s to resolve) of a route's input or output.
pub(crate) fn inline_schema(schema: crate::route::SchemaFn) -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    schema(&mut generator).to_value()
}

fn price_json(rule: PriceRule) -> Value {
    let min = rule.min();
    let max = rule.max();
    json!({
        "usd": min.to_string(),
        "atomic": min.atomic().to_string(),
        "max_usd": max.to_string(),
        "max_atomic": max.atomic().to_string(),
        "asset": "USDC",
        "dynamic": matches!(rule, PriceRule::PerUnit { .. }),
    })
}

fn url(base_url: &str, path: &str) -> String {
    format!("{}{path}", base_url.trim_end_matches('/'))
}

/// One paid resource as the catalogue lists it, with the calls per client per minute this
/// deployment allows on it (`None`: not limited).
pub fn resource(route: &RouteSpec, base_url: &str, rate_limit: Option<u32>) -> Value {
    json!({
        "id": route.id,
        "method": route.method.as_str(),
        "url": url(base_url, route.path),
        "group": route.group,
        "tag": route.tag,
        "description": route.description,
        "price": price_json(route.price),
        "credits": route.credits_path().map(|p| json!({
            "url": url(base_url, &p),
            "usd": route.credit_price.to_string(),
            "atomic": route.credit_price.atomic().to_string(),
        })),
        "preview": match route.preview {
            PreviewPolicy::Truncate { .. } => "truncated",
            PreviewPolicy::QuoteOnly => "quote_only",
        },
        "rate_limit_per_minute": rate_limit,
        "input_schema": inline_schema(route.input.schema),
        "output_schema": inline_schema(route.output.schema),
    })
}

/// A seller's listed agent as the catalogue lists it: paid per call like a route, priced and
/// described by its seller.
pub fn agent_resource(agent: &MarketplaceAgent, base_url: &str) -> Value {
    let price = agent.price.amount;
    json!({
        "id": format!("agent:{}", agent.id),
        "method": "POST",
        "url": url(base_url, &agent_path(&agent.id)),
        "group": "agents",
        "tag": "marketplace",
        "description": format!("{}: {}", agent.about.name, agent.about.description),
        "price": {
            "usd": price.to_string(),
            "atomic": price.atomic().to_string(),
            "max_usd": price.to_string(),
            "max_atomic": price.atomic().to_string(),
            "asset": "USDC",
            "dynamic": false,
        },
        "credits": null,
        "preview": "examples",
        "rate_limit_per_minute": null,
        "input_schema": agent.about.input_schema,
        "output_schema": {"description": "The seller's JSON answer."},
        "seller_agent": {"category": agent.about.category, "tags": agent.about.tags, "paid_calls": agent.paid_calls},
    })
}

/// Where a seller's agent is invoked, relative to the base address.
fn agent_path(agent_id: &str) -> String {
    crate::routes::sellers::INVOKE_PATH.replace("{agent_id}", agent_id)
}

/// `GET /api/x402/catalogue`: every paid resource, with the rate limit `rate_limit` gives it,
/// then sellers' listed `agents`.
pub fn catalogue_document(
    catalogue: &Catalogue,
    agents: &[MarketplaceAgent],
    base_url: &str,
    rate_limit: impl Fn(&RouteSpec) -> Option<u32>,
) -> Value {
    let resources: Vec<Value> = catalogue
        .routes()
        .iter()
        .filter(|r| r.access == Access::Paid)
        .map(|r| resource(r, base_url, rate_limit(r)))
        .chain(agents.iter().map(|a| agent_resource(a, base_url)))
        .collect();
    json!({
        "version": CATALOGUE_VERSION,
        "x402Version": 2,
        "count": resources.len(),
        "resources": resources,
        "llm": llm_proxy(base_url),
    })
}

/// The LLM proxy as the catalogue lists it: OpenAI-compatible, billed in credits by the tokens
/// used (so not a priced resource), topped up over x402.
fn llm_proxy(base_url: &str) -> Value {
    use crate::routes::llm;
    json!({
        "base_url": url(base_url, llm::BASE_PATH),
        "wire_format": "openai",
        "chat_completions": {
            "method": "POST",
            "url": url(base_url, llm::CHAT_COMPLETIONS_PATH),
            "description": llm::CHAT_COMPLETIONS_SUMMARY,
            "payment": llm::CHAT_COMPLETIONS_DESCRIPTION,
        },
        "models": { "method": "GET", "url": url(base_url, llm::MODELS_PATH), "description": llm::MODELS_SUMMARY },
    })
}

/// `GET /`: what this server is and where its documents are.
pub fn index(base_url: &str) -> Value {
    json!({
        "name": "svc",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Crypto market data and on-chain actions for software agents, paid per call in USDC over x402, \
            or in account credits; an OpenAI-compatible LLM proxy.",
        "links": {
            "docs": url(base_url, Operational::LlmsTxt.path()),
            "openapi": url(base_url, Operational::OpenApi.path()),
            "catalogue": url(base_url, Operational::Catalogue.path()),
            "discovery": url(base_url, Operational::WellKnown.path()),
            "llm": url(base_url, crate::routes::llm::BASE_PATH),
            "mcp": url(base_url, crate::operational::MCP_PATH),
            "health": url(base_url, Operational::Healthz.path()),
        },
    })
}

/// `GET /.well-known/x402`: the manifest indexers look for, pointing at the full catalogue.
pub fn well_known(catalogue: &Catalogue, agents: &[MarketplaceAgent], base_url: &str) -> Value {
    let resources: Vec<String> = catalogue
        .routes()
        .iter()
        .filter(|r| r.access == Access::Paid)
        .map(|r| url(base_url, r.path))
        .chain(agents.iter().map(|a| url(base_url, &agent_path(&a.id))))
        .collect();
    json!({
        "version": CATALOGUE_VERSION,
        "x402Version": 2,
        "resources": resources,
        "catalogue": url(base_url, Operational::Catalogue.path()),
        "openapi": url(base_url, Operational::OpenApi.path()),
        "llms": url(base_url, Operational::LlmsTxt.path()),
        "llm": url(base_url, crate::routes::llm::BASE_PATH),
        "instructions": "Call any resource; it answers 402 with an x402 v2 challenge (JSON body and base64 \
            PAYMENT-REQUIRED header). Sign an EIP-3009 USDC authorization for one of `accepts` and retry with \
            the PAYMENT-SIGNATURE header. Add ?preview=true for a free truncated preview (5/hour/IP).",
    })
}

/// `GET /llms.txt`: how an agent pays, previews, and what each route and listed agent costs.
pub fn llms_txt(catalogue: &Catalogue, agents: &[MarketplaceAgent], base_url: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# svc\n");
    let _ = writeln!(
        out,
        "> Crypto market data and on-chain actions for software agents, paid per call in USDC over x402.\n"
    );
    let _ = writeln!(out, "## How to pay (x402 v2)\n");
    let _ = writeln!(
        out,
        "1. Call a route. Without payment it answers 402 with a challenge: JSON body and base64 `PAYMENT-REQUIRED` header."
    );
    let _ = writeln!(
        out,
        "2. Pick one entry of `accepts` (USDC on Base `eip155:8453` or on Solana) and sign it: an EIP-3009 `transferWithAuthorization` on EVM, a partially signed transfer on Solana."
    );
    let _ = writeln!(
        out,
        "3. Retry the same request with header `PAYMENT-SIGNATURE: base64(PaymentPayload)` (`X-PAYMENT` also works)."
    );
    let _ = writeln!(
        out,
        "4. A 200 carries `PAYMENT-RESPONSE` with the settlement. You are charged only when the route succeeds; invalid input is refused with 422 before any challenge."
    );
    let _ = writeln!(
        out,
        "\nVolume discounts by paid calls in the trailing 30 days: 100-999 calls 20% off, 1,000+ calls 40% off.\n"
    );
    let _ = writeln!(out, "## Free preview\n");
    let _ = writeln!(
        out,
        "Add `?preview=true` to any paid route: real data, truncated, with the price. 5 previews per hour per IP.\n"
    );
    let _ = writeln!(out, "## Credits\n");
    let _ = writeln!(
        out,
        "Every paid data route has a twin under `/api/svc-tools/*` billed in account credits with an API key (`X-API-Key` or `Authorization: Bearer`).\n"
    );
    let _ = writeln!(out, "## MCP\n");
    let _ = writeln!(
        out,
        "Every route below is also an MCP tool (Streamable HTTP) at {}, or three tools that search, describe and call them at {}. A paid tool answers first with an x402 PaymentRequired as an error result; call it again with the PaymentPayload in `params._meta[\"x402/payment\"]`, or send an API key as a bearer token to pay from credits.\n",
        url(base_url, crate::operational::MCP_PATH),
        url(base_url, crate::operational::MCP_COMPACT_PATH)
    );
    let _ = writeln!(out, "## Documents\n");
    let _ = writeln!(out, "- OpenAPI 3.1: {}", url(base_url, Operational::OpenApi.path()));
    let _ =
        writeln!(out, "- Catalogue (input/output schemas, prices): {}", url(base_url, Operational::Catalogue.path()));
    let _ = writeln!(out, "- Discovery manifest: {}\n", url(base_url, Operational::WellKnown.path()));
    let _ = writeln!(out, "## Routes (price per call in USD)\n");
    let mut tag = "";
    for route in catalogue.routes() {
        if route.tag != tag {
            tag = route.tag;
            let _ = writeln!(out, "\n### {tag}\n");
        }
        let price = match (route.access, route.price) {
            (Access::Free, _) => "free".to_owned(),
            (Access::Account | Access::SignedIn, _) => "free, signed in".to_owned(),
            (Access::Paid, PriceRule::Fixed(m)) => m.to_string(),
            (Access::Paid, PriceRule::PerUnit { unit, max }) => format!("{unit} per unit, at most {max}"),
        };
        let method = route.method.as_str();
        let _ = writeln!(out, "- {method} {} — {price} — {}", route.path, route.description);
    }
    let _ = writeln!(out, "\n## LLM proxy (OpenAI-compatible)\n");
    let (llm_chat, llm_models) = (crate::routes::llm::CHAT_COMPLETIONS_PATH, crate::routes::llm::MODELS_PATH);
    let _ =
        writeln!(out, "- POST {llm_chat} — metered per token — {}", crate::routes::llm::CHAT_COMPLETIONS_DESCRIPTION);
    let _ = writeln!(out, "- GET {llm_models} — free — {}", crate::routes::llm::MODELS_SUMMARY);
    if !agents.is_empty() {
        let _ = writeln!(out, "\n## Sellers' agents (x402, price per call in USD; body as each input_schema says)\n");
        for agent in agents {
            let (name, description) = (markdown_text(&agent.about.name), markdown_text(&agent.about.description));
            let price = agent.price.amount;
            let _ = writeln!(out, "- POST {} — {price} — {name}: {description}", agent_path(&agent.id));
        }
    }
    out
}

/// Text a seller wrote, as inert Markdown on one line: whatever it holds cannot start a
/// heading, a list, a link or an instruction block in a document agents read before paying.
/// Line breaks and invisible characters, refused when text is saved, become spaces here too,
/// so older text renders as safely.
pub(crate) fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if svc_domain::text::check_line(c.encode_utf8(&mut [0; 4])).is_err() {
            out.push(' ');
            continue;
        }
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '<' | '>' | '#' | '|' | '!' | '~' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The JSON Schema of a route's `bazaar` extension `info` (draft 2020-12), which indexers
/// validate the echoed `info` against before they list the route. Computed once per route.
pub fn bazaar_schema(route: &RouteSpec) -> Value {
    let mut input = inline_schema(route.input.schema);
    let path_names: Vec<&str> = route.path_params().collect();
    if let Some(props) = input.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|name, _| !path_names.contains(&name.as_str()));
    }
    if let Some(required) = input.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| !name.as_str().is_some_and(|n| path_names.contains(&n)));
    }
    let method = route.method.as_str();
    let mut fields = serde_json::Map::new();
    fields.insert("type".into(), json!({"type": "string", "const": "http"}));
    fields.insert("method".into(), json!({"type": "string", "enum": [method]}));
    let mut required = vec!["type", "method"];
    if route.method == HttpMethod::Get {
        fields.insert("queryParams".into(), input);
    } else {
        fields.insert("bodyType".into(), json!({"type": "string", "enum": ["json"]}));
        fields.insert("body".into(), input);
        required.extend(["bodyType", "body"]);
    }
    if !path_names.is_empty() {
        let props: serde_json::Map<String, Value> =
            path_names.iter().map(|n| ((*n).to_owned(), json!({"type": "string"}))).collect();
        fields.insert("pathParams".into(), json!({"type": "object", "properties": props, "required": path_names}));
        required.push("pathParams");
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "input": {"type": "object", "properties": fields, "required": required, "additionalProperties": false},
            "output": {
                "type": "object",
                "properties": {"type": {"type": "string"}, "example": output_outline(route)},
                "required": ["type"],
            },
        },
        "required": ["input"],
    })
}

/// The `bazaar` extension of a JSON `POST` whose input schema is not a catalogue type (a
/// seller agent's invoke): `info` shows `body`, the request being paid for, and `schema` is the
/// same envelope [`bazaar_schema`] gives catalogue routes, around `input_schema`.
pub fn bazaar_post_extension(input_schema: &Value, body: &Value) -> Value {
    json!({
        "info": {
            "input": {"type": "http", "method": "POST", "bodyType": "json", "body": body},
            "output": {"type": "json"},
        },
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "input": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "const": "http"},
                        "method": {"type": "string", "enum": ["POST"]},
                        "bodyType": {"type": "string", "enum": ["json"]},
                        "body": input_schema,
                    },
                    "required": ["type", "method", "bodyType", "body"],
                    "additionalProperties": false,
                },
                "output": {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]},
            },
            "required": ["input"],
        },
    })
}

/// The shape of a route's answer, as the schema of the bazaar `output.example`: its top-level
/// fields with their JSON types. The full output schema is in the OpenAPI document; a challenge
/// travels in a header that clients echo back, so it stays small (HTTP stacks cap headers near
/// 16 KB).
fn output_outline(route: &RouteSpec) -> Value {
    let full = inline_schema(route.output.schema);
    let mut outline = serde_json::Map::new();
    outline.insert("type".into(), json_type(&full).unwrap_or_else(|| Value::from("object")));
    if let Some(props) = full.get("properties").and_then(Value::as_object) {
        let fields = props
            .iter()
            .map(|(name, field)| {
                let typed = json_type(field).map_or_else(|| json!({}), |t| json!({"type": t}));
                (name.clone(), typed)
            })
            .collect();
        outline.insert("properties".into(), Value::Object(fields));
    }
    if let Some(required) = full.get("required") {
        outline.insert("required".into(), required.clone());
    }
    outline.insert("$comment".into(), Value::from("top-level fields only; the full schema is in /openapi.json"));
    Value::Object(outline)
}

/// The JSON type (or types) a schema admits, when it names them.
fn json_type(schema: &Value) -> Option<Value> {
    if let Some(t) = schema.get("type") {
        return Some(t.clone());
    }
    if schema.get("properties").is_some() {
        return Some(Value::from("object"));
    }
    let variants = schema.get("anyOf").or_else(|| schema.get("oneOf"))?.as_array()?;
    let mut types: Vec<Value> = Vec::new();
    for variant in variants {
        let named = json_type(variant)?;
        for t in named.as_array().cloned().unwrap_or_else(|| vec![named]) {
            if !types.contains(&t) {
                types.push(t);
            }
        }
    }
    match types.len() {
        0 => None,
        1 => types.pop(),
        _ => Some(Value::Array(types)),
    }
}

/// The `bazaar` extension of a route's 402 challenge: `info` describes the very request being
/// paid for (a valid example, since it passed validation), `schema` is [`bazaar_schema`].
pub fn bazaar_extension(route: &RouteSpec, schema: &Value, echo: &crate::InputEcho) -> Value {
    let mut input = serde_json::Map::new();
    input.insert("type".into(), Value::from("http"));
    input.insert("method".into(), Value::from(route.method.as_str()));
    if route.method == HttpMethod::Get {
        let mut query = echo.query.clone();
        query.extend(echo.body.clone());
        input.insert("queryParams".into(), Value::Object(query));
    } else {
        input.insert("bodyType".into(), Value::from("json"));
        let mut body = echo.body.clone();
        body.extend(echo.query.clone());
        input.insert("body".into(), Value::Object(body));
    }
    if !echo.path.is_empty() {
        let strings = echo
            .path
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str().map_or_else(|| v.to_string(), str::to_owned))));
        input.insert("pathParams".into(), Value::Object(strings.collect()));
    }
    let mut extension = json!({
        "info": {"input": input, "output": {"type": "json"}},
        "schema": schema,
    });
    if route.path_params().next().is_some() {
        let template: String = route
            .path
            .split('/')
            .map(|seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => format!(":{name}"),
                None => seg.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("/");
        extension["routeTemplate"] = Value::from(template);
    }
    extension
}
