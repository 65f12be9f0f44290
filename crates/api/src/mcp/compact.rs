//! The compact server's three tools: search the catalogue, describe one tool, call one tool.
//! A client starts with a few hundred tokens of tools instead of every route's schema, and
//! reads only the tools it needs. `call_tool` is paid as the tool it calls is: its payment
//! goes in the same `_meta`, and its challenge is that tool's.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use super::call::ToolCall;
use super::listing::{Listing, meta_tool};

const SEARCH: &str = "search_tools";
const DESCRIBE: &str = "describe_tool";
const CALL: &str = "call_tool";

/// Most tools one search returns.
const MAX_RESULTS: u64 = 20;
/// Longest query searched, in bytes.
const MAX_QUERY: usize = 200;

/// The three tools.
pub(super) fn tools() -> Vec<Tool> {
    vec![
        meta_tool(
            SEARCH,
            "Find svc tools (crypto prices, wallets, signals, social, DEX and perp data, quotes and orders) by \
             words; returns each match's name, price and one line.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "description": "Words to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 8}
                },
                "required": ["query"]
            }),
        ),
        meta_tool(
            DESCRIBE,
            "A tool's full description: its arguments (JSON Schema), its answer and its price.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "A name search_tools returned."}},
                "required": ["name"]
            }),
        ),
        meta_tool(
            CALL,
            "Calls a tool with its arguments. Paid tools answer first with an x402 PaymentRequired; call again \
             with the payment in _meta[\"x402/payment\"], or send an API key to pay from credits.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object", "description": "As describe_tool's inputSchema says."}
                },
                "required": ["name"]
            }),
        ),
    ]
}

/// Runs the meta-tool `name`.
pub(super) async fn call(
    listing: &Listing,
    call: ToolCall<'_>,
    name: &str,
    arguments: Option<JsonObject>,
) -> Result<CallToolResult, McpError> {
    let arguments = arguments.unwrap_or_default();
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    match name {
        SEARCH => {
            let Some(query) = text("query").filter(|q| !q.trim().is_empty() && q.len() <= MAX_QUERY) else {
                return Ok(refused(&format!("query: a string of 1 to {MAX_QUERY} bytes is required")));
            };
            let limit = match arguments.get("limit") {
                None | Some(Value::Null) => 8,
                Some(limit) => match limit.as_u64().filter(|n| (1..=MAX_RESULTS).contains(n)) {
                    Some(limit) => limit,
                    None => return Ok(refused(&format!("limit: an integer from 1 to {MAX_RESULTS}"))),
                },
            };
            let found: Vec<Value> = listing
                .search(query, usize::try_from(limit).unwrap_or(8))
                .into_iter()
                .map(|tool| json!({"name": tool.name, "description": tool.description}))
                .collect();
            Ok(answer(json!({"tools": found})))
        }
        DESCRIBE => {
            let tool = text("name").and_then(|name| named(listing, call, name));
            match tool {
                Some(tool) => Ok(answer(serde_json::to_value(tool).unwrap_or_default())),
                None => Ok(refused("name: no such tool; search_tools lists them")),
            }
        }
        CALL => {
            let name = text("name").unwrap_or_default();
            let known = svc_catalogue::tools::is_agent_tool(name)
                || svc_catalogue::tools::route_of_tool(call.state().catalogue, name).is_some();
            if !known {
                return Ok(refused("name: no such tool; search_tools lists them"));
            }
            let arguments = match arguments.get("arguments") {
                None | Some(Value::Null) => None,
                Some(Value::Object(arguments)) => Some(arguments.clone()),
                Some(_) => return Ok(refused("arguments: an object, as describe_tool's inputSchema says")),
            };
            call.named(name, arguments).await
        }
        _ => Err(McpError::invalid_params(
            format!("unknown tool: {name}; this server has {SEARCH}, {DESCRIBE} and {CALL}"),
            None,
        )),
    }
}

/// The tool `name` names, if any.
fn named<'l>(listing: &'l Listing, call: ToolCall<'_>, name: &str) -> Option<&'l Tool> {
    svc_catalogue::tools::route_of_tool(call.state().catalogue, name).and_then(|route| listing.tool_of(route))
}

fn answer(json: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(json.to_string())]);
    result.structured_content = Some(json);
    result
}

/// A call of a meta-tool with arguments it cannot take, in the shape of a route's 422.
fn refused(why: &str) -> CallToolResult {
    let body = json!({"detail": why, "code": "validation_error"});
    let mut result = CallToolResult::error(vec![ContentBlock::text(body.to_string())]);
    result.structured_content = Some(body);
    result
}
