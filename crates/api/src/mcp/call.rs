//! A tool call, served by the route it names, and its answer as a tool result.
//!
//! The call becomes the request an HTTP client would have sent the route (path parameters in
//! the path, the other arguments in the query or the JSON body, the MCP request's own
//! credentials and address), served by the route's own path. Its answer becomes the result:
//! - an answer: `structuredContent` and the same JSON as text, with the settlement, when paid
//!   over x402, in `_meta["x402/payment-response"]`;
//! - a challenge (x402's tool-result binding): `isError`, the `PaymentRequired` as
//!   `structuredContent` and as text, and in `_meta["x402/error"]` for clients of the older
//!   variant. The client pays by calling again with a `PaymentPayload` in
//!   `params._meta["x402/payment"]` (an object, or base64 as older clients send it);
//! - a settlement that failed after the work: the challenge again, its error naming why, and
//!   no answer;
//! - any other error (a 422 located as over HTTP, a refused key, empty credits): `isError`
//!   with the HTTP error body.

use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Map, Value};
use svc_catalogue::{HttpMethod, InputSource, RouteSpec};
use svc_x402::{PAYMENT_RESPONSE, PAYMENT_SIGNATURE, X_PAYMENT};

use crate::error::ApiError;
use crate::handlers::Handlers;
use crate::pipeline::Channel;
use crate::state::AppState;

/// Where a tool call's payment is, in the request's `_meta`.
pub(super) const PAYMENT_META: &str = "x402/payment";
/// Where a paid result's settlement is, in the result's `_meta`.
const PAYMENT_RESPONSE_META: &str = "x402/payment-response";
/// Where a payment-required result repeats its `PaymentRequired`, for older clients.
const ERROR_META: &str = "x402/error";

/// One `tools/call` (or resource read) request: whose it is and what it pays with.
#[derive(Clone, Copy)]
pub(super) struct ToolCall<'a> {
    state: &'a AppState,
    handlers: &'a Handlers,
    /// The MCP request's head: its credentials, the client's address, its limits.
    outer: &'a Parts,
    /// `_meta["x402/payment"]`, if sent.
    payment: Option<&'a Value>,
    /// The MCP request, whose token is cancelled when the client goes away.
    context: &'a RequestContext<RoleServer>,
}

impl<'a> ToolCall<'a> {
    /// The call `context` carries.
    pub(super) fn new(
        state: &'a AppState,
        handlers: &'a Handlers,
        context: &'a RequestContext<RoleServer>,
    ) -> Result<Self, McpError> {
        // The HTTP transport always hands the request's head over; another transport has none.
        let outer = context
            .extensions
            .get::<Parts>()
            .ok_or_else(|| McpError::internal_error("a tool call arrived without its HTTP request", None))?;
        Ok(ToolCall { state, handlers, outer, payment: context.meta.get(PAYMENT_META), context })
    }

    /// The shared state.
    pub(super) fn state(&self) -> &'a AppState {
        self.state
    }

    /// Calls the tool `name`: a route's, or a listed seller agent's (named by its id). A name
    /// no route has is the protocol's unknown-tool error; an agent that is not selling answers
    /// its invoke's 404, as over HTTP.
    pub(super) async fn named(&self, name: &str, arguments: Option<JsonObject>) -> Result<CallToolResult, McpError> {
        if svc_catalogue::tools::is_agent_tool(name) {
            return Ok(self.sell(Target::Agent(name), arguments).await);
        }
        let route = svc_catalogue::tools::route_of_tool(self.state.catalogue, name)
            .ok_or_else(|| McpError::invalid_params(format!("unknown tool: {name}"), None))?;
        Ok(self.route(route, arguments).await)
    }

    /// Calls `route` with `arguments`.
    pub(super) async fn route(&self, route: &'static RouteSpec, arguments: Option<JsonObject>) -> CallToolResult {
        self.sell(Target::Route(route), arguments).await
    }

    /// Calls `target`, for as long as the client waits: a client that goes away drops the call
    /// where it is, as a closed HTTP connection does, so a paid answer it never received stays
    /// kept for the payment's retry instead of being counted as delivered.
    async fn sell(&self, target: Target<'_>, arguments: Option<JsonObject>) -> CallToolResult {
        tokio::select! {
            biased;
            () = self.context.ct.cancelled() => CallToolResult::error(vec![ContentBlock::text("the call was cancelled")]),
            result = self.sell_now(target, arguments) => result,
        }
    }

    /// Calls `target`; a settlement that failed after the work answers the challenge again.
    async fn sell_now(&self, target: Target<'_>, arguments: Option<JsonObject>) -> CallToolResult {
        // A payment names the resource it was made for (the tool and its arguments, as the
        // challenge's URL): it buys that call only, whatever else the client echoed.
        let request = CallRequest::of(target, arguments.unwrap_or_default());
        let named = self.payment.and_then(resource_named);
        if let Some(named) = named.filter(|named| *named != self.state.config.url(&request.uri)) {
            let why = Value::from(format!("resource_mismatch: this payment was made for {named}"));
            let again = Answered::read(self.serve(target, &request, None).await).await;
            return again.into_result(Some(why), None);
        }
        let payment = self.payment.map(payment_header);
        let response = self.serve(target, &request, payment.as_ref()).await;
        let settle_failed = response.status() == StatusCode::PAYMENT_REQUIRED
            && !response.headers().contains_key(svc_x402::PAYMENT_REQUIRED)
            && response.headers().contains_key(PAYMENT_RESPONSE);
        let answer = Answered::read(response).await;
        if settle_failed {
            // The work was done and its settlement failed: the challenge again, naming why,
            // and not the answer.
            let why = answer.json.as_ref().and_then(|json| json.get("detail")).cloned();
            let again = Answered::read(self.serve(target, &request, None).await).await;
            return again.into_result(why, answer.payment_response);
        }
        answer.into_result(None, None)
    }

    /// Serves `target` for the request an HTTP client would have sent.
    async fn serve(&self, target: Target<'_>, request: &CallRequest, payment: Option<&HeaderValue>) -> Response {
        let body = || request.body.clone().map_or_else(Body::empty, Body::from);
        let served = match target {
            Target::Route(route) => {
                match self.parts(method(route.method), &request.uri, payment, request.body.is_some()) {
                    Ok(parts) => {
                        let path: Vec<(&str, &str)> =
                            request.path.iter().map(|(name, value)| (*name, value.as_str())).collect();
                        let channel = self.channel(route);
                        crate::pipeline::run(self.state, self.handlers, route, channel, &parts, &path, body()).await
                    }
                    Err(err) => Err(err),
                }
            }
            Target::Agent(id) => match self.parts(Method::POST, &request.uri, payment, true) {
                Ok(parts) => crate::seller_invoke::run(self.state, id, &parts, body()).await,
                Err(err) => Err(err),
            },
        };
        served.unwrap_or_else(axum::response::IntoResponse::into_response)
    }

    /// The head of the request an HTTP client would have sent: the MCP request's own (its
    /// credentials, address and connection) with the method, path, payment and body type of
    /// the call.
    fn parts(&self, method: Method, uri: &str, payment: Option<&HeaderValue>, json: bool) -> Result<Parts, ApiError> {
        // Only arguments too long for any request's query fail to make a path and query.
        let uri = uri.parse().map_err(|_| {
            ApiError::field(vec!["query".into()], "the arguments are too long for this tool's query", "value_error")
        })?;
        let mut parts = self.outer.clone();
        parts.method = method;
        parts.uri = uri;
        let headers = &mut parts.headers;
        for name in [&header::CONTENT_LENGTH, &header::CONTENT_TYPE, &header::ACCEPT_ENCODING] {
            headers.remove(name);
        }
        headers.remove(PAYMENT_SIGNATURE);
        headers.remove(X_PAYMENT);
        if let Some(payment) = payment {
            headers.insert(HeaderName::from_static(PAYMENT_SIGNATURE), payment.clone());
        }
        if json {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        Ok(parts)
    }

    /// How the call is paid: from credits when the caller sent credentials (an API key, or a
    /// sign-in token as bearer) and no payment, on a route with a credit-billed twin; else
    /// over x402. Free routes are free. Credentials that turn out wrong are refused as such,
    /// not answered with a challenge the caller did not ask for.
    fn channel(&self, route: &RouteSpec) -> Channel {
        if !route.is_paid() {
            return Channel::Free;
        }
        let credentials = crate::credits::presents_credentials(&self.outer.headers);
        if credentials && self.payment.is_none() && route.credits_path().is_some() {
            Channel::Credits
        } else {
            Channel::X402
        }
    }
}

/// What a tool call runs.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// A catalogue route.
    Route(&'static RouteSpec),
    /// A seller's agent, by id.
    Agent(&'a str),
}

/// The resource URL a `_meta["x402/payment"]` says it pays for, in either form.
fn resource_named(payment: &Value) -> Option<String> {
    let url = |payload: &Value| payload.get("resource")?.get("url")?.as_str().map(str::to_owned);
    match payment {
        Value::Object(_) => url(payment),
        Value::String(encoded) => match svc_x402::codec::Presented::read(Some(encoded.trim().as_bytes())) {
            svc_x402::codec::Presented::Payment(payment) => payment.resource_url(),
            _ => None,
        },
        _ => None,
    }
}

/// The `PAYMENT-SIGNATURE` value of a `_meta["x402/payment"]`: a `PaymentPayload` object
/// encoded as the header would carry it, or a base64 string as older clients send it.
/// Anything else is a payment that is not one, refused as such a header is.
fn payment_header(payment: &Value) -> HeaderValue {
    let junk = || HeaderValue::from_static("not-a-payment");
    match payment {
        Value::Object(_) => serde_json::to_vec(payment)
            .ok()
            .and_then(|json| HeaderValue::from_str(&svc_x402::codec::encode_bytes(&json)).ok())
            .unwrap_or_else(junk),
        Value::String(encoded) => HeaderValue::from_str(encoded.trim()).unwrap_or_else(|_| junk()),
        _ => junk(),
    }
}

fn method(method: HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Patch => Method::PATCH,
    }
}

/// The request a tool call's arguments make, built once per call: the path with its
/// parameters and the query (what the challenge names, and a payment must), and the JSON body.
struct CallRequest {
    uri: String,
    path: Vec<(&'static str, String)>,
    body: Option<Bytes>,
}

impl CallRequest {
    fn of(target: Target<'_>, arguments: JsonObject) -> Self {
        match target {
            Target::Route(route) => Self::route(route, arguments),
            Target::Agent(id) => CallRequest {
                uri: svc_catalogue::routes::sellers::INVOKE_PATH.replace("{agent_id}", &path_segment(id)),
                path: Vec::new(),
                body: serde_json::to_vec(&arguments).ok().map(Bytes::from),
            },
        }
    }

    fn route(route: &'static RouteSpec, mut arguments: JsonObject) -> Self {
        let mut path = Vec::new();
        let mut uri = String::with_capacity(route.path.len() + 32);
        for (i, segment) in route.path.split('/').enumerate() {
            if i > 0 {
                uri.push('/');
            }
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    let Some((name, value)) = route.path_params().find(|n| *n == name).zip(arguments.remove(name))
                    else {
                        continue;
                    };
                    let value = scalar_text(value);
                    uri.push_str(&path_segment(&value));
                    path.push((name, value));
                }
                None => uri.push_str(segment),
            }
        }
        let in_query = matches!(route.source, InputSource::Query);
        let mut body = None;
        if in_query {
            let mut pairs: Vec<(String, String)> = Vec::new();
            for (name, value) in arguments {
                match value {
                    Value::Null => {}
                    Value::Array(items) => {
                        pairs.extend(items.into_iter().map(|item| (name.clone(), scalar_text(item))))
                    }
                    value => pairs.push((name, scalar_text(value))),
                }
            }
            // In name order, so a retry whose arguments come in another order names the same
            // resource as the call it pays for.
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            if !pairs.is_empty() {
                uri.push('?');
                uri.push_str(&serde_urlencoded::to_string(&pairs).unwrap_or_default());
            }
        } else if !arguments.is_empty() || matches!(route.source, InputSource::Body) {
            body = serde_json::to_vec(&arguments).ok().map(Bytes::from);
        }
        CallRequest { uri, path, body }
    }
}

/// A scalar as the query or path carries it; anything else as its JSON text, which the
/// route's validation then refuses with the field's location.
fn scalar_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// `value` percent-encoded for a path segment: all but RFC 3986's unreserved characters.
fn path_segment(value: &str) -> String {
    const UNRESERVED: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    percent_encoding::utf8_percent_encode(value, UNRESERVED).to_string()
}

/// A route's answer, read.
struct Answered {
    ok: bool,
    challenge: bool,
    text: String,
    json: Option<Value>,
    payment_response: Option<Value>,
}

impl Answered {
    async fn read(response: Response) -> Self {
        let (parts, body) = response.into_parts();
        // Reading the body to its end is what confirms an answer paid on chain as delivered.
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_else(|_| Bytes::new());
        let payment_response =
            parts.headers.get(PAYMENT_RESPONSE).and_then(|value| svc_x402::codec::decode_json(value.as_bytes()));
        Answered {
            ok: parts.status.is_success(),
            challenge: parts.headers.contains_key(svc_x402::PAYMENT_REQUIRED),
            json: serde_json::from_slice(&bytes).ok(),
            text: String::from_utf8_lossy(&bytes).into_owned(),
            payment_response,
        }
    }

    /// The tool result; a challenge's error replaced by `why`, with `settlement` in its
    /// `_meta`, when a settlement failed.
    fn into_result(self, why: Option<Value>, settlement: Option<Value>) -> CallToolResult {
        let Answered { ok, challenge, mut text, mut json, payment_response } = self;
        let mut meta = Map::new();
        if challenge {
            if let (Some(why), Some(Value::Object(required))) = (why, json.as_mut()) {
                required.insert("error".into(), why);
                text = Value::Object(required.clone()).to_string();
            }
            if let Some(required) = &json {
                meta.insert(ERROR_META.into(), required.clone());
            }
        }
        if let Some(receipt) = settlement.or(payment_response) {
            meta.insert(PAYMENT_RESPONSE_META.into(), receipt);
        }
        let mut result = if ok {
            CallToolResult::success(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::error(vec![ContentBlock::text(text)])
        };
        result.structured_content = json.filter(Value::is_object);
        if !meta.is_empty() {
            result.meta = Some(MetaObject(meta));
        }
        result
    }
}
