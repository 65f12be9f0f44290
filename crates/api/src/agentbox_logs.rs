//! `GET /api/agentbox/gateway/logs`: the account's gateway log as server-sent events. The
//! newest lines come first, then new ones as they are written; each event's id is the log
//! position after its line, so a client that reconnects with `Last-Event-ID` resumes exactly
//! there. A comment every 15 s keeps idle connections open; the stream ends once the gateway
//! has stopped or failed and its last line is sent.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures::{Stream, StreamExt as _};
use svc_accounts::{KeysAccepted, Scope};
use svc_agentbox::LogEvent;

use crate::error::ApiError;
use crate::state::AppState;

/// Lines sent first, from the end of the log.
const RECENT_LINES: usize = 200;

/// The log route.
pub fn router() -> Router<AppState> {
    Router::new().route(svc_agentbox::LOGS_PATH, get(logs))
}

async fn logs(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Who calls first, as on every account route; then what was sent. Present but not a
    // position (obs-text, a control character, not a number) is refused, not taken for absent.
    // The query is read for nothing, but refused with control characters as on every route.
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let scopes = Scope::named(svc_catalogue::routes::agentbox::READ);
    let account = svc_accounts::calling_account(
        &state.store,
        &state.config.sign_in,
        header("x-api-key"),
        header("authorization"),
        KeysAccepted::WithScope(&scopes),
        state.clock.now_ms(),
    )
    .await??;
    svc_catalogue::input::check_names(&[], uri.query())?;
    follow(&state, &account.id, &headers).await
}

/// The log of `account_id`'s gateway as events, resumed where `Last-Event-ID` says: what the
/// API's route and the console's page stream, once the caller is known.
pub(crate) async fn follow(
    state: &AppState,
    account_id: &str,
    headers: &HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, ApiError> {
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(value) => Some(value.to_str().ok().and_then(|v| v.trim().parse::<u64>().ok()).ok_or_else(|| {
            ApiError::field(
                vec!["header".into(), "last-event-id".into()],
                "Last-Event-ID must be the id of an event this stream sent (a log position)",
                "int_parsing",
            )
        })?),
    };
    let gateway = state.agentbox.log_target(account_id).await?;
    let slot = state.agentbox.open_log_stream(account_id)?;
    let from = match resume {
        Some(position) => position,
        None => state.agentbox.recent_start(&gateway.id, RECENT_LINES).await?,
    };
    let stream = state.agentbox.follow_log(gateway.id, from, slot).map(|event| {
        Ok(match event {
            LogEvent::Line { after, text } => Event::default().id(after.to_string()).data(text),
            LogEvent::End => Event::default().event("end").data("the gateway has ended"),
        })
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)).text("heartbeat")))
}
