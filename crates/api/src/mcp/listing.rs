//! What the MCP servers list: every route as a tool, the three meta-tools of the compact
//! server, and the resources agents read before they pay. Built once, at start, from the
//! catalogue.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, JsonObject, ReadResourceResult, Resource, ResourceContents, Tool, ToolAnnotations};
use serde_json::{Value, json};
use svc_catalogue::tools::{ToolFacts, tool_facts};
use svc_catalogue::{Operational, RouteSpec, discovery, ids};

use super::Mode;
use super::call::ToolCall;
use crate::state::AppState;

/// The most sellers' agents `tools/list` shows.
pub(super) const MAX_AGENTS_LISTED: usize = 25;

/// The tools of both modes and the resources, with what the compact tools search.
pub(super) struct Listing {
    full: Vec<Tool>,
    compact: Vec<Tool>,
    resources: Vec<Resource>,
    /// Each route's tool, by position in `full`, with its words in lower case for search.
    searchable: Vec<(&'static RouteSpec, String)>,
}

impl Listing {
    pub(super) fn new(state: &AppState) -> Self {
        let routes = state.catalogue.routes();
        let full: Vec<Tool> = routes.iter().map(|route| tool(tool_facts(route))).collect();
        let searchable = routes
            .iter()
            .zip(&full)
            .map(|(route, tool)| {
                let words = format!("{} {} {}", tool.name, route.tag, tool.description.as_deref().unwrap_or_default());
                (route, words.to_lowercase())
            })
            .collect();
        let base = state.config.base_url();
        let resource = |op: Operational, name: &str, mime: &str, about: &str| {
            Resource::new(format!("{base}{}", op.path()), name).with_description(about).with_mime_type(mime)
        };
        let track_record = state.catalogue.get(ids::public::ALPHA_TRACK_RECORD).map(|route| {
            Resource::new(format!("{base}{}", route.path), "track-record")
                .with_description(route.description)
                .with_mime_type("application/json")
        });
        let resources = [
            Some(resource(
                Operational::LlmsTxt,
                "llms.txt",
                "text/plain",
                "How to pay, and every route with its price.",
            )),
            Some(resource(
                Operational::Catalogue,
                "catalogue",
                "application/json",
                "Every route and listed agent with its price and input and output schemas.",
            )),
            track_record,
        ]
        .into_iter()
        .flatten()
        .collect();
        Listing { full, compact: super::compact::tools(), resources, searchable }
    }

    /// What `tools/list` answers in `mode`: in full, every route and every listed seller
    /// agent (looked up on each listing, as they come and go).
    pub(super) async fn listed(&self, mode: Mode, state: &AppState) -> Vec<Tool> {
        let mut tools = self.tools(mode).to_vec();
        if mode == Mode::Full {
            // The most called agents only: every host loads every tool listed, and anyone can
            // list an agent. Any selling agent is callable by its id.
            let mut agents = crate::ops::listed_agents(state).await;
            agents.sort_by(|a, b| b.paid_calls.cmp(&a.paid_calls).then_with(|| a.id.cmp(&b.id)));
            agents.truncate(MAX_AGENTS_LISTED);
            tools.extend(agents.iter().map(|agent| tool(svc_catalogue::tools::agent_tool_facts(agent))));
        }
        tools
    }

    /// The tools `mode` lists, but for sellers' agents.
    pub(super) fn tools(&self, mode: Mode) -> &[Tool] {
        match mode {
            Mode::Full => &self.full,
            Mode::Compact => &self.compact,
        }
    }

    /// The resources.
    pub(super) fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The tool of `route`.
    pub(super) fn tool_of(&self, route: &RouteSpec) -> Option<&Tool> {
        self.searchable.iter().position(|(r, _)| r.id == route.id).map(|i| &self.full[i])
    }

    /// The tools whose name, tag or description hold the most of `query`'s words, best first.
    pub(super) fn search(&self, query: &str, limit: usize) -> Vec<&Tool> {
        let words: Vec<String> =
            query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase).collect();
        let mut scored: Vec<(usize, usize)> = self
            .searchable
            .iter()
            .enumerate()
            .filter_map(|(i, (_, text))| {
                let name = self.full[i].name.as_ref();
                let score: usize = words
                    .iter()
                    .map(|w| if name.contains(w.as_str()) { 3 } else { usize::from(text.contains(w.as_str())) })
                    .sum();
                (score > 0).then_some((score, i))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, i)| &self.full[i]).collect()
    }
}

/// A route's facts as the SDK's tool.
fn tool(facts: ToolFacts) -> Tool {
    let ToolFacts { name, description, input_schema, output_schema, read_only, destructive, idempotent, open_world } =
        facts;
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world);
    let tool = Tool::new(name, description, Arc::new(input_schema)).annotate(annotations);
    match output_schema {
        Some(schema) => tool.with_raw_output_schema(Arc::new(schema)),
        None => tool,
    }
}

/// A tool of our own making (the compact server's), from its JSON Schema.
pub(super) fn meta_tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    Tool::new(name, description, Arc::new(schema))
        .annotate(ToolAnnotations::new().read_only(true).destructive(false).open_world(false))
}

/// What a client is told when it connects.
pub(super) fn instructions(mode: Mode) -> String {
    let paying = "Free tools answer at once. A paid tool first answers with an error result whose \
        structuredContent is an x402 PaymentRequired (x402Version 2, accepts): sign one of its accepts \
        (USDC) and call the same tool again with the PaymentPayload in params._meta[\"x402/payment\"]; the \
        answer carries the settlement in _meta[\"x402/payment-response\"], and nothing is charged when a \
        call fails. An API key sent as `Authorization: Bearer` pays from the account's credits instead.";
    match mode {
        Mode::Full => format!("svc: crypto market data and on-chain actions, per call. {paying}"),
        Mode::Compact => format!(
            "svc: crypto market data and on-chain actions, per call. Find a tool with search_tools, read its \
             arguments with describe_tool, and run it with call_tool. {paying}"
        ),
    }
}

/// Reads the resource at `uri`.
pub(super) async fn read(call: ToolCall<'_>, uri: &str) -> Result<ReadResourceResult, McpError> {
    let state = call.state();
    let base = state.config.base_url();
    let path = uri.strip_prefix(base).unwrap_or_default();
    let text = |text: String, mime: &str| {
        let contents = ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            text,
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]))
    };
    if path == Operational::LlmsTxt.path() {
        let agents = crate::ops::listed_agents(state).await;
        return text(discovery::llms_txt(state.catalogue, &agents, base), "text/plain");
    }
    if path == Operational::Catalogue.path() {
        let agents = crate::ops::listed_agents(state).await;
        let config = &state.config;
        let document = discovery::catalogue_document(state.catalogue, &agents, base, |r| config.shown_rate_limit(r));
        return text(document.to_string(), "application/json");
    }
    if let Some(route) = state.catalogue.get(ids::public::ALPHA_TRACK_RECORD).filter(|route| route.path == path) {
        let result: CallToolResult = call.route(route, None).await;
        let answer = result.content.first().and_then(|block| block.as_text()).map(|t| t.text.clone());
        return match (result.is_error, answer) {
            (Some(false) | None, Some(answer)) => text(answer, "application/json"),
            (_, answer) => Err(McpError::internal_error(answer.unwrap_or_default(), None)),
        };
    }
    Err(McpError::resource_not_found(format!("no resource {uri}"), Some(json!({"uri": uri}))))
}
