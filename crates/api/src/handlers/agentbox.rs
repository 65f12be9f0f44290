//! Agent sandbox routes: templates, and the account's one gateway.

use svc_catalogue::ids;
use svc_catalogue::routes::agentbox::{
    GatewayView, StartRequest, TelegramConfigRequest, TelegramConfigView, TemplateList,
};
use svc_catalogue::routes::common::NoInput;

use super::account::signed_in;
use super::{Caller, Handlers};
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add_for_caller(ids::agentbox::TEMPLATES, templates);
    handlers.add_for_caller(ids::agentbox::GATEWAY, gateway);
    handlers.add_for_caller(ids::agentbox::START, start);
    handlers.add_for_caller(ids::agentbox::STOP, stop);
    handlers.add_for_caller(ids::agentbox::TELEGRAM_CONFIG, telegram_config);
    handlers.add_for_caller(ids::agentbox::TELEGRAM_CONFIG_SET, set_telegram_config);
}

/// `GET /api/agentbox/telegram/config`.
async fn telegram_config(state: AppState, caller: Caller, _: NoInput) -> Result<TelegramConfigView, ApiError> {
    Ok(state.agentbox.telegram().view(&signed_in(caller)?.id).await?)
}

/// `PUT /api/agentbox/telegram/config`.
async fn set_telegram_config(
    state: AppState,
    caller: Caller,
    input: TelegramConfigRequest,
) -> Result<TelegramConfigView, ApiError> {
    Ok(state.agentbox.telegram().configure(&signed_in(caller)?.id, &input).await?)
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
