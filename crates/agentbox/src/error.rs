//! The one error type of the sandboxes' domain; `api` maps it to HTTP in one place.

use svc_domain::Money;

/// What can go wrong starting, watching or stopping a gateway.
#[derive(Debug, thiserror::Error)]
pub enum AgentboxError {
    /// No template of that name.
    #[error("unknown template {0:?}")]
    UnknownTemplate(String),
    /// The account has no gateway (or none active, for a stop): the same answer whoever
    /// asks, so nobody learns of another account's gateway.
    #[error("{0}")]
    NoGateway(&'static str),
    /// The account's gateway is running or starting already.
    #[error("gateway {id} is {state} already (template {template}); stop it before starting another")]
    AlreadyActive {
        /// The active gateway.
        id: String,
        /// Its state.
        state: String,
        /// Its template.
        template: String,
    },
    /// The snapshot sandboxes start from has not been prepared.
    #[error("the agent snapshot is not prepared in {0}: run `svc agentbox prepare` on this machine first")]
    NotPrepared(String),
    /// Sandboxes are off on this server (no bubblewrap, no address to wire them to).
    #[error("agent sandboxes are not available on this server: {0}")]
    Unavailable(String),
    /// A start would reserve more memory than the machine's budget.
    #[error(
        "no room for another sandbox: {reserved_mb} MiB of the {budget_mb} MiB budget are reserved and each needs \
         {needed_mb} MiB; try again when a gateway stops"
    )]
    Capacity {
        /// Reserved by running gateways.
        reserved_mb: u64,
        /// The budget.
        budget_mb: u64,
        /// What one more needs.
        needed_mb: u64,
    },
    /// The account's credits do not cover the first billing period.
    #[error("not enough credits to start a gateway")]
    InsufficientCredits {
        /// The balance.
        balance: Money,
        /// The first period's price.
        price: Money,
    },
    /// The chat platform refused the bot token.
    #[error("the chat platform refused this bot token (unknown or revoked); copy it again from BotFather")]
    InvalidBotToken,
    /// The bot is configured by another account.
    #[error("this bot is configured by another account; one bot belongs to one account")]
    BotTaken,
    /// The chat platform could not be asked.
    #[error("the chat platform failed: {0}")]
    ChatPlatform(String),
    /// The account holds as many log streams open as it may.
    #[error("this account has {max} log streams open already; close one first", max = crate::slots::MAX_LOG_STREAMS)]
    TooManyStreams,
    /// The sandbox backend failed.
    #[error("sandbox backend: {0}")]
    Backend(#[from] crate::backend::BackendError),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] svc_store::StoreError),
    /// The LLM proxy could not give a token.
    #[error("LLM proxy: {0}")]
    Llm(#[from] svc_llm::LlmError),
}
