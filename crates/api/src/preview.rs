//! Free previews: `?preview=true` on any paid route. The input is validated as for a paid
//! call, then the real answer is cut down (the first items of every list, premium fields
//! dropped) and labelled with its price and freshness, so an agent can judge the data before
//! paying. Routes that act (orders, transactions) only quote: a preview never acts.
//!
//! Each client IP gets a few an hour (sliding window); a preview that fails on our side (a 5xx:
//! a vendor down, a timeout) is given back. One that fails on the client's own input (an
//! unknown id, a query the vendor refuses) still reached the vendor, so it counts: otherwise
//! failing previews would be free and uncapped.

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use svc_catalogue::wire::{PreviewInfo, PreviewList, PreviewPrice};
use svc_catalogue::{FieldError, InputError, Loc, PreviewPolicy, RouteSpec, ValidInput};
use svc_domain::rfc3339;

use crate::call::Call;
use crate::error::ApiError;
use crate::limits::{client_label, rate_headers};
use crate::state::AppState;
use svc_limits::Decision;

/// The preview window.
const HOUR_MS: i64 = 3_600_000;

/// Whether the query asks for a preview: `preview=true` (any case). `preview=false`, or no
/// `preview`, is a paid call; any other value is a 422, so a typo is never answered with a
/// challenge to pay for what was meant as a free look.
pub fn requested(query: Option<&str>) -> Result<bool, InputError> {
    let mut asked = false;
    for (name, value) in query.unwrap_or_default().split('&').filter_map(|pair| pair.split_once('=')) {
        if name != "preview" {
            continue;
        }
        if value.eq_ignore_ascii_case("true") {
            asked = true;
        } else if !value.eq_ignore_ascii_case("false") {
            return Err(InputError {
                errors: vec![FieldError::new(
                    [Loc::from("query"), Loc::from("preview")],
                    "preview must be true or false",
                    "bool_parsing",
                )],
            });
        }
    }
    Ok(asked)
}

/// Serves a preview of `route` for validated `input`.
pub(crate) async fn serve(call: Call<'_>, input: ValidInput) -> Response {
    let Call { state, parts, .. } = call;
    let now = state.clock.now_ms();
    let (quota, key) = match take_quota(state, parts, now).await {
        Ok(taken) => taken,
        Err(refused) => return refused,
    };
    let units = input.price_units();
    let mut response = match answer(call, input, units, &quota, now).await {
        Ok(body) => {
            let mut response = (StatusCode::OK, axum::Json(body)).into_response();
            response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(err) => {
            if err.status().is_server_error() && !quota.is_unlimited() {
                state.limiter.give_back(&key, now).await;
            }
            err.into_response()
        }
    };
    rate_headers(response.headers_mut(), &quota, now);
    response
}

/// Counts one preview against the client's hourly quota: the decision and the counter's key,
/// or the 429 to answer.
pub(crate) async fn take_quota(state: &AppState, parts: &Parts, now: i64) -> Result<(Decision, String), Response> {
    let key = format!("preview:{}", client_label(parts, &state.config.trusted_proxies));
    let quota = match state.config.previews_per_hour {
        0 => Decision::unlimited(),
        quota => state.limiter.hit(&key, quota, HOUR_MS, now).await,
    };
    if !quota.allowed {
        let mut response = ApiError::PreviewQuota { reset_secs: quota.reset_secs(now) }.into_response();
        rate_headers(response.headers_mut(), &quota, now);
        return Err(response);
    }
    Ok((quota, key))
}

async fn answer(call: Call<'_>, input: ValidInput, units: u64, quota: &Decision, now: i64) -> Result<Value, ApiError> {
    let Call { state, handlers, route, parts } = call;
    let list = route.price.price(units);
    let mut about = PreviewInfo {
        price: PreviewPrice {
            usd: list.to_string(),
            atomic: list.atomic().to_string(),
            asset: "USDC".into(),
            credits: route.credit_price_for(units).to_string(),
            your_tier: None,
            your_credits: None,
        },
        served_at: rfc3339(now),
        remaining: (!quota.is_unlimited()).then_some(quota.remaining),
        resets_at: (!quota.is_unlimited()).then(|| rfc3339(quota.reset_at_ms)),
        pay: "Send the same request without preview=true for the x402 challenge, pay it, and get the whole answer."
            .into(),
        truncated: true,
        note: None,
        max_items: None,
        lists: None,
        omitted: None,
        data_as_of: None,
    };
    if let Some((tier, price)) = identified_price(state, route, parts, units, now).await? {
        about.price.your_tier = Some(tier);
        about.price.your_credits = Some(price.to_string());
    }
    let (max_items, omit) = match route.preview {
        PreviewPolicy::QuoteOnly => {
            about.note = Some("This route acts; a preview only validates the request and quotes its price.".into());
            return Ok(json!({ "preview": about }));
        }
        PreviewPolicy::Truncate { max_items, omit } => (max_items, omit),
    };
    let body = handlers.call(route.id, state.clone(), input).await?;
    let mut answer: Value =
        serde_json::from_slice(&body.json).map_err(|e| ApiError::Internal(format!("preview of {}: {e}", route.id)))?;
    let mut lists = Vec::new();
    about.truncated = cut(&mut answer, max_items, omit, "", &mut lists);
    about.max_items = Some(max_items);
    about.lists = Some(lists);
    about.omitted = Some(omit.iter().map(|name| (*name).to_owned()).collect());
    about.data_as_of = data_as_of(&answer);
    let about = serde_json::to_value(about).map_err(|e| ApiError::Internal(format!("preview of {}: {e}", route.id)))?;
    match &mut answer {
        Value::Object(fields) => {
            fields.insert("preview".into(), about);
        }
        other => {
            let data = std::mem::take(other);
            *other = json!({ "data": data, "preview": about });
        }
    }
    Ok(answer)
}

/// The credit price for a caller that presents a live API key of an account: the account's
/// volume discount applied. Anyone else sees list prices only.
async fn identified_price(
    state: &AppState,
    route: &RouteSpec,
    parts: &Parts,
    units: u64,
    now: i64,
) -> Result<Option<(svc_domain::DiscountTier, svc_domain::Money)>, ApiError> {
    if !route.billed_as_data {
        return Ok(None);
    }
    let key = crate::credits::presented_key_in(&parts.headers);
    if key.is_none() {
        return Ok(None);
    }
    let scopes = svc_accounts::Scope::ALL;
    let Ok(holder) = svc_accounts::authenticate(&state.store, key, &scopes, now).await? else { return Ok(None) };
    let tier = svc_accounts::credits::account_tier(&state.store, &holder.account.id, now).await?;
    Ok(Some((tier, tier.apply(route.credit_price_for(units)))))
}

/// Keeps at most `max_items` of every array and drops `omit` fields, at any depth. Returns
/// whether anything was cut; every list that lost items is noted in `lists` as its JSON
/// pointer (from `at`), its length and what is shown.
fn cut(value: &mut Value, max_items: usize, omit: &[&str], at: &str, lists: &mut Vec<PreviewList>) -> bool {
    match value {
        Value::Array(items) => {
            let total = items.len();
            let mut cut_any = total > max_items;
            if cut_any {
                lists.push(PreviewList {
                    path: if at.is_empty() { "/" } else { at }.to_owned(),
                    total,
                    shown: max_items,
                });
            }
            items.truncate(max_items);
            for (i, item) in items.iter_mut().enumerate() {
                cut_any |= cut(item, max_items, omit, &format!("{at}/{i}"), lists);
            }
            cut_any
        }
        Value::Object(fields) => {
            let before = fields.len();
            fields.retain(|name, _| !omit.contains(&name.as_str()));
            let mut cut_any = fields.len() != before;
            for (name, field) in fields.iter_mut() {
                let escaped = name.replace('~', "~0").replace('/', "~1");
                cut_any |= cut(field, max_items, omit, &format!("{at}/{escaped}"), lists);
            }
            cut_any
        }
        _ => false,
    }
}

/// When the data was made, as the answer itself says (`generated_at`, `as_of`, `updated_at`).
fn data_as_of(answer: &Value) -> Option<String> {
    let fields: Option<&Map<String, Value>> = answer.as_object();
    ["generated_at", "as_of", "updated_at", "fetched_at"]
        .iter()
        .find_map(|name| fields.and_then(|f| f.get(*name)).and_then(Value::as_str).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_is_asked_only_by_preview_true_and_junk_is_refused() {
        assert_eq!(requested(Some("preview=true")), Ok(true));
        assert_eq!(requested(Some("a=1&preview=TRUE")), Ok(true));
        assert_eq!(requested(Some("preview=false")), Ok(false));
        assert_eq!(requested(Some("nopreview=true")), Ok(false));
        assert_eq!(requested(None), Ok(false));
        for junk in ["preview=null", "preview=1", "preview=", "a=1&preview=yes"] {
            assert!(requested(Some(junk)).is_err(), "{junk}");
        }
    }

    #[test]
    fn cutting_keeps_the_first_items_at_every_depth_and_drops_premium_fields() {
        let mut answer = json!({"picks": [{"thesis": "x", "n": 1, "tags": [1, 2, 3]}, {"n": 2}], "total": 2});
        let mut lists = Vec::new();
        assert!(cut(&mut answer, 1, &["thesis"], "", &mut lists));
        assert_eq!(answer, json!({"picks": [{"n": 1, "tags": [1]}], "total": 2}));
        assert_eq!(
            lists,
            [
                PreviewList { path: "/picks".into(), total: 2, shown: 1 },
                PreviewList { path: "/picks/0/tags".into(), total: 3, shown: 1 }
            ]
        );
        let mut small = json!({"items": [1]});
        assert!(!cut(&mut small, 3, &[], "", &mut Vec::new()));
    }
}
