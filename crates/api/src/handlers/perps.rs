//! The two derivatives exchanges: the perp exchange's info reads and signed actions, and the
//! order-book exchange's market list and read-only indexer proxy.

use svc_catalogue::ids;
use svc_catalogue::routes::common::NoInput;
use svc_catalogue::routes::infra::{
    OrderbookMarketsResponse, OrderbookProxyRequest, OrderbookProxyResponse, PerpExchangeRequest, PerpExchangeResponse,
    PerpInfoRequest, PerpInfoResponse,
};
use svc_catalogue::{InputError, Loc};
use svc_upstream::orderbookdex::ProxyError;
use svc_upstream::perpdex::ExchangeError;

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::infra::PERPDEX_INFO, perpdex_info);
    handlers.add(ids::infra::PERPDEX_EXCHANGE, perpdex_exchange);
    handlers.check_before_payment(ids::infra::PERPDEX_EXCHANGE, |state: AppState, input: &PerpExchangeRequest| {
        let action = input.body.clone();
        async move { state.upstreams.perpdex.check(&action).await.map_err(exchange_error) }
    });
    handlers.add(ids::infra::ORDERBOOKDEX_MARKETS, orderbookdex_markets);
    handlers.add(ids::infra::ORDERBOOKDEX_PROXY, orderbookdex_proxy);
}

/// `POST {tools}/perpdex/info`.
async fn perpdex_info(state: AppState, input: PerpInfoRequest) -> Result<PerpInfoResponse, ApiError> {
    Ok(state.upstreams.perpdex.info(&input.body).await?)
}

/// `POST {tools}/perpdex/exchange`: svc checks, signs and sends the action; limits and the
/// exchange's size and price rules are a 422 before anything is signed.
async fn perpdex_exchange(state: AppState, input: PerpExchangeRequest) -> Result<PerpExchangeResponse, ApiError> {
    state.upstreams.perpdex.exchange(&input.body).await.map_err(exchange_error)
}

fn exchange_error(err: ExchangeError) -> ApiError {
    match err {
        ExchangeError::Invalid(errors) => ApiError::Validation(InputError { errors }),
        ExchangeError::Disabled => ApiError::NotEnabled(
            "Trading on perpdex is not enabled on this server (no agent key is configured); nothing was charged."
                .into(),
        ),
        ExchangeError::Upstream(err) => err.into(),
    }
}

/// `POST {tools}/orderbookdex/markets`.
async fn orderbookdex_markets(state: AppState, _input: NoInput) -> Result<OrderbookMarketsResponse, ApiError> {
    Ok(state.upstreams.orderbookdex.markets().await?)
}

/// `POST {tools}/orderbookdex/proxy`.
async fn orderbookdex_proxy(state: AppState, input: OrderbookProxyRequest) -> Result<OrderbookProxyResponse, ApiError> {
    state.upstreams.orderbookdex.proxy(&input.endpoint, &input.params).await.map_err(|err| match err {
        ProxyError::Refused => ApiError::field(
            vec![Loc::from("body"), Loc::from("endpoint")],
            "not an allowed public indexer read",
            "value_error",
        ),
        ProxyError::Upstream(err) => err.into(),
    })
}
