//! The one path every catalogue route takes: read the request, validate it against the
//! route's input type, then run its handler. Payment, credits and previews wrap this path
//! (a seller's agent takes the same preview and x402 branches: `seller_invoke`);
//! validation comes before any price or payment, so nobody pays for a request that cannot
//! succeed. Account routes ask who calls before anything else, so a stranger learns nothing
//! from how its input is judged.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawPathParams, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use svc_catalogue::{InputSource, RawInput, RouteSpec};

use crate::answer::json_response;
use crate::call::Call;
use crate::handlers::{Caller, Handlers};

use crate::error::ApiError;
use crate::rate::Counted;
use crate::state::AppState;
use crate::x402::{Front, Wares};
use svc_catalogue::ValidInput;
use svc_catalogue::challenge::Offered;
use svc_domain::Money;
use svc_paywall::{Buyer, Sold};
use svc_x402::codec::DecodedPayment;

/// How a call is billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `/api/x402/*`: paid per call over x402.
    X402,
    /// `/api/svc-tools/*`: billed in account credits.
    Credits,
    /// A free route.
    Free,
}

/// Serves `route` for one request.
pub async fn serve(
    state: AppState,
    handlers: Arc<Handlers>,
    route: &'static RouteSpec,
    channel: Channel,
    request: Request,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let response = match matched_path(&mut parts, route).await {
        Ok(path) => {
            let path: Vec<(&str, &str)> = path.iter().map(|(name, value)| (*name, value.as_str())).collect();
            run(&state, &handlers, route, channel, &parts, &path, body).await
        }
        Err(err) => Err(err),
    };
    crate::encoding::negotiate(response.unwrap_or_else(IntoResponse::into_response), &parts.headers)
}

/// The path parameters the router matched, by the route's own names.
async fn matched_path(parts: &mut Parts, route: &RouteSpec) -> Result<Vec<(&'static str, String)>, ApiError> {
    let params = axum::RequestPartsExt::extract::<RawPathParams>(parts).await.map_err(|_| {
        ApiError::field(
            vec!["path".into()],
            "path parameters must be valid UTF-8 after percent-decoding",
            "value_error",
        )
    })?;
    // The router names parameters by position (`{p0}`, `{p1}`) so routes whose contract names
    // differ at the same position can coexist; map them back to the route's own names.
    Ok(params
        .iter()
        .filter_map(|(key, value)| {
            let index: usize = key.strip_prefix('p')?.parse().ok()?;
            Some((route.path_params().nth(index)?, value.to_owned()))
        })
        .collect())
}

/// Runs `route` for a request whose path parameters are `path`: those the router matched, or
/// an MCP tool call's arguments, which take the same path as every HTTP call.
pub(crate) async fn run(
    state: &AppState,
    handlers: &Handlers,
    route: &'static RouteSpec,
    channel: Channel,
    parts: &Parts,
    path: &[(&str, &str)],
    body: Body,
) -> Result<Response, ApiError> {
    // Who calls comes first: an account route refuses a stranger before it reads what they sent.
    let caller = match channel {
        Channel::Free => Some(caller(state, route, parts).await?),
        Channel::X402 | Channel::Credits => None,
    };
    let takes_body = !matches!(route.source, InputSource::Query);
    let body =
        if takes_body { Some(read_body(&parts.headers, body, state.config.body_limit_bytes).await?) } else { None };

    let raw = RawInput { path, query: parts.uri.query(), body: body.as_deref() };
    let input = route.parse_input(&raw)?;
    // A call the handler would refuse is refused now, before it is priced or paid.
    if !matches!(channel, Channel::Free) {
        handlers.before_payment(route.id, state, &input).await?;
    }
    let preview = matches!(channel, Channel::X402) && svc_catalogue::preview::requested(parts.uri.query())?;
    let call = Call { state, handlers, route, parts };
    // Every branch but the challenge's is boxed: an unboxed branch would make this future as
    // large as its largest one, and axum moves it several times per request.
    match channel {
        Channel::X402 if preview => {
            let answer = |quota, now| crate::preview::route_answer(call, input, quota, now);
            Ok(Box::pin(crate::preview::serve(state, parts, answer)).await)
        }
        Channel::X402 => {
            let front = Front { state, parts, body: body.as_deref() };
            let wares = std::future::ready(Ok(RouteCall { handlers, route, input }));
            Ok(crate::x402::dispatch(front, Counted::route(state, route), wares).await)
        }
        Channel::Credits => Box::pin(crate::credits::serve(call, input)).await,
        Channel::Free => {
            let caller = caller.unwrap_or_default();
            Box::pin(handlers.call_as(route.id, state.clone(), caller, input)).await.map(json_response)
        }
    }
}

/// Who calls a free route: the account, on routes for accounts.
async fn caller(state: &AppState, route: &RouteSpec, parts: &Parts) -> Result<Caller, ApiError> {
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let (api_key, authorization) = (header("x-api-key"), header("authorization"));
    let now = state.clock.now_ms();
    let sign_in = &state.config.sign_in;
    let account = svc_accounts::route_account(&state.store, sign_in, route, api_key, authorization, now).await??;
    Ok(Caller { account, ..Caller::default() })
}

/// Reads a JSON body up to `limit` bytes. An empty body is allowed (the input decides whether
/// it needed one); a non-empty body must be declared JSON.
pub(crate) async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| ApiError::PayloadTooLarge { limit })?;
    if !bytes.is_empty() && !is_json(headers) {
        return Err(ApiError::UnsupportedMediaType);
    }
    Ok(bytes)
}

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(svc_domain::media::is_json)
}

/// One call of a catalogue route, its input validated: what the x402 branch sells.
pub(crate) struct RouteCall<'a> {
    handlers: &'a Handlers,
    route: &'static RouteSpec,
    input: ValidInput,
}

impl Wares for RouteCall<'_> {
    fn price(&self) -> Money {
        self.route.price.price(self.input.price_units())
    }

    fn offered(&self) -> Offered<'_> {
        Offered::Route { route: self.route, echo: self.input.echo() }
    }

    /// Runs the route's handler as the paywall's work.
    async fn sell(self, front: Front<'_>, price: Money, payment: &DecodedPayment) -> Result<Response, ApiError> {
        let RouteCall { handlers, route, mut input } = self;
        let state = front.state;
        // The handler takes the input; a refusal's challenge still echoes its fields.
        let echo = input.take_echo();
        let challenge = front.challenge(Offered::Route { route, echo: &echo }, price);
        let work = |buyer: Buyer| async move {
            let delivering = buyer.payment.clone();
            let caller = Caller { payer: Some(buyer.payer), payment: Some(buyer.payment), ..Caller::default() };
            let answer = handlers.call_as(route.id, state.clone(), caller, input).await?;
            let then = handlers.delivery(route.id, state, &answer, delivering);
            Ok::<_, ApiError>(Sold { json: answer.json.clone(), answer, then })
        };
        let outcome = challenge.charge(route.id, payment, work).await?;
        crate::x402::respond(outcome, &challenge)
    }
}
