//! The chain-data proxy: 33 routes, each a validated payload handed to the chain-data
//! adapter. A query the vendor refuses as malformed (an unknown filter or sort field, a
//! parameter the route does not take) is the caller's to fix: a 422, never charged.

use std::future::Future;
use svc_catalogue::ids;

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
    ($handlers:expr, $($id:path => $method:ident($input:ty)),+ $(,)?) => {
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
        ids::chaindata::smart_money::NETFLOW => netflow(ChaindataNetflowRequest),
        ids::chaindata::smart_money::HOLDINGS => holdings(ChaindataSmartMoneyRequest),
        ids::chaindata::smart_money::DEX_TRADES => smart_money_dex_trades(ChaindataSmartMoneyRequest),
        ids::chaindata::smart_money::AGG_DCA => smart_money_dcas(ChaindataFilterRequest),
        ids::chaindata::smart_money::HISTORICAL_HOLDINGS => historical_holdings(ChaindataHistoricalHoldingsRequest),
        ids::chaindata::smart_money::PERP_TRADES => smart_money_perp_trades(ChaindataSmartMoneyPerpRequest),
        ids::chaindata::profiler::ADDRESS_BALANCES => address_balances(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_HISTORICAL_BALANCES => address_historical_balances(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_TRANSACTIONS => address_transactions(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_COUNTERPARTIES => address_counterparties(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_RELATED_WALLETS => address_related_wallets(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_PNL_SUMMARY => address_pnl_summary(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_PNL => address_pnl(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_NFT_HOLDINGS => address_nft_holdings(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_TOKEN_TRANSFERS => address_token_transfers(ChaindataProfilerRequest),
        ids::chaindata::profiler::ADDRESS_LABELS => address_labels(ChaindataProfilerRequest),
        ids::chaindata::PERP_LEADERBOARD => perp_leaderboard(ChaindataFilterRequest),
        ids::chaindata::tgm::FLOW_INTELLIGENCE => flow_intelligence(ChaindataTgmRequest),
        ids::chaindata::tgm::WHO_BOUGHT_SOLD => who_bought_sold(ChaindataTgmRequest),
        ids::chaindata::tgm::DEX_TRADES => token_dex_trades(ChaindataTgmRequest),
        ids::chaindata::tgm::TRANSFERS => token_transfers(ChaindataTgmRequest),
        ids::chaindata::tgm::HOLDERS => token_holders(ChaindataTgmRequest),
        ids::chaindata::tgm::FLOWS => token_flows(ChaindataTgmRequest),
        ids::chaindata::tgm::PNL_LEADERBOARD => token_pnl_leaderboard(ChaindataTgmRequest),
        ids::chaindata::tgm::AGG_DCA => token_dcas(ChaindataTgmRequest),
        ids::chaindata::tgm::TOKEN_SCREENER => token_screener(ChaindataScreenerRequest),
        ids::chaindata::tgm::PERP_SCREENER => perp_screener(ChaindataFilterRequest),
        ids::chaindata::tgm::PERP_TRADES => perp_trades(ChaindataPerpRequest),
        ids::chaindata::tgm::PERP_PNL_LEADERBOARD => perp_pnl_leaderboard(ChaindataPerpRequest),
        ids::chaindata::tgm::PERP_POSITIONS => perp_positions(ChaindataPerpRequest),
        ids::chaindata::tgm::TOKEN_INFORMATION => token_information(ChaindataTgmRequest),
        ids::chaindata::tgm::INDICATORS => token_indicators(ChaindataTgmRequest),
        ids::chaindata::tgm::TOKEN_OHLCV => token_ohlcv(ChaindataTgmRequest),
    );
}
