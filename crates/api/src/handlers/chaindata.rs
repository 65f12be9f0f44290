//! The chain-data proxy: 33 routes, each a validated payload handed to the chain-data
//! adapter. A query the vendor refuses as malformed (an unknown filter or sort field, a
//! parameter the route does not take) is the caller's to fix: a 422, never charged.

use std::future::Future;

use svc_catalogue::Loc;
use svc_catalogue::routes::chaindata::{
    ChaindataFilterRequest, ChaindataHistoricalHoldingsRequest, ChaindataNetflowRequest, ChaindataPerpRequest,
    ChaindataProfilerRequest, ChaindataScreenerRequest, ChaindataSmartMoneyPerpRequest, ChaindataSmartMoneyRequest,
    ChaindataTgmRequest,
};
use svc_upstream::{Chaindata, UpstreamError};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

/// The vendor's answer, with its refusals of the query turned into the caller's 422.
async fn answer<T>(call: impl Future<Output = Result<T, UpstreamError>>) -> Result<T, ApiError> {
    match call.await {
        Err(UpstreamError::Status { status: 400 | 422, .. }) => Err(ApiError::field(
            vec![Loc::from("body"), Loc::from("payload")],
            "the chain-data source refused this query: a filter, sort field or parameter is not supported by this route",
            "value_error",
        )),
        other => Ok(other?),
    }
}

/// Registers `$id` as a call of the adapter's `$method` with the request's payload.
macro_rules! proxy {
    ($handlers:expr, $($id:literal => $method:ident($input:ty)),+ $(,)?) => {
        $(
            $handlers.add($id, |state: AppState, input: $input| async move {
                let chaindata: &Chaindata = &state.upstreams.chaindata;
                answer(chaindata.$method(&input.payload)).await
            });
        )+
    };
}

pub(super) fn register(handlers: &mut Handlers) {
    proxy!(handlers,
        "chaindata.smart_money.netflow" => netflow(ChaindataNetflowRequest),
        "chaindata.smart_money.holdings" => holdings(ChaindataSmartMoneyRequest),
        "chaindata.smart_money.dex_trades" => smart_money_dex_trades(ChaindataSmartMoneyRequest),
        "chaindata.smart_money.agg_dca" => smart_money_dcas(ChaindataFilterRequest),
        "chaindata.smart_money.historical_holdings" => historical_holdings(ChaindataHistoricalHoldingsRequest),
        "chaindata.smart_money.perp_trades" => smart_money_perp_trades(ChaindataSmartMoneyPerpRequest),
        "chaindata.profiler.address_balances" => address_balances(ChaindataProfilerRequest),
        "chaindata.profiler.address_historical_balances" => address_historical_balances(ChaindataProfilerRequest),
        "chaindata.profiler.address_transactions" => address_transactions(ChaindataProfilerRequest),
        "chaindata.profiler.address_counterparties" => address_counterparties(ChaindataProfilerRequest),
        "chaindata.profiler.address_related_wallets" => address_related_wallets(ChaindataProfilerRequest),
        "chaindata.profiler.address_pnl_summary" => address_pnl_summary(ChaindataProfilerRequest),
        "chaindata.profiler.address_pnl" => address_pnl(ChaindataProfilerRequest),
        "chaindata.profiler.address_nft_holdings" => address_nft_holdings(ChaindataProfilerRequest),
        "chaindata.profiler.address_token_transfers" => address_token_transfers(ChaindataProfilerRequest),
        "chaindata.profiler.address_labels" => address_labels(ChaindataProfilerRequest),
        "chaindata.perp_leaderboard" => perp_leaderboard(ChaindataFilterRequest),
        "chaindata.tgm.flow_intelligence" => flow_intelligence(ChaindataTgmRequest),
        "chaindata.tgm.who_bought_sold" => who_bought_sold(ChaindataTgmRequest),
        "chaindata.tgm.dex_trades" => token_dex_trades(ChaindataTgmRequest),
        "chaindata.tgm.transfers" => token_transfers(ChaindataTgmRequest),
        "chaindata.tgm.holders" => token_holders(ChaindataTgmRequest),
        "chaindata.tgm.flows" => token_flows(ChaindataTgmRequest),
        "chaindata.tgm.pnl_leaderboard" => token_pnl_leaderboard(ChaindataTgmRequest),
        "chaindata.tgm.agg_dca" => token_dcas(ChaindataTgmRequest),
        "chaindata.tgm.token_screener" => token_screener(ChaindataScreenerRequest),
        "chaindata.tgm.perp_screener" => perp_screener(ChaindataFilterRequest),
        "chaindata.tgm.perp_trades" => perp_trades(ChaindataPerpRequest),
        "chaindata.tgm.perp_pnl_leaderboard" => perp_pnl_leaderboard(ChaindataPerpRequest),
        "chaindata.tgm.perp_positions" => perp_positions(ChaindataPerpRequest),
        "chaindata.tgm.token_information" => token_information(ChaindataTgmRequest),
        "chaindata.tgm.indicators" => token_indicators(ChaindataTgmRequest),
        "chaindata.tgm.token_ohlcv" => token_ohlcv(ChaindataTgmRequest),
    );
}
