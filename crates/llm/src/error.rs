//! Why a proxied call was refused or failed. The HTTP layer maps each to OpenAI's error body
//! in one place, and builds the x402 challenge a refusal offers from the top-up it names.

use svc_domain::Money;

/// Why a call got no completion.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No token, or one that is malformed, forged or rotated: all alike.
    #[error("invalid LLM token")]
    Unauthorized,
    /// The path exists, but not for this method.
    #[error("this path accepts {allow} only")]
    MethodNotAllowed {
        /// The methods it accepts.
        allow: &'static str,
    },
    /// The alias is not in the model table.
    #[error("the model `{0}` does not exist")]
    ModelNotFound(String),
    /// The request is not a chat completion request.
    #[error("{message}")]
    BadRequest {
        /// What is wrong.
        message: String,
        /// The field at fault.
        param: Option<String>,
        /// A machine-readable code.
        code: &'static str,
    },
    /// A field carries text none may: NUL in a string (PostgreSQL and providers refuse it,
    /// and no prompt needs it) or a control character in a name. Newlines and tabs are text.
    #[error("`{param}` {message}")]
    Unprocessable {
        /// What is wrong.
        message: String,
        /// The field at fault, as OpenAI names one (`messages[0].content`).
        param: String,
    },
    /// The body is larger than the proxy reads.
    #[error("the request body is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The balance does not cover what the call can cost.
    #[error("credit limit reached")]
    InsufficientCredits {
        /// The balance.
        balance: Money,
        /// The most the call can cost.
        needed: Money,
        /// What an automatic top-up would buy, when the account has it on: the HTTP layer
        /// offers it as an x402 challenge.
        top_up: Option<Money>,
    },
    /// A payment sent with the call bought nothing: top-up is off, or the payment was
    /// refused before anything was charged.
    #[error("{reason}")]
    PaymentRefused {
        /// Why.
        reason: String,
        /// What a fresh top-up would buy, when top-up is on.
        top_up: Option<Money>,
    },
    /// Too many calls this minute.
    #[error("rate limit reached")]
    RateLimited {
        /// Seconds until a call is admitted again.
        retry_after: u64,
        /// The limit per minute.
        limit: u32,
    },
    /// Today's spend reached the account's daily cap.
    #[error("daily spend cap reached")]
    DailyCap {
        /// Seconds until the cap resets (midnight UTC).
        retry_after: u64,
        /// The cap.
        cap: Money,
    },
    /// The provider refused the request itself (bad parameters, context too long).
    #[error("{message}")]
    UpstreamRejected {
        /// The provider's message.
        message: String,
        /// The provider's code, if any.
        code: Option<String>,
        /// The provider's `param`, if any.
        param: Option<String>,
    },
    /// The provider is rate limiting us.
    #[error("the model provider is rate limiting; retry later")]
    UpstreamBusy {
        /// The provider's `Retry-After`, seconds.
        retry_after: Option<u64>,
    },
    /// The provider failed, refused our credentials, or answered something unreadable.
    #[error("the model provider failed: {0}")]
    Upstream(String),
    /// The provider did not answer in time.
    #[error("the model provider did not answer in time")]
    UpstreamTimeout,
    /// A payment sent with the call could not be settled; no credits were bought.
    #[error("the top-up payment could not be settled: {reason}")]
    TopUpUnsettled {
        /// Why.
        reason: String,
    },
    /// The payment id names an answer bought by another payment.
    #[error("this payment id was used with a different payment")]
    PaymentIdConflict,
    /// The facilitator could not be asked; nothing was charged.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The store failed; nothing was charged.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<svc_store::StoreError> for LlmError {
    fn from(err: svc_store::StoreError) -> Self {
        LlmError::Internal(format!("store: {err}"))
    }
}

impl From<svc_paywall::PaywallError> for LlmError {
    fn from(err: svc_paywall::PaywallError) -> Self {
        use svc_paywall::PaywallError as P;
        match err {
            P::Store(err) => err.into(),
            P::FacilitatorUnavailable(cause) => LlmError::Unavailable(cause),
            P::PaymentIdConflict => LlmError::PaymentIdConflict,
        }
    }
}
