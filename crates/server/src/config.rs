//! Configuration: flags, each with an environment variable and a default that works on a
//! fresh machine. `svc serve --help` lists them all.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::agentbox::ShimArgs;
use crate::logging::LogFormat;
use crate::store::StoreArgs;
use crate::upstreams::{SimulatorArgs, UpstreamArgs};

/// svc: crypto market data and on-chain actions for software agents, paid per call over x402.
#[derive(Debug, Parser)]
#[command(name = "svc", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate(StoreArgs),
    /// Print the OpenAPI 3.1 document (the committed `openapi.json` is this output).
    Openapi,
    /// Serve the simulated market alone, in every vendor's wire format, so several replicas
    /// can share one world (point them at it with `SVC_SIMULATOR_URL`).
    Simulator(SimulatorArgs),
    /// Call a paid route end to end: get the challenge, sign a payment, retry, print the
    /// answer and the settlement.
    Pay(PayArgs),
    /// An MCP server on stdin and stdout for hosts that only start local tools: it lists a
    /// svc's tools and pays for calls from a local wallet, within caps the agent cannot change,
    /// saying on stderr what it spent.
    Mcp(McpArgs),
    /// Operators: open accounts.
    #[command(subcommand)]
    Accounts(AccountsCommand),
    /// Operators: give accounts credits.
    #[command(subcommand)]
    Credits(CreditsCommand),
    /// Operators: make API keys for accounts.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Operators: sellers' payouts, settled by hand where svc sends nothing on chain.
    #[command(subcommand)]
    Payouts(PayoutsCommand),
    /// The signal engine's accuracy.
    #[command(subcommand)]
    Signals(SignalsCommand),
    /// Agent sandboxes: prepare the snapshot they start from.
    #[command(subcommand)]
    Agentbox(AgentboxCommand),
    /// Runs inside a sandbox as its first process, bridging it to svc (started by svc itself).
    #[command(hide = true)]
    AgentboxShim(ShimArgs),
    /// Print the configuration reference or a complete example config file, both generated
    /// from this code (the committed `docs/configuration.md` and `svc.example.toml`).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Writes the agents' skill files (`<out>/<skill>/SKILL.md`), generated from the catalogue.
    Skills {
        /// Directory to write them under.
        #[arg(long, default_value = "skills")]
        out: std::path::PathBuf,
        /// The service address to put in them; left as the `{SVC_API_URL}` placeholder when unset.
        #[arg(long)]
        api_url: Option<String>,
    },
}

/// `svc config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Every flag, environment variable and config-file key, as Markdown
    /// (`svc config reference > docs/configuration.md`).
    Reference,
    /// A config file with every table and key, each with its documentation; keys with a
    /// default are set to it, the others are commented out (`svc config example > svc.example.toml`).
    Example,
}

/// `svc agentbox ...`.
#[derive(Debug, Subcommand)]
pub enum AgentboxCommand {
    /// Installs Node.js 24 and the agent gateway (pinned versions, from the npm registry) into
    /// the snapshot directory every sandbox mounts read-only. Needs `npm`; run once per machine
    /// (a snapshot of the same versions is kept).
    Prepare {
        /// The snapshot directory; `<data dir>/agentbox/snapshot` by default.
        #[arg(long, env = "SVC_AGENTBOX_SNAPSHOT")]
        dir: Option<PathBuf>,
        /// The npm program to install with.
        #[arg(long, default_value = "npm")]
        npm: PathBuf,
        /// Reinstall even when the snapshot holds these versions already.
        #[arg(long)]
        force: bool,
        /// The config file whose `[agentbox]` table names the snapshot (or its root).
        #[arg(long, env = "SVC_CONFIG")]
        config: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// `svc signals ...`.
#[derive(Debug, Subcommand)]
pub enum SignalsCommand {
    /// Runs the engine over seeded simulated worlds and prints how much of what they plant it
    /// finds (accumulations, exits, whale trades) and whether it ever picks an unsafe token.
    Eval {
        /// Worlds to evaluate (seeds 1 to N).
        #[arg(long, default_value_t = 50)]
        worlds: u64,
    },
}

/// `svc accounts ...`.
#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Open an account and print its id.
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
        /// The wallet that signs in for it (0x address); none for a key-only account.
        #[arg(long)]
        wallet: Option<String>,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// `svc credits ...`.
#[derive(Debug, Subcommand)]
pub enum CreditsCommand {
    /// Add credits (USD, e.g. `25` or `0.50`) to an account.
    Grant {
        /// Account id (`acct_...`).
        account: String,
        /// Amount in USD, at most 6 decimals.
        amount: String,
        /// A reference that makes the grant happen once however often it is run (an invoice
        /// number); default: a new one each run.
        #[arg(long)]
        reference: Option<String>,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// `svc payouts ...`.
#[derive(Debug, Subcommand)]
pub enum PayoutsCommand {
    /// List payouts in a status (default: `queued`, the ones waiting to be paid).
    List {
        /// `queued`, `sending`, `sent`, `paid` or `failed`.
        #[arg(long, default_value = "queued")]
        status: String,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Record that a queued payout was paid, by the transaction that paid it.
    MarkPaid {
        /// Payout id (`wd_...`).
        id: String,
        /// The transaction hash that paid it.
        #[arg(long)]
        tx: String,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Record that a queued payout will not be paid: its amount goes back to the agent's
    /// balance.
    Fail {
        /// Payout id (`wd_...`).
        id: String,
        /// Why, shown to the seller.
        #[arg(long)]
        reason: String,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// `svc keys ...`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make an API key for an account and print it (this once).
    Create {
        /// Account id (`acct_...`).
        account: String,
        /// A name to tell it apart.
        #[arg(long, default_value = "operator")]
        name: String,
        /// Scopes, comma-separated: data (credit-billed data routes), agents (manage seller agents), gateway (start
        /// and stop the agent gateway), and a sandbox's own gateway:read, gateway:data, gateway:wallet_write (trade).
        #[arg(long, default_value = "data", value_delimiter = ',')]
        scopes: Vec<String>,
        /// Days until it expires; never by default.
        #[arg(long)]
        expires_in_days: Option<u32>,
        /// Storage.
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Settings of `svc pay`.
#[derive(Args)]
#[command(after_help = "Environment:\n  SVC_PAYER_KEY         the paying EVM wallet's private key, 0x followed by 64 \
    hex digits (read from the environment only, never printed)\n  SVC_PAYER_SOLANA_KEY  the paying Solana wallet's \
    key, for --network solana: its base58 secret key (64 bytes, as Phantom or solana-keygen export it) or the JSON \
    array of 64 bytes solana-keygen writes, e.g. \"$(cat ~/.config/solana/id.json)\" (read from the environment \
    only, never printed)\n  SVC_SOLANA_RPC_URL    Solana node to read the recent blockhash and the mint from \
    (default: none; see --solana-rpc-url)\n  SVC_URL               base URL of the service (default \
    http://127.0.0.1:8402)\n\nExits non-zero on any answer that is not a 2xx, after printing it.")]
pub struct PayArgs {
    /// HTTP method.
    pub method: String,
    /// Path (with query) or full URL of a paid route, e.g. `/api/x402/alpha/top-picks`.
    pub path: String,
    /// JSON body for POST routes.
    #[arg(long)]
    pub body: Option<String>,
    /// Base URL of the service.
    #[arg(long, env = "SVC_URL", default_value = "http://127.0.0.1:8402")]
    pub url: String,
    /// The wallet that pays.
    #[command(flatten)]
    pub wallet: WalletArgs,
}

impl std::fmt::Debug for McpArgs {
    /// Never prints the API key or a wallet key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpArgs").field("url", &self.url).field("compact", &self.compact).finish_non_exhaustive()
    }
}

/// The wallet a client pays from (`svc pay`, `svc mcp`), and on which network.
#[derive(Clone, Args)]
pub struct WalletArgs {
    /// Pay on this network only: a CAIP-2 id as the challenge lists it (`eip155:8453`,
    /// `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`), or `solana` for the first Solana network
    /// offered. Default: the first EVM network offered, or Solana when only
    /// SVC_PAYER_SOLANA_KEY is set.
    #[arg(long)]
    pub network: Option<String>,
    /// Solana JSON-RPC node the payment reads the recent blockhash (`getLatestBlockhash`) and
    /// the mint's program and decimals from, as the official client does. Without one, a
    /// blockhash the challenge offers is used, else a placeholder that only a verify-only
    /// service (svc's default) accepts; svc says so on stderr.
    #[arg(long, env = "SVC_SOLANA_RPC_URL", hide_env_values = true)]
    pub solana_rpc_url: Option<String>,
    /// The paying wallet's private key (0x-hex). From the environment only; never printed.
    #[arg(long = "payer-key", env = "SVC_PAYER_KEY", hide_env_values = true, hide = true)]
    pub payer_key: Option<String>,
    /// The paying Solana wallet's key (base58 or a JSON byte array). From the environment
    /// only; never printed.
    #[arg(long = "payer-solana-key", env = "SVC_PAYER_SOLANA_KEY", hide_env_values = true, hide = true)]
    pub payer_solana_key: Option<String>,
}

impl std::fmt::Debug for WalletArgs {
    /// Never prints a key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalletArgs").field("network", &self.network).finish_non_exhaustive()
    }
}

/// Settings of `svc mcp`: an MCP server on stdin and stdout for hosts that start their tools
/// as local processes, proxying a svc and paying its tools from a local wallet within caps
/// the agent cannot change.
#[derive(Args)]
pub struct McpArgs {
    /// Base URL of the service.
    #[arg(long, env = "SVC_URL", default_value = "http://127.0.0.1:8402")]
    pub url: String,
    /// List the three tools that search, describe and call the others instead of every tool.
    #[arg(long)]
    pub compact: bool,
    /// The most one call may cost, in USDC; a tool asking more is refused, unpaid.
    #[arg(long, default_value = "0.10")]
    pub max_per_call: svc_domain::Money,
    /// The most this process pays in all, in USDC; a call that would pass it is refused, unpaid.
    #[arg(long, default_value = "1.00")]
    pub max_per_session: svc_domain::Money,
    /// Only these tools are listed and called (comma-separated names); all when unset.
    #[arg(long, value_delimiter = ',')]
    pub allow: Vec<String>,
    /// An API key of an account: calls are paid from its credits instead of the wallet. From
    /// the environment only; never printed.
    #[arg(long = "api-key", env = "SVC_API_KEY", hide_env_values = true, hide = true)]
    pub api_key: Option<String>,
    /// The wallet that pays.
    #[command(flatten)]
    pub wallet: WalletArgs,
}

impl std::fmt::Debug for PayArgs {
    /// Never prints the payer key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayArgs").field("method", &self.method).field("path", &self.path).finish_non_exhaustive()
    }
}

/// Settings of `svc serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SVC_LISTEN", default_value = "127.0.0.1:8402")]
    pub listen: SocketAddr,

    /// Storage.
    #[command(flatten)]
    pub store: StoreArgs,

    /// Public base URL (`https://api.example.com`): the site sign-in messages must name, and
    /// the one base of every challenge's `resource.url`, discovery document and absolute link.
    /// Required with `--production`; otherwise the listen address (`http://127.0.0.1:8402`).
    /// Never taken from a request's `Host`.
    #[arg(long, env = "SVC_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SVC_BODY_LIMIT_BYTES", default_value_t = 256 * 1024)]
    pub body_limit_bytes: usize,

    /// Seconds a client has to send a request head; a kept-alive connection idle that long is
    /// closed too.
    #[arg(long, env = "SVC_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,

    /// Connections open at once; keep it under the file-descriptor limit (`ulimit -n`).
    #[arg(long, env = "SVC_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,

    /// Connections one client (an IPv4 address, an IPv6 /64) may hold open at once; more are
    /// answered 429 and closed, so one client cannot take every connection. The trusted proxies
    /// are exempt: limit connections per client at the proxy. 0: no cap per client.
    #[arg(long, env = "SVC_MAX_CONNECTIONS_PER_CLIENT", default_value_t = svc_api::serve::DEFAULT_MAX_PER_CLIENT)]
    pub max_connections_per_client: usize,

    /// Free previews per client IP per hour (default 5; 0: no quota). Overrides the config
    /// file's `[limits] previews_per_hour`.
    #[arg(long, env = "SVC_PREVIEWS_PER_HOUR")]
    pub previews_per_hour: Option<u32>,

    /// Calls per client per minute on paid routes without a limit of their own (default 120;
    /// top picks: 30, by contract; 0: no limit). Overrides the config file's
    /// `[limits] rate_per_minute`.
    #[arg(long, env = "SVC_RATE_PER_MINUTE")]
    pub rate_per_minute: Option<u32>,

    /// Minutes between signal snapshots (Top Picks, Exodus, Whale Alerts); the replica holding
    /// the engine lease computes one at start and then on this cadence.
    #[arg(long, env = "SVC_SIGNAL_REFRESH_MINUTES", default_value_t = 30)]
    pub signal_refresh_minutes: u32,

    /// Redis URL for rate-limit and preview counters shared by replicas; in memory when unset.
    #[arg(long, env = "SVC_REDIS_URL")]
    pub redis_url: Option<String>,

    /// IPs of the proxies in front of svc, comma-separated; only their `X-Forwarded-For` is
    /// believed when telling clients apart.
    #[arg(long, env = "SVC_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<std::net::IpAddr>,

    /// Host names (or `host:port`) the MCP server at `/mcp` answers besides the public URL's
    /// host, comma-separated; `*` allows any. Requests naming another `Host` are refused, so a
    /// web page cannot reach svc through a name it rebinds to svc's address.
    #[arg(long, env = "SVC_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub mcp_allowed_hosts: Vec<String>,

    /// Browser origins (`https://app.example.com`) allowed to call the MCP server besides the
    /// public URL's, comma-separated; `*` allows any. Clients that send no `Origin` (every client
    /// but a browser) are not affected.
    #[arg(long, env = "SVC_MCP_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub mcp_allowed_origins: Vec<String>,

    /// Log format.
    #[arg(long, env = "SVC_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Payments.
    #[command(flatten)]
    pub payments: PaymentArgs,

    /// Data vendors.
    #[command(flatten)]
    pub upstreams: UpstreamArgs,
}

/// A well-known development address (the first account of the local EVM test node). Payments
/// reach it only in a development run; `--production` requires a real one.
pub const DEV_PAY_TO_EVM: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

/// A development recipient on Solana (its key is public); `--production` requires a real one.
pub const DEV_PAY_TO_SOLANA: &str = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";

/// The fee payer offered on Solana when no fee-payer key is set (a public development key):
/// clients need one to build their transaction; in verify-only mode nothing is co-signed.
pub const DEV_SOLANA_FEE_PAYER: &str = "HreMf6X5nAv9evt728Gf3TSuUNEnEXDPhdpCC1GJ5sv9";

/// How svc takes payment.
#[derive(Clone, Args)]
pub struct PaymentArgs {
    /// TOML config file: `[x402]` (networks, facilitator), `[limits]` (rate limits, the preview
    /// quota), `[llm]`, `[agentbox]` and `[sellers]`; `svc config example` prints one with every key.
    #[arg(long, env = "SVC_CONFIG")]
    pub config: Option<PathBuf>,

    /// Recipient of USDC payments on Base (default: a development address).
    #[arg(long, env = "SVC_PAY_TO_EVM")]
    pub pay_to_evm: Option<String>,

    /// JSON-RPC endpoint of Base; with a relayer key, payments are settled on chain.
    #[arg(long, env = "SVC_EVM_RPC_URL")]
    pub evm_rpc_url: Option<String>,

    /// Private key (0x-hex) of the account that submits transfers and pays their gas. From the
    /// environment only; never logged.
    #[arg(long = "evm-relayer-key", env = "SVC_EVM_RELAYER_KEY", hide_env_values = true, hide = true)]
    pub evm_relayer_key: Option<String>,

    /// Several relayer keys (0x-hex, comma-separated), each with its own nonce stream, so
    /// settlement scales past one account; used with or instead of SVC_EVM_RELAYER_KEY. From
    /// the environment only; never logged.
    #[arg(long = "evm-relayer-keys", env = "SVC_EVM_RELAYER_KEYS", hide_env_values = true, hide = true)]
    pub evm_relayer_keys: Option<String>,

    /// The treasury key sellers' payouts are authorized with (0x-hex; default: the first
    /// relayer key). It must hold the USDC it pays out. From the environment only; never logged.
    #[arg(long = "payout-key", env = "SVC_PAYOUT_KEY", hide_env_values = true, hide = true)]
    pub payout_key: Option<String>,

    /// Recipient of USDC payments on Solana (default: a development address).
    #[arg(long, env = "SVC_PAY_TO_SOLANA")]
    pub pay_to_solana: Option<String>,

    /// Solana mainnet JSON-RPC endpoint; with the fee-payer key, Solana payments are co-signed
    /// and sent. The signal engine reads Solana tokens' mints from it too.
    #[arg(long, env = "SVC_SOLANA_RPC_URL")]
    pub solana_rpc_url: Option<String>,

    /// The Solana fee payer's key (base58 seed or keypair, or the CLI's JSON byte array): it
    /// co-signs payments and pays their fees. From the environment only; never logged.
    #[arg(long = "solana-fee-payer-key", env = "SVC_SOLANA_FEE_PAYER_KEY", hide_env_values = true, hide = true)]
    pub solana_fee_payer_key: Option<String>,

    /// Refuse to start unless every payment network settles on chain and recipients are set.
    #[arg(long, env = "SVC_PRODUCTION")]
    pub production: bool,
}

impl PaymentArgs {
    /// Every relayer key given, in order: `SVC_EVM_RELAYER_KEY`, then `SVC_EVM_RELAYER_KEYS`.
    pub fn relayer_keys(&self) -> Vec<String> {
        let listed = self.evm_relayer_keys.iter().flat_map(|keys| keys.split(','));
        self.evm_relayer_key
            .iter()
            .map(String::as_str)
            .chain(listed)
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

impl std::fmt::Debug for PaymentArgs {
    /// Never prints the relayer key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentArgs")
            .field("config", &self.config)
            .field("pay_to_evm", &self.pay_to_evm)
            .field("evm_rpc_url", &self.evm_rpc_url)
            .field("evm_relayer_key", &self.evm_relayer_key.as_ref().map(|_| "<redacted>"))
            .field("evm_relayer_keys", &self.evm_relayer_keys.as_ref().map(|_| "<redacted>"))
            .field("payout_key", &self.payout_key.as_ref().map(|_| "<redacted>"))
            .field("pay_to_solana", &self.pay_to_solana)
            .field("solana_rpc_url", &self.solana_rpc_url)
            .field("solana_fee_payer_key", &self.solana_fee_payer_key.as_ref().map(|_| "<redacted>"))
            .field("production", &self.production)
            .finish()
    }
}

/// The `[x402]` table: how svc takes payment. By default USDC on Base and on Solana mainnet,
/// verified by the built-in facilitator.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct X402File {
    /// `builtin` (verifies locally and settles through each network's RPC URL), or the https
    /// URL of an external facilitator (standard `/verify`, `/settle`, `/supported`: only the
    /// networks it lists in `/supported` are offered, and RPC URLs are then only read, to
    /// reconcile).
    #[serde(default)]
    #[schemars(extend("default" = "builtin"))]
    pub facilitator: Option<String>,
    /// Seconds a challenge stays valid: an EIP-3009 authorization whose `validBefore` is
    /// further ahead than this plus 60 s of clock skew is refused; clients sign exactly this.
    #[serde(default)]
    #[schemars(extend("default" = svc_x402::MAX_TIMEOUT_SECONDS))]
    pub max_timeout_seconds: Option<u64>,
    /// EVM networks offered (any token implementing EIP-3009); when given they replace the
    /// default, USDC on Base with `SVC_PAY_TO_EVM` and `SVC_EVM_RPC_URL`.
    #[serde(default)]
    #[schemars(example = serde_json::json!([{
        "network": "eip155:31337",
        "asset": "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        "name": "USD Coin",
        "version": "2",
        "decimals": 6,
        "pay_to": DEV_PAY_TO_EVM,
        "rpc_url": "http://127.0.0.1:8545",
    }]))]
    pub networks: Vec<NetworkFile>,
    /// Offer USDC on Solana mainnet too.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub solana: Option<bool>,
}

/// One EVM network with an EIP-3009 token.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// CAIP-2 id, `eip155:<chain id>`.
    pub network: String,
    /// Token contract.
    pub asset: String,
    /// The token's EIP-712 domain name.
    pub name: String,
    /// The token's EIP-712 domain version.
    pub version: String,
    /// Token decimals.
    #[serde(default = "six")]
    pub decimals: u8,
    /// Recipient (default: `--pay-to-evm`).
    #[serde(default)]
    pub pay_to: Option<String>,
    /// JSON-RPC endpoint; with the relayer key, payments on this network settle on chain.
    /// Omit it for verify-only.
    #[serde(default)]
    pub rpc_url: Option<String>,
}

fn six() -> u8 {
    6
}

/// The config file (`--config`, `SVC_CONFIG`); every table and key is optional.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Payments.
    #[serde(default)]
    pub x402: X402File,
    /// Rate limits and the preview quota.
    #[serde(default)]
    pub limits: LimitsFile,
    /// The LLM proxy: providers, models, limits.
    #[serde(default)]
    pub llm: crate::llm::LlmFile,
    /// Agent sandboxes.
    #[serde(default)]
    pub agentbox: crate::agentbox::AgentboxFile,
    /// Sellers: the platform fee, price bounds, endpoints.
    #[serde(default)]
    pub sellers: crate::sellers::SellersFile,
    /// The console at `/console`.
    #[serde(default)]
    pub console: ConsoleFile,
}

/// The `[console]` table: the web console for people.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsoleFile {
    /// Account ids (`svc accounts create --wallet ...` prints one) whose wallet sign-ins also
    /// see the operator view: payments pending settlement, payouts to pay by hand, running
    /// gateways. A key's session never does.
    #[serde(default)]
    #[schemars(example = ["acct_0190f5c2d4e37b6a8c9d0e1f2a3b4c5d"])]
    pub operators: Vec<String>,
}

/// The `[limits]` table: operators' limits, the contract's values when unset. 0 turns a
/// limit off, for deployments behind a gateway of their own. `SVC_RATE_PER_MINUTE` and
/// `SVC_PREVIEWS_PER_HOUR` override the file.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Free `?preview=true` answers per client IP per hour, in a sliding window.
    #[schemars(extend("default" = svc_api::ApiConfig::default().previews_per_hour))]
    pub previews_per_hour: Option<u32>,
    /// Calls per client (the paying wallet, the API key's account, or else the IP) per minute
    /// on paid routes without a limit of their own.
    #[schemars(extend("default" = svc_api::ApiConfig::default().rate_per_minute))]
    pub rate_per_minute: Option<u32>,
    /// Calls per client per minute by route id (as `/api/x402/catalogue` lists them); a name
    /// that is no paid route's id stops the start. Top picks are limited to 30 by contract.
    #[serde(default)]
    #[schemars(example = serde_json::json!({"alpha.top_picks": 0, "infra.swap_quote": 60}))]
    pub routes: std::collections::BTreeMap<String, u32>,
}

impl LimitsFile {
    /// The per-route limits, each checked against the catalogue's paid routes: a name that
    /// is not one stops the start, rather than leaving a route unlimited by a typo.
    pub fn route_rates(
        &self,
        catalogue: &'static svc_catalogue::Catalogue,
    ) -> anyhow::Result<std::collections::HashMap<&'static str, u32>> {
        self.routes
            .iter()
            .map(|(id, limit)| match catalogue.get(id).filter(|r| r.is_paid()) {
                Some(route) => Ok((route.id, *limit)),
                None => anyhow::bail!("[limits.routes] names {id:?}, which is no paid route's id"),
            })
            .collect()
    }
}

impl FileConfig {
    /// Reads `path`.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Reads `path` when one is given; with none, every table takes its defaults.
    pub fn read_or_default(path: Option<&std::path::Path>) -> anyhow::Result<Self> {
        path.map_or_else(|| Ok(Self::default()), Self::read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_config_file_gives_every_table_its_defaults_and_a_missing_one_stops_the_start() {
        let file = FileConfig::read_or_default(None).expect("defaults");
        assert!(file.limits.routes.is_empty() && file.limits.rate_per_minute.is_none());
        let missing = std::path::Path::new("/nonexistent/svc.toml");
        let err = FileConfig::read_or_default(Some(missing)).expect_err("a named file must exist");
        assert!(format!("{err:#}").contains("/nonexistent/svc.toml"), "{err:#}");
    }

    #[test]
    fn the_help_of_keys_create_names_every_scope() {
        use clap::CommandFactory as _;
        let mut cli = Cli::command();
        let keys = cli.find_subcommand_mut("keys").expect("keys");
        let help = keys.find_subcommand_mut("create").expect("create").render_long_help().to_string();
        for scope in svc_accounts::Scope::ALL {
            assert!(help.contains(scope.as_str()), "{} is missing from:\n{help}", scope.as_str());
        }
    }

    #[test]
    fn debug_output_never_shows_the_database_password() {
        let args = StoreArgs { data_dir: "./data".into(), database_url: Some("postgres://u:hunter2@db/x".into()) };
        assert!(!format!("{args:?}").contains("hunter2"));
    }

    #[test]
    fn the_default_store_is_sqlite_in_the_data_dir() {
        let cli = Cli::try_parse_from(["svc", "migrate"]).expect("parses");
        let Command::Migrate(store) = cli.command else { panic!("migrate") };
        assert_eq!(store.url(), "sqlite://./data/svc.db");
    }

    #[test]
    fn relayer_and_payout_keys_never_show_in_debug_output() {
        let cli = Cli::try_parse_from([
            "svc",
            "serve",
            "--evm-relayer-key",
            "0xsecretsecret",
            "--evm-relayer-keys",
            "0xothersecret",
            "--payout-key",
            "0xtreasurysecret",
        ])
        .expect("parses");
        let Command::Serve(args) = cli.command else { panic!("serve") };
        assert!(!format!("{args:?}").contains("secretsecret"));
        assert!(!format!("{args:?}").contains("othersecret"));
        assert!(!format!("{args:?}").contains("treasurysecret"));
    }

    #[test]
    fn relayer_keys_come_from_both_settings_in_order() {
        let cli =
            Cli::try_parse_from(["svc", "serve", "--evm-relayer-key", "0xa", "--evm-relayer-keys", " 0xb, 0xc ,,"])
                .expect("parses");
        let Command::Serve(args) = cli.command else { panic!("serve") };
        assert_eq!(args.payments.relayer_keys(), ["0xa", "0xb", "0xc"]);
    }

    #[test]
    fn a_config_file_adds_evm_networks() {
        let file: FileConfig = toml::from_str(
            r#"
            [x402]
            facilitator = "builtin"
            [[x402.networks]]
            network = "eip155:31337"
            asset = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
            name = "USD Coin"
            version = "2"
            rpc_url = "http://127.0.0.1:8545"
            "#,
        )
        .expect("parses");
        assert_eq!(file.x402.networks[0].decimals, 6);
        assert!(toml::from_str::<FileConfig>("[x402]\nnetwork = 1").is_err(), "unknown keys are refused");
    }

    #[test]
    fn a_config_file_sets_limits_per_route_and_a_typo_stops_the_start() {
        let file: FileConfig = toml::from_str(
            r#"
            [limits]
            previews_per_hour = 0
            rate_per_minute = 600
            [limits.routes]
            "alpha.top_picks" = 0
            "infra.swap_quote" = 10
            "#,
        )
        .expect("parses");
        assert_eq!((file.limits.previews_per_hour, file.limits.rate_per_minute), (Some(0), Some(600)));
        let rates = file.limits.route_rates(svc_catalogue::catalogue()).expect("known routes");
        assert_eq!((rates["alpha.top_picks"], rates["infra.swap_quote"]), (0, 10));
        let typo: FileConfig = toml::from_str("[limits.routes]\n\"alpha.top_pick\" = 5").expect("parses");
        let refused = typo.limits.route_rates(svc_catalogue::catalogue()).expect_err("no such route");
        assert!(refused.to_string().contains("alpha.top_pick"), "{refused}");
        assert!(toml::from_str::<FileConfig>("[limits]\nper_minute = 1").is_err(), "unknown keys are refused");
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
