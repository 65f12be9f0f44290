//! What routes answer with: JSON bodies (encoded ahead of time where they can be), and the
//! responses that carry them.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use svc_catalogue::routes::signals::{ExodusResponse, TopPicksLiteResponse, TopPicksResponse};
use svc_signals::Snapshot;

/// A handler's 200 body, with its gzip form when the answer was encoded ahead of time: a
/// client that accepts gzip then gets a fraction of the bytes at no cost per request.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The JSON body.
    pub json: Bytes,
    /// The same body gzipped.
    pub gzip: Option<Bytes>,
}

impl From<Bytes> for Answer {
    fn from(json: Bytes) -> Self {
        Answer { json, gzip: None }
    }
}
/// Why an answer could not be encoded ahead of time.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// It does not serialise.
    #[error("encode answer: {0}")]
    Json(#[from] serde_json::Error),
    /// It does not compress.
    #[error("gzip answer: {0}")]
    Gzip(#[from] std::io::Error),
}

/// An answer of type `O` serialised once, to be served many times: only made from an `O`, so
/// a handler returning it keeps the catalogue's output type.
pub struct Encoded<O> {
    pub(crate) answer: Answer,
    of: std::marker::PhantomData<fn() -> O>,
}

impl<O: serde::Serialize> Encoded<O> {
    /// Serialises `value`, and gzips it for the clients that accept gzip.
    pub fn new(value: &O) -> Result<Self, EncodeError> {
        let json = serde_json::to_vec(value)?;
        let gzip = crate::encoding::gzip(&json)?;
        Ok(Encoded {
            answer: Answer { json: Bytes::from(json), gzip: Some(Bytes::from(gzip)) },
            of: std::marker::PhantomData,
        })
    }
}

impl<O> Clone for Encoded<O> {
    fn clone(&self) -> Self {
        Encoded { answer: self.answer.clone(), of: std::marker::PhantomData }
    }
}

impl<O> std::fmt::Debug for Encoded<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encoded({} bytes)", self.answer.json.len())
    }
}

/// The answers that depend on a snapshot alone, encoded once when it arrives: a signal
/// request is then a copy of bytes, not the serialisation of a 30 KB answer.
#[derive(Debug)]
pub struct SignalAnswers {
    /// `GET {alpha}/top-picks`.
    pub top_picks: Encoded<TopPicksResponse>,
    /// `GET {alpha}/top-picks-lite`.
    pub top_picks_lite: Encoded<TopPicksLiteResponse>,
    /// `GET {alpha}/exodus`.
    pub exodus: Encoded<ExodusResponse>,
}

impl SignalAnswers {
    /// Encodes the answers of `s`: what the engine publishes from each snapshot.
    pub fn publish(s: &Snapshot) -> Result<Self, String> {
        let encode = |err: EncodeError| err.to_string();
        Ok(SignalAnswers {
            top_picks: Encoded::new(&TopPicksResponse { meta: s.meta(), picks: s.picks.clone() }).map_err(encode)?,
            top_picks_lite: Encoded::new(&TopPicksLiteResponse { meta: s.meta(), picks: s.lite.clone() })
                .map_err(encode)?,
            exodus: Encoded::new(&ExodusResponse { meta: s.meta(), picks: s.exodus.clone() }).map_err(encode)?,
        })
    }
}

/// A 200 with a JSON body already serialised (and its gzip form, when there is one, for the
/// pipeline to send to clients that accept it).
pub fn json_response(body: impl Into<Answer>) -> Response {
    let Answer { json, gzip } = body.into();
    let mut response = response_with_room(StatusCode::OK, json);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(gzip) = gzip {
        response.extensions_mut().insert(crate::encoding::Precompressed(gzip));
    }
    response
}

/// A response whose header map is sized up front for the headers our answers carry (content
/// type, caching, payment, request id, CORS), so adding them never regrows it.
pub(crate) fn response_with_room(status: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = HeaderMap::with_capacity(12);
    response
}

/// A 402 with a challenge: JSON body, base64 header, never cached by intermediaries.
pub(crate) fn challenge_response(body: Bytes, header: HeaderValue) -> Response {
    let mut response = response_with_room(StatusCode::PAYMENT_REQUIRED, body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PAYMENT_REQUIRED_HEADER, header);
    response
}

/// `PAYMENT-REQUIRED`, named once rather than parsed on every challenge.
const PAYMENT_REQUIRED_HEADER: HeaderName = HeaderName::from_static(svc_x402::PAYMENT_REQUIRED);
