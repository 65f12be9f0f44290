//! The MCP server: every catalogue route as a tool an agent calls from any MCP client, paid
//! per call over x402 (the tool-result binding of x402's MCP transport) or from the credits of
//! the account whose API key the client sends.
//!
//! It is the official SDK's Streamable HTTP server, stateless (any replica answers any call;
//! every request stands alone) and answering JSON, mounted twice:
//! - `/mcp`: every route a tool, and the resources agents read before paying;
//! - `/mcp/compact`: three tools that search, describe and call the others, for clients whose
//!   context cannot spare a listing of every tool.
//!
//! A tool call is served by its route's own path (`pipeline`): the same validation, price,
//! challenge, paywall, credits, scopes and rate limits as the HTTP call, so nothing about a
//! route or a payment is decided here twice. This module only translates: arguments into the
//! route's request (`call`), and the route's answer into a tool result.
//!
//! - `listing`: the tools and resources, built once from the catalogue, on first use.
//! - `call`: a tool call served by its route, and the x402 tool-result binding.
//! - `compact`: the three meta-tools.

mod call;
mod compact;
mod listing;

use std::sync::Arc;

use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::handlers::Handlers;
use crate::state::AppState;

use listing::Listing;

use svc_catalogue::operational::{MCP_COMPACT_PATH, MCP_PATH};

/// The two MCP servers, for the app's router.
pub(crate) fn router(state: &AppState, handlers: &Arc<Handlers>) -> Router<AppState> {
    let listing = Arc::new(std::sync::OnceLock::new());
    let mut router = Router::new();
    for (path, mode) in [(MCP_PATH, Mode::Full), (MCP_COMPACT_PATH, Mode::Compact)] {
        let server =
            Server { state: state.clone(), handlers: Arc::clone(handlers), listing: Arc::clone(&listing), mode };
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            transport(state),
        );
        router = router.route_service(path, service);
    }
    router
}

/// The transport's settings: stateless, JSON answers, the request size svc takes everywhere,
/// and the hosts and origins allowed.
fn transport(state: &AppState) -> StreamableHttpServerConfig {
    let config = &state.config;
    let (hosts, origins) = allowed(config.base_url(), &config.mcp);
    let mut transport = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(config.body_limit_bytes);
    transport = match hosts {
        Some(hosts) => transport.with_allowed_hosts(hosts),
        None => transport.disable_allowed_hosts(),
    };
    match origins {
        Some(origins) => transport.with_allowed_origins(origins).enforce_origin_validation(),
        None => transport.disable_allowed_origins(),
    }
}

/// The hosts and origins allowed (`None`: any): those of the public base URL, loopback names
/// when that URL is on loopback (so `localhost` works in development), and the configured
/// ones. A request without an `Origin` (every client but a browser) is not asked for one.
fn allowed(base_url: &str, extra: &crate::McpAccess) -> (Option<Vec<String>>, Option<Vec<String>>) {
    let uri: Option<axum::http::Uri> = base_url.parse().ok();
    let host = uri.as_ref().and_then(|uri| uri.host()).map(|h| h.trim_matches(['[', ']']).to_owned());
    let mut hosts: Vec<String> = host.iter().cloned().collect();
    let loopback = host.as_deref().is_some_and(|h| {
        h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
    });
    if loopback {
        hosts.extend(["localhost", "127.0.0.1", "::1"].map(String::from));
    }
    hosts.extend(extra.hosts.iter().cloned());
    let mut origins = Vec::new();
    if let Some(uri) = &uri
        && let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority())
    {
        let port = authority.port_u16().map_or_else(|| ":*".to_owned(), |p| format!(":{p}"));
        origins.push(format!("{scheme}://{}{port}", authority.host()));
    }
    origins.extend(extra.origins.iter().cloned());
    let any = |list: &[String]| list.iter().any(|entry| entry == "*");
    let hosts = (!any(&hosts) && !hosts.is_empty()).then_some(hosts);
    let origins = (!any(&origins)).then_some(origins);
    (hosts, origins)
}

/// Which tools a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every route.
    Full,
    /// The three meta-tools.
    Compact,
}

/// One MCP server: the app's state and handlers, and what it lists.
#[derive(Clone)]
struct Server {
    state: AppState,
    handlers: Arc<Handlers>,
    /// Built on the first MCP request: a process whose clients never use MCP does not hold it.
    listing: Arc<std::sync::OnceLock<Listing>>,
    mode: Mode,
}

impl Server {
    /// What this server lists, built once.
    fn listing(&self) -> &Listing {
        self.listing.get_or_init(|| Listing::new(&self.state))
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().build();
        let info = Implementation::new("svc", env!("CARGO_PKG_VERSION"));
        ServerConfig::new(capabilities).with_server_info(info).with_instructions(listing::instructions(self.mode))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.listing().listed(self.mode, &self.state).await))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.listing().tools(self.mode).iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let CallToolRequestParams { name, arguments, .. } = request;
        let call = call::ToolCall::new(&self.state, &self.handlers, &context)?;
        let result = match self.mode {
            Mode::Full => call.named(&name, arguments).await?,
            Mode::Compact => compact::call(self.listing(), call, &name, arguments).await?,
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(self.listing().resources().to_vec()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let call = call::ToolCall::new(&self.state, &self.handlers, &context)?;
        Ok(listing::read(call, &request.uri).await?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(hosts: &[&str], origins: &[&str]) -> crate::McpAccess {
        crate::McpAccess {
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
            origins: origins.iter().map(|o| (*o).to_owned()).collect(),
        }
    }

    #[test]
    fn a_public_url_allows_its_own_host_and_origin_and_no_loopback() {
        let (hosts, origins) = allowed("https://api.example.com", &access(&[], &[]));
        assert_eq!(hosts, Some(vec!["api.example.com".to_owned()]));
        assert_eq!(origins, Some(vec!["https://api.example.com:*".to_owned()]));
    }

    #[test]
    fn a_loopback_url_allows_every_loopback_name() {
        let (hosts, origins) = allowed("http://127.0.0.1:8402", &access(&["svc.internal"], &["https://app.example"]));
        let hosts = hosts.expect("a list");
        for host in ["127.0.0.1", "localhost", "::1", "svc.internal"] {
            assert!(hosts.iter().any(|h| h == host), "{host} in {hosts:?}");
        }
        assert_eq!(origins, Some(vec!["http://127.0.0.1:8402".to_owned(), "https://app.example".to_owned()]));
    }

    #[test]
    fn a_star_allows_any_host_or_origin() {
        assert_eq!(allowed("https://api.example.com", &access(&["*"], &["*"])), (None, None));
    }
}
