//! The console (`/console`): pages where the people behind the agents see their money and
//! manage their account, server-rendered from templates compiled into the binary.
//!
//! It adds no rule of its own. What a page shows comes from the services the API's routes
//! use; what a form changes goes through the route that changes it over the API, its input
//! read from the form the catalogue derives from that route ([`svc_catalogue::forms`]) and
//! judged by the route's own validation, its access by the same rule as over the API
//! ([`svc_accounts::Holder::may_call`]): a session signed in with a key may do what the key
//! may, and no more.
//!
//! Pages work without JavaScript; the one script (`console.js`, served by svc, no inline
//! script anywhere) signs in with a browser wallet. Every answer carries a strict
//! Content-Security-Policy and may not be framed.
//!
//! # Layout
//! - `session`: the cookie, CSRF tokens and the origin check, sign-in attempts.
//! - `pages`: the pages and their forms.
//! - `chart`: the spend chart, as SVG.

mod chart;
mod pages;
mod session;

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use svc_catalogue::forms::{FieldKind, FormField};

use crate::error::ApiError;
use crate::handlers::Handlers;
use crate::state::AppState;

/// The console's routes.
pub(crate) fn router(handlers: &Arc<Handlers>) -> Router<AppState> {
    Router::new()
        .route("/console", get(pages::overview))
        .route("/console/sign-in", get(pages::sign_in_page).post(pages::sign_in_with_key))
        .route("/console/sign-in/message", post(pages::wallet_message))
        .route("/console/sign-in/wallet", post(pages::sign_in_with_wallet))
        .route("/console/sign-out", post(pages::sign_out))
        .route("/console/calls", get(pages::calls))
        .route("/console/calls/{id}", get(pages::call))
        .route("/console/credits", get(pages::credits))
        .route("/console/agents", get(pages::agents).post(pages::create_agent))
        .route("/console/agents/{agent_id}", get(pages::agent))
        .route("/console/agents/{agent_id}/edit", agent_form(pages::AgentForm::Edit))
        .route("/console/agents/{agent_id}/x402", agent_form(pages::AgentForm::X402))
        .route("/console/agents/{agent_id}/secret", agent_form(pages::AgentForm::Secret))
        .route("/console/agents/{agent_id}/withdraw", agent_form(pages::AgentForm::Withdraw))
        .route("/console/keys", get(pages::keys).post(pages::create_key))
        .route("/console/keys/{key_id}/revoke", post(pages::revoke_key))
        .route("/console/keys/llm-token", llm_token(svc_catalogue::ids::account::LLM_TOKEN))
        .route("/console/keys/llm-token/rotate", llm_token(svc_catalogue::ids::account::LLM_TOKEN_ROTATE))
        .route("/console/keys/llm-top-up", post(pages::set_llm_top_up))
        .route("/console/operator", get(pages::operator))
        .route("/console/operator/payouts/{id}/paid", payout_step(pages::PayoutStep::Paid))
        .route("/console/operator/payouts/{id}/failed", payout_step(pages::PayoutStep::Failed))
        .route("/console/sandbox", get(pages::sandbox))
        .route("/console/sandbox/start", post(pages::start_sandbox))
        .route("/console/sandbox/stop", post(pages::stop_sandbox))
        .route("/console/sandbox/chat-bot", post(pages::set_chat_bot))
        .route("/console/sandbox/logs", get(pages::sandbox_logs))
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .route("/console/{*rest}", axum::routing::any(not_found))
        .layer(axum::Extension(Arc::clone(handlers)))
        .layer(axum::middleware::map_response(guarded))
        .layer(axum::middleware::from_fn(compressed))
}

/// The POST route of one of a seller agent's forms.
fn agent_form(form: pages::AgentForm) -> axum::routing::MethodRouter<AppState> {
    post(
        move |axum::extract::State(state): axum::extract::State<AppState>,
              axum::Extension(handlers): axum::Extension<Arc<Handlers>>,
              axum::extract::Path(id): axum::extract::Path<String>,
              request: Request| pages::agent_form(state, handlers, id, request, form),
    )
}

/// The POST route of an operator's step on a queued payout.
fn payout_step(step: pages::PayoutStep) -> axum::routing::MethodRouter<AppState> {
    post(
        move |axum::extract::State(state): axum::extract::State<AppState>,
              axum::extract::Path(id): axum::extract::Path<String>,
              request: Request| pages::settle_payout(state, id, request, step),
    )
}

/// `POST` of the LLM token's form: route `id` shows it or rotates it.
fn llm_token(id: &'static str) -> axum::routing::MethodRouter<AppState> {
    post(
        move |axum::extract::State(state): axum::extract::State<AppState>,
              axum::Extension(handlers): axum::Extension<Arc<crate::handlers::Handlers>>,
              request: Request| pages::llm_token(state, handlers, request, id),
    )
}

/// The largest page compressed; nothing the console renders comes near it.
const COMPRESS_LIMIT: usize = 4 << 20;

/// Pages, the stylesheet and the script gzipped for a browser that takes gzip (every one
/// does): per request, at the fastest level, as pages are made per request. The log stream
/// is left alone: it is sent as it comes.
async fn compressed(request: Request, next: axum::middleware::Next) -> Response {
    let gzip = crate::encoding::accepts_gzip(request.headers());
    let response = next.run(request).await;
    let kind = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let text = ["text/html", "text/css", "text/javascript"].iter().any(|t| kind.starts_with(t));
    if !gzip || !text || response.headers().contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, COMPRESS_LIMIT).await else {
        return ApiError::Internal("a console page was too large to send".into()).into_response();
    };
    let Ok(zipped) = crate::encoding::gzip_at(&bytes, flate2::Compression::fast()) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts.headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts.headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(zipped))
}

/// What every console answer carries: no script but svc's own, no framing, no sniffing, no
/// caching of pages that show an account.
async fn guarded(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    set(headers, "x-frame-options", "DENY");
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "same-origin");
    set(headers, "cross-origin-opener-policy", "same-origin");
    if !headers.contains_key(header::CACHE_CONTROL) {
        set(headers, "cache-control", "no-store");
    }
    response
}

const STYLESHEET: &str = include_str!("../../assets/console.css");
const SCRIPT: &str = include_str!("../../assets/console.js");

async fn stylesheet() -> Response {
    asset("text/css; charset=utf-8", STYLESHEET)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response
}

async fn not_found() -> Response {
    page(StatusCode::NOT_FOUND, &pages::Problem::not_found())
}

/// A rendered page with `status`.
fn page(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => {
            let mut response = (status, html).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            response
        }
        Err(e) => {
            tracing::error!(error = %e, "a console page did not render");
            ApiError::Internal("a console page did not render".into()).into_response()
        }
    }
}

/// A redirect after a form (303, so the browser follows with GET).
fn see_other(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The largest form body read.
const FORM_LIMIT: usize = 16 * 1024;

/// A submitted form's pairs, in order: a body of at most [`FORM_LIMIT`] bytes, form-encoded.
async fn form(headers: &HeaderMap, body: Body) -> Result<Vec<(String, String)>, ApiError> {
    let kind = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if !kind.trim_start().to_ascii_lowercase().starts_with("application/x-www-form-urlencoded") {
        return Err(ApiError::field(
            vec!["header".into(), "content-type".into()],
            "forms are form-encoded",
            "type_error",
        ));
    }
    let bytes =
        axum::body::to_bytes(body, FORM_LIMIT).await.map_err(|_| ApiError::PayloadTooLarge { limit: FORM_LIMIT })?;
    Ok(form_urlencoded::parse(&bytes).into_owned().collect())
}

/// The value of field `name` in a form.
fn field<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// A form field as a page shows it, filled with a current value where there is one.
#[derive(Debug)]
pub(crate) struct Control {
    name: String,
    label: String,
    description: String,
    required: bool,
    /// `text`, `password`, `number`, `checkbox`, `checkboxes`, `select`, `list` or `json`.
    kind: &'static str,
    min: Option<i64>,
    max: Option<i64>,
    options: Vec<svc_catalogue::forms::Choice>,
    /// The current value, as the control holds it (a list a line an item, JSON pretty).
    value: String,
    /// The values chosen (checkboxes, select) or whether it is ticked (`on`).
    chosen: Vec<String>,
}

impl Control {
    /// The control of `field` holding `current`.
    fn filled(field: &FormField, current: Option<&serde_json::Value>) -> Self {
        use serde_json::Value;
        let label = field.name.replace('_', " ");
        let label = label[..1].to_uppercase() + &label[1..];
        let (kind, min, max, options) = match &field.kind {
            FieldKind::Text { min, max } => {
                ("text", min.and_then(|m| i64::try_from(m).ok()), max.and_then(|m| i64::try_from(m).ok()), Vec::new())
            }
            FieldKind::Integer { min, max } => ("number", *min, *max, Vec::new()),
            FieldKind::Boolean => ("checkbox", None, None, Vec::new()),
            FieldKind::Choice { options, many } => {
                (if *many { "checkboxes" } else { "select" }, None, None, options.clone())
            }
            FieldKind::List | FieldKind::Numbers => ("list", None, None, Vec::new()),
            FieldKind::Json => ("json", None, None, Vec::new()),
        };
        let kind = if field.secret && kind == "text" { "password" } else { kind };
        // A secret is never written into a page, whatever is passed.
        let current = current.filter(|v| !v.is_null() && !field.secret);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let (value, chosen) = match (kind, current) {
            (_, None) => (String::new(), Vec::new()),
            ("list", Some(Value::Array(items))) => (items.iter().map(text).collect::<Vec<_>>().join("\n"), Vec::new()),
            ("json", Some(v)) => (serde_json::to_string_pretty(v).unwrap_or_default(), Vec::new()),
            ("checkbox", Some(v)) => {
                (String::new(), if v == &Value::Bool(true) { vec!["on".into()] } else { Vec::new() })
            }
            ("checkboxes", Some(Value::Array(items))) => (String::new(), items.iter().map(text).collect()),
            ("select", Some(v)) => (String::new(), vec![text(v)]),
            (_, Some(v)) => (text(v), Vec::new()),
        };
        Control {
            name: field.name.clone(),
            label,
            description: field.description.clone(),
            required: field.required,
            kind,
            min,
            max,
            options,
            value,
            chosen,
        }
    }

    /// The controls of route `id`'s form, filled from `current` (an object of the same fields).
    fn of_route(state: &AppState, id: &str, current: Option<&serde_json::Value>) -> Vec<Control> {
        let Some(route) = state.catalogue.get(id) else { return Vec::new() };
        svc_catalogue::forms::form_fields(route)
            .iter()
            .map(|field| Control::filled(field, current.and_then(|c| c.get(&field.name))))
            .collect()
    }
}
