//! The one x402 front door of every surface that sells: catalogue routes, sellers' agents and
//! the LLM proxy's top-up (and next, MCP tools). It reads a payment once, builds every
//! challenge on the one public base URL, and dispatches a sale through the
//! [`Paywall`](svc_paywall::Paywall): a request without a payment is challenged, one with a
//! payment is charged for the work it buys.
//!
//! What is transport-neutral and what is HTTP: a payment read from bytes
//! (`Presented::read`), a challenge's `PaymentRequired` value
//! (`Challenge::payment_required`) and the charge (`Challenge::charge`) take no HTTP
//! type, so a surface that carries its payment elsewhere (an MCP tool, in
//! `params._meta["x402/payment"]`, answered with the `PaymentRequired` value as a tool result)
//! reuses them as they are. Reading the payment *header* (`presented`), the
//! `PAYMENT-REQUIRED` header and the mapping of an outcome to a response (`respond`) are the
//! HTTP side.

use std::future::Future;

use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value};
use svc_catalogue::challenge::{Offered, Schemas};
use svc_domain::Money;
use svc_limits::Decision;
use svc_paywall::{Buyer, Outcome, Sale, Sold};
use svc_x402::codec::{DecodedPayment, Presented};
use svc_x402::{
    PAYMENT_RESPONSE, PAYMENT_SIGNATURE, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse, X_PAYMENT,
    X402_VERSION,
};

use crate::answer::Answer;
use crate::answer::json_response;
use crate::challenge::{ChallengeCache, ChallengeKey};
use crate::error::ApiError;
use crate::limits::rate_headers;
use crate::rate::Counted;
use crate::state::AppState;

/// Reads the request's payment header: `PAYMENT-SIGNATURE` (v2), else `X-PAYMENT` (v1, and v2
/// payloads from clients that kept the old header).
pub(crate) fn presented(headers: &HeaderMap) -> Presented {
    let header = headers.get(&PAYMENT_SIGNATURE_HEADER).or_else(|| headers.get(&X_PAYMENT_HEADER));
    Presented::read(header.map(HeaderValue::as_bytes))
}

/// One request at the front door: what every sale and every challenge is built from.
#[derive(Clone, Copy)]
pub(crate) struct Front<'a> {
    /// The shared state.
    pub(crate) state: &'a AppState,
    /// The request's head.
    pub(crate) parts: &'a Parts,
    /// The body read, if the surface reads one: the challenge echoes it and caches by it.
    pub(crate) body: Option<&'a [u8]>,
}

impl<'a> Front<'a> {
    /// The path and query being paid for.
    pub(crate) fn resource(&self) -> &'a str {
        self.parts.uri.path_and_query().map_or("/", |pq| pq.as_str())
    }

    /// The challenge offering `offered` at `price` for this request.
    pub(crate) fn challenge<'o>(&self, offered: Offered<'o>, price: Money) -> Challenge<'o>
    where
        'a: 'o,
    {
        Challenge { state: self.state, offered, resource: self.resource(), body: self.body, price }
    }
}

/// What an x402 call sells, checked and ready to be served: its price, what its challenge
/// offers, the room it has left, and its paid work. A catalogue route's call
/// (`pipeline::RouteCall`) and a seller agent's (`seller_invoke::AgentCall`) are the kinds
/// today; the front door knows neither.
pub(crate) trait Wares {
    /// The list price.
    fn price(&self) -> Money;

    /// What its challenge offers.
    fn offered(&self) -> Offered<'_>;

    /// Room for one more call, looked at before a challenge: a seller agent's own limits (a
    /// 429 when they are full), whose rate headers the challenge then shows. None where
    /// nothing but the client's rate limit applies.
    async fn room(&self, _state: &AppState) -> Result<Option<Decision>, ApiError> {
        Ok(None)
    }

    /// Charges `payment` (at `price`, the list price) for the work, and answers.
    async fn sell(self, front: Front<'_>, price: Money, payment: &DecodedPayment) -> Result<Response, ApiError>;
}

/// Sells what `wares` resolves to, under the client's rate limit (`counted`): the payment
/// header is read once, and `wares` is whatever must be checked under that limit before a
/// price is quoted (an agent's schema; a route's input was validated before).
pub(crate) async fn dispatch<W, F>(front: Front<'_>, counted: Counted<'_>, wares: F) -> Response
where
    W: Wares,
    F: Future<Output = Result<W, ApiError>>,
{
    let presented = presented(&front.parts.headers);
    let payer = presented.claimed_payer();
    let sold = async move { serve(front, wares.await?, presented).await };
    crate::rate::x402(front.state, counted, front.parts, payer, sold).await
}

/// Challenges a request that carries no usable payment, and has the paywall charge one that
/// does for the work `wares` names.
async fn serve<W: Wares>(front: Front<'_>, wares: W, presented: Presented) -> Result<Response, ApiError> {
    let price = wares.price();
    let payment = match presented {
        Presented::Payment(payment) => payment,
        Presented::TooLarge(bytes) => {
            return Err(ApiError::PaymentHeaderTooLarge { bytes, limit: svc_x402::codec::MAX_HEADER_BYTES });
        }
        // A payment header that is not a payment: refused like any invalid payment.
        Presented::Junk => {
            wares.room(front.state).await?;
            return Err(front.challenge(wares.offered(), price).unpaid(true));
        }
        Presented::Nothing => {
            let room = wares.room(front.state).await?;
            let unpaid = quote(front, wares.offered(), price).await;
            let Some(room) = room else { return Err(unpaid) };
            let mut response = unpaid.into_response();
            rate_headers(response.headers_mut(), &room, front.state.clock.now_ms());
            return Ok(response);
        }
    };
    // The paid path's future is large (verification, store, handler, settlement): boxed, so
    // the futures of every unpaid request, most of the traffic, stay small and cheap to move.
    Box::pin(wares.sell(front, price, &payment)).await
}

/// The challenge to a request that carried no payment. A payer that proved its wallet
/// (`SIGN-IN-WITH-X`, where a volume discount applies) is quoted its own price.
async fn quote(front: Front<'_>, offered: Offered<'_>, price: Money) -> ApiError {
    let state = front.state;
    let signed_in = front.parts.headers.get(&SIGN_IN_WITH_X_HEADER).filter(|_| offered.discountable());
    let Some(proof) = signed_in else { return front.challenge(offered, price).unpaid(false) };
    let now = state.clock.now_ms();
    match svc_accounts::siwx::verify(&state.config.sign_in, proof.as_bytes(), now) {
        Ok(wallet) => match state.paywall.payer_tier(&wallet).await {
            Ok(tier) => front.challenge(offered, tier.apply(price)).unpaid(false),
            Err(err) => err.into(),
        },
        Err(refused) => {
            let why = format!("{}: {refused}", svc_accounts::siwx::SIGN_IN_WITH_X);
            front.challenge(offered, price).with_error(&state.paywall.requirements(price), &why, false)
        }
    }
}

/// The answer to a charge's outcome: the work's answer with its settlement, the answer kept for
/// a retry, a fresh challenge naming why the payment was refused, or the error.
pub(crate) fn respond<A: Into<Answer>>(
    outcome: Outcome<A, ApiError>,
    challenge: &Challenge<'_>,
) -> Result<Response, ApiError> {
    match outcome {
        Outcome::Paid { answer, receipt, v1, handover } => {
            let mut response = paid(answer, payment_response_header(&receipt));
            if let Some(handover) = handover {
                response = crate::handover::on_written(response, handover);
            }
            if v1 {
                // v1 clients read the settlement from X-PAYMENT-RESPONSE.
                if let Some(value) = response.headers().get(PAYMENT_RESPONSE).cloned() {
                    response.headers_mut().insert(X_PAYMENT_RESPONSE, value);
                }
            }
            Ok(response)
        }
        Outcome::Kept { body, receipt } => Ok(paid(body, HeaderValue::from_str(&receipt).ok())),
        Outcome::Refused { accepts, reason } => Err(challenge.with_error(&accepts, &reason, true)),
        Outcome::Failed(err) => Err(err),
        Outcome::Unsettled { error, receipt } => Err(ApiError::SettlementFailed {
            reason: error.reason().to_owned(),
            may_have_moved: error.may_have_moved(),
            receipt: payment_response_header(&receipt),
        }),
    }
}

/// The v1 name of the settlement header.
const X_PAYMENT_RESPONSE: &str = "x-payment-response";

/// The challenge of one sale: what is offered, at what price, for which resource. Built on the
/// configured public base URL alone, whatever the request's `Host` says.
pub(crate) struct Challenge<'a> {
    /// The shared state.
    pub(crate) state: &'a AppState,
    /// What is offered.
    pub(crate) offered: Offered<'a>,
    /// The path and query being paid for, under the public base URL.
    pub(crate) resource: &'a str,
    /// The body being paid for, when there is one.
    pub(crate) body: Option<&'a [u8]>,
    /// The price asked.
    pub(crate) price: Money,
}

impl Challenge<'_> {
    /// The challenge to a request that carried no usable payment, from the cache when seen;
    /// `junk` when it carried a payment that is not one.
    pub(crate) fn unpaid(&self, junk: bool) -> ApiError {
        let built = self.cached().map(|(body, header)| ApiError::PaymentRequired { body, header, refused: junk });
        built.unwrap_or_else(|err| err)
    }

    fn cached(&self) -> Result<(Bytes, HeaderValue), ApiError> {
        let body = self.body.unwrap_or_default();
        let build = || self.encoded(&self.state.paywall.requirements(self.price), "Payment required");
        // Agents' and top-ups' challenges are built each time: an agent's price and schema are
        // the seller's to change, and a top-up's amount is the account's.
        let Offered::Route { route, .. } = self.offered else { return build() };
        if body.len() > ChallengeCache::MAX_BODY {
            return build();
        }
        let key = ChallengeKey {
            route: route.id,
            price: self.price.atomic(),
            window: self.state.clock.now_ms().div_euclid(svc_accounts::siwx::WINDOW_MS),
            uri: self.resource,
            body,
        };
        let cache = &self.state.challenges.cache;
        if let Some(hit) = cache.get(&key) {
            return Ok(hit);
        }
        let built = build()?;
        cache.put(&key, built.clone());
        Ok(built)
    }

    /// A challenge naming why the request was not charged (`refused`: its payment was
    /// refused before it verified).
    pub(crate) fn with_error(&self, accepts: &[PaymentRequirements], why: &str, refused: bool) -> ApiError {
        match self.encoded(accepts, why) {
            Ok((body, header)) => ApiError::PaymentRequired { body, header, refused },
            Err(err) => err,
        }
    }

    /// The extensions this challenge advertises: `payment-identifier` always, the `bazaar`
    /// of what is offered, and the sign-in offer where a discount applies.
    pub(crate) fn extensions(&self, schemas: Schemas) -> Map<String, Value> {
        let mut extensions = Map::new();
        extensions.insert("payment-identifier".into(), svc_x402::extensions::payment_identifier());
        let route_schema = match self.offered {
            Offered::Route { route, .. } => self.state.challenges.bazaar(route, schemas),
            Offered::Agent { .. } | Offered::TopUp { .. } => None,
        };
        let query = self.resource.split_once('?').map_or(0, |(_, query)| query.len());
        let bazaar = self.offered.bazaar(route_schema, schemas, self.body.map_or(0, <[u8]>::len), query);
        if let Some(bazaar) = bazaar {
            extensions.insert("bazaar".into(), bazaar);
        }
        // A payment echoes the sign-in offer of the challenge it paid, made in an earlier
        // minute perhaps: only the challenge carries it, and echoes of it are not compared.
        if matches!(schemas, Schemas::Included) && self.offered.discountable() {
            let networks = self.state.paywall.offer().networks();
            let chains: Vec<&str> =
                networks.iter().map(|n| n.network.as_str()).filter(|n| n.starts_with("eip155:")).collect();
            if !chains.is_empty() {
                let now = self.state.clock.now_ms();
                let offer = svc_accounts::siwx::advertised(&self.state.config.sign_in, &self.url(), &chains, now);
                extensions.insert(svc_accounts::siwx::SIGN_IN_WITH_X.into(), offer);
            }
        }
        extensions
    }

    /// The absolute URL being paid for: the public base URL and the resource.
    pub(crate) fn url(&self) -> String {
        self.state.config.url(self.resource)
    }

    /// The challenge as x402 defines it, asking for `accepts` and saying `error`: the value a
    /// 402 carries, and the one an MCP tool would answer with.
    pub(crate) fn payment_required(&self, accepts: &[PaymentRequirements], error: &str) -> PaymentRequired {
        PaymentRequired {
            x402_version: X402_VERSION,
            error: Some(error.to_owned()),
            resource: ResourceInfo {
                url: self.url(),
                description: self.offered.description().into_owned(),
                mime_type: "application/json".to_owned(),
            },
            accepts: accepts.to_vec(),
            extensions: Some(self.extensions(Schemas::Included)),
        }
    }

    /// The challenge's JSON and its base64 `PAYMENT-REQUIRED` header value.
    pub(crate) fn encoded(
        &self,
        accepts: &[PaymentRequirements],
        error: &str,
    ) -> Result<(Bytes, HeaderValue), ApiError> {
        let challenge = self.payment_required(accepts, error);
        let body = serde_json::to_vec(&challenge).map_err(|e| ApiError::Internal(format!("encode challenge: {e}")))?;
        let header = HeaderValue::from_str(&svc_x402::codec::encode_bytes(&body))
            .map_err(|e| ApiError::Internal(format!("challenge header: {e}")))?;
        Ok((Bytes::from(body), header))
    }

    /// The extensions a v2 payment must echo unchanged, when it echoes any.
    pub(crate) fn advertised(&self, payment: &DecodedPayment) -> Option<Map<String, Value>> {
        svc_paywall::echoes_extensions(payment).then(|| self.extensions(Schemas::Omitted))
    }

    /// Charges `payment` this challenge's price for `work`, recorded as `product`; a payment
    /// that rewrote the extensions it echoes is refused before anything is verified.
    pub(crate) async fn charge<A, W, Fut>(
        &self,
        product: &str,
        payment: &DecodedPayment,
        work: W,
    ) -> Result<Outcome<A, ApiError>, ApiError>
    where
        W: FnOnce(Buyer) -> Fut,
        Fut: Future<Output = Result<Sold<A>, ApiError>>,
    {
        let advertised = self.advertised(payment);
        let discountable = self.offered.discountable();
        let sale = Sale { product, price: self.price, discountable, advertised: advertised.as_ref() };
        Ok(self.state.paywall.charge(sale, payment, work).await?)
    }
}

/// The two headers a payment may come in, named once: a lookup by `&str` parses the name
/// first, on every request.
static PAYMENT_SIGNATURE_HEADER: HeaderName = HeaderName::from_static(PAYMENT_SIGNATURE);
static X_PAYMENT_HEADER: HeaderName = HeaderName::from_static(X_PAYMENT);
/// The header a payer proves its wallet in before it pays.
static SIGN_IN_WITH_X_HEADER: HeaderName = HeaderName::from_static(svc_accounts::siwx::SIGN_IN_WITH_X);

/// A settlement as the `PAYMENT-RESPONSE` header carries it.
pub(crate) fn payment_response_header(receipt: &SettleResponse) -> Option<HeaderValue> {
    HeaderValue::from_str(&svc_x402::encode_header(receipt)).ok()
}

/// The handler's answer with the settlement attached.
fn paid(body: impl Into<Answer>, payment_response: Option<HeaderValue>) -> Response {
    let mut response = json_response(body);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    if let Some(value) = payment_response {
        headers.insert(PAYMENT_RESPONSE, value);
    }
    response
}
