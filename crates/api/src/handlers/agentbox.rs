//! Agent sandbox routes: templates, and the account's one gateway.

use svc_catalogue::routes::agentbox::{GatewayView, StartRequest, TemplateList};
use svc_catalogue::routes::common::NoInput;

use super::account::signed_in;
use super::{Caller, Handlers};
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add_for_caller("agentbox.templates", templates);
    handlers.add_for_caller("agentbox.gateway", gateway);
    handlers.add_for_caller("agentbox.start", start);
    handlers.add_for_caller("agentbox.stop", stop);
}

/// `GET /api/agentbox/templates`.
async fn templates(state: AppState, _: Caller, _: NoInput) -> Result<TemplateList, ApiError> {
    Ok(state.agentbox.templates())
}

/// `GET /api/agentbox/gateway`.
async fn gateway(state: AppState, caller: Caller, _: NoInput) -> Result<GatewayView, ApiError> {
    Ok(state.agentbox.status(&signed_in(caller)?.id).await?)
}

/// `POST /api/agentbox/gateway/start`.
async fn start(state: AppState, caller: Caller, input: StartRequest) -> Result<GatewayView, ApiError> {
    Ok(state.agentbox.start(&signed_in(caller)?.id, input.template.as_str()).await?)
}

/// `POST /api/agentbox/gateway/stop`.
async fn stop(state: AppState, caller: Caller, _: NoInput) -> Result<GatewayView, ApiError> {
    Ok(state.agentbox.stop(&signed_in(caller)?.id).await?)
}
