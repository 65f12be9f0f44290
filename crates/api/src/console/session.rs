//! The console's signed-in state in the browser: the session cookie, the CSRF token every
//! form carries, and the guard on sign-in attempts.
//!
//! - The session cookie holds a random secret (the store keeps its hash): `HttpOnly`,
//!   `SameSite=Strict`, path `/console`, and `Secure` when svc's public base URL is https. A
//!   new secret is made at every sign-in; none is ever accepted from before it.
//! - Forms of a session carry its CSRF token; the sign-in forms, before any session, carry a
//!   token that must equal a cookie set with the form (a cross-site page can set neither).
//!   Every POST must also come from svc's own origin when the browser says where it comes from.
//! - Sign-in attempts are counted per client, so keys cannot be guessed through the form.

use std::time::Duration;

use axum::http::header::{COOKIE, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use cookie::{Cookie, SameSite};
use svc_accounts::sessions::{self, Session};

use crate::error::ApiError;
use crate::state::AppState;

/// The session cookie.
pub(super) const SESSION_COOKIE: &str = "svc_console";
/// The cookie the sign-in forms' token must match.
pub(super) const SIGN_IN_COOKIE: &str = "svc_console_sign_in";
/// Where the cookies are sent.
const COOKIE_PATH: &str = "/console";
/// How long a session lasts (a key's session no longer than its key).
pub(super) const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// Sign-in attempts a client may make per window.
pub(super) const SIGN_IN_ATTEMPTS: u32 = 20;
/// The window of sign-in attempts.
pub(super) const SIGN_IN_WINDOW_MS: i64 = 15 * 60 * 1000;

/// The value of cookie `name` in the request, if sent once (a cookie sent twice, as a page
/// of another subdomain could add, is taken as not sent).
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut found = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == name)
        .map(|c| c.value().to_owned());
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// A `Set-Cookie` for `name`, living `max_age` (zero ends it).
pub(super) fn set_cookie(state: &AppState, name: &str, value: String, max_age: Duration) -> HeaderValue {
    let secure = state.config.base_url().starts_with("https://");
    let built = Cookie::build((name, value))
        .path(COOKIE_PATH)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX)))
        .build();
    // A cookie of ours holds hex only, so it is always a valid header value.
    HeaderValue::from_str(&built.to_string()).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The session the request's cookie names, if it is live.
pub(super) async fn current(state: &AppState, headers: &HeaderMap) -> Result<Option<Session>, ApiError> {
    let Some(secret) = cookie(headers, SESSION_COOKIE) else { return Ok(None) };
    Ok(sessions::resume(&state.store, &secret, state.clock.now_ms()).await?)
}

/// Begins a session for `holder`: the `Set-Cookie` that carries it.
pub(super) async fn begin(state: &AppState, holder: &svc_accounts::Holder) -> Result<HeaderValue, ApiError> {
    let begun = sessions::begin(&state.store, holder, SESSION_TTL, state.clock.now_ms()).await?;
    let lasts = Duration::from_millis(u64::try_from(begun.expires_at - state.clock.now_ms()).unwrap_or(0));
    Ok(set_cookie(state, SESSION_COOKIE, begun.secret, lasts))
}

/// Ends the request's session, if any: the `Set-Cookie` that clears it.
pub(super) async fn end(state: &AppState, headers: &HeaderMap) -> Result<HeaderValue, ApiError> {
    if let Some(secret) = cookie(headers, SESSION_COOKIE) {
        sessions::end(&state.store, &secret).await?;
    }
    Ok(set_cookie(state, SESSION_COOKIE, String::new(), Duration::ZERO))
}

/// A new token for the sign-in forms, and the cookie it must match.
pub(super) fn sign_in_token(state: &AppState) -> (String, HeaderValue) {
    let token = sessions::random_secret();
    let cookie = set_cookie(state, SIGN_IN_COOKIE, token.clone(), Duration::from_secs(3600));
    (token, cookie)
}

/// Whether a sign-in form's token matches its cookie.
pub(super) fn sign_in_token_matches(headers: &HeaderMap, presented: &str) -> bool {
    cookie(headers, SIGN_IN_COOKIE).is_some_and(|expected| sessions::secrets_match(&expected, presented))
}

/// Whether a POST comes from svc's own pages, as far as the browser says: an `Origin` other
/// than svc's public one, or a `Sec-Fetch-Site` of another site, is refused.
pub(super) fn same_origin(state: &AppState, headers: &HeaderMap) -> bool {
    let origin_ok = headers.get(ORIGIN).is_none_or(|origin| origin.as_bytes() == state.config.base_url().as_bytes());
    let site_ok = headers.get("sec-fetch-site").is_none_or(|site| matches!(site.as_bytes(), b"same-origin" | b"none"));
    origin_ok && site_ok
}

/// Adds `cookie` to `headers`.
pub(super) fn with_cookie(headers: &mut HeaderMap, cookie: HeaderValue) {
    headers.append(SET_COOKIE, cookie);
}
