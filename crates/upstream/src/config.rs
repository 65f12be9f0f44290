//! Where each vendor lives and how it is called.

use std::time::Duration;

/// The vendors behind the data routes, named by the spec's neutral words where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// On-chain analytics (smart money, flows, holders, profiles).
    Chaindata,
    /// The social network's v2 API.
    Social,
    /// The perpetuals exchange (`/info` reads, signed `/exchange` actions).
    Perpdex,
    /// The order-book exchange's public indexer.
    Orderbookdex,
    /// The prediction market's catalogue of events and markets.
    PredmktGamma,
    /// The prediction market's order books and prices.
    PredmktClob,
    /// The token launchpad (coin state by mint).
    Launchpad,
    /// The first Solana swap aggregator.
    Jupiter,
    /// The second Solana swap aggregator (signed requests).
    Okx,
    /// EVM routing, DeFi positions and token prices.
    Enso,
    /// DeFi yields on Solana.
    Defillama,
    /// Transaction scanning (simulation and validation).
    Blockaid,
    /// A Solana node's JSON-RPC API (token mints' authorities).
    SolanaRpc,
}

impl Vendor {
    /// Every vendor; settings, the simulator and start-up logs walk this list.
    pub const ALL: &[Vendor] = &[
        Vendor::Chaindata,
        Vendor::Social,
        Vendor::Perpdex,
        Vendor::Orderbookdex,
        Vendor::PredmktGamma,
        Vendor::PredmktClob,
        Vendor::Launchpad,
        Vendor::Jupiter,
        Vendor::Okx,
        Vendor::Enso,
        Vendor::Defillama,
        Vendor::Blockaid,
        Vendor::SolanaRpc,
    ];

    /// The family name clients see in errors and operators see in metrics.
    pub fn family(self) -> &'static str {
        match self {
            Vendor::Chaindata => "chaindata",
            Vendor::Social => "social",
            Vendor::Perpdex => "perpdex",
            Vendor::Orderbookdex => "orderbookdex",
            Vendor::PredmktGamma | Vendor::PredmktClob => "predmkt",
            Vendor::Launchpad => "launchpad",
            Vendor::Jupiter => "jupiter",
            Vendor::Okx => "okx",
            Vendor::Enso => "evm-router",
            Vendor::Defillama => "yields",
            Vendor::Blockaid => "shield",
            Vendor::SolanaRpc => "solana-rpc",
        }
    }

    /// The path prefix of this vendor on the simulator.
    pub fn slug(self) -> &'static str {
        match self {
            Vendor::PredmktGamma => "predmkt-gamma",
            Vendor::PredmktClob => "predmkt-clob",
            other => other.family(),
        }
    }

    /// The vendor's production address.
    pub fn real_base_url(self) -> &'static str {
        match self {
            Vendor::Chaindata => "https://api.nansen.ai",
            Vendor::Social => "https://api.x.com",
            Vendor::Perpdex => "https://api.hyperliquid.xyz",
            Vendor::Orderbookdex => "https://indexer.dydx.trade",
            Vendor::PredmktGamma => "https://gamma-api.polymarket.com",
            Vendor::PredmktClob => "https://clob.polymarket.com",
            Vendor::Launchpad => "https://frontend-api-v3.pump.fun",
            Vendor::Jupiter => "https://lite-api.jup.ag",
            Vendor::Okx => "https://web3.okx.com",
            Vendor::Enso => "https://api.enso.finance",
            Vendor::Defillama => "https://yields.llama.fi",
            Vendor::Blockaid => "https://api.blockaid.io",
            Vendor::SolanaRpc => "https://api.mainnet-beta.solana.com",
        }
    }

    /// The environment variable prefix of this vendor's settings: `{prefix}_URL` (base URL)
    /// and `{prefix}_KEY` (API key, where the vendor wants one).
    pub fn env_prefix(self) -> &'static str {
        match self {
            Vendor::Chaindata => "SVC_CHAINDATA",
            Vendor::Social => "SVC_SOCIAL",
            Vendor::Perpdex => "SVC_PERPDEX",
            Vendor::Orderbookdex => "SVC_ORDERBOOKDEX",
            Vendor::PredmktGamma => "SVC_PREDMKT_GAMMA",
            Vendor::PredmktClob => "SVC_PREDMKT_CLOB",
            Vendor::Launchpad => "SVC_LAUNCHPAD",
            Vendor::Jupiter => "SVC_JUPITER",
            Vendor::Okx => "SVC_OKX",
            Vendor::Enso => "SVC_ENSO",
            Vendor::Defillama => "SVC_DEFILLAMA",
            Vendor::Blockaid => "SVC_BLOCKAID",
            // The node svc settles Solana payments through reads the mints too.
            Vendor::SolanaRpc => "SVC_SOLANA_RPC",
        }
    }
}

impl std::fmt::Display for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.family())
    }
}

/// The key the simulator's keyed vendors accept; a config pointed at the simulator sends it
/// (the simulator crate holds the same value, and a test keeps the two equal).
pub const SIMULATED_KEY: &str = "simulated-key";

/// The signed-request aggregator's simulated credential, `key:secret:passphrase`.
pub const SIMULATED_OKX_CREDENTIAL: &str = "simulated-key:simulated-secret:simulated-passphrase";

/// How one vendor is reached.
#[derive(Clone)]
pub struct VendorConfig {
    /// Base URL without a trailing slash; requests go to paths under it only.
    pub base_url: String,
    /// API key, for vendors that want one; sent only in the vendor's own auth header and
    /// never printed (`Debug` redacts it).
    pub key: Option<String>,
    /// Limit on one attempt, connection to last byte.
    pub timeout: Duration,
    /// Attempts after the first on 429, 5xx or a refused connection.
    pub retries: u32,
    /// Calls in flight at once; more wait their turn, so a burst of agents cannot push the
    /// vendor into rate-limiting every one of them.
    pub max_concurrency: usize,
    /// Longest `Retry-After` honoured; a vendor asking for more fails the call at once
    /// rather than holding an agent that is waiting on its answer.
    pub max_retry_wait: Duration,
}

impl VendorConfig {
    /// Defaults suited to an interactive API: 8 s per attempt, 2 retries, 16 in flight.
    pub fn new(base_url: impl Into<String>) -> Self {
        VendorConfig {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            key: None,
            timeout: Duration::from_secs(8),
            retries: 2,
            max_concurrency: 16,
            max_retry_wait: Duration::from_secs(2),
        }
    }
}

impl std::fmt::Debug for VendorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VendorConfig")
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("max_concurrency", &self.max_concurrency)
            .field("max_retry_wait", &self.max_retry_wait)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_key() {
        let mut config = VendorConfig::new("https://vendor.example");
        config.key = Some("sk-very-secret".into());
        let printed = format!("{config:?}");
        assert!(!printed.contains("sk-very-secret") && printed.contains("<redacted>"), "{printed}");
    }
}
