//! `svc mcp`: an MCP server on stdin and stdout, for hosts that start their tools as local
//! processes (desktop assistants, many IDEs). It lists a svc's tools and forwards each call to
//! the svc's own MCP server; when a tool asks for payment, it pays from a local wallet with
//! `svc pay`'s client, within caps the agent cannot change (per call, per session, which
//! tools), and says on stderr what it spent. No MCP host pays x402 by itself; this lets every
//! one of them use svc.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResultType, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use svc_domain::Money;
use svc_x402::PaymentRequired;

use crate::config::{McpArgs, WalletArgs};
use crate::pay::{self, Wallet};

/// The protocol revision spoken to the svc: stateless requests need no handshake there.
const PROTOCOL: &str = "2025-11-25";

/// Runs the stdio server until the host closes stdin, then says what it spent.
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let has_wallet = args.wallet.payer_key.is_some() || args.wallet.payer_solana_key.is_some();
    let wallet = if has_wallet { Some(pay::wallet(&args.wallet)?) } else { None };
    if wallet.is_none() && args.api_key.is_none() {
        eprintln!(
            "svc mcp: no wallet (SVC_PAYER_KEY, SVC_PAYER_SOLANA_KEY) nor API key (SVC_API_KEY): paid tools will not be paid"
        );
    }
    let path =
        if args.compact { svc_catalogue::operational::MCP_COMPACT_PATH } else { svc_catalogue::operational::MCP_PATH };
    let remote = Remote {
        http: reqwest::Client::builder().timeout(Duration::from_secs(120)).build()?,
        endpoint: format!("{}{path}", args.url.trim_end_matches('/')),
        api_key: args.api_key.clone(),
    };
    let caps = Arc::new(Caps::new(args.max_per_call, args.max_per_session));
    let proxy = Proxy {
        remote,
        wallet,
        wallet_args: args.wallet.clone(),
        caps: Arc::clone(&caps),
        allow: args.allow,
        compact: args.compact,
        pending: Mutex::default(),
    };
    let service = proxy.serve(rmcp::transport::stdio()).await.context("starting the MCP server on stdio")?;
    let stopped = service.waiting().await;
    let (spent, calls) = caps.spent();
    eprintln!("svc mcp: spent {spent} USDC in {calls} paid calls");
    stopped.map(drop).context("the MCP session")
}

/// The svc's MCP server, over HTTP.
struct Remote {
    http: reqwest::Client,
    endpoint: String,
    /// Sent as a bearer token, so calls are paid from credits.
    api_key: Option<String>,
}

impl Remote {
    /// One JSON-RPC request; the svc's protocol errors pass through as they are.
    async fn rpc<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, McpError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.endpoint)
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| {
            McpError::internal_error(format!("svc at {} did not answer: {}", self.endpoint, e.without_url()), None)
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let text = response.text().await.map_err(unreachable)?;
        let Ok(answer) = serde_json::from_str::<Value>(&text) else {
            let text: String = text.chars().take(300).collect();
            return Err(McpError::internal_error(format!("svc at {} answered {status}: {text}", self.endpoint), None));
        };
        if let Some(error) = answer.get("error") {
            let code = error.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok()).unwrap_or(-32603);
            let message = error.get("message").and_then(Value::as_str).unwrap_or("an error").to_owned();
            return Err(McpError::new(ErrorCode(code), message, error.get("data").cloned()));
        }
        if !status.is_success() {
            return Err(McpError::internal_error(format!("svc answered {status}: {answer}"), None));
        }
        serde_json::from_value(answer["result"].clone())
            .map_err(|e| McpError::internal_error(format!("svc answered an unexpected {method} result: {e}"), None))
    }
}

/// The caps: the most a call, and the whole session, may cost.
struct Caps {
    per_call: Money,
    per_session: Money,
    /// Spent and reserved so far, and the paid calls.
    spent: Mutex<(Money, u64)>,
}

impl Caps {
    fn new(per_call: Money, per_session: Money) -> Self {
        Caps { per_call, per_session, spent: Mutex::new((Money::ZERO, 0)) }
    }

    /// Sets `amount` aside for one call, or says which cap it would pass. Calls made at once
    /// each reserve before they pay, so together they cannot pass the session's cap.
    fn reserve(&self, amount: Money) -> Result<(), String> {
        if amount > self.per_call {
            return Err(format!("it costs more than --max-per-call {} USDC", self.per_call));
        }
        let mut spent = self.spent.lock().map_err(|_| "the spending record is unusable".to_owned())?;
        let total = spent.0.checked_add(amount).filter(|total| *total <= self.per_session);
        let Some(total) = total else {
            return Err(format!("{} USDC of --max-per-session {} USDC is spent", spent.0, self.per_session));
        };
        *spent = (total, spent.1 + 1);
        Ok(())
    }

    /// Gives back a reservation whose payment was not taken.
    fn release(&self, amount: Money) {
        if let Ok(mut spent) = self.spent.lock() {
            *spent = (spent.0.checked_sub(amount).unwrap_or(Money::ZERO), spent.1.saturating_sub(1));
        }
    }

    fn spent(&self) -> (Money, u64) {
        self.spent.lock().map(|s| *s).unwrap_or((Money::ZERO, 0))
    }
}

/// The stdio server: the svc's tools, paid from the wallet.
struct Proxy {
    remote: Remote,
    wallet: Option<Wallet>,
    wallet_args: WalletArgs,
    caps: Arc<Caps>,
    allow: Vec<String>,
    compact: bool,
    /// Payments whose settlement was pending, by the call they pay for.
    pending: Mutex<std::collections::HashMap<String, Value>>,
}

impl Proxy {
    /// Whether the tool `name` may be called (`--allow`).
    fn allowed(&self, name: &str) -> bool {
        self.allow.is_empty() || self.allow.iter().any(|allowed| allowed == name)
    }

    /// Leaves out of a `search_tools` answer the tools `--allow` does not name.
    fn only_allowed(&self, result: &mut CallToolResult) {
        if self.allow.is_empty() {
            return;
        }
        let Some(Value::Array(found)) = result.structured_content.as_mut().and_then(|c| c.get_mut("tools")) else {
            return;
        };
        found.retain(|tool| tool.get("name").and_then(Value::as_str).is_some_and(|name| self.allowed(name)));
        if let Some(content) = &result.structured_content {
            result.content = vec![ContentBlock::text(content.to_string())];
        }
    }

    /// The tool a call is about: itself, or in compact mode the one `call_tool` or
    /// `describe_tool` names.
    fn target<'a>(&self, name: &'a str, arguments: Option<&'a Map<String, Value>>) -> &'a str {
        let named = arguments.and_then(|a| a.get("name")).and_then(Value::as_str);
        match named {
            Some(inner) if self.compact && matches!(name, "call_tool" | "describe_tool") => inner,
            _ => name,
        }
    }

    /// Calls a tool, paying for it when it asks and the caps allow.
    async fn call(&self, name: &str, arguments: Option<Map<String, Value>>) -> Result<CallToolResult, McpError> {
        let tool = self.target(name, arguments.as_ref()).to_owned();
        // In compact mode, search_tools and describe_tool run nothing and cost nothing.
        let metered = !self.compact || name == "call_tool";
        if metered && !self.allowed(&tool) {
            return Ok(refusal(&format!("svc mcp: the tool {tool} is not allowed here (--allow)"), None));
        }
        if self.compact && name == "describe_tool" && !self.allowed(&tool) {
            return Ok(refusal(&format!("svc mcp: the tool {tool} is not allowed here (--allow)"), None));
        }
        let params = json!({"name": name, "arguments": arguments.clone().unwrap_or_default()});
        // A payment whose settlement was still pending is sent again for the same call, never
        // replaced by a new one that could pay twice.
        let call_key = params.to_string();
        if let Some(pending) = self.pending.lock().ok().and_then(|mut p| p.remove(&call_key)) {
            return self.send_paid(&tool, params, pending, &call_key, None).await;
        }
        let mut first: CallToolResult = self.remote.rpc("tools/call", params.clone()).await?;
        if self.compact && name == "search_tools" {
            self.only_allowed(&mut first);
            return Ok(first);
        }
        let (Some(required), Some(wallet)) = (payment_required(&first), &self.wallet) else { return Ok(first) };
        let requirement = match pay::requirement(wallet, &self.wallet_args, &required) {
            Ok(requirement) => requirement,
            Err(err) => return Ok(refusal(&format!("svc mcp cannot pay for {tool}: {err:#}"), Some(&required))),
        };
        let Some(amount) = requirement.amount.parse::<u64>().ok().map(Money::from_atomic) else {
            return Ok(refusal(&format!("svc mcp cannot pay for {tool}: the amount is not a number"), Some(&required)));
        };
        if let Err(why) = self.caps.reserve(amount) {
            let why = format!("svc mcp refused to pay {amount} USDC for {tool}: {why}");
            eprintln!("{why}");
            return Ok(refusal(&why, Some(&required)));
        }
        let payload = match pay::pay(wallet, &self.wallet_args, &required, requirement).await.and_then(|h| decoded(&h))
        {
            Ok(payload) => payload,
            Err(err) => {
                self.caps.release(amount);
                return Ok(refusal(
                    &format!("svc mcp could not sign the payment for {tool}: {err:#}"),
                    Some(&required),
                ));
            }
        };
        // Signed, the authorization can be taken until it expires, whatever the answer says:
        // it counts toward the session's cap from here on.
        self.send_paid(&tool, params, payload, &call_key, Some(amount)).await
    }

    /// Sends the call with `payload` as its payment (signed now for `amount`, or sent again);
    /// a settlement still pending keeps the payload for the same call's retry.
    async fn send_paid(
        &self,
        tool: &str,
        mut params: Value,
        payload: Value,
        call_key: &str,
        amount: Option<Money>,
    ) -> Result<CallToolResult, McpError> {
        params["_meta"] = json!({"x402/payment": payload.clone()});
        let mut paid: CallToolResult = self.remote.rpc("tools/call", params).await?;
        let pending = paid.is_error == Some(true)
            && payment_required(&paid)
                .and_then(|r| r.error)
                .is_some_and(|why| why.contains("send this same payment again"));
        if pending {
            if let Ok(mut kept) = self.pending.lock() {
                kept.insert(call_key.to_owned(), payload);
            }
            let note = "svc mcp kept this payment: call the tool again with the same arguments in a minute to get the \
                        answer, without paying again.";
            paid.content.push(ContentBlock::text(note));
            eprintln!("svc mcp: the settlement for {tool} is pending; the same payment goes again with the next call");
        } else if let Some(amount) = amount {
            let (spent, cap) = (self.caps.spent().0, self.caps.per_session);
            if paid.is_error == Some(true) {
                eprintln!(
                    "svc mcp: the payment of {amount} USDC for {tool} was not settled; it counts toward \
                     --max-per-session all the same ({spent} of {cap} USDC)"
                );
            } else {
                eprintln!("svc mcp: paid {amount} USDC for {tool}; {spent} of {cap} USDC spent this session");
            }
        } else if paid.is_error != Some(true) {
            eprintln!("svc mcp: paid for {tool} with the payment kept from before");
        }
        Ok(paid)
    }
}

/// The x402 `PaymentRequired` a result asks for, if it is one.
fn payment_required(result: &CallToolResult) -> Option<PaymentRequired> {
    let content = result.structured_content.as_ref().filter(|_| result.is_error == Some(true))?;
    content.get("x402Version")?;
    serde_json::from_value(content.clone()).ok()
}

/// A `PAYMENT-SIGNATURE` value as the JSON object `_meta["x402/payment"]` carries.
fn decoded(header: &str) -> anyhow::Result<Value> {
    let json = base64::engine::general_purpose::STANDARD.decode(header).context("the payment's base64")?;
    serde_json::from_slice(&json).context("the payment's JSON")
}

/// An error result saying why svc mcp did not pay, with the challenge it did not pay.
fn refusal(why: &str, required: Option<&PaymentRequired>) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(why.to_owned())]);
    result.structured_content = required.and_then(|r| serde_json::to_value(r).ok()).map(|mut r| {
        r["error"] = Value::from(why);
        r
    });
    result
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("svc", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "svc: crypto market data and on-chain actions. Paid tools are paid for you from a local wallet, at \
                 most {} USDC a call and {} USDC in all; a call over a cap is refused and costs nothing.",
                self.caps.per_call, self.caps.per_session
            ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut listed: ListToolsResult = self.remote.rpc("tools/list", json!(request.unwrap_or_default())).await?;
        if !self.compact {
            listed.tools.retain(|tool| self.allowed(&tool.name));
        }
        listed.result_type = Some(ResultType::COMPLETE);
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let mut result = self.call(&request.name, request.arguments).await?;
        // Relayed as svc answered its own (older) revision; rmcp drops the field again for a
        // host on a revision without it.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut listed: ListResourcesResult =
            self.remote.rpc("resources/list", json!(request.unwrap_or_default())).await?;
        listed.result_type = Some(ResultType::COMPLETE);
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let mut read: ReadResourceResult = self.remote.rpc("resources/read", json!({"uri": request.uri})).await?;
        read.result_type = Some(ResultType::COMPLETE);
        Ok(read.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(text: &str) -> Money {
        text.parse().expect("amount")
    }

    #[test]
    fn a_call_over_the_per_call_cap_is_refused_and_reserves_nothing() {
        let caps = Caps::new(usd("0.01"), usd("1"));
        assert!(caps.reserve(usd("0.02")).expect_err("over the cap").contains("--max-per-call"));
        assert_eq!(caps.spent(), (Money::ZERO, 0));
    }

    #[test]
    fn the_session_cap_holds_across_calls_and_a_release_gives_back() {
        let caps = Caps::new(usd("0.5"), usd("1"));
        caps.reserve(usd("0.5")).expect("first");
        caps.reserve(usd("0.5")).expect("second");
        assert!(caps.reserve(usd("0.000001")).expect_err("over the session").contains("--max-per-session"));
        caps.release(usd("0.5"));
        caps.reserve(usd("0.4")).expect("after a release");
        assert_eq!(caps.spent(), (usd("0.9"), 2));
    }

    #[test]
    fn concurrent_reservations_never_pass_the_session_cap() {
        let caps = std::sync::Arc::new(Caps::new(usd("0.1"), usd("1")));
        let threads: Vec<_> = (0..40)
            .map(|_| {
                let caps = std::sync::Arc::clone(&caps);
                std::thread::spawn(move || caps.reserve(usd("0.1")).is_ok())
            })
            .collect();
        let granted = threads.into_iter().map(|t| t.join().expect("thread")).filter(|ok| *ok).count();
        assert_eq!(granted, 10);
        assert_eq!(caps.spent().0, usd("1"));
    }
}
