//! The console's pages and the forms they post.

use askama::Template;
use axum::Extension;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::Arc;
use svc_accounts::sessions::{self, Session};
use svc_accounts::{Holder, Refusal};
use svc_catalogue::ids;
use svc_catalogue::input::RawInput;
use svc_catalogue::routes::account::{KeyView, LedgerEntryView};
use svc_domain::Money;

use super::chart::SpendChart;
use super::session;
use super::{Control, field, form, page, see_other};
use crate::error::ApiError;
use crate::handlers::{Caller, Handlers};
use crate::state::AppState;

/// What every signed-in page shows around its content.
pub(crate) struct Frame {
    /// The account's name.
    account: String,
    /// How the session signed in: the wallet, or the key's visible prefix.
    signed_in_as: String,
    /// The session's CSRF token, for the forms.
    csrf: String,
    /// The page's place in the navigation.
    here: &'static str,
    /// Whether the operator view is in the navigation.
    operator: bool,
}

impl Frame {
    fn of(state: &AppState, session: &Session, here: &'static str) -> Self {
        let signed_in_as = match &session.holder {
            Holder::SignedIn(account) => account.wallet.clone().unwrap_or_default(),
            Holder::Key(key) => format!("key {}…", key.key.prefix),
        };
        Frame {
            account: session.holder.account().name.clone(),
            signed_in_as,
            csrf: session.csrf.clone(),
            here,
            operator: is_operator(state, session),
        }
    }
}

/// A page saying what went wrong, signed in or not.
#[derive(Template)]
#[template(path = "console/problem.html")]
pub(crate) struct Problem {
    frame: Option<Frame>,
    title: String,
    message: String,
}

impl Problem {
    pub(crate) fn not_found() -> Self {
        Problem { frame: None, title: "Not found".into(), message: "There is nothing here.".into() }
    }
}

/// The page for `err`, in the console's shape: its status, its words.
fn problem(frame: Option<Frame>, err: &ApiError) -> Response {
    let status = err.status();
    let message = message_of(err);
    let title = status.canonical_reason().unwrap_or("Error").to_owned();
    page(status, &Problem { frame, title, message })
}

fn place(loc: &[svc_catalogue::Loc]) -> String {
    match loc.last() {
        Some(svc_catalogue::Loc::Key(key)) => key.replace('_', " "),
        Some(svc_catalogue::Loc::Index(i)) => format!("item {i}"),
        None => "input".into(),
    }
}

/// The signed-in session, or the answer to give instead: the sign-in page for a browser
/// without a live session.
async fn signed_in(state: &AppState, headers: &HeaderMap) -> Result<Session, Response> {
    match session::current(state, headers).await {
        Ok(Some(session)) => Ok(session),
        Ok(None) => Err(see_other("/console/sign-in")),
        Err(e) => Err(problem(None, &e)),
    }
}

/// A form posted in a session: the session and the form's fields, once its CSRF token and
/// origin check out.
async fn posted(state: &AppState, request: Request) -> Result<(Session, Vec<(String, String)>), Response> {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let session = signed_in(state, headers).await?;
    let pairs = form(headers, body).await.map_err(|e| problem(Some(Frame::of(state, &session, "")), &e))?;
    if !session::same_origin(state, headers) || !sessions::csrf_matches(&session, field(&pairs, "csrf")) {
        return Err(forbidden(
            Some(Frame::of(state, &session, "")),
            "This form is out of date or came from another site; reload the page and try again.",
        ));
    }
    Ok((session, pairs))
}

fn forbidden(frame: Option<Frame>, message: &str) -> Response {
    page(StatusCode::FORBIDDEN, &Problem { frame, title: "Forbidden".into(), message: message.into() })
}

/// Whether the session may call route `id`, as over the API.
fn may(state: &AppState, session: &Session, id: &str) -> Result<(), ApiError> {
    may_call(session, route(state, id)?)
}

/// The catalogue's route `id`.
fn route(state: &AppState, id: &str) -> Result<&'static svc_catalogue::RouteSpec, ApiError> {
    state.catalogue.get(id).ok_or_else(|| ApiError::Internal(format!("no route {id}")))
}

/// Whether the session may call `route`, as over the API.
fn may_call(session: &Session, route: &svc_catalogue::RouteSpec) -> Result<(), ApiError> {
    session.holder.may_call(route).map_err(|refusal| match refusal {
        Refusal::NotSignedIn => ApiError::SignIn("this needs the account's wallet: a key cannot do it".into()),
        other => ApiError::from(other),
    })
}

/// Calls route `id` for the session with `path` parameters and a `body` built from a form:
/// the route's own access rule, validation and handler, as over the API. Its answer, as JSON.
async fn act(
    state: &AppState,
    handlers: &Handlers,
    session: &Session,
    id: &str,
    path: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Value, ApiError> {
    let route = route(state, id)?;
    may_call(session, route)?;
    let bytes = body.map(|b| b.to_string());
    let raw = RawInput { path, query: None, body: bytes.as_deref().map(str::as_bytes) };
    let input = route.parse_input(&raw)?;
    let caller = Caller { account: Some(session.holder.account().clone()), ..Caller::default() };
    let answer = handlers.call_as(route.id, state.clone(), caller, input).await?;
    serde_json::from_slice(&answer.json).map_err(|e| ApiError::Internal(format!("a route answered non-JSON: {e}")))
}

// ---- sign-in ----------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "console/sign_in.html")]
struct SignIn {
    frame: Option<Frame>,
    token: String,
    error: Option<String>,
}

fn sign_in_form(state: &AppState, status: StatusCode, error: Option<String>) -> Response {
    let (token, cookie) = session::sign_in_token(state);
    let mut response = page(status, &SignIn { frame: None, token, error });
    session::with_cookie(response.headers_mut(), cookie);
    response
}

/// `GET /console/sign-in`.
pub(super) async fn sign_in_page(State(state): State<AppState>) -> Response {
    sign_in_form(&state, StatusCode::OK, None)
}

/// A sign-in form's fields, once checked before anything is looked up: its token, its
/// origin, the client's attempts. The refusal is the form again, saying why.
async fn sign_in_posted(state: &AppState, request: Request) -> Result<Vec<(String, String)>, Response> {
    let (parts, body) = request.into_parts();
    let pairs = form(&parts.headers, body).await.map_err(|e| problem(None, &e))?;
    if !session::same_origin(state, &parts.headers)
        || !session::sign_in_token_matches(&parts.headers, field(&pairs, "token"))
    {
        let why = "This sign-in form is out of date or came from another site; try again.";
        return Err(sign_in_form(state, StatusCode::FORBIDDEN, Some(why.into())));
    }
    let client = crate::limits::client_label(&parts, &state.config.trusted_proxies);
    let key = format!("console-sign-in:{client}");
    let now = state.clock.now_ms();
    let decision = state.limiter.hit(&key, session::SIGN_IN_ATTEMPTS, session::SIGN_IN_WINDOW_MS, now).await;
    if !decision.allowed {
        let why = format!("Too many sign-in attempts; try again in {} s.", decision.reset_secs(now));
        return Err(sign_in_form(state, StatusCode::TOO_MANY_REQUESTS, Some(why)));
    }
    Ok(pairs)
}

/// Signs in as `holder`: a new session, and on to the overview.
async fn begin(state: &AppState, holder: &Holder) -> Response {
    match session::begin(state, holder).await {
        Ok(cookie) => {
            let mut response = see_other("/console");
            session::with_cookie(response.headers_mut(), cookie);
            response
        }
        Err(e) => problem(None, &e),
    }
}

/// `POST /console/sign-in`: with an API key.
pub(super) async fn sign_in_with_key(State(state): State<AppState>, request: Request) -> Response {
    let pairs = match sign_in_posted(&state, request).await {
        Ok(pairs) => pairs,
        Err(refused) => return refused,
    };
    match svc_accounts::live_key(&state.store, field(&pairs, "key"), state.clock.now_ms()).await {
        Ok(Some(holder)) => begin(&state, &Holder::Key(holder)).await,
        Ok(None) => {
            let why = "This API key is not valid (unknown, revoked or expired).";
            sign_in_form(&state, StatusCode::UNAUTHORIZED, Some(why.into()))
        }
        Err(e) => problem(None, &e.into()),
    }
}

/// `POST /console/sign-in/message`: the sign-in message for the wallet at `address`, with a
/// fresh nonce, as plain text for the page's script to have the wallet sign.
pub(super) async fn wallet_message(State(state): State<AppState>, request: Request) -> Response {
    let pairs = match sign_in_posted(&state, request).await {
        Ok(pairs) => pairs,
        Err(refused) => return refused,
    };
    let now = state.clock.now_ms();
    let made = async {
        let (nonce, _) = svc_accounts::auth::new_nonce(&state.store, &state.config.sign_in, now).await?;
        svc_accounts::auth::message_for(&state.config.sign_in, field(&pairs, "address"), &nonce, now).ok_or_else(|| {
            ApiError::field(vec!["body".into(), "address".into()], "an address is 0x and 40 hex digits", "value_error")
        })
    };
    match made.await {
        Ok(message) => ([(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /console/sign-in/wallet`: with a message the browser wallet signed.
pub(super) async fn sign_in_with_wallet(State(state): State<AppState>, request: Request) -> Response {
    let pairs = match sign_in_posted(&state, request).await {
        Ok(pairs) => pairs,
        Err(refused) => return refused,
    };
    // A form sends its line breaks as CRLF (HTML's form encoding); the wallet signed LF.
    let message = field(&pairs, "message").replace("\r\n", "\n");
    let signature = field(&pairs, "signature");
    let now = state.clock.now_ms();
    match svc_accounts::auth::sign_in(&state.store, &state.config.sign_in, &message, signature, now).await {
        Ok(Ok(account)) => begin(&state, &Holder::SignedIn(account)).await,
        Ok(Err(e)) => sign_in_form(&state, StatusCode::UNAUTHORIZED, Some(format!("The wallet sign-in failed: {e}."))),
        Err(e) => problem(None, &e.into()),
    }
}

/// `POST /console/sign-out`.
pub(super) async fn sign_out(State(state): State<AppState>, request: Request) -> Response {
    let headers = request.headers().clone();
    if let Err(refused) = posted(&state, request).await {
        return refused;
    }
    match session::end(&state, &headers).await {
        Ok(cookie) => {
            let mut response = see_other("/console/sign-in");
            session::with_cookie(response.headers_mut(), cookie);
            response
        }
        Err(e) => problem(None, &e),
    }
}

// ---- overview ---------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "console/overview.html")]
struct Overview {
    frame: Option<Frame>,
    balance: String,
    /// Spent today, in 7 and in 30 days, by rail and by product.
    totals: Vec<Total>,
    chart: SpendChart,
    entries: Vec<LedgerEntryView>,
}

/// Spend over one window.
struct Total {
    window: &'static str,
    all: String,
    credits: String,
    x402: String,
    data: String,
    llm: String,
    sandbox: String,
}

const DAY_MS: i64 = 86_400_000;
/// Days the charts cover.
const DAYS: i64 = 30;

/// Where the charts' window starts: the beginning of the 30th UTC day back, today included.
fn window_start(state: &AppState) -> i64 {
    state.clock.now_ms().div_euclid(DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS
}

/// `GET /console`.
pub(super) async fn overview(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = match signed_in(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let frame = Frame::of(&state, &session, "overview");
    match overview_page(&state, &session).await {
        Ok(mut overview) => {
            overview.frame = Some(frame);
            page(StatusCode::OK, &overview)
        }
        Err(e) => problem(Some(frame), &e),
    }
}

async fn overview_page(state: &AppState, session: &Session) -> Result<Overview, ApiError> {
    may(state, session, "account.credits")?;
    let account = session.holder.account();
    let since = window_start(state);
    let spent = state.store.daily_spend(&account.id, account.wallet.as_deref(), ids::credits::PURCHASE, since).await?;
    let sum = |days: i64, keep: &dyn Fn(&svc_store::DailySpend) -> bool| {
        let atomic: i64 = spent.iter().filter(|s| s.day >= DAYS - days && keep(s)).map(|s| s.amount).sum();
        Money::from_atomic(u64::try_from(atomic).unwrap_or(0)).to_string()
    };
    let totals = [("Today", 1), ("7 days", 7), ("30 days", DAYS)]
        .into_iter()
        .map(|(window, days)| Total {
            window,
            all: sum(days, &|_| true),
            credits: sum(days, &|s| s.rail == "credits"),
            x402: sum(days, &|s| s.rail == "x402"),
            data: sum(days, &|s| s.product == "data"),
            llm: sum(days, &|s| s.product == "llm"),
            sandbox: sum(days, &|s| s.product == "sandbox"),
        })
        .collect();
    let credits = svc_accounts::views::credits(&state.store, account, Some(10)).await?;
    Ok(Overview {
        frame: None,
        balance: Money::from_atomic(account.balance).to_string(),
        totals,
        chart: SpendChart::new(&spent, since, DAYS),
        entries: credits.entries,
    })
}

// ---- keys ---------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "console/keys.html")]
struct Keys {
    frame: Option<Frame>,
    /// Why keys cannot be managed in this session, if they cannot.
    barred: Option<String>,
    keys: Vec<KeyRow>,
    controls: Vec<Control>,
    shown: Shown,
    llm: Llm,
}

/// What a keys page shows once: a secret just made, or why a form was refused.
#[derive(Default)]
struct Shown {
    /// An API key just made.
    key: Option<String>,
    /// The LLM-proxy token, asked for or just rotated.
    llm_token: Option<String>,
    error: Option<String>,
}

/// The LLM proxy's part of the keys page: its token and its automatic top-up.
struct Llm {
    /// Why this session cannot see them, if it cannot.
    barred: Option<String>,
    /// Where OpenAI SDKs point (`base_url`).
    base_url: String,
    /// Whether this session may rotate the token (a wallet sign-in).
    may_rotate: bool,
    /// The top-up as it is, in words.
    top_up: String,
    /// The top-up's form, filled with it.
    top_up_controls: Vec<Control>,
}

async fn keys_page(state: &AppState, handlers: &Handlers, session: &Session, shown: Shown) -> Keys {
    let controls = Control::of_route(state, ids::account::KEY_CREATE, None);
    let (barred, keys) = match may(state, session, ids::account::KEYS) {
        Err(e) => (Some(e.to_string()), Vec::new()),
        Ok(()) => match svc_accounts::views::keys(&state.store, &session.holder.account().id).await {
            Ok(list) => (None, list.keys.into_iter().map(KeyRow::of).collect()),
            Err(e) => (Some(ApiError::from(e).to_string()), Vec::new()),
        },
    };
    let llm = llm_part(state, handlers, session).await;
    Keys { frame: Some(Frame::of(state, session, "keys")), barred, keys, controls, shown, llm }
}

async fn llm_part(state: &AppState, handlers: &Handlers, session: &Session) -> Llm {
    let mut llm = Llm {
        barred: None,
        base_url: state.config.url("/api/v1/llm"),
        may_rotate: may(state, session, ids::account::LLM_TOKEN_ROTATE).is_ok(),
        top_up: String::new(),
        top_up_controls: Vec::new(),
    };
    match act(state, handlers, session, ids::account::LLM_TOP_UP, &[], None).await {
        Ok(current) => {
            let amount = current.get("amount").and_then(Value::as_str).unwrap_or("?");
            llm.top_up = if current.get("enabled").and_then(Value::as_bool) == Some(true) {
                format!("On: a proxied call that finds the credits exhausted may buy {amount} USD of credits.")
            } else {
                "Off: a proxied call that finds the credits exhausted is refused.".into()
            };
            llm.top_up_controls = Control::of_route(state, ids::account::LLM_TOP_UP_SET, Some(&current));
        }
        Err(e) => llm.barred = Some(e.to_string()),
    }
    llm
}

/// `GET /console/keys`.
pub(super) async fn keys(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    headers: HeaderMap,
) -> Response {
    match signed_in(&state, &headers).await {
        Ok(session) => page(StatusCode::OK, &keys_page(&state, &handlers, &session, Shown::default()).await),
        Err(answer) => answer,
    }
}

/// `POST /console/keys`: makes a key through `POST /api/account/keys`.
pub(super) async fn create_key(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    let made = form_call(&state, &handlers, &session, ids::account::KEY_CREATE, &[], &pairs).await;
    let (status, shown) = match made {
        Ok(answer) => {
            let key = answer.get("key").and_then(Value::as_str).map(str::to_owned);
            (StatusCode::CREATED, Shown { key, ..Shown::default() })
        }
        Err(e) => (e.status(), Shown { error: Some(message_of(&e)), ..Shown::default() }),
    };
    page(status, &keys_page(&state, &handlers, &session, shown).await)
}

/// `POST /console/keys/llm-token` (through `POST /api/account/llm-token`) and
/// `POST /console/keys/llm-token/rotate` (through its rotation, route `id`): the token,
/// shown on the page.
pub(super) async fn llm_token(state: AppState, handlers: Arc<Handlers>, request: Request, id: &str) -> Response {
    let (session, _) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    let (status, shown) = match act(&state, &handlers, &session, id, &[], None).await {
        Ok(answer) => {
            let token = answer.get("token").and_then(Value::as_str).map(str::to_owned);
            (StatusCode::OK, Shown { llm_token: token, ..Shown::default() })
        }
        Err(e) => (e.status(), Shown { error: Some(message_of(&e)), ..Shown::default() }),
    };
    page(status, &keys_page(&state, &handlers, &session, shown).await)
}

/// `POST /console/keys/llm-top-up`: through `PUT /api/account/llm-top-up`.
pub(super) async fn set_llm_top_up(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    match form_call(&state, &handlers, &session, ids::account::LLM_TOP_UP_SET, &[], &pairs).await {
        Ok(_) => see_other("/console/keys"),
        Err(e) => {
            let shown = Shown { error: Some(message_of(&e)), ..Shown::default() };
            page(e.status(), &keys_page(&state, &handlers, &session, shown).await)
        }
    }
}

/// A key as its row shows it.
struct KeyRow {
    id: String,
    name: String,
    prefix: String,
    scopes: Vec<String>,
    created_at: String,
    expires_at: Option<String>,
    revoked_at: Option<String>,
    last_used_at: Option<String>,
}

impl KeyRow {
    fn of(key: KeyView) -> Self {
        // Scopes by the names the API writes them with.
        let scopes = serde_json::to_value(&key.scopes).ok().and_then(|v| serde_json::from_value(v).ok());
        KeyRow {
            id: key.id,
            name: key.name,
            prefix: key.prefix,
            scopes: scopes.unwrap_or_default(),
            created_at: key.created_at.0,
            expires_at: key.expires_at.map(|t| t.0),
            revoked_at: key.revoked_at.map(|t| t.0),
            last_used_at: key.last_used_at.map(|t| t.0),
        }
    }
}

/// `POST /console/keys/{key_id}/revoke`: through `DELETE /api/account/keys/{key_id}`.
pub(super) async fn revoke_key(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    Path(key_id): Path<String>,
    request: Request,
) -> Response {
    let (session, _) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    match act(&state, &handlers, &session, ids::account::KEY_REVOKE, &[("key_id", &key_id)], None).await {
        Ok(_) => see_other("/console/keys"),
        // Another account's key is the same 404 as one that does not exist.
        Err(e) => problem(Some(Frame::of(&state, &session, "keys")), &e),
    }
}

/// An error's words for a form.
fn message_of(err: &ApiError) -> String {
    match err {
        ApiError::Validation(input) => {
            input.errors.iter().map(|e| format!("{}: {}", place(&e.loc), e.msg)).collect::<Vec<_>>().join("; ")
        }
        other => other.to_string(),
    }
}

// ---- calls --------------------------------------------------------------------------------

/// Calls listed a page.
const CALLS_PER_PAGE: u32 = 50;
/// The statuses a call may have, on either rail.
const STATUSES: [&str; 7] = ["settled", "unsettled", "pending", "failed", "reserved", "charged", "refunded"];

/// The calls page's query: its filters and where the page starts.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct CallsQuery {
    #[serde(default)]
    rail: String,
    #[serde(default)]
    route: String,
    #[serde(default)]
    status: String,
    /// `<unix ms>_<id>` of the last call of the page before.
    #[serde(default)]
    before: String,
}

impl CallsQuery {
    /// The filter it stands for, or why it is not one.
    fn filter(&self) -> Result<svc_store::CallFilter<'_>, ApiError> {
        let wrong =
            |field: &str, message: &str| ApiError::field(vec!["query".into(), field.into()], message, "value_error");
        if !["", "x402", "credits"].contains(&self.rail.as_str()) {
            return Err(wrong("rail", "x402 or credits"));
        }
        if !self.status.is_empty() && !STATUSES.contains(&self.status.as_str()) {
            return Err(wrong("status", "one of the statuses listed"));
        }
        let route_ok = self.route.len() <= 64
            && self.route.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'));
        if !route_ok {
            return Err(wrong("route", "a route id: letters, digits, dots, dashes, underscores"));
        }
        let before = match self.before.split_once('_') {
            _ if self.before.is_empty() => None,
            Some((at, id)) if id.len() <= 80 => {
                Some((at.parse::<i64>().map_err(|_| wrong("before", "a page cursor"))?, id))
            }
            _ => return Err(wrong("before", "a page cursor")),
        };
        Ok(svc_store::CallFilter { rail: &self.rail, route: &self.route, status: &self.status, before })
    }
}

/// A call as a row shows it.
pub(crate) struct CallView {
    id: String,
    at: String,
    route: String,
    rail: String,
    status: String,
    paid: String,
    /// What it would have cost at list price, where a discount applied.
    list_price: Option<String>,
    /// Credits the wallet's account got back for it (a volume rebate on x402).
    rebate: Option<String>,
    payer: Option<String>,
    /// Who paid, in a few words: the wallet (x402), or the key the call came with (credits).
    by: String,
    network: Option<String>,
    transaction: Option<String>,
    explorer: Option<String>,
    latency: Option<String>,
    error: Option<String>,
}

/// The names of an account's keys, by id, to say which key a call came with.
type KeyNames = std::collections::HashMap<String, String>;

async fn key_names(state: &AppState, account_id: &str) -> Result<KeyNames, ApiError> {
    Ok(state
        .store
        .api_keys(account_id)
        .await?
        .into_iter()
        .map(|k| (k.id, format!("{} ({}…)", k.name, k.prefix)))
        .collect())
}

impl CallView {
    fn of(state: &AppState, call: svc_store::CallRow, keys: &KeyNames) -> Self {
        let paid = u64::try_from(call.amount).unwrap_or(0);
        let route = call.route_id.as_deref().and_then(|r| state.catalogue.get(r));
        // The list price on the call's rail, where a volume discount took some of it off.
        let list = match (route, call.rail.as_str()) {
            (Some(r), "x402") => match r.price {
                svc_catalogue::PriceRule::Fixed(list) => Some(list),
                _ => None,
            },
            (Some(r), _) if r.billed_as_data && matches!(r.price, svc_catalogue::PriceRule::Fixed(_)) => {
                Some(r.credit_price)
            }
            _ => None,
        };
        let list_price = list.filter(|l| l.atomic() > paid).map(|l| l.to_string());
        let transaction = call.tx_hash.filter(|t| !t.is_empty());
        let by = match (&call.payer, &call.key_id) {
            (Some(payer), _) if payer.len() > 12 => format!("{}…{}", &payer[..6], &payer[payer.len() - 4..]),
            (Some(payer), _) => payer.clone(),
            (None, Some(key)) => keys.get(key).cloned().unwrap_or_else(|| format!("key {key}")),
            (None, None) => "no key (a sign-in, the LLM token or the sandbox)".into(),
        };
        CallView {
            by,
            at: svc_domain::rfc3339(call.created_at),
            route: call.route_id.unwrap_or_default(),
            rail: call.rail,
            status: call.status,
            paid: Money::from_atomic(paid).to_string(),
            list_price,
            rebate: call
                .rebate
                .and_then(|r| u64::try_from(r).ok())
                .filter(|r| *r > 0)
                .map(|r| Money::from_atomic(r).to_string()),
            payer: call.payer,
            explorer: call.network.as_deref().zip(transaction.as_deref()).and_then(|(n, t)| explorer(n, t)),
            network: call.network,
            transaction,
            latency: call.latency_ms.map(|ms| format!("{ms} ms")),
            error: call.error,
            id: call.id,
        }
    }
}

/// Where a transaction of `network` is seen by anyone, for the networks that have a public
/// explorer (a local chain has none).
fn explorer(network: &str, transaction: &str) -> Option<String> {
    let safe = transaction.chars().all(|c| c.is_ascii_alphanumeric());
    let base = match network {
        "eip155:8453" => "https://basescan.org/tx/",
        "eip155:84532" => "https://sepolia.basescan.org/tx/",
        "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" => "https://solscan.io/tx/",
        "solana:EtWTRABZaYq6iMfeYKouRu166VL2xqa1" => {
            return safe.then(|| format!("https://solscan.io/tx/{transaction}?cluster=devnet"));
        }
        _ => return None,
    };
    safe.then(|| format!("{base}{transaction}"))
}

#[derive(Template)]
#[template(path = "console/calls.html")]
struct Calls {
    frame: Option<Frame>,
    calls: Vec<CallView>,
    rail: String,
    route: String,
    status: String,
    /// Each status and whether the filter has it.
    statuses: Vec<(&'static str, bool)>,
    /// The next page's address, when there may be one.
    next: Option<String>,
}

/// `GET /console/calls`: the account's paid calls, filtered and paged by the URL.
pub(super) async fn calls(State(state): State<AppState>, headers: HeaderMap, request: Request) -> Response {
    let session = match signed_in(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let frame = || Frame::of(&state, &session, "calls");
    let query: CallsQuery = match serde_urlencoded::from_str(request.uri().query().unwrap_or_default()) {
        Ok(query) => query,
        Err(_) => {
            return problem(Some(frame()), &ApiError::field(vec!["query".into()], "a malformed query", "value_error"));
        }
    };
    let listed = async {
        may(&state, &session, "account.credits")?;
        let filter = query.filter()?;
        let account = session.holder.account();
        let wallet = account.wallet.as_deref();
        let found =
            state.store.account_calls(&account.id, wallet, ids::credits::PURCHASE, &filter, CALLS_PER_PAGE).await?;
        Ok::<_, ApiError>(found)
    }
    .await;
    let found = match listed {
        Ok(found) => found,
        Err(e) => return problem(Some(frame()), &e),
    };
    let next = (found.len() == CALLS_PER_PAGE as usize).then(|| found.last()).flatten().map(|last| {
        let pairs = [("rail", query.rail.as_str()), ("route", &query.route), ("status", &query.status)];
        let cursor = format!("{}_{}", last.created_at, last.id);
        let mut url = form_urlencoded::Serializer::new(String::new());
        url.extend_pairs(pairs.iter().filter(|(_, v)| !v.is_empty())).append_pair("before", &cursor);
        format!("/console/calls?{}", url.finish())
    });
    let keys = match key_names(&state, &session.holder.account().id).await {
        Ok(keys) => keys,
        Err(e) => return problem(Some(frame()), &e),
    };
    let calls = found.into_iter().map(|c| CallView::of(&state, c, &keys)).collect();
    page(
        StatusCode::OK,
        &Calls {
            frame: Some(frame()),
            calls,
            rail: query.rail.clone(),
            route: query.route.clone(),
            status: query.status.clone(),
            statuses: STATUSES.iter().map(|s| (*s, query.status == *s)).collect(),
            next,
        },
    )
}

#[derive(Template)]
#[template(path = "console/call.html")]
struct CallDetail {
    frame: Option<Frame>,
    call: CallView,
}

/// `GET /console/calls/{id}`: one call; another account's is the same 404 as none.
pub(super) async fn call(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let session = match signed_in(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let frame = Frame::of(&state, &session, "calls");
    let found = async {
        may(&state, &session, "account.credits")?;
        let account = session.holder.account();
        let wallet = account.wallet.as_deref();
        let found = state.store.account_call(&account.id, wallet, ids::credits::PURCHASE, &id).await?;
        let call = found.ok_or_else(|| ApiError::Missing("this account has no such call".into()))?;
        Ok::<_, ApiError>(CallView::of(&state, call, &key_names(&state, &account.id).await?))
    }
    .await;
    match found {
        Ok(call) => page(StatusCode::OK, &CallDetail { frame: Some(frame), call }),
        Err(e) => problem(Some(frame), &e),
    }
}

// ---- sandbox ------------------------------------------------------------------------------

/// Log lines a sandbox page shows before its live stream takes over.
const RECENT_LOG_LINES: usize = 100;

#[derive(Template)]
#[template(path = "console/sandbox.html")]
struct Sandbox {
    frame: Option<Frame>,
    /// Why this session cannot see the sandbox, if it cannot.
    barred: Option<String>,
    templates: Vec<svc_catalogue::routes::agentbox::TemplateView>,
    credits_per_minute: String,
    memory_mb: u64,
    /// The account's latest gateway, if any.
    gateway: Option<svc_catalogue::routes::agentbox::GatewayView>,
    /// Whether it has not ended, so it can be stopped (and no other started).
    active: bool,
    /// Its newest log lines.
    log: Vec<String>,
    controls: Vec<Control>,
    bot: Option<svc_catalogue::routes::agentbox::TelegramConfigView>,
    /// The chat bot's form, filled with its current settings; empty if this session may not
    /// change it.
    bot_controls: Vec<Control>,
    error: Option<String>,
}

async fn sandbox_page(state: &AppState, session: &Session, error: Option<String>) -> Sandbox {
    let listed = state.agentbox.templates();
    let controls = Control::of_route(state, ids::agentbox::START, None);
    let mut page = Sandbox {
        frame: Some(Frame::of(state, session, "sandbox")),
        barred: None,
        templates: listed.templates,
        credits_per_minute: listed.credits_per_minute.to_string(),
        memory_mb: listed.memory_mb,
        gateway: None,
        active: false,
        log: Vec::new(),
        controls,
        bot: None,
        bot_controls: Vec::new(),
        error,
    };
    if let Err(e) = may(state, session, ids::agentbox::GATEWAY) {
        page.barred = Some(e.to_string());
        return page;
    }
    let account = &session.holder.account().id;
    page.gateway = state.agentbox.status(account).await.ok();
    page.active = page.gateway.as_ref().is_some_and(|g| !svc_store::ENDED_STATES.contains(&g.state.as_str()));
    if let Some(gateway) = &page.gateway {
        let start = state.agentbox.recent_start(&gateway.id, RECENT_LOG_LINES).await.unwrap_or(0);
        if let Ok(chunk) = state.agentbox.read_log(&gateway.id, start).await {
            page.log = chunk.lines.into_iter().map(|(_, line)| line).collect();
        }
    }
    if may(state, session, ids::agentbox::TELEGRAM_CONFIG).is_ok() {
        page.bot = state.agentbox.telegram().view(account).await.ok();
    }
    if may(state, session, ids::agentbox::TELEGRAM_CONFIG_SET).is_ok() {
        let current = page.bot.as_ref().and_then(|bot| serde_json::to_value(bot).ok());
        page.bot_controls = Control::of_route(state, ids::agentbox::TELEGRAM_CONFIG_SET, current.as_ref());
    }
    page
}

/// `GET /console/sandbox`: the templates, the account's gateway, its live log.
pub(super) async fn sandbox(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match signed_in(&state, &headers).await {
        Ok(session) => page(StatusCode::OK, &sandbox_page(&state, &session, None).await),
        Err(answer) => answer,
    }
}

/// `POST /console/sandbox/start`: through `POST /api/agentbox/gateway/start`.
pub(super) async fn start_sandbox(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    sandbox_action(state, handlers, request, ids::agentbox::START).await
}

/// `POST /console/sandbox/stop`: through `POST /api/agentbox/gateway/stop`.
pub(super) async fn stop_sandbox(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    sandbox_action(state, handlers, request, ids::agentbox::STOP).await
}

/// `POST /console/sandbox/chat-bot`: through `PUT /api/agentbox/telegram/config`.
pub(super) async fn set_chat_bot(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    sandbox_action(state, handlers, request, ids::agentbox::TELEGRAM_CONFIG_SET).await
}

/// Posts the sandbox form `route` stands for, then shows the page again (with the refusal).
async fn sandbox_action(state: AppState, handlers: Arc<Handlers>, request: Request, route: &str) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    match form_call(&state, &handlers, &session, route, &[], &pairs).await {
        Ok(_) => see_other("/console/sandbox"),
        Err(e) => page(e.status(), &sandbox_page(&state, &session, Some(message_of(&e))).await),
    }
}

/// Calls route `id` with the JSON its form's `pairs` stand for.
async fn form_call(
    state: &AppState,
    handlers: &Handlers,
    session: &Session,
    id: &str,
    path: &[(&str, &str)],
    pairs: &[(String, String)],
) -> Result<Value, ApiError> {
    let fields = svc_catalogue::forms::form_fields(route(state, id)?);
    let body = svc_catalogue::forms::form_to_json(&fields, pairs)
        .map_err(|e| ApiError::field(vec!["body".into(), e.field.as_str().into()], e.message, "type_error"))?;
    // A route whose input is all in its path takes no body.
    let body = (!fields.is_empty()).then_some(body);
    act(state, handlers, session, id, path, body.as_ref()).await
}

/// `GET /console/sandbox/logs`: the gateway's log as server-sent events, for the page's
/// script; the same stream as `GET /api/agentbox/gateway/logs`, for the session.
pub(super) async fn sandbox_logs(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = match session::current(&state, &headers).await {
        Ok(Some(session)) => session,
        Ok(None) => return ApiError::Unauthorized("sign in to the console first").into_response(),
        Err(e) => return e.into_response(),
    };
    if let Err(e) = may(&state, &session, ids::agentbox::GATEWAY) {
        return e.into_response();
    }
    match crate::agentbox_logs::follow(&state, &session.holder.account().id, &headers).await {
        Ok(events) => events.into_response(),
        Err(e) => e.into_response(),
    }
}

// ---- credits ------------------------------------------------------------------------------

#[derive(Template)]
#[template(path = "console/credits.html")]
struct Credits {
    frame: Option<Frame>,
    barred: Option<String>,
    account_id: String,
    balance: String,
    /// Grants, purchases, refunds and rebates: what added credits.
    added: Vec<LedgerEntryView>,
    /// The purchase route's path, which the page's script pays over x402.
    purchase_path: &'static str,
}

/// `GET /console/credits`: the balance, buying credits with a wallet, what added credits.
pub(super) async fn credits(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = match signed_in(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let account = session.holder.account();
    let mut credits = Credits {
        frame: Some(Frame::of(&state, &session, "credits")),
        barred: None,
        account_id: account.id.clone(),
        balance: Money::from_atomic(account.balance).to_string(),
        added: Vec::new(),
        purchase_path: state.catalogue.get(ids::credits::PURCHASE).map_or("", |r| r.path),
    };
    match may(&state, &session, "account.credits") {
        Err(e) => credits.barred = Some(e.to_string()),
        Ok(()) => match svc_accounts::views::credits(&state.store, account, Some(200)).await {
            Ok(view) => {
                credits.added =
                    view.entries.into_iter().filter(|e| !matches!(e.kind.as_str(), "call" | "llm")).collect();
            }
            Err(e) => credits.barred = Some(ApiError::from(e).to_string()),
        },
    }
    page(StatusCode::OK, &credits)
}

// ---- seller agents ------------------------------------------------------------------------

/// A seller's agent as the console shows it (from the API's view of it).
struct AgentRow {
    id: String,
    name: String,
    endpoint: String,
    invoke_url: String,
    listed: bool,
    missing: Vec<String>,
    /// Whether invokes are sold, and at what price.
    selling: Option<String>,
}

impl AgentRow {
    fn of(view: &Value) -> Self {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let listing = view.get("listing").cloned().unwrap_or_default();
        let x402 = view.get("x402").filter(|c| c.get("enabled") == Some(&Value::Bool(true)));
        AgentRow {
            id: text(view, "id"),
            name: text(view, "name"),
            endpoint: text(view, "endpoint"),
            invoke_url: text(view, "invoke_url"),
            listed: listing.get("listed") == Some(&Value::Bool(true)),
            missing: listing
                .get("missing")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
            selling: x402.map(|c| format!("{} USDC a call", c["pricing"]["amount"].as_str().unwrap_or("?"))),
        }
    }
}

#[derive(Template)]
#[template(path = "console/agents.html")]
struct Agents {
    frame: Option<Frame>,
    barred: Option<String>,
    agents: Vec<AgentRow>,
    controls: Vec<Control>,
    error: Option<String>,
}

async fn agents_page(state: &AppState, handlers: &Handlers, session: &Session, error: Option<String>) -> Agents {
    let mut page = Agents {
        frame: Some(Frame::of(state, session, "agents")),
        barred: None,
        agents: Vec::new(),
        controls: Control::of_route(state, ids::sellers::CREATE, None),
        error,
    };
    match act(state, handlers, session, ids::sellers::LIST, &[], None).await {
        Ok(list) => {
            page.agents = list["agents"].as_array().into_iter().flatten().map(AgentRow::of).collect();
        }
        Err(e) => page.barred = Some(e.to_string()),
    }
    page
}

/// `GET /console/agents`: the account's seller agents, and a form to register one.
pub(super) async fn agents(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    headers: HeaderMap,
) -> Response {
    match signed_in(&state, &headers).await {
        Ok(session) => page(StatusCode::OK, &agents_page(&state, &handlers, &session, None).await),
        Err(answer) => answer,
    }
}

/// `POST /console/agents`: registers an agent through `POST /agents`; its page then shows the
/// signing secret, this once.
pub(super) async fn create_agent(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    request: Request,
) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    match form_call(&state, &handlers, &session, ids::sellers::CREATE, &[], &pairs).await {
        Ok(created) => {
            let id = created["agent"]["id"].as_str().unwrap_or_default().to_owned();
            let secret = created["signing"]["secret"].as_str().map(str::to_owned);
            agent_answer(&state, &handlers, &session, &id, StatusCode::CREATED, secret, None).await
        }
        Err(e) => page(e.status(), &agents_page(&state, &handlers, &session, Some(message_of(&e))).await),
    }
}

#[derive(Template)]
#[template(path = "console/agent.html")]
struct AgentPage {
    frame: Option<Frame>,
    agent: AgentRow,
    /// A signing secret just made, shown this once.
    secret: Option<String>,
    edit: Vec<Control>,
    x402: Vec<Control>,
    withdraw: Vec<Control>,
    revenue: Option<svc_catalogue::routes::sellers::Revenue>,
    chart: SpendChart,
    withdrawals: Vec<svc_catalogue::routes::sellers::WithdrawalView>,
    error: Option<String>,
}

/// The page of agent `id`, or the API's answer for it (the same 404 for another's agent as
/// for none).
async fn agent_answer(
    state: &AppState,
    handlers: &Handlers,
    session: &Session,
    id: &str,
    status: StatusCode,
    secret: Option<String>,
    error: Option<String>,
) -> Response {
    let frame = Frame::of(state, session, "agents");
    let path = [("agent_id", id)];
    let view = match act(state, handlers, session, ids::sellers::GET, &path, None).await {
        Ok(view) => view,
        Err(e) => return problem(Some(frame), &e),
    };
    let revenue = act(state, handlers, session, ids::sellers::REVENUE, &path, None).await.ok();
    let withdrawals = act(state, handlers, session, ids::sellers::WITHDRAWALS, &path, None).await.ok();
    let since = window_start(state);
    let earned = state.store.agent_daily_revenue(id, since).await.unwrap_or_default();
    let points: Vec<(i64, &str, i64)> = earned.iter().map(|(day, amount)| (*day, "revenue", *amount)).collect();
    let agent = AgentPage {
        frame: Some(frame),
        agent: AgentRow::of(&view),
        secret,
        edit: Control::of_route(state, ids::sellers::UPDATE, Some(&view)),
        x402: Control::of_route(state, ids::sellers::CONFIG_SET, view.get("x402")),
        withdraw: Control::of_route(state, ids::sellers::WITHDRAW, None),
        revenue: revenue.and_then(|r| serde_json::from_value(r).ok()),
        chart: SpendChart::of(&points, &["revenue"], since, DAYS),
        withdrawals: withdrawals
            .and_then(|w| serde_json::from_value(w["withdrawals"].clone()).ok())
            .unwrap_or_default(),
        error,
    };
    page(status, &agent)
}

/// `GET /console/agents/{agent_id}`.
pub(super) async fn agent(
    State(state): State<AppState>,
    Extension(handlers): Extension<Arc<Handlers>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match signed_in(&state, &headers).await {
        Ok(session) => agent_answer(&state, &handlers, &session, &id, StatusCode::OK, None, None).await,
        Err(answer) => answer,
    }
}

/// The forms of an agent's page, each through its API route.
#[derive(Debug, Clone, Copy)]
pub(super) enum AgentForm {
    /// `PATCH /agents/{agent_id}`.
    Edit,
    /// `PUT /agents/{agent_id}/x402-config`.
    X402,
    /// `POST /agents/{agent_id}/secret`.
    Secret,
    /// `POST /agents/{agent_id}/withdrawals`.
    Withdraw,
}

/// `POST /console/agents/{agent_id}/<form>`.
pub(super) async fn agent_form(
    state: AppState,
    handlers: Arc<Handlers>,
    id: String,
    request: Request,
    form: AgentForm,
) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    let route = match form {
        AgentForm::Edit => ids::sellers::UPDATE,
        AgentForm::X402 => ids::sellers::CONFIG_SET,
        AgentForm::Secret => ids::sellers::ROTATE_SECRET,
        AgentForm::Withdraw => ids::sellers::WITHDRAW,
    };
    let path = [("agent_id", id.as_str())];
    match form_call(&state, &handlers, &session, route, &path, &pairs).await {
        Ok(answer) => {
            let secret = answer["signing"]["secret"].as_str().map(str::to_owned);
            if secret.is_some() {
                return agent_answer(&state, &handlers, &session, &id, StatusCode::OK, secret, None).await;
            }
            see_other(&format!("/console/agents/{id}"))
        }
        // Another account's agent is the console's 404, as over the API.
        Err(e @ ApiError::Missing(_)) => problem(Some(Frame::of(&state, &session, "agents")), &e),
        Err(e) => agent_answer(&state, &handlers, &session, &id, e.status(), None, Some(message_of(&e))).await,
    }
}

// ---- operator -----------------------------------------------------------------------------

/// Whether the session is an operator's: a wallet sign-in of an account the configuration
/// names. A key's session never is, whatever its account.
fn is_operator(state: &AppState, session: &Session) -> bool {
    matches!(&session.holder, Holder::SignedIn(account) if state.config.operators.contains(&account.id))
}

/// A payment as the operator view lists it.
struct PaymentRow {
    id: String,
    route: String,
    network: String,
    payer: String,
    amount: String,
    status: String,
    transaction: Option<String>,
    updated: String,
}

/// A payout as the operator view lists it.
struct PayoutRow {
    id: String,
    agent: String,
    amount: String,
    network: String,
    destination: String,
    asked: String,
}

/// A running gateway as the operator view lists it.
struct GatewayRow {
    account: String,
    template: String,
    state: String,
    node: String,
    memory_mb: u64,
    started: String,
}

#[derive(Template)]
#[template(path = "console/operator.html")]
struct Operator {
    frame: Option<Frame>,
    payments: Vec<PaymentRow>,
    payouts: Vec<PayoutRow>,
    gateways: Vec<GatewayRow>,
    vendors: Vec<VendorRow>,
    /// The window vendors' calls are counted over, in words.
    vendor_window: String,
    error: Option<String>,
}

/// A vendor's recent answers, as the operator's table shows them.
struct VendorRow {
    vendor: &'static str,
    state: &'static str,
    calls: u64,
    failures: u64,
    median: String,
    last_ok: String,
    last_failure: String,
    why: String,
}

impl VendorRow {
    fn of(health: svc_upstream::health::VendorHealth) -> Self {
        let ago =
            |d: Option<std::time::Duration>| d.map_or_else(|| "never".into(), |d| format!("{} s ago", d.as_secs()));
        let (failed, why) = health.last_failure.clone().map_or((None, String::new()), |(at, why)| (Some(at), why));
        VendorRow {
            vendor: health.vendor,
            state: health.state(),
            calls: health.calls,
            failures: health.failures,
            median: health.median.map_or_else(|| "–".into(), |d| format!("{} ms", d.as_millis())),
            last_ok: ago(health.last_ok),
            last_failure: ago(failed),
            why,
        }
    }
}

/// How long a payment may stay reserved before the operator view counts it as left open.
const RESERVED_FOR_LONG_MS: i64 = 60_000;

async fn operator_page(state: &AppState, session: &Session, error: Option<String>) -> Result<Operator, ApiError> {
    let now = state.clock.now_ms();
    let open = now - RESERVED_FOR_LONG_MS;
    let payments = state.store.payments_to_reconcile(open, open, None, 100).await?;
    let payouts = state.store.withdrawals_in("queued", 100).await?;
    let gateways = state.store.active_gateways(100).await?;
    let usd = |atomic: i64| Money::from_atomic(u64::try_from(atomic).unwrap_or(0)).to_string();
    Ok(Operator {
        frame: Some(Frame::of(state, session, "operator")),
        payments: payments
            .into_iter()
            .map(|p| PaymentRow {
                amount: Money::from_atomic(p.amount).to_string(),
                status: p.status.to_string(),
                updated: svc_domain::rfc3339(p.updated_at),
                transaction: p.tx_hash.filter(|t| !t.is_empty()),
                id: p.id,
                route: p.route_id,
                network: p.network,
                payer: p.payer,
            })
            .collect(),
        payouts: payouts
            .into_iter()
            .map(|w| PayoutRow {
                amount: usd(w.amount),
                asked: svc_domain::rfc3339(w.created_at),
                id: w.id,
                agent: w.agent_id,
                network: w.network,
                destination: w.destination,
            })
            .collect(),
        gateways: gateways
            .into_iter()
            .map(|g| GatewayRow {
                started: g.started_at.map(svc_domain::rfc3339).unwrap_or_default(),
                account: g.account_id,
                template: g.template,
                state: g.state,
                node: g.node,
                memory_mb: g.memory_mb,
            })
            .collect(),
        vendors: svc_upstream::health::vendor_health().into_iter().map(VendorRow::of).collect(),
        vendor_window: format!("{} minutes", svc_upstream::health::WINDOW.as_secs() / 60),
        error,
    })
}

/// `GET /console/operator`: for operators; anyone else gets the console's 404.
pub(super) async fn operator(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let session = match signed_in(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    if !is_operator(&state, &session) {
        return page(StatusCode::NOT_FOUND, &Problem::not_found());
    }
    match operator_page(&state, &session, None).await {
        Ok(operator) => page(StatusCode::OK, &operator),
        Err(e) => problem(Some(Frame::of(&state, &session, "operator")), &e),
    }
}

/// What an operator does with a queued payout.
#[derive(Debug, Clone, Copy)]
pub(super) enum PayoutStep {
    /// Paid outside svc, by a transaction.
    Paid,
    /// Given up, its amount back in the agent's balance.
    Failed,
}

/// `POST /console/operator/payouts/{id}/paid|failed`, as `svc payouts mark-paid|fail` does.
pub(super) async fn settle_payout(state: AppState, id: String, request: Request, step: PayoutStep) -> Response {
    let (session, pairs) = match posted(&state, request).await {
        Ok(posted) => posted,
        Err(refused) => return refused,
    };
    if !is_operator(&state, &session) {
        return page(StatusCode::NOT_FOUND, &Problem::not_found());
    }
    let now = state.clock.now_ms();
    let done = match step {
        PayoutStep::Paid => svc_sellers::payouts::mark_paid(&state.store, &id, field(&pairs, "tx"), now).await,
        PayoutStep::Failed => svc_sellers::payouts::mark_failed(&state.store, &id, field(&pairs, "reason"), now).await,
    };
    use svc_sellers::payouts::ByHandError;
    let why = match done {
        Ok(()) => return see_other("/console/operator"),
        Err(ByHandError::Store(e)) => return problem(None, &ApiError::from(e)),
        Err(why) => why,
    };
    let status =
        if matches!(why, ByHandError::NotQueued(_)) { StatusCode::NOT_FOUND } else { StatusCode::UNPROCESSABLE_ENTITY };
    match operator_page(&state, &session, Some(why.to_string())).await {
        Ok(operator) => page(status, &operator),
        Err(e) => problem(Some(Frame::of(&state, &session, "operator")), &e),
    }
}
