//! A client of an external facilitator's standard HTTP API (`/verify`, `/settle`,
//! `/supported`). Tolerant where implementations differ: an invalid payment may come back as
//! 200 with `isValid:false` or as a 4xx carrying the same JSON, and both mean "invalid".

use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::facilitator::{Facilitator, FacilitatorError, PaymentRequest, Resolution, Settled, Unresolved, Verified};
use crate::ledger::Ledgers;
use crate::wire::{PaymentRequirements, SupportedResponse, X402_VERSION};

/// An external facilitator.
#[derive(Debug, Clone)]
pub struct HttpFacilitator {
    base: String,
    client: reqwest::Client,
    /// Nodes to read payments from: the standard API cannot say what became of a settlement
    /// whose answer was lost.
    ledgers: Ledgers,
}

/// A `/verify` or `/settle` request. The client's message is written out as it came (raw JSON,
/// never parsed into a tree and printed again), so the facilitator checks what was signed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    x402_version: u8,
    payment_payload: &'a RawValue,
    payment_requirements: &'a PaymentRequirements,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyReply {
    is_valid: bool,
    invalid_reason: Option<String>,
    invalid_message: Option<String>,
    payer: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettleReply {
    success: bool,
    error_reason: Option<String>,
    error_message: Option<String>,
    payer: Option<String>,
    #[serde(default)]
    transaction: String,
}

impl HttpFacilitator {
    /// A client of the facilitator at `base` (e.g. `https://facilitator.example/x402`); each
    /// call gives up after `timeout`.
    pub fn new(base: &str, timeout: Duration) -> Result<Self, FacilitatorError> {
        // TLS through ring, the provider the rest of the build links; a no-op once installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| FacilitatorError::Unavailable(format!("HTTP client: {e}")))?;
        Ok(HttpFacilitator { base: base.trim_end_matches('/').to_owned(), client, ledgers: Ledgers::default() })
    }

    /// Reads payments whose settlement outcome was lost from `ledgers`' nodes; without them
    /// such payments stay undecided.
    pub fn with_ledgers(mut self, ledgers: Ledgers) -> Self {
        self.ledgers = ledgers;
        self
    }

    fn body<'a>(request: &PaymentRequest<'a>) -> Body<'a> {
        Body {
            x402_version: X402_VERSION,
            payment_payload: request.message,
            payment_requirements: request.requirements,
        }
    }

    /// POSTs `body` to `path`; returns the status and the JSON answer, or why there is none.
    async fn post(&self, path: &str, body: &Body<'_>) -> Result<(u16, Value), FacilitatorError> {
        let url = format!("{}{path}", self.base);
        let response = self
            .client
            .post(&url)
            .json(body)
            .send()
            .await
            .map_err(|e| FacilitatorError::Unavailable(format!("{path}: {}", without_url(&e))))?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(|e| FacilitatorError::Unavailable(format!("{path}: {e}")))?;
        let json = serde_json::from_slice(&bytes)
            .map_err(|_| FacilitatorError::Unavailable(format!("{path}: HTTP {status} without a JSON answer")))?;
        Ok((status, json))
    }

    async fn settle_once(&self, body: &Body<'_>) -> Result<SettleReply, FacilitatorError> {
        let (status, json) = self.post("/settle", body).await?;
        if !(200..500).contains(&status) || json.get("success").is_none() {
            return Err(FacilitatorError::Unavailable(format!("/settle: HTTP {status}")));
        }
        serde_json::from_value(json).map_err(|e| FacilitatorError::Unavailable(format!("/settle: {e}")))
    }
}

/// Why a call never reached the facilitator: no request was sent, so nothing can have moved.
const COULD_NOT_CONNECT: &str = "could not connect";

/// reqwest errors name the URL, which may carry credentials; keep only the kind of failure.
fn without_url(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "timed out".to_owned()
    } else if err.is_connect() {
        COULD_NOT_CONNECT.to_owned()
    } else {
        "request failed".to_owned()
    }
}

impl Facilitator for HttpFacilitator {
    fn supported(&self) -> BoxFuture<'_, Result<SupportedResponse, FacilitatorError>> {
        async move {
            let url = format!("{}/supported", self.base);
            let mut attempt = 0;
            loop {
                let response = self
                    .client
                    .get(&url)
                    .send()
                    .await
                    .map_err(|e| FacilitatorError::Unavailable(format!("/supported: {}", without_url(&e))))?;
                if response.status() == reqwest::StatusCode::TOO_MANY_REQUESTS && attempt < 3 {
                    attempt += 1;
                    let wait = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(1 << attempt)
                        .min(30);
                    tokio::time::sleep(Duration::from_secs(wait)).await;
                    continue;
                }
                let status = response.status();
                return response.json::<SupportedResponse>().await.map_err(|_| {
                    FacilitatorError::Unavailable(format!("/supported: HTTP {status}, not a kinds list"))
                });
            }
        }
        .boxed()
    }

    fn verify<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Verified, FacilitatorError>> {
        async move {
            let (status, json) = self.post("/verify", &Self::body(&request)).await?;
            if !(200..500).contains(&status) || json.get("isValid").is_none() {
                return Err(FacilitatorError::Unavailable(format!("/verify: HTTP {status}")));
            }
            let reply: VerifyReply =
                serde_json::from_value(json).map_err(|e| FacilitatorError::Unavailable(format!("/verify: {e}")))?;
            match (reply.is_valid, reply.payer) {
                (true, Some(payer)) => Ok(Verified { payer }),
                (true, None) => Err(FacilitatorError::Unavailable("/verify: valid but no payer".into())),
                (false, _) => Err(FacilitatorError::invalid(
                    reply.invalid_reason.unwrap_or_else(|| "invalid_payload".into()),
                    reply.invalid_message.unwrap_or_default(),
                )),
            }
        }
        .boxed()
    }

    fn settle<'a>(&'a self, request: PaymentRequest<'a>) -> BoxFuture<'a, Result<Settled, FacilitatorError>> {
        async move {
            let body = Self::body(&request);
            let mut reply = match self.settle_once(&body).await {
                Ok(reply) => reply,
                // Never reached: a definite failure, so the payer may sign again. Any other
                // failure (a timeout, a 5xx) may have followed a transfer: it stays pending.
                Err(FacilitatorError::Unavailable(cause)) if cause.ends_with(COULD_NOT_CONNECT) => {
                    return Err(FacilitatorError::SettleFailed {
                        reason: "unexpected_settle_error".into(),
                        message: cause,
                        transaction: None,
                    });
                }
                Err(err) => return Err(err),
            };
            if !reply.success && reply.error_reason.as_deref() == Some("settlement_pending") {
                // The reference server retries a pending settlement once with the same body;
                // the facilitator recognises it and reports the outcome of the first.
                reply = self.settle_once(&body).await?;
            }
            match reply {
                SettleReply { success: true, payer: Some(payer), transaction, .. } => {
                    Ok(Settled::OnChain { payer, transaction })
                }
                SettleReply { success: true, .. } => {
                    Err(FacilitatorError::Unavailable("/settle: success without a payer".into()))
                }
                SettleReply { error_reason, error_message, transaction, .. } => Err(FacilitatorError::SettleFailed {
                    reason: error_reason.unwrap_or_else(|| "unexpected_settle_error".into()),
                    message: error_message.unwrap_or_default(),
                    transaction: Some(transaction).filter(|t| !t.is_empty()),
                }),
            }
        }
        .boxed()
    }

    fn resolve<'a>(&'a self, payment: Unresolved<'a>) -> BoxFuture<'a, Result<Resolution, FacilitatorError>> {
        async move { self.ledgers.resolve(payment).await.unwrap_or(Ok(Resolution::Unknown)) }.boxed()
    }
}
