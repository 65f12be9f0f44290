//! Shared application state: one `Arc`, cloned into every request.

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use svc_catalogue::Catalogue;
use svc_domain::Clock;
use svc_store::Store;

use crate::handlers::Handlers;

/// Settings of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest request body accepted, in bytes.
    pub body_limit_bytes: usize,
    /// Public base URL used in discovery documents (`https://api.example.com`); when unset,
    /// the request's `Host` is used.
    pub public_url: Option<String>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig { body_limit_bytes: 256 * 1024, public_url: None }
    }
}

/// Everything a handler may need. Cheap to clone.
#[derive(Clone)]
pub struct AppState(pub(crate) Arc<App>);

/// The contents of [`AppState`].
pub struct App {
    /// Persistence.
    pub store: Store,
    /// Injected time.
    pub clock: Arc<dyn Clock>,
    /// The route table.
    pub catalogue: &'static Catalogue,
    /// HTTP settings.
    pub config: ApiConfig,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    pub(crate) handlers: Handlers,
}

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").field("store", &self.store).field("config", &self.config).finish_non_exhaustive()
    }
}

impl AppState {
    /// Builds the state, checking that every route with a handler takes the catalogue's
    /// input type and returns its output type (a mismatch is a build bug, caught at start).
    pub fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        config: ApiConfig,
    ) -> Result<Self, crate::handlers::HandlerMismatch> {
        let catalogue = svc_catalogue::catalogue();
        let handlers = crate::handlers::all();
        handlers.verify(catalogue)?;
        Ok(AppState(Arc::new(App { store, clock, catalogue, config, metrics: crate::metrics::handle(), handlers })))
    }
}
