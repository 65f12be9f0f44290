//! Seller routes (the caller's agents, their x402 configs, revenue and payouts) and the
//! marketplace. The paid invoke is served beside the route table, in `seller_invoke`.

use svc_catalogue::ids;
use svc_catalogue::routes::common::NoInput;
use svc_catalogue::routes::sellers::{
    AgentCreated, AgentDeleted, AgentId, AgentList, AgentPatch, AgentRequest, AgentView, MarketplaceAgent,
    MarketplacePage, MarketplaceQuery, Revenue, SecretRotated, WithdrawRequest, WithdrawalList, WithdrawalView,
    X402Config, X402ConfigRequest,
};

use super::account::signed_in;
use super::{Caller, Handlers};
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add_for_caller(ids::sellers::CREATE, create);
    handlers.add_for_caller(ids::sellers::LIST, list);
    handlers.add_for_caller(ids::sellers::GET, get);
    handlers.add_for_caller(ids::sellers::UPDATE, update);
    handlers.add_for_caller(ids::sellers::DELETE, delete);
    handlers.add_for_caller(ids::sellers::ROTATE_SECRET, rotate_secret);
    handlers.add_for_caller(ids::sellers::CONFIG, config);
    handlers.add_for_caller(ids::sellers::CONFIG_SET, set_config);
    handlers.add_for_caller(ids::sellers::REVENUE, revenue);
    handlers.add_for_caller(ids::sellers::WITHDRAW, withdraw);
    handlers.add_for_caller(ids::sellers::WITHDRAWALS, withdrawals);
    handlers.add(ids::marketplace::AGENTS, marketplace);
    handlers.add(ids::marketplace::AGENT, listed);
}

/// `POST /agents`.
async fn create(state: AppState, caller: Caller, input: AgentRequest) -> Result<AgentCreated, ApiError> {
    Ok(state.sellers.create(&signed_in(caller)?.id, input).await?)
}

/// `GET /agents`.
async fn list(state: AppState, caller: Caller, _: NoInput) -> Result<AgentList, ApiError> {
    Ok(state.sellers.list(&signed_in(caller)?.id).await?)
}

/// `GET /agents/{agent_id}`.
async fn get(state: AppState, caller: Caller, input: AgentId) -> Result<AgentView, ApiError> {
    Ok(state.sellers.get(&signed_in(caller)?.id, &input.agent_id).await?)
}

/// `PATCH /agents/{agent_id}`.
async fn update(state: AppState, caller: Caller, input: AgentPatch) -> Result<AgentView, ApiError> {
    Ok(state.sellers.update(&signed_in(caller)?.id, input).await?)
}

/// `DELETE /agents/{agent_id}`.
async fn delete(state: AppState, caller: Caller, input: AgentId) -> Result<AgentDeleted, ApiError> {
    state.sellers.delete(&signed_in(caller)?.id, &input.agent_id).await?;
    Ok(AgentDeleted { id: input.agent_id, deleted: true })
}

/// `POST /agents/{agent_id}/secret`.
async fn rotate_secret(state: AppState, caller: Caller, input: AgentId) -> Result<SecretRotated, ApiError> {
    Ok(state.sellers.rotate_secret(&signed_in(caller)?.id, &input.agent_id).await?)
}

/// `GET /agents/{agent_id}/x402-config`.
async fn config(state: AppState, caller: Caller, input: AgentId) -> Result<X402Config, ApiError> {
    Ok(state.sellers.x402_config(&signed_in(caller)?.id, &input.agent_id).await?)
}

/// `PUT /agents/{agent_id}/x402-config`.
async fn set_config(state: AppState, caller: Caller, input: X402ConfigRequest) -> Result<X402Config, ApiError> {
    Ok(state.sellers.set_x402_config(&signed_in(caller)?.id, input).await?)
}

/// `GET /agents/{agent_id}/revenue`.
async fn revenue(state: AppState, caller: Caller, input: AgentId) -> Result<Revenue, ApiError> {
    Ok(state.sellers.revenue(&signed_in(caller)?.id, &input.agent_id).await?)
}

/// `POST /agents/{agent_id}/withdrawals`.
async fn withdraw(state: AppState, caller: Caller, input: WithdrawRequest) -> Result<WithdrawalView, ApiError> {
    Ok(state.sellers.withdraw(&signed_in(caller)?.id, input).await?)
}

/// `GET /agents/{agent_id}/withdrawals`.
async fn withdrawals(state: AppState, caller: Caller, input: AgentId) -> Result<WithdrawalList, ApiError> {
    Ok(state.sellers.withdrawals(&signed_in(caller)?.id, &input.agent_id).await?)
}

/// `GET /marketplace/agents`.
async fn marketplace(state: AppState, input: MarketplaceQuery) -> Result<MarketplacePage, ApiError> {
    Ok(state.sellers.marketplace(&input).await?)
}

/// `GET /marketplace/agents/{agent_id}`.
async fn listed(state: AppState, input: AgentId) -> Result<MarketplaceAgent, ApiError> {
    Ok(state.sellers.listed(&input.agent_id).await?)
}
