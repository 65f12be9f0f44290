//! The paywall of every `/api/x402/*` route: challenge, match, verify, reserve, serve, settle.
//!
//! A payment is charged at most once and only for a successful answer: the store's unique key
//! on (network, payer, nonce) admits one request per authorization across replicas; a handler
//! failure releases the reservation (the same signed payment can be retried); settlement runs
//! only after the handler succeeded, and a failed settlement withholds the answer.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value};
use svc_catalogue::{Catalogue, RouteSpec, ValidInput};
use svc_domain::{DiscountTier, Money};
use svc_store::{NewPayment, PaymentRecord, PaymentStatus, Reservation};
use svc_x402::codec::{Choice, DecodedPayment};
use svc_x402::facilitator::PaymentRequest;
use svc_x402::{
    Facilitator, FacilitatorError, Offer, PAYMENT_REQUIRED, PAYMENT_RESPONSE, PAYMENT_SIGNATURE, PaymentRequired,
    PaymentRequirements, ResourceInfo, SETTLEMENT_PENDING, SettleResponse, Settled, X_PAYMENT, X402_VERSION,
};

use crate::error::{ApiError, error_body};
use crate::handlers::{Answer, Caller};
use crate::pipeline::json_response;
use crate::state::AppState;

/// What the paywall needs: the networks offered, who verifies and settles, and each route's
/// precomputed `bazaar` schema.
pub struct Payments {
    /// Networks and recipients.
    pub offer: Offer,
    /// Verifies and settles.
    pub facilitator: Arc<dyn Facilitator>,
    bazaar: HashMap<&'static str, Value>,
    saves: std::sync::atomic::AtomicU64,
    challenges: ChallengeCache,
}

impl std::fmt::Debug for Payments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payments").field("offer", &self.offer).field("facilitator", &self.facilitator).finish()
    }
}

impl Payments {
    /// Payments over `offer`, checked by `facilitator`.
    pub fn new(offer: Offer, facilitator: Arc<dyn Facilitator>, catalogue: &Catalogue) -> Self {
        let bazaar = catalogue
            .routes()
            .iter()
            .filter(|r| r.is_paid())
            .map(|r| (r.id, svc_catalogue::discovery::bazaar_schema(r)))
            .collect();
        Payments {
            offer,
            facilitator,
            bazaar,
            saves: std::sync::atomic::AtomicU64::new(0),
            challenges: ChallengeCache::default(),
        }
    }
}

/// Serves a paid route.
pub async fn serve(
    state: &AppState,
    route: &'static RouteSpec,
    parts: &Parts,
    body: Option<&[u8]>,
    input: ValidInput,
) -> Response {
    let list_price = route.price.price(input.price_units());
    let header = payment_header(&parts.headers);
    if let Some(header) = header.filter(|h| h.len() > svc_x402::codec::MAX_HEADER_BYTES) {
        let bytes = header.len();
        return ApiError::PaymentHeaderTooLarge { bytes, limit: svc_x402::codec::MAX_HEADER_BYTES }.into_response();
    }
    let Some(payment) = header.and_then(|h| svc_x402::decode_payment(h.as_bytes())) else {
        let mut response = Challenge { state, route, parts, body, price: list_price, input: &input }.unpaid();
        if header.is_some() {
            // A payment header that is not a payment: refused like any invalid payment.
            response.extensions_mut().insert(PaymentRefused);
        }
        return response;
    };
    // The paid path's future is large (verification, store, handler, settlement): boxed, so
    // the futures of every unpaid request, most of the traffic, stay small and cheap to move.
    Box::pin(serve_paid(state, route, parts, body, input, list_price, payment)).await
}

/// Serves a request that carries a decodable payment.
async fn serve_paid(
    state: &AppState,
    route: &'static RouteSpec,
    parts: &Parts,
    body: Option<&[u8]>,
    input: ValidInput,
    list_price: Money,
    payment: DecodedPayment,
) -> Response {
    let challenge = Challenge { state, route, parts, body, price: list_price, input: &input };
    let offered = state.payments.offer.requirements(list_price);
    let Some(replay) = ReplayKey::of(&payment) else {
        return challenge.respond(&offered, "invalid_payload");
    };
    let payment_id = match PaymentId::of(&payment) {
        Ok(id) => id,
        Err(why) => return challenge.respond(&offered, why),
    };
    // Only computed for payments that ask for their answer to be kept.
    let digest = payment_id.as_ref().map(|_| payment.payload_digest()).unwrap_or_default();
    if let Some(id) = &payment_id {
        match answer_again(state, route, id, &replay, payment.network(), &digest).await {
            Ok(Some(response)) => return response,
            Ok(None) => {}
            Err(err) => return err.into_response(),
        }
    }

    let requirement = match svc_x402::find_match(&offered, &payment.choice) {
        Some(i) => offered[i].clone(),
        None if !route.billed_as_data => return challenge.respond(&offered, "No matching payment requirements"),
        None => match discounted_match(state, &replay.payer, list_price, &payment).await {
            Ok(Some(requirement)) => requirement,
            Ok(None) => return challenge.respond(&offered, "No matching payment requirements"),
            Err(err) => return err.into_response(),
        },
    };

    // A v2 client echoes the challenge's extensions; one that rewrote them is refused before
    // anything is verified (§9.6).
    if let Some(echoed) = payment.extensions.as_ref().filter(|e| payment.version == 2 && !e.is_empty())
        && let Some(key) = svc_x402::extensions::echo_mismatch(&challenge.extensions(Schemas::Omitted), echoed)
    {
        tracing::debug!(extension = key, "payment echoes an extension that contradicts the challenge");
        return challenge.respond(&offered, svc_x402::extensions::ECHO_MISMATCH);
    }

    let message = payment.as_v2(&requirement);
    let request = PaymentRequest { payment: message.as_ref(), requirements: &requirement };
    let facilitator = &state.payments.facilitator;
    let verified = match facilitator.verify(request).await {
        Ok(verified) => verified,
        Err(FacilitatorError::Unavailable(cause)) => return facilitator_down(&cause),
        Err(err) if err.reason() == NONCE_USED => {
            // Spent on chain: perhaps by us, for an answer we withheld while the transfer was
            // unconfirmed. That payment is owed its answer; any other is a replay.
            let earlier = state.store.payment_by_key(&requirement.network, &replay.payer, &replay.nonce).await;
            return match earlier {
                Ok(Some(earlier)) if is_withheld(&earlier) => {
                    match challenge.claim_withheld(&earlier, &offered).await {
                        Ok(()) => serve_withheld(state, route, input, &earlier, payment.version).await,
                        Err(refused) => refused,
                    }
                }
                Ok(_) => challenge.respond(&offered, err.reason()),
                Err(store_err) => ApiError::from(store_err).into_response(),
            };
        }
        Err(err) => return challenge.respond(&offered, err.reason()),
    };

    let amount = requirement.amount.parse::<u64>().unwrap_or(0);
    let now_ms = state.clock.now_ms();
    let id = uuid::Uuid::now_v7().to_string();
    let reservation = NewPayment {
        id: id.clone(),
        route_id: route.id.to_owned(),
        network: requirement.network.clone(),
        payer: replay.payer.clone(),
        nonce: replay.nonce.clone(),
        amount,
        asset: requirement.asset.clone(),
        pay_to: requirement.pay_to.clone(),
        valid_before: payment
            .valid_before(u64::try_from(now_ms / 1000).unwrap_or(0))
            .and_then(|v| i64::try_from(v).ok()),
        now_ms,
    };
    match state.store.reserve_payment(&reservation).await {
        Ok(Reservation::Reserved) => {}
        Ok(Reservation::Duplicate(earlier)) if is_withheld(&earlier) => {
            return match challenge.claim_withheld(&earlier, &offered).await {
                Ok(()) => serve_withheld(state, route, input, &earlier, payment.version).await,
                Err(refused) => refused,
            };
        }
        Ok(Reservation::Duplicate(earlier)) => {
            let why = match earlier.status {
                PaymentStatus::Reserved => "payment_in_progress: this authorization is paying for another request",
                PaymentStatus::Pending => {
                    "payment_pending: the transfer of this payment was sent and is not confirmed yet; \
                     send the same payment again in a minute to get the answer"
                }
                _ => "payment_already_used: this authorization was already spent; sign a new one",
            };
            return challenge.respond(&offered, why);
        }
        Err(err) => return ApiError::from(err).into_response(),
    }

    let caller = Caller {
        payer: Some(svc_x402::codec::payer_key(&verified.payer)),
        payment: Some(format!("{}:{}:{}", requirement.network, replay.payer, replay.nonce)),
        ..Caller::default()
    };
    let body = match state.handlers.call_as(route.id, state.clone(), caller, input).await {
        Ok(body) => body,
        Err(err) => {
            // Nothing was charged; free the authorization so the same payment can be retried.
            if let Err(store_err) = state.store.release_payment(&id).await {
                tracing::error!(payment = %id, error = %store_err, "could not release a reservation");
            }
            return err.into_response();
        }
    };

    if let Some(transaction) = facilitator.transaction_id(request)
        && let Err(err) = state.store.note_transaction(&id, &transaction).await
    {
        // Unrecorded, a crash after sending would lose track of the transfer: send nothing.
        if let Err(store_err) = state.store.release_payment(&id).await {
            tracing::error!(payment = %id, error = %store_err, "could not release a reservation");
        }
        return ApiError::from(err).into_response();
    }
    let outcome = facilitator.settle(request).await;
    let finished_ms = state.clock.now_ms();
    let (status, tx, error, response) = match outcome {
        Ok(settled) => {
            let (status, payer, transaction) = match settled {
                Settled::OnChain { payer, transaction } => (PaymentStatus::Settled, payer, transaction),
                Settled::VerifyOnly { payer } => (PaymentStatus::Unsettled, payer, String::new()),
            };
            // What the payment bought is delivered before the answer that says so.
            if let Err(err) = state.handlers.settled(route.id, state.clone(), &body).await {
                tracing::error!(payment = %id, route = route.id, error = %err, "could not deliver a settled purchase");
            }
            let reply = settle_response(true, None, Some(payer), transaction.clone(), &requirement.network);
            if let Some(id) = &payment_id {
                let paid_with = PaidWith { replay: &replay, network: &requirement.network, digest: &digest };
                keep_answer(state, id, paid_with, &body.json, &reply, finished_ms).await;
            }
            (status, Some(transaction).filter(|t| !t.is_empty()), None, paid(body, &reply))
        }
        Err(err) => {
            let transaction = match &err {
                FacilitatorError::SettleFailed { transaction, .. } => transaction.clone(),
                _ => None,
            };
            tracing::warn!(payment = %id, route = route.id, reason = err.reason(), "settlement failed: {err}");
            let reply = settle_response(
                false,
                Some(err.reason().to_owned()),
                Some(verified.payer.clone()),
                transaction.clone().unwrap_or_default(),
                &requirement.network,
            );
            // Maybe sent: it may still land, so it is pending (the reconciler asks the chain),
            // never failed; if it lands, the same payment gets the answer.
            let status = if err.may_have_moved() { PaymentStatus::Pending } else { PaymentStatus::Failed };
            (status, transaction, Some(err.reason().to_owned()), settlement_failed(&err, &reply))
        }
    };
    match state.store.finish_payment(&id, status, tx.as_deref(), error.as_deref(), finished_ms).await {
        Ok(true) => {}
        Ok(false) => tracing::error!(payment = %id, "payment was not reserved when it finished"),
        // The funds moved (or not) regardless; the answer stands, the record is repaired by hand.
        Err(err) => tracing::error!(payment = %id, status = %status, error = %err, "could not record a payment"),
    }
    let mut response = response;
    if payment.version == 1 {
        // v1 clients read the settlement from X-PAYMENT-RESPONSE.
        if let Some(value) = response.headers().get(PAYMENT_RESPONSE).cloned() {
            response.headers_mut().insert(X_PAYMENT_RESPONSE, value);
        }
    }
    response
}

/// The verify outcome of an EIP-3009 authorization the token has already consumed.
const NONCE_USED: &str = "invalid_exact_evm_nonce_already_used";

/// A payment that settled after its answer was withheld.
fn is_withheld(record: &PaymentRecord) -> bool {
    record.status == PaymentStatus::Settled && record.error.as_deref() == Some(svc_store::ANSWER_WITHHELD)
}

/// Serves a claimed withheld answer. A failing handler gives the claim back, so the answer
/// stays owed and the same payment can be sent again.
async fn serve_withheld(
    state: &AppState,
    route: &'static RouteSpec,
    input: ValidInput,
    earlier: &PaymentRecord,
    version: u8,
) -> Response {
    let caller = Caller {
        payer: Some(svc_x402::codec::payer_key(&earlier.payer)),
        payment: Some(format!("{}:{}:{}", earlier.network, earlier.payer, earlier.nonce)),
        ..Caller::default()
    };
    let body = match state.handlers.call_as(route.id, state.clone(), caller, input).await {
        Ok(body) => body,
        Err(err) => {
            if let Err(store_err) = state.store.restore_withheld_answer(&earlier.id, state.clock.now_ms()).await {
                tracing::error!(payment = %earlier.id, error = %store_err, "could not give back a withheld answer");
            }
            return err.into_response();
        }
    };
    if let Err(err) = state.handlers.settled(route.id, state.clone(), &body).await {
        tracing::error!(payment = %earlier.id, route = route.id, error = %err, "could not deliver a settled purchase");
    }
    tracing::info!(payment = %earlier.id, route = route.id, "served an answer withheld while its transfer was pending");
    let transaction = earlier.tx_hash.clone().unwrap_or_default();
    let reply = settle_response(true, None, Some(earlier.payer.clone()), transaction, &earlier.network);
    let mut response = paid(body, &reply);
    if version == 1
        && let Some(value) = response.headers().get(PAYMENT_RESPONSE).cloned()
    {
        response.headers_mut().insert(X_PAYMENT_RESPONSE, value);
    }
    response
}

/// Whether advertised extensions carry their schemas: a challenge does; the check of a
/// payment's echo compares only what they say (`info`), and copying a route's whole schema
/// for it would cost every paid call.
#[derive(Debug, Clone, Copy)]
enum Schemas {
    Included,
    Omitted,
}

/// The v1 name of the settlement header.
const X_PAYMENT_RESPONSE: &str = "x-payment-response";

/// The payer and nonce that identify one authorization.
struct ReplayKey {
    payer: String,
    nonce: String,
}

impl ReplayKey {
    fn of(payment: &DecodedPayment) -> Option<ReplayKey> {
        payment.replay_key().map(|(payer, nonce)| ReplayKey { payer, nonce })
    }
}

/// The requirement the payer's volume discount prices, if its choice matches it.
async fn discounted_match(
    state: &AppState,
    payer: &str,
    list_price: Money,
    payment: &DecodedPayment,
) -> Result<Option<PaymentRequirements>, ApiError> {
    // Only a v2 client states the amount it chose; a cheaper amount is worth one lookup.
    let Choice::Accepted(accepted) = &payment.choice else { return Ok(None) };
    if accepted.amount.parse::<u64>().map_or(true, |a| a >= list_price.atomic()) {
        return Ok(None);
    }
    let tier = payer_tier(state, payer).await?;
    if tier == DiscountTier::Standard {
        return Ok(None);
    }
    let offered = state.payments.offer.requirements(tier.apply(list_price));
    Ok(svc_x402::find_match(&offered, &payment.choice).map(|i| offered[i].clone()))
}

/// A payer's successful paid calls in the trailing discount window.
pub async fn paid_calls(state: &AppState, payer: &str) -> Result<u64, ApiError> {
    let since = state.clock.now_ms() - svc_domain::discount::DISCOUNT_WINDOW_MS;
    Ok(state.store.count_settled_payments_since(&svc_x402::codec::payer_key(payer), since).await?)
}

/// A payer's discount tier.
pub async fn payer_tier(state: &AppState, payer: &str) -> Result<DiscountTier, ApiError> {
    Ok(DiscountTier::for_calls(paid_calls(state, payer).await?))
}

/// Builds 402 challenges for one request.
struct Challenge<'a> {
    state: &'a AppState,
    route: &'static RouteSpec,
    parts: &'a Parts,
    body: Option<&'a [u8]>,
    price: Money,
    input: &'a ValidInput,
}

/// Challenges to unpaid requests, by everything they are built from: most unpaid traffic is
/// agents discovering the same few routes, and the answer is a pure function of the route,
/// the price, the host, the URL and the body. Looked up without allocating.
#[derive(Default)]
pub(crate) struct ChallengeCache {
    entries: std::sync::Mutex<HashMap<u64, Vec<Cached>>>,
    len: std::sync::atomic::AtomicUsize,
}

/// A built challenge: its key, its JSON body and its `PAYMENT-REQUIRED` header.
type Cached = (OwnedKey, (Bytes, HeaderValue));

/// What a cached challenge depends on, borrowed from the request.
#[derive(Hash)]
struct ChallengeKey<'a> {
    route: &'static str,
    price: u64,
    host: &'a [u8],
    uri: &'a str,
    body: &'a [u8],
}

/// A [`ChallengeKey`] kept in the cache.
struct OwnedKey {
    route: &'static str,
    price: u64,
    host: Vec<u8>,
    uri: String,
    body: Vec<u8>,
}

impl OwnedKey {
    fn is(&self, key: &ChallengeKey<'_>) -> bool {
        self.route == key.route
            && self.price == key.price
            && self.host == key.host
            && self.uri == key.uri
            && self.body == key.body
    }
}

impl ChallengeCache {
    /// Entries kept before the cache starts over; bounds memory against clients that vary
    /// their query strings.
    const CAPACITY: usize = 4096;
    /// Bodies larger than this are not cached (the key holds the body).
    const MAX_BODY: usize = 2048;

    fn hash(key: &ChallengeKey<'_>) -> u64 {
        use std::hash::BuildHasher as _;
        // A fast hash with fixed keys: the cache is local and bounded, so flooding it only
        // costs a rebuild.
        foldhash::fast::FixedState::with_seed(0x5eed).hash_one(key)
    }

    fn get(&self, key: &ChallengeKey<'_>) -> Option<(Bytes, HeaderValue)> {
        let entries = self.entries.lock().ok()?;
        entries.get(&Self::hash(key))?.iter().find(|(k, _)| k.is(key)).map(|(_, v)| v.clone())
    }

    fn put(&self, key: &ChallengeKey<'_>, value: (Bytes, HeaderValue)) {
        use std::sync::atomic::Ordering;
        let Ok(mut entries) = self.entries.lock() else { return };
        if self.len.load(Ordering::Relaxed) >= Self::CAPACITY {
            entries.clear();
            self.len.store(0, Ordering::Relaxed);
        }
        let owned = OwnedKey {
            route: key.route,
            price: key.price,
            host: key.host.to_vec(),
            uri: key.uri.to_owned(),
            body: key.body.to_vec(),
        };
        entries.entry(Self::hash(key)).or_default().push((owned, value));
        self.len.fetch_add(1, Ordering::Relaxed);
    }
}

impl Challenge<'_> {
    /// The challenge to a request that carried no usable payment, from the cache when seen.
    fn unpaid(&self) -> Response {
        let body = self.body.unwrap_or_default();
        let build = || self.build(&self.state.payments.offer.requirements(self.price), "Payment required");
        if body.len() > ChallengeCache::MAX_BODY {
            return match build() {
                Ok((bytes, header)) => challenge_response(bytes, Some(header)),
                Err(err) => err.into_response(),
            };
        }
        let key = ChallengeKey {
            route: self.route.id,
            price: self.price.atomic(),
            host: self.parts.headers.get(header::HOST).map(|h| h.as_bytes()).unwrap_or_default(),
            uri: self.parts.uri.path_and_query().map_or("", |pq| pq.as_str()),
            body,
        };
        let cache = &self.state.payments.challenges;
        if let Some(hit) = cache.get(&key) {
            return challenge_response(hit.0, Some(hit.1));
        }
        match build() {
            Ok((bytes, header)) => {
                cache.put(&key, (bytes.clone(), header.clone()));
                challenge_response(bytes, Some(header))
            }
            Err(err) => err.into_response(),
        }
    }

    fn respond(&self, accepts: &[PaymentRequirements], error: &str) -> Response {
        let mut response = match self.build(accepts, error) {
            Ok((body, header)) => challenge_response(body, Some(header)),
            Err(err) => err.into_response(),
        };
        response.extensions_mut().insert(PaymentRefused);
        response
    }

    /// The challenge's JSON and its base64 header value.
    /// Takes the one answer a payment settled after withholding is owed, for the route it
    /// paid; the refusal is a 402 naming why.
    async fn claim_withheld(&self, earlier: &PaymentRecord, offered: &[PaymentRequirements]) -> Result<(), Response> {
        if earlier.route_id != self.route.id {
            return Err(self.respond(offered, "payment_already_used: this authorization paid for another route"));
        }
        match self.state.store.claim_withheld_answer(&earlier.id, self.state.clock.now_ms()).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.respond(offered, "payment_already_used: this authorization was already spent")),
            Err(err) => Err(ApiError::from(err).into_response()),
        }
    }

    /// The extensions this request's challenge advertises.
    fn extensions(&self, schemas: Schemas) -> Map<String, Value> {
        let mut extensions = Map::new();
        extensions.insert("payment-identifier".into(), payment_identifier_extension());
        if let Some(schema) = self.state.payments.bazaar.get(self.route.id) {
            let schema = match schemas {
                Schemas::Included => schema,
                Schemas::Omitted => &Value::Null,
            };
            extensions.insert(
                "bazaar".into(),
                svc_catalogue::discovery::bazaar_extension(self.route, schema, self.input.echo()),
            );
        }
        extensions
    }

    fn build(&self, accepts: &[PaymentRequirements], error: &str) -> Result<(Bytes, HeaderValue), ApiError> {
        let extensions = self.extensions(Schemas::Included);
        let challenge = PaymentRequired {
            x402_version: X402_VERSION,
            error: Some(error.to_owned()),
            resource: ResourceInfo {
                url: resource_url(self.state, self.parts),
                description: self.route.description.to_owned(),
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

/// Marks the answer to a payment that was refused before it verified (undecodable as a
/// payment of ours, unmatched, badly signed, replayed): whatever payer it names is unproven,
/// so the rate limiter counts it like an unpaid request and it earns no held slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PaymentRefused;

/// A 402 with a challenge: JSON body, base64 header, never cached by intermediaries.
fn challenge_response(body: Bytes, header: Option<HeaderValue>) -> Response {
    let mut response = crate::pipeline::response_with_room(StatusCode::PAYMENT_REQUIRED, body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(value) = header {
        headers.insert(PAYMENT_REQUIRED_HEADER, value);
    }
    response
}

/// `PAYMENT-REQUIRED`, named once rather than parsed on every challenge.
const PAYMENT_REQUIRED_HEADER: HeaderName = HeaderName::from_static(PAYMENT_REQUIRED);
/// The two headers a payment may come in, named once: a lookup by `&str` parses the name
/// first, on every request.
static PAYMENT_SIGNATURE_HEADER: HeaderName = HeaderName::from_static(PAYMENT_SIGNATURE);
static X_PAYMENT_HEADER: HeaderName = HeaderName::from_static(X_PAYMENT);

/// The request's payment header: `PAYMENT-SIGNATURE` (v2), else `X-PAYMENT` (v1, and v2
/// payloads from clients that kept the old header).
pub(crate) fn payment_header(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers.get(&PAYMENT_SIGNATURE_HEADER).or_else(|| headers.get(&X_PAYMENT_HEADER))
}

/// The URL being paid for, query included: the public base URL when configured, else the
/// request's own host.
fn resource_url(state: &AppState, parts: &Parts) -> String {
    let base = crate::ops::base_url(state, &parts.headers);
    let path_and_query = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    format!("{}{path_and_query}", base.trim_end_matches('/'))
}

fn settle_response(
    success: bool,
    error_reason: Option<String>,
    payer: Option<String>,
    transaction: String,
    network: &str,
) -> SettleResponse {
    SettleResponse { success, error_reason, error_message: None, payer, transaction, network: network.to_owned() }
}

fn payment_response_header(reply: &SettleResponse) -> Option<HeaderValue> {
    HeaderValue::from_str(&svc_x402::encode_header(reply)).ok()
}

/// The handler's answer with the settlement attached.
fn paid(body: impl Into<Answer>, reply: &SettleResponse) -> Response {
    paid_with_header(body, payment_response_header(reply))
}

fn paid_with_header(body: impl Into<Answer>, payment_response: Option<HeaderValue>) -> Response {
    let mut response = json_response(body);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    if let Some(value) = payment_response {
        headers.insert(PAYMENT_RESPONSE, value);
    }
    response
}

/// How long an answer stays retrievable by its payment id (the extension asks for at least
/// ten minutes).
pub const ANSWER_KEPT_MS: i64 = 60 * 60 * 1000;

/// The `payment-identifier` extension as the challenge declares it: optional, so clients
/// that do not know it pay as usual.
pub fn payment_identifier_extension() -> Value {
    serde_json::json!({
        "info": {"required": false},
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "required": {"type": "boolean"},
                "id": {"type": "string", "minLength": 16, "maxLength": 128, "pattern": "^[a-zA-Z0-9_-]+$"},
            },
            "required": ["required"],
        },
    })
}

/// The client's payment id, when it sent one.
struct PaymentId;

impl PaymentId {
    fn of(payment: &DecodedPayment) -> Result<Option<String>, &'static str> {
        let Some(id) = payment
            .extensions
            .as_ref()
            .and_then(|e| e.get("payment-identifier"))
            .and_then(|ext| ext.get("info"))
            .and_then(|info| info.get("id"))
        else {
            return Ok(None);
        };
        let valid = id.as_str().filter(|id| {
            (16..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        match valid {
            Some(id) => Ok(Some(id.to_owned())),
            None => Err("invalid_payment_identifier: the id must be 16-128 characters of A-Z a-z 0-9 _ -"),
        }
    }
}

/// A retry of a call already answered: the same answer again, without a second charge. The
/// same id with another payment, or the same payment sent to another route, is a client bug,
/// answered 409: an answer is only ever given again for the call it paid for, and only to the
/// very payment that bought it, signature included (its payer and nonce are public once it
/// settles, and are not enough).
async fn answer_again(
    state: &AppState,
    route: &RouteSpec,
    id: &str,
    replay: &ReplayKey,
    network: &str,
    digest: &str,
) -> Result<Option<Response>, ApiError> {
    let since = state.clock.now_ms() - ANSWER_KEPT_MS;
    let Some(kept) = state.store.paid_response(id, since).await? else { return Ok(None) };
    let same_payment = kept.network == network
        && kept.payer == replay.payer
        && kept.nonce == replay.nonce
        && !kept.payload_digest.is_empty()
        && kept.payload_digest == digest;
    let same_route = same_payment
        && state
            .store
            .payment_by_key(network, &replay.payer, &replay.nonce)
            .await?
            .is_some_and(|paid| paid.route_id == route.id);
    if !same_route {
        let body = error_body(
            "This payment id was used with a different payment; use a new id for a new payment.",
            "payment_id_conflict",
            Map::new(),
        );
        return Ok(Some((StatusCode::CONFLICT, axum::Json(body)).into_response()));
    }
    Ok(Some(paid_with_header(Bytes::from(kept.body), HeaderValue::from_str(&kept.payment_response).ok())))
}

/// The payment an answer is kept for.
struct PaidWith<'a> {
    replay: &'a ReplayKey,
    network: &'a str,
    /// [`DecodedPayment::payload_digest`].
    digest: &'a str,
}

async fn keep_answer(
    state: &AppState,
    id: &str,
    paid_with: PaidWith<'_>,
    body: &Bytes,
    reply: &SettleResponse,
    now_ms: i64,
) {
    let kept = svc_store::PaidResponse {
        payment_id: id.to_owned(),
        network: paid_with.network.to_owned(),
        payer: paid_with.replay.payer.clone(),
        nonce: paid_with.replay.nonce.clone(),
        payload_digest: paid_with.digest.to_owned(),
        body: body.to_vec(),
        payment_response: svc_x402::encode_header(reply),
        created_at: now_ms,
    };
    if let Err(err) = state.store.save_paid_response(&kept).await {
        tracing::warn!(payment_id = id, error = %err, "could not keep a paid answer for retries");
    }
    if state.payments.saves.fetch_add(1, std::sync::atomic::Ordering::Relaxed).is_multiple_of(64)
        && let Err(err) = state.store.prune_paid_responses(now_ms - ANSWER_KEPT_MS).await
    {
        tracing::warn!(error = %err, "could not prune kept answers");
    }
}

/// Settlement failed after the handler ran: the answer is withheld and nothing was charged
/// (or, if a transaction is named, it may still land and the record says so).
fn settlement_failed(err: &FacilitatorError, reply: &SettleResponse) -> Response {
    let mut extra = Map::new();
    extra.insert("reason".into(), Value::from(err.reason()));
    let body = if err.may_have_moved() {
        // The transfer may still land: a new authorization could pay twice.
        error_body(
            "The transfer was sent but is not confirmed yet, so the answer is withheld. Do not sign a new \
             payment: send this same payment again in a minute. If the transfer landed you get the answer; if \
             it failed, nothing was taken.",
            SETTLEMENT_PENDING,
            extra,
        )
    } else {
        error_body(
            "Settlement failed, so the answer was withheld; the payment was not taken. Retry with a new authorization.",
            "settlement_failed",
            extra,
        )
    };
    let mut response = (StatusCode::PAYMENT_REQUIRED, axum::Json(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(value) = payment_response_header(reply) {
        headers.insert(PAYMENT_RESPONSE, value);
    }
    response
}

fn facilitator_down(cause: &str) -> Response {
    tracing::error!(error.cause = %cause, "facilitator unavailable");
    let body = error_body(
        "The payment could not be verified right now; nothing was charged. Retry shortly.",
        "facilitator_unavailable",
        Map::new(),
    );
    (StatusCode::BAD_GATEWAY, axum::Json(body)).into_response()
}
