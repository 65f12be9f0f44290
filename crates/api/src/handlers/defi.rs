//! Swap quotes, DeFi discovery and quotes, token prices and transaction scans: validated
//! input to the vendor adapters and back.

use svc_catalogue::ids;
use svc_catalogue::routes::infra::{
    DefiDiscoverRequest, DefiDiscoverResponse, DefiNontokenizedRequest, DefiNontokenizedResponse, DefiQuoteRequest,
    DefiQuoteResponse, EvmSwapQuoteRequest, EvmSwapQuoteResponse, ShieldScanResponse, ShieldSimulateRequest,
    ShieldValidateRequest, SwapQuoteRequest, SwapQuoteResponse, TokenPriceRequest, TokenPriceResponse,
};
use svc_domain::EvmChain;
use svc_upstream::shield::{ScanMode, ScanRequest};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::infra::SWAP_QUOTE, swap_quote);
    handlers.add(ids::infra::EVM_SWAP_QUOTE, evm_swap_quote);
    handlers.add(ids::infra::EVM_TOKEN_PRICE, token_price);
    handlers.add(ids::infra::DEFI_DISCOVER, defi_discover);
    handlers.add(ids::infra::DEFI_NONTOKENIZED, defi_nontokenized);
    handlers.add(ids::infra::DEFI_QUOTE, defi_quote);
    handlers.add(ids::infra::SHIELD_SIMULATE, shield_simulate);
    handlers.add(ids::infra::SHIELD_VALIDATE, shield_validate);
}

/// `POST {tools}/swap-quote`: both Solana aggregators at once.
async fn swap_quote(state: AppState, input: SwapQuoteRequest) -> Result<SwapQuoteResponse, ApiError> {
    Ok(state.upstreams.solana_swap.quote(&input).await?)
}

/// `POST {tools}/evm/swap-quote`.
async fn evm_swap_quote(state: AppState, input: EvmSwapQuoteRequest) -> Result<EvmSwapQuoteResponse, ApiError> {
    Ok(state.upstreams.enso.swap_quote(&input).await?)
}

/// `POST {tools}/evm/token-price`.
async fn token_price(state: AppState, input: TokenPriceRequest) -> Result<TokenPriceResponse, ApiError> {
    Ok(state.upstreams.enso.price(input.network, input.token_address.as_str()).await?)
}

/// `POST {tools}/defi/discover`: the router's positions on EVM chains, the yields index
/// elsewhere.
async fn defi_discover(state: AppState, input: DefiDiscoverRequest) -> Result<DefiDiscoverResponse, ApiError> {
    let (protocols, page_size) = (input.protocols.as_ref(), input.page_size);
    Ok(match EvmChain::try_from(input.network) {
        Ok(chain) => state.upstreams.enso.discover(chain, protocols, input.min_apy, input.min_tvl, page_size).await?,
        Err(_) => state.upstreams.yields.discover(input.network, input.protocols.as_deref(), page_size).await?,
    })
}

/// `POST {tools}/defi/nontokenized`.
async fn defi_nontokenized(
    state: AppState,
    input: DefiNontokenizedRequest,
) -> Result<DefiNontokenizedResponse, ApiError> {
    Ok(state.upstreams.enso.nontokenized_positions(&input).await?)
}

/// `POST {tools}/defi/quote`.
async fn defi_quote(state: AppState, input: DefiQuoteRequest) -> Result<DefiQuoteResponse, ApiError> {
    Ok(state.upstreams.enso.defi_quote(input).await?)
}

/// `POST {tools}/shield/simulate`: balance changes of `from_address` and the verdict.
async fn shield_simulate(state: AppState, input: ShieldSimulateRequest) -> Result<ShieldScanResponse, ApiError> {
    let tx = &input.tx_data;
    let request = ScanRequest {
        chain: input.network,
        account: input.from_address.as_str(),
        from: tx.from.as_ref().unwrap_or(&input.from_address).as_str(),
        to: tx.to.as_str(),
        data: &tx.data,
        value: tx.value.as_deref(),
    };
    Ok(state.upstreams.shield.scan(&request, ScanMode::Simulate).await?)
}

/// `POST {tools}/shield/validate`: the verdict only. Without a sender the scan is of the
/// call itself, from no account in particular.
async fn shield_validate(state: AppState, input: ShieldValidateRequest) -> Result<ShieldScanResponse, ApiError> {
    let tx = &input.tx_data;
    let from = tx.from.as_ref().map_or(svc_upstream::defi::NO_SENDER, |a| a.as_str());
    let request = ScanRequest {
        chain: input.network,
        account: from,
        from,
        to: tx.to.as_str(),
        data: &tx.data,
        value: tx.value.as_deref(),
    };
    Ok(state.upstreams.shield.scan(&request, ScanMode::Validate).await?)
}
