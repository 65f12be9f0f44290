//! The credentials the fake vendors accept, and the ones the adapters send them: below the
//! vendors that check them and the crate root that publishes them.

/// The API key every keyed fake vendor accepts, and the key the adapters send when pointed
/// at the simulator without one configured; any other key is refused as the vendor would.
pub const SIMULATED_KEY: &str = "simulated-key";

/// The secret the fake signed-request aggregator checks signatures with.
pub const SIMULATED_SECRET: &str = "simulated-secret";

/// The passphrase the fake signed-request aggregator expects.
pub const SIMULATED_PASSPHRASE: &str = "simulated-passphrase";

/// The agent key the simulated perp exchange has approved, so the default run and the tests
/// can trade offline. A well-known test key: it holds nothing anywhere and must never be
/// used against a real exchange.
pub const PERPDEX_AGENT_KEY: &str = "0x7e57ab1e5eed0fa9e0000000000000000000000000000000000000000000402a";

/// The address of [`PERPDEX_AGENT_KEY`]: the only signer the simulated exchange accepts.
pub fn perpdex_agent_address() -> alloy_primitives::Address {
    PERPDEX_AGENT_KEY
        .parse::<alloy_signer_local::PrivateKeySigner>()
        .map(|signer| signer.address())
        .unwrap_or_else(|_| unreachable!("the simulator's agent key is a valid private key"))
}
