//! What answers an agent's invokes, behind one small trait: today a seller's HTTPS endpoint
//! ([`Forwarder`]); a seller's running sandbox gateway is the next kind. Each agent records its
//! kind, so both can be sold side by side.

use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::endpoint::{ForwardError, Forwarder};

/// One paid call, as a backend sends it.
#[derive(Debug, Clone)]
pub struct BackendCall<'a> {
    /// Where the agent is (its endpoint URL).
    pub target: &'a str,
    /// The buyer's JSON body, as received.
    pub body: Bytes,
    /// svc's headers: the signature, the agent, the call and the payer.
    pub headers: &'a [(&'static str, String)],
    /// How long the agent gets to answer.
    pub timeout: Duration,
}

/// A kind of agent backend.
pub trait AgentBackend: Send + Sync {
    /// The kind, as recorded with each agent.
    fn kind(&self) -> &'static str;

    /// Checks where an agent points when it is saved; the reason when refused.
    fn check(&self, target: &str) -> Result<(), String>;

    /// Sends one paid call; the agent's JSON answer.
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Bytes, ForwardError>>;
}

/// The kind of an agent answered by its seller's HTTPS endpoint.
pub const HTTPS: &str = "https";

impl AgentBackend for Forwarder {
    fn kind(&self) -> &'static str {
        HTTPS
    }

    fn check(&self, target: &str) -> Result<(), String> {
        self.policy().check(target).map(|_| ()).map_err(|refused| refused.to_string())
    }

    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Bytes, ForwardError>> {
        Box::pin(self.post(call.target, call.body, call.headers, call.timeout))
    }
}
