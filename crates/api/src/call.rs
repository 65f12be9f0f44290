//! One request to a catalogue route, as the pipeline hands it to a channel.

use axum::http::request::Parts;
use svc_catalogue::RouteSpec;

use crate::handlers::Handlers;
use crate::state::AppState;

/// One request to a catalogue route, as every channel takes it.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    /// The shared state.
    pub state: &'a AppState,
    /// The handlers, by route id.
    pub handlers: &'a Handlers,
    /// The route called.
    pub route: &'static RouteSpec,
    /// The request's head.
    pub parts: &'a Parts,
}
