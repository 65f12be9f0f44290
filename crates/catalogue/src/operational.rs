//! The operational routes: free, outside the paid table, answered by the HTTP layer itself.
//! Their paths live here once, for the router and for the documents that link to them.

/// Where the MCP server listing every route as a tool is (Streamable HTTP, `POST`).
pub const MCP_PATH: &str = "/mcp";
/// Where the compact MCP server is: three tools that search, describe and call the others.
pub const MCP_COMPACT_PATH: &str = "/mcp/compact";

/// One operational route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operational {
    /// What this server is, and links to its documents.
    Index,
    /// Liveness.
    Healthz,
    /// Readiness: the store answers and some network can be paid on.
    Readyz,
    /// Prometheus metrics.
    Metrics,
    /// The OpenAPI 3.1 document.
    OpenApi,
    /// The catalogue: every route with its schemas and prices.
    Catalogue,
    /// The x402 discovery manifest.
    WellKnown,
    /// The catalogue for language models.
    LlmsTxt,
}

impl Operational {
    /// Every operational route.
    pub const ALL: [Operational; 8] = [
        Operational::Index,
        Operational::Healthz,
        Operational::Readyz,
        Operational::Metrics,
        Operational::OpenApi,
        Operational::Catalogue,
        Operational::WellKnown,
        Operational::LlmsTxt,
    ];

    /// Its path (all are `GET`).
    pub const fn path(self) -> &'static str {
        match self {
            Operational::Index => "/",
            Operational::Healthz => "/healthz",
            Operational::Readyz => "/readyz",
            Operational::Metrics => "/metrics",
            Operational::OpenApi => "/openapi.json",
            Operational::Catalogue => "/api/x402/catalogue",
            Operational::WellKnown => "/.well-known/x402",
            Operational::LlmsTxt => "/llms.txt",
        }
    }
}
