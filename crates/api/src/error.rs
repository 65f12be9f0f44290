//! The one place errors become HTTP responses.
//!
//! Policy: domain crates return their own `thiserror` types; handlers convert them into
//! [`ApiError`] with `?`; [`ApiError::into_response`] is the only code that picks a status and
//! writes an error body. Client errors say what to fix; server errors are logged here once,
//! with the cause, and the client gets a generic message (never a key, a URL with a password
//! or a vendor's raw body).

use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use svc_catalogue::wire::{ErrorBody, HttpValidationError};
use svc_catalogue::{FieldError, InputError};

/// Every error the HTTP layer can answer with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request's input is invalid (422).
    #[error("invalid request")]
    Validation(#[from] InputError),
    /// No route at this path (404).
    #[error("no route for this path")]
    NotFound,
    /// The path exists but not with this method (405).
    #[error("method not allowed; this path accepts {allow}")]
    MethodNotAllowed {
        /// The methods the path accepts, for the `Allow` header.
        allow: &'static str,
    },
    /// The body is larger than the configured limit (413).
    #[error("request body larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A payment header too large to be a payment of ours (431): said plainly, never taken
    /// as "no payment", which would answer a fresh challenge and leave the client looping.
    #[error("payment header of {bytes} bytes; payments are at most {limit} bytes")]
    PaymentHeaderTooLarge {
        /// The header's size.
        bytes: usize,
        /// The largest accepted.
        limit: usize,
    },
    /// A body that is not JSON (415).
    #[error("request bodies must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    /// The route exists and the input is valid, but its implementation has not landed (501).
    #[error("route {0} is not implemented yet")]
    NotImplemented(&'static str),
    /// The thing asked for does not exist at its source (404), e.g. an unknown coin mint.
    #[error("{0}")]
    Missing(String),
    /// A vendor failed or answered garbage (502); the cause is logged, the client is told
    /// which vendor family and that nothing was charged.
    #[error("the {vendor} data source failed")]
    Upstream {
        /// The vendor family.
        vendor: &'static str,
        /// What happened, for the log.
        cause: String,
    },
    /// A vendor did not answer in time (504).
    #[error("the {0} data source did not answer in time")]
    UpstreamTimeout(&'static str),
    /// No usable API key (401): none, or unknown, revoked or expired (one answer for all).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The client's free previews for the hour are used (429).
    #[error("free preview quota used up; try again in {reset_secs} s, or pay for the call")]
    PreviewQuota {
        /// Seconds until a preview is free again.
        reset_secs: u64,
    },
    /// The client called a route more often than its limit allows (429).
    #[error("rate limit reached; try again in {reset_secs} s")]
    RateLimited {
        /// Seconds until a call is allowed again.
        reset_secs: u64,
    },
    /// A sign-in message refused, with the reason (401).
    #[error("{0}")]
    SignIn(String),
    /// A valid key without the scope the route needs (403).
    #[error("this API key lacks the scope this route needs: {0}")]
    Forbidden(svc_accounts::Scopes),
    /// The account's credits do not cover the call (402); nothing was taken.
    #[error("not enough credits")]
    InsufficientCredits {
        /// Credits left.
        balance: svc_domain::Money,
        /// What the call costs.
        price: svc_domain::Money,
        /// The call's pay-per-call path over x402, where it has one.
        x402_path: Option<String>,
    },
    /// A 402 challenge: what to pay, built by the x402 channel for this request.
    #[error("payment required")]
    PaymentRequired {
        /// The challenge's JSON.
        body: bytes::Bytes,
        /// The same challenge, base64, for `PAYMENT-REQUIRED`.
        header: HeaderValue,
        /// Whether it answers a payment that was refused before it verified (undecodable,
        /// unmatched, badly signed, replayed): whatever payer that payment names is unproven,
        /// so the rate limiter counts it like an unpaid request and it holds no slot.
        refused: bool,
    },
    /// The work was done but its settlement failed (402): the answer is withheld.
    #[error("settlement failed: {reason}")]
    SettlementFailed {
        /// The facilitator's reason code.
        reason: String,
        /// Whether the transfer may still land (then the same payment, sent again, gets the
        /// answer, and a new one could pay twice).
        may_have_moved: bool,
        /// The failed settlement, for `PAYMENT-RESPONSE`.
        receipt: Option<HeaderValue>,
    },
    /// The facilitator could not be asked (502); nothing was charged.
    #[error("facilitator unavailable")]
    FacilitatorUnavailable(String),
    /// The request conflicts with what exists (409), e.g. a second gateway while one runs;
    /// the message names what is in the way.
    #[error("{0}")]
    Conflict(String),
    /// No room for the work on this server now (503); the message says why.
    #[error("{0}")]
    Capacity(String),
    /// A seller agent's own limit is reached (429), before any payment is asked for.
    #[error("{detail}")]
    AgentLimited {
        /// Which limit, and when to retry.
        detail: String,
        /// The limit.
        limit: u64,
        /// Seconds until a call is allowed again.
        reset_secs: u64,
    },
    /// A seller's endpoint failed or answered something other than JSON (502); nothing was
    /// charged.
    #[error("{0}")]
    Seller(String),
    /// A seller's endpoint did not answer in time (504); nothing was charged.
    #[error("{0}")]
    SellerTimeout(String),
    /// A payment id reused with another payment (409).
    #[error("payment id used with a different payment")]
    PaymentIdConflict,
    /// A feature this server has not been configured for, e.g. trading without an agent key
    /// (503); the message says what is missing, never a secret.
    #[error("{0}")]
    NotEnabled(String),
    /// A dependency (the store) is unavailable (503).
    #[error("service unavailable")]
    Unavailable(String),
    /// A bug or an unexpected failure (500); the cause is logged, never sent.
    #[error("internal error")]
    Internal(String),
}

impl From<svc_store::StoreError> for ApiError {
    fn from(err: svc_store::StoreError) -> Self {
        ApiError::Internal(format!("store: {err}"))
    }
}

impl From<svc_paywall::PaywallError> for ApiError {
    fn from(err: svc_paywall::PaywallError) -> Self {
        use svc_paywall::PaywallError as P;
        match err {
            P::Store(err) => err.into(),
            P::FacilitatorUnavailable(cause) => ApiError::FacilitatorUnavailable(cause),
            P::PaymentIdConflict => ApiError::PaymentIdConflict,
        }
    }
}

impl From<svc_llm::LlmError> for ApiError {
    /// The account routes of the LLM proxy fail only inside (the store).
    fn from(err: svc_llm::LlmError) -> Self {
        ApiError::Internal(err.to_string())
    }
}

impl From<svc_agentbox::AgentboxError> for ApiError {
    fn from(err: svc_agentbox::AgentboxError) -> Self {
        use svc_agentbox::AgentboxError as E;
        match err {
            E::UnknownTemplate(name) => ApiError::field(
                vec!["body".into(), "template".into()],
                format!("unknown template {name:?}; GET /api/agentbox/templates lists them"),
                "enum",
            ),
            E::NoGateway(detail) => ApiError::Missing(detail.to_owned()),
            err @ E::AlreadyActive { .. } => ApiError::Conflict(err.to_string()),
            err @ (E::NotPrepared(_) | E::Unavailable(_)) => ApiError::NotEnabled(err.to_string()),
            err @ E::Capacity { .. } => ApiError::Capacity(err.to_string()),
            E::InsufficientCredits { balance, price } => {
                ApiError::InsufficientCredits { balance, price, x402_path: None }
            }
            err @ E::InvalidBotToken => {
                ApiError::field(vec!["body".into(), "bot_token".into()], err.to_string(), "value_error")
            }
            err @ E::BotTaken => ApiError::Conflict(err.to_string()),
            err @ E::TooManyStreams => ApiError::Capacity(err.to_string()),
            E::ChatPlatform(cause) => ApiError::Upstream { vendor: "chat platform", cause },
            err @ (E::Backend(_) | E::Store(_) | E::Llm(_)) => ApiError::Internal(format!("agentbox: {err}")),
        }
    }
}

impl From<svc_sellers::SellerError> for ApiError {
    fn from(err: svc_sellers::SellerError) -> Self {
        use svc_sellers::{ForwardError as F, SellerError as E};
        match err {
            E::NoAgent => ApiError::Missing("No such agent.".to_owned()),
            E::NotForSale(why) => ApiError::Missing(format!("This agent is not for sale: {why}.")),
            err @ E::NoConfig => ApiError::Missing(err.to_string()),
            E::Invalid(errors) => ApiError::Validation(InputError { errors }),
            err @ (E::HoldsBalance { .. } | E::NotConfigured | E::MoneyInFlight) => ApiError::Conflict(err.to_string()),
            err @ E::BelowMinimum { .. } => {
                ApiError::field(vec!["body".into(), "amount".into()], err.to_string(), "greater_than_equal")
            }
            err @ E::InsufficientBalance { .. } => {
                ApiError::field(vec!["body".into(), "amount".into()], err.to_string(), "insufficient_balance")
            }
            E::Limited { which, limit, reset_secs, .. } => ApiError::AgentLimited {
                detail: format!("the agent's {which} limit of {limit} calls is reached; try again in {reset_secs} s"),
                limit,
                reset_secs,
            },
            E::Forward(err @ F::Timeout(_)) => ApiError::SellerTimeout(err.to_string()),
            E::Forward(err) => ApiError::Seller(err.to_string()),
            err @ (E::Store(_) | E::Corrupt(_)) => ApiError::Internal(format!("sellers: {err}")),
        }
    }
}

impl From<crate::answer::EncodeError> for ApiError {
    fn from(err: crate::answer::EncodeError) -> Self {
        ApiError::Internal(err.to_string())
    }
}

impl From<svc_signals::EngineError> for ApiError {
    fn from(err: svc_signals::EngineError) -> Self {
        ApiError::Internal(err.to_string())
    }
}

impl From<svc_upstream::UpstreamError> for ApiError {
    fn from(err: svc_upstream::UpstreamError) -> Self {
        use svc_upstream::UpstreamError as U;
        let vendor = err.vendor().family();
        match err {
            U::NotFound { .. } => ApiError::Missing(err.to_string()),
            U::BadInput { field, reason, .. } => ApiError::field(
                vec![svc_catalogue::Loc::from("query"), svc_catalogue::Loc::from(field)],
                reason,
                "value_error",
            ),
            U::BadAmount { field, .. } => ApiError::field(
                vec![svc_catalogue::Loc::from("body"), svc_catalogue::Loc::from(field)],
                err.to_string(),
                "value_error",
            ),
            U::Timeout { .. } => ApiError::UpstreamTimeout(vendor),
            other => ApiError::Upstream { vendor, cause: other.to_string() },
        }
    }
}

impl From<svc_accounts::Refusal> for ApiError {
    fn from(refusal: svc_accounts::Refusal) -> Self {
        use svc_accounts::Refusal;
        match refusal {
            Refusal::Missing => ApiError::Unauthorized(
                "This route is billed in credits and needs an API key, in X-API-Key or Authorization: Bearer. \
                 Without an account, pay per call over x402 at the /api/x402 twin of this path.",
            ),
            Refusal::Invalid => ApiError::Unauthorized("This API key is not valid (unknown, revoked or expired)."),
            Refusal::Scope(scopes) => ApiError::Forbidden(scopes),
            Refusal::NotSignedIn => ApiError::Unauthorized(
                "This route needs a valid sign-in token as Authorization: Bearer (sign in with POST /api/auth/nonce, \
                 then POST /api/auth/verify); routes that list API keys accept those too.",
            ),
        }
    }
}

impl ApiError {
    /// An error that is the client's fault only in a single field.
    pub fn field(loc: Vec<svc_catalogue::Loc>, msg: impl Into<String>, kind: &'static str) -> Self {
        ApiError::Validation(InputError { errors: vec![FieldError { loc, msg: msg.into(), kind }] })
    }

    pub(crate) fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::PaymentHeaderTooLarge { .. } => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            ApiError::Missing(_) => StatusCode::NOT_FOUND,
            ApiError::Upstream { .. } => StatusCode::BAD_GATEWAY,
            ApiError::UpstreamTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Unauthorized(_) | ApiError::SignIn(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::PreviewQuota { .. } | ApiError::RateLimited { .. } | ApiError::AgentLimited { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Seller(_) => StatusCode::BAD_GATEWAY,
            ApiError::SellerTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::InsufficientCredits { .. }
            | ApiError::PaymentRequired { .. }
            | ApiError::SettlementFailed { .. } => StatusCode::PAYMENT_REQUIRED,
            ApiError::FacilitatorUnavailable(_) => StatusCode::BAD_GATEWAY,
            ApiError::PaymentIdConflict | ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Capacity(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::NotEnabled(_) | ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            ApiError::Validation(_) => "validation_error",
            ApiError::NotFound => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
            ApiError::PaymentHeaderTooLarge { .. } => "payment_header_too_large",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::NotImplemented(_) => "not_implemented",
            ApiError::Missing(_) => "not_found",
            ApiError::Upstream { .. } => "upstream_error",
            ApiError::UpstreamTimeout(_) => "upstream_timeout",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::SignIn(_) => "sign_in_refused",
            ApiError::Forbidden(_) => "insufficient_scope",
            ApiError::PreviewQuota { .. } => "preview_quota_exceeded",
            ApiError::RateLimited { .. } | ApiError::AgentLimited { .. } => "rate_limited",
            ApiError::Seller(_) => "seller_error",
            ApiError::SellerTimeout(_) => "seller_timeout",
            ApiError::InsufficientCredits { .. } => "insufficient_credits",
            ApiError::PaymentRequired { .. } => "payment_required",
            ApiError::SettlementFailed { may_have_moved: true, .. } => svc_x402::SETTLEMENT_PENDING,
            ApiError::SettlementFailed { .. } => "settlement_failed",
            ApiError::FacilitatorUnavailable(_) => "facilitator_unavailable",
            ApiError::PaymentIdConflict => "payment_id_conflict",
            ApiError::Conflict(_) => "conflict",
            ApiError::Capacity(_) => "no_capacity",
            ApiError::NotEnabled(_) => "not_enabled",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }
}

/// Builds the `{"detail","code"}` body.
pub fn error_body(detail: impl Into<String>, code: &str, extra: Map<String, Value>) -> ErrorBody {
    ErrorBody { detail: detail.into(), code: code.to_owned(), extra }
}

impl IntoResponse for ApiError {
    /// The error's status, its body in the `{"detail","code"}` shape (a validation error in
    /// its own shape, a challenge as the x402 channel builds it), and the headers it carries.
    fn into_response(self) -> Response {
        self.log();
        let status = self.status();
        let headers = self.headers();
        let mut response = match self {
            ApiError::Validation(err) => (status, Json(HttpValidationError { detail: err.errors })).into_response(),
            ApiError::PaymentRequired { body, header, .. } => crate::answer::challenge_response(body, header),
            other => {
                let (detail, code, extra) = other.described();
                (status, Json(error_body(detail, code, extra))).into_response()
            }
        };
        response.headers_mut().extend(headers);
        response
    }
}

impl ApiError {
    /// Logs what the client is not told: the causes of failures on svc's side.
    fn log(&self) {
        match self {
            ApiError::Internal(cause) => tracing::error!(error.cause = %cause, "internal error: {cause}"),
            ApiError::Upstream { vendor, cause } => {
                tracing::warn!(vendor, error.cause = %cause, "upstream error: {cause}")
            }
            ApiError::Unavailable(cause) => tracing::warn!(error.cause = %cause, "unavailable: {cause}"),
            ApiError::FacilitatorUnavailable(cause) => tracing::error!(error.cause = %cause, "facilitator unavailable"),
            _ => {}
        }
    }

    /// The headers the error carries besides its body.
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        match self {
            // RFC 9110: a 405 names the methods the resource supports.
            ApiError::MethodNotAllowed { allow } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            ApiError::Unauthorized(_) => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::SettlementFailed { receipt, .. } => {
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                if let Some(value) = receipt {
                    headers.insert(svc_x402::PAYMENT_RESPONSE, value.clone());
                }
            }
            ApiError::AgentLimited { limit, reset_secs, .. } => {
                headers.insert("ratelimit-limit", HeaderValue::from(*limit));
                headers.insert("ratelimit-remaining", HeaderValue::from(0));
                headers.insert("ratelimit-reset", HeaderValue::from(*reset_secs));
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*reset_secs));
            }
            _ => {}
        }
        headers
    }

    /// The detail a client reads, the error's code, and the fields it adds to the body.
    fn described(self) -> (String, &'static str, Map<String, Value>) {
        let code = self.code();
        let mut extra = Map::new();
        let detail = match self {
            ApiError::Internal(_) => "Internal server error.".to_owned(),
            ApiError::Upstream { vendor, .. } => {
                extra.insert("vendor".into(), Value::from(vendor));
                format!("The {vendor} data source failed; nothing was charged. Retry later.")
            }
            ApiError::UpstreamTimeout(vendor) => {
                extra.insert("vendor".into(), Value::from(vendor));
                format!("The {vendor} data source did not answer in time; nothing was charged. Retry later.")
            }
            ApiError::Unavailable(_) => "Service unavailable.".to_owned(),
            ApiError::PayloadTooLarge { limit } => {
                extra.insert("limit_bytes".into(), Value::from(limit));
                format!("Request body larger than {limit} bytes.")
            }
            ApiError::PaymentHeaderTooLarge { bytes, limit } => {
                extra.insert("limit_bytes".into(), Value::from(limit));
                format!(
                    "The payment header is {bytes} bytes; a payment to this service is at most {limit} bytes. \
                     Nothing was charged; sign the payment again from the challenge."
                )
            }
            ApiError::Unauthorized(detail) => detail.to_string(),
            ApiError::InsufficientCredits { balance, price, x402_path } => {
                extra.insert("balance".into(), Value::from(balance.to_string()));
                extra.insert("price".into(), Value::from(price.to_string()));
                let buy = "Buy credits over x402: POST /api/x402/credits/purchase with {\"amount\": \"<USD>\", \
                     \"account_id\": \"<this account>\"}";
                let top_up = match x402_path {
                    Some(path) => format!("{buy}, or pay this call per use over x402 at {path}."),
                    None => format!("{buy}."),
                };
                extra.insert("top_up".into(), Value::from(top_up));
                format!("This call costs {price} in credits and the account has {balance}; nothing was taken.")
            }
            ApiError::SettlementFailed { reason, may_have_moved, .. } => {
                extra.insert("reason".into(), Value::from(reason));
                if may_have_moved {
                    // The transfer may still land: a new authorization could pay twice.
                    "The transfer was sent but is not confirmed yet, so the answer is withheld. Do not sign a new \
                     payment: send this same payment again in a minute. If the transfer landed you get the answer; \
                     if it failed, nothing was taken."
                        .to_owned()
                } else {
                    "Settlement failed, so the answer was withheld; the payment was not taken. Retry with a new \
                     authorization."
                        .to_owned()
                }
            }
            ApiError::FacilitatorUnavailable(_) => {
                "The payment could not be verified right now; nothing was charged. Retry shortly.".to_owned()
            }
            ApiError::AgentLimited { detail, reset_secs, .. } => {
                extra.insert("retry_after_secs".into(), Value::from(reset_secs));
                sentence(&detail)
            }
            err @ (ApiError::Seller(_) | ApiError::SellerTimeout(_)) => format!(
                "{}; nothing was charged, and the same payment can be sent again.",
                sentence(&err.to_string()).trim_end_matches('.')
            ),
            ApiError::PaymentIdConflict => {
                "This payment id was used with a different payment; use a new id for a new payment.".to_owned()
            }
            ApiError::NotImplemented(id) => {
                extra.insert("route".into(), Value::from(id));
                format!("Route {id} is not implemented yet.")
            }
            other => sentence(&other.to_string()),
        };
        (detail, code, extra)
    }
}

fn sentence(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(err: ApiError) -> Value {
        let response = err.into_response();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("body");
        serde_json::from_slice(&bytes).expect("json")
    }

    #[tokio::test]
    async fn too_few_credits_names_a_pay_per_call_path_only_where_the_call_has_one() {
        let money = |s: &str| s.parse::<svc_domain::Money>().expect("money");
        let (balance, price) = (money("0.01"), money("0.05"));
        let gateway = body_of(ApiError::InsufficientCredits { balance, price, x402_path: None }).await;
        let top_up = gateway["top_up"].as_str().expect("top_up");
        assert!(top_up.contains("/api/x402/credits/purchase") && !top_up.contains("per use"), "{top_up}");
        let route =
            ApiError::InsufficientCredits { balance, price, x402_path: Some("/api/x402/alpha/top-picks".into()) };
        let top_up = body_of(route).await["top_up"].as_str().expect("top_up").to_owned();
        assert!(top_up.ends_with("per use over x402 at /api/x402/alpha/top-picks."), "{top_up}");
    }
}
