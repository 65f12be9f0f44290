//! Infrastructure routes: swaps, DeFi, shield, exchanges and the launchpad.

use svc_catalogue::ids;
use svc_catalogue::routes::infra::{LaunchpadCoinPath, LaunchpadCoinResponse};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::infra::LAUNCHPAD_COIN, launchpad_coin);
}

/// `GET {tools}/launchpad/coin/{mint}`.
async fn launchpad_coin(state: AppState, input: LaunchpadCoinPath) -> Result<LaunchpadCoinResponse, ApiError> {
    Ok(state.upstreams.launchpad.coin(input.mint.as_str()).await?)
}
