//! The x402 channel of every `/api/x402/*` route: read the payment header once, challenge a
//! request that carries no payment, and have the [`Paywall`](svc_paywall::Paywall) charge one
//! that does for the route's handler.

use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Map, Value};
use svc_catalogue::ValidInput;
use svc_catalogue::challenge::{Offered, Schemas};
use svc_domain::Money;
use svc_paywall::{Buyer, Outcome, Sale, Sold};
use svc_x402::codec::{DecodedPayment, Presented};
use svc_x402::{
    PAYMENT_RESPONSE, PAYMENT_SIGNATURE, PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse, X_PAYMENT,
    X402_VERSION,
};

use crate::answer::Answer;
use crate::answer::json_response;
use crate::call::Call;
use crate::challenge::{ChallengeCache, ChallengeKey};
use crate::error::ApiError;
use crate::handlers::Caller;
use crate::state::AppState;

/// Reads the request's payment header: `PAYMENT-SIGNATURE` (v2), else `X-PAYMENT` (v1, and v2
/// payloads from clients that kept the old header).
pub(crate) fn presented(headers: &HeaderMap) -> Presented {
    let header = headers.get(&PAYMENT_SIGNATURE_HEADER).or_else(|| headers.get(&X_PAYMENT_HEADER));
    Presented::read(header.map(HeaderValue::as_bytes))
}

/// Serves a paid route.
pub(crate) async fn serve(
    call: Call<'_>,
    body: Option<&[u8]>,
    input: ValidInput,
    presented: Presented,
) -> Result<Response, ApiError> {
    let Call { state, route, parts, .. } = call;
    let price = route.price.price(input.price_units());
    let challenge =
        |price| Challenge { state, offered: Offered::Route { route, echo: input.echo() }, parts, body, price };
    let payment = match presented {
        Presented::Payment(payment) => payment,
        Presented::TooLarge(bytes) => {
            return Err(ApiError::PaymentHeaderTooLarge { bytes, limit: svc_x402::codec::MAX_HEADER_BYTES });
        }
        // A payment header that is not a payment: refused like any invalid payment.
        Presented::Junk => return Err(challenge(price).unpaid(true)),
        Presented::Nothing => {
            let signed_in = parts.headers.get(&SIGN_IN_WITH_X_HEADER).filter(|_| route.billed_as_data);
            let Some(proof) = signed_in else { return Err(challenge(price).unpaid(false)) };
            // A payer that proved its wallet is quoted its own price.
            let now = state.clock.now_ms();
            return Err(match svc_accounts::siwx::verify(&state.config.sign_in, proof.as_bytes(), now) {
                Ok(wallet) => challenge(state.paywall.payer_tier(&wallet).await?.apply(price)).unpaid(false),
                Err(refused) => {
                    let why = format!("{}: {refused}", svc_accounts::siwx::SIGN_IN_WITH_X);
                    challenge(price).with_error(&state.paywall.requirements(price), &why, false)
                }
            });
        }
    };
    // The paid path's future is large (verification, store, handler, settlement): boxed, so
    // the futures of every unpaid request, most of the traffic, stay small and cheap to move.
    Box::pin(serve_paid(call, body, input, price, &payment)).await
}

/// Serves a request that carries a decodable payment.
async fn serve_paid(
    call: Call<'_>,
    body: Option<&[u8]>,
    mut input: ValidInput,
    price: Money,
    payment: &DecodedPayment,
) -> Result<Response, ApiError> {
    let Call { state, handlers, route, parts } = call;
    // The handler takes the input; a refusal's challenge still echoes its fields.
    let echo = input.take_echo();
    let challenge = Challenge { state, offered: Offered::Route { route, echo: &echo }, parts, body, price };
    let advertised = svc_paywall::echoes_extensions(payment).then(|| challenge.extensions(Schemas::Omitted));
    let sale = Sale { product: route.id, price, discountable: route.billed_as_data, advertised: advertised.as_ref() };
    let work = |buyer: Buyer| async move {
        let delivering = buyer.payment.clone();
        let caller = Caller { payer: Some(buyer.payer), payment: Some(buyer.payment), ..Caller::default() };
        let answer = handlers.call_as(route.id, state.clone(), caller, input).await?;
        let then = handlers.delivery(route.id, state, &answer, delivering);
        Ok::<_, ApiError>(Sold { json: answer.json.clone(), answer, then })
    };
    let outcome = state.paywall.charge(sale, payment, work).await?;
    respond(outcome, &challenge)
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

/// Builds 402 challenges for one request.
pub(crate) struct Challenge<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) offered: Offered<'a>,
    pub(crate) parts: &'a Parts,
    pub(crate) body: Option<&'a [u8]>,
    pub(crate) price: Money,
}

impl Challenge<'_> {
    /// The challenge to a request that carried no usable payment, from the cache when seen;
    /// `junk` when it carried a header that is not a payment.
    pub(crate) fn unpaid(&self, junk: bool) -> ApiError {
        let built = self.cached().map(|(body, header)| ApiError::PaymentRequired { body, header, refused: junk });
        built.unwrap_or_else(|err| err)
    }

    fn cached(&self) -> Result<(Bytes, HeaderValue), ApiError> {
        let body = self.body.unwrap_or_default();
        let build = || self.build(&self.state.paywall.requirements(self.price), "Payment required");
        // Agents' challenges are built each time: their price and schema are the seller's to change.
        let Offered::Route { route, .. } = self.offered else { return build() };
        if body.len() > ChallengeCache::MAX_BODY {
            return build();
        }
        let key = ChallengeKey {
            route: route.id,
            price: self.price.atomic(),
            window: self.state.clock.now_ms().div_euclid(svc_accounts::siwx::WINDOW_MS),
            host: self.parts.headers.get(header::HOST).map(|h| h.as_bytes()).unwrap_or_default(),
            uri: self.parts.uri.path_and_query().map_or("", |pq| pq.as_str()),
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
        match self.build(accepts, why) {
            Ok((body, header)) => ApiError::PaymentRequired { body, header, refused },
            Err(err) => err,
        }
    }

    /// The extensions this request's challenge advertises.
    pub(crate) fn extensions(&self, schemas: Schemas) -> Map<String, Value> {
        let mut extensions = Map::new();
        extensions.insert("payment-identifier".into(), svc_x402::extensions::payment_identifier());
        let route_schema = match self.offered {
            Offered::Route { route, .. } => self.state.challenges.bazaar(route, schemas),
            Offered::Agent { .. } => None,
        };
        let (body, query) = (self.body.map_or(0, <[u8]>::len), self.parts.uri.query().map_or(0, str::len));
        let bazaar = self.offered.bazaar(route_schema, schemas, body, query);
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
                let site = self.state.config.sign_in.site().uri();
                let path = self.parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
                let resource = format!("{}{path}", site.trim_end_matches('/'));
                let now = self.state.clock.now_ms();
                let offer = svc_accounts::siwx::advertised(&self.state.config.sign_in, &resource, &chains, now);
                extensions.insert(svc_accounts::siwx::SIGN_IN_WITH_X.into(), offer);
            }
        }
        extensions
    }

    /// The challenge's JSON and its base64 header value.
    fn build(&self, accepts: &[PaymentRequirements], error: &str) -> Result<(Bytes, HeaderValue), ApiError> {
        let extensions = self.extensions(Schemas::Included);
        let challenge = PaymentRequired {
            x402_version: X402_VERSION,
            error: Some(error.to_owned()),
            resource: ResourceInfo {
                url: resource_url(self.state, self.parts),
                description: self.offered.description().to_owned(),
                mime_type: "application/json".to_owned(),
            },
            accepts: accepts.to_vec(),
            extensions: Some(extensions),
        };
        let body = serde_json::to_vec(&challenge).map_err(|e| ApiError::Internal(format!("encode challenge: {e}")))?;
        let header = HeaderValue::from_str(&svc_x402::codec::encode_bytes(&body))
            .map_err(|e| ApiError::Internal(format!("challenge header: {e}")))?;
        Ok((Bytes::from(body), header))
    }
}

/// The two headers a payment may come in, named once: a lookup by `&str` parses the name
/// first, on every request.
static PAYMENT_SIGNATURE_HEADER: HeaderName = HeaderName::from_static(PAYMENT_SIGNATURE);
static X_PAYMENT_HEADER: HeaderName = HeaderName::from_static(X_PAYMENT);
/// The header a payer proves its wallet in before it pays.
static SIGN_IN_WITH_X_HEADER: HeaderName = HeaderName::from_static(svc_accounts::siwx::SIGN_IN_WITH_X);

/// The URL being paid for, query included: the public base URL when configured, else the
/// request's own host.
fn resource_url(state: &AppState, parts: &Parts) -> String {
    let base = state.config.base_url(&parts.headers);
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    format!("{}{path_and_query}", base.trim_end_matches('/'))
}

/// A settlement as the `PAYMENT-RESPONSE` header carries it.
fn payment_response_header(receipt: &SettleResponse) -> Option<HeaderValue> {
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
