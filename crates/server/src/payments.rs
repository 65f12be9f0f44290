//! Builds the paywall's networks and facilitator from configuration, and refuses settings
//! that would take money wrongly: verify-only mode or a development recipient in production.

use std::sync::Arc;
#[cfg(feature = "settle")]
use std::time::Duration;

use anyhow::{Context as _, bail};
use svc_domain::Clock;
use svc_x402::{BuiltinFacilitator, Facilitator, Ledgers, NetworkKind, Offer, PaymentNetwork};

use crate::config::{DEV_PAY_TO_EVM, DEV_PAY_TO_SOLANA, DEV_SOLANA_FEE_PAYER, FileConfig, PaymentArgs};

/// A network and the node that settles on it, if any.
struct Configured {
    network: PaymentNetwork,
    rpc_url: Option<String>,
}

/// Solana mainnet USDC, with our fee payer (the configured key's, else the development one).
fn solana_network(args: &PaymentArgs) -> anyhow::Result<Configured> {
    let fee_payer = match &args.solana_fee_payer_key {
        Some(key) => svc_chain_solana::Keypair::parse(key)
            .context("SVC_SOLANA_FEE_PAYER_KEY is not a base58 seed or keypair, 0x-hex seed or JSON byte array")?
            .address(),
        None => DEV_SOLANA_FEE_PAYER.to_owned(),
    };
    let pay_to = args.pay_to_solana.as_deref().unwrap_or(DEV_PAY_TO_SOLANA);
    let network = PaymentNetwork::solana(svc_x402::network::SOLANA, svc_x402::network::SOLANA_USDC, pay_to, &fee_payer)
        .context("SVC_PAY_TO_SOLANA")?;
    Ok(Configured { network, rpc_url: args.solana_rpc_url.clone() })
}

/// What the payment settings build: the networks offered, the facilitator that checks
/// payments on them, and the networks svc pays sellers out on itself.
pub struct Payments {
    /// Networks and recipients.
    pub offer: Offer,
    /// Verifies and settles.
    pub facilitator: Arc<dyn Facilitator>,
    /// Sellers' payouts, on the EVM networks svc settles on itself.
    pub payouts: Vec<Arc<dyn svc_sellers::payouts::PayoutChain>>,
}

/// The networks offered and the facilitator that checks payments on them.
pub async fn build(args: &PaymentArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Payments> {
    let file = FileConfig::read_or_default(args.config.as_deref())?;
    let external = match file.x402.facilitator.as_deref() {
        None | Some("builtin") => None,
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => Some(url.to_owned()),
        Some(other) => bail!("facilitator must be \"builtin\" or an http(s) URL, not {other:?}"),
    };
    let default_pay_to = args.pay_to_evm.as_deref().unwrap_or(DEV_PAY_TO_EVM);
    if args.production && args.pay_to_evm.is_none() && file.x402.networks.iter().any(|n| n.pay_to.is_none()) {
        bail!("--production needs a recipient: set SVC_PAY_TO_EVM (or pay_to on every configured network)");
    }
    if args.production && file.x402.networks.is_empty() && args.pay_to_evm.is_none() {
        bail!("--production needs a recipient: set SVC_PAY_TO_EVM");
    }

    let with_solana = file.x402.solana.unwrap_or(true);
    if args.production && with_solana && args.pay_to_solana.is_none() {
        bail!("--production needs a Solana recipient: set SVC_PAY_TO_SOLANA (or solana = false in [x402])");
    }

    let mut configured: Vec<Configured> = if file.x402.networks.is_empty() {
        let network = PaymentNetwork::base_usdc(default_pay_to).context("SVC_PAY_TO_EVM")?;
        vec![Configured { network, rpc_url: args.evm_rpc_url.clone() }]
    } else {
        file.x402
            .networks
            .iter()
            .map(|n| {
                let pay_to = n.pay_to.as_deref().unwrap_or(default_pay_to);
                let network = PaymentNetwork::evm(&n.network, &n.asset, &n.name, &n.version, n.decimals, pay_to)
                    .with_context(|| format!("network {}", n.network))?;
                Ok(Configured { network, rpc_url: n.rpc_url.clone() })
            })
            .collect::<anyhow::Result<_>>()?
    };
    if with_solana {
        configured.push(solana_network(args)?);
    }

    let networks: Vec<PaymentNetwork> = configured.iter().map(|c| c.network.clone()).collect();
    let max_timeout = file.x402.max_timeout_seconds.unwrap_or(svc_x402::MAX_TIMEOUT_SECONDS);
    if let Some(url) = external {
        let ledgers = read_nodes(&configured).await?;
        let (offer, facilitator) = external_facilitator(&url, networks, max_timeout, ledgers).await?;
        return Ok(Payments { offer, facilitator, payouts: Vec::new() });
    }
    let facilitator = BuiltinFacilitator::new(networks.clone(), clock.clone());
    let (facilitator, payouts) = attach_nodes(facilitator, &configured, args, clock).await?;
    if facilitator.verify_only() {
        if args.production {
            bail!(
                "--production refuses verify-only mode: give every network an RPC URL and its key \
                 (SVC_EVM_RELAYER_KEY, SVC_SOLANA_FEE_PAYER_KEY)"
            );
        }
        tracing::warn!(
            "VERIFY-ONLY MODE: payments are verified but never settled on chain; paid answers are served for free \
             signatures. Set SVC_EVM_RPC_URL and SVC_EVM_RELAYER_KEY (Base), SVC_SOLANA_RPC_URL and \
             SVC_SOLANA_FEE_PAYER_KEY (Solana) to settle. Never run this way in production."
        );
    }
    Ok(Payments { offer: Offer::new(networks, max_timeout), facilitator: Arc::new(facilitator), payouts })
}

/// An external facilitator: offer only the networks it says it settles (x402 §9.2).
/// The facilitator settles; the nodes configured beside it (`ledgers`) are read to learn what
/// became of settlements whose answer was lost.
async fn external_facilitator(
    url: &str,
    networks: Vec<PaymentNetwork>,
    max_timeout: u64,
    ledgers: Ledgers,
) -> anyhow::Result<(Offer, Arc<dyn Facilitator>)> {
    if ledgers.is_empty() {
        tracing::warn!(
            "no RPC URL configured beside the external facilitator: payments whose settlement outcome is lost \
             stay undecided until someone looks them up"
        );
    }
    let facilitator = svc_x402::HttpFacilitator::new(url, std::time::Duration::from_secs(90))?.with_ledgers(ledgers);
    let supported = facilitator.supported().await.context("asking the facilitator what it supports")?;
    let settles = |n: &PaymentNetwork| {
        supported.kinds.iter().find(|k| k.x402_version == 2 && k.scheme == "exact" && k.network == n.network)
    };
    let (mut kept, dropped): (Vec<_>, Vec<_>) = networks.into_iter().partition(|n| settles(n).is_some());
    // On Solana the facilitator co-signs: its own fee payer goes in the requirements (x402
    // §9.1), or clients would build transactions it cannot sign.
    for network in &mut kept {
        let kind = settles(network).and_then(|k| k.extra.as_ref()).and_then(|e| e.get("feePayer"));
        if let NetworkKind::Solana { fee_payer } = &mut network.kind {
            let Some(theirs) = kind.and_then(|v| v.as_str()) else {
                bail!("the facilitator settles {} but names no feePayer in /supported", network.network);
            };
            theirs
                .parse::<svc_domain::SolanaAddress>()
                .map_err(|_| anyhow::anyhow!("the facilitator's feePayer {theirs} is not a Solana address"))?;
            theirs.clone_into(fee_payer);
        }
    }
    for n in &dropped {
        tracing::warn!(network = %n.network, "the facilitator does not settle this network; not offered");
    }
    if kept.is_empty() {
        bail!("the facilitator supports none of the configured networks");
    }
    tracing::info!(networks = kept.len(), "payments verified and settled by an external facilitator");
    Ok((Offer::new(kept, max_timeout), Arc::new(facilitator)))
}

/// The facilitator with the nodes it settles on, and the payouts made on the EVM ones.
type Attached = (BuiltinFacilitator, Vec<Arc<dyn svc_sellers::payouts::PayoutChain>>);

#[cfg(feature = "settle")]
async fn attach_nodes(
    mut facilitator: BuiltinFacilitator,
    configured: &[Configured],
    args: &PaymentArgs,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Attached> {
    use svc_x402::network::NetworkKind;
    let mut payouts: Vec<Arc<dyn svc_sellers::payouts::PayoutChain>> = Vec::new();
    for c in configured {
        let Some(rpc_url) = &c.rpc_url else { continue };
        let domain = match &c.network.kind {
            NetworkKind::Evm { domain, .. } => domain,
            NetworkKind::Solana { .. } => {
                let key = args.solana_fee_payer_key.as_deref().with_context(|| {
                    format!("{} has an RPC URL but SVC_SOLANA_FEE_PAYER_KEY is not set", c.network.network)
                })?;
                let key = svc_chain_solana::Keypair::parse(key).context("SVC_SOLANA_FEE_PAYER_KEY")?;
                let rpc = svc_chain_solana::settle::SolanaRpc::new(rpc_url, Duration::from_secs(30))?;
                rpc.health()
                    .await
                    .with_context(|| format!("asking the node of {} for its health", c.network.network))?;
                tracing::info!(network = %c.network.network, fee_payer = %key.address(), "settling payments on chain");
                rpc.watch_fee_payer(key.address()).await;
                facilitator = facilitator.with_solana_chain(&c.network.network, key, Arc::new(rpc))?;
                continue;
            }
        };
        let keys = args.relayer_keys();
        if keys.is_empty() {
            bail!(
                "{} has an RPC URL but neither SVC_EVM_RELAYER_KEY nor SVC_EVM_RELAYER_KEYS is set",
                c.network.network
            );
        }
        let settler = svc_chain_evm::settle::EvmSettler::connect(
            rpc_url,
            &keys,
            domain.token,
            domain.chain_id,
            Duration::from_secs(60),
        )
        .await
        .with_context(|| format!("connecting to the node of {}", c.network.network))?;
        for (relayer, gas) in settler.gas_levels() {
            tracing::info!(network = %c.network.network, %relayer, ?gas, "settling payments on chain");
        }
        let settler = Arc::new(settler);
        let treasury = args.payout_key.clone().or_else(|| keys.first().cloned()).unwrap_or_default();
        let payout =
            crate::payouts::EvmPayouts::new(&c.network.network, settler.clone(), &treasury, domain, clock.clone())
                .context("SVC_PAYOUT_KEY")?;
        tracing::info!(network = %c.network.network, treasury = %payout.treasury(), "paying sellers out on chain");
        payouts.push(Arc::new(payout));
        facilitator = facilitator.with_evm_chain(&c.network.network, settler);
    }
    Ok((facilitator, payouts))
}

/// Read-only connections to the configured nodes: no key is needed to read a payment's fate.
#[cfg(feature = "settle")]
async fn read_nodes(configured: &[Configured]) -> anyhow::Result<Ledgers> {
    let mut ledgers = Ledgers::default();
    for c in configured {
        let Some(rpc_url) = &c.rpc_url else { continue };
        let network = &c.network.network;
        ledgers = match &c.network.kind {
            NetworkKind::Evm { domain, .. } => {
                let reader = svc_chain_evm::settle::EvmReader::connect(rpc_url, domain.token, domain.chain_id)
                    .await
                    .with_context(|| format!("connecting to the node of {network}"))?;
                ledgers.with_evm(network, Arc::new(reader))
            }
            NetworkKind::Solana { .. } => {
                let rpc = svc_chain_solana::settle::SolanaRpc::new(rpc_url, Duration::from_secs(30))?;
                rpc.health().await.with_context(|| format!("asking the node of {network} for its health"))?;
                ledgers.with_solana(network, Arc::new(rpc))
            }
        };
        tracing::info!(network = %network, "reading payments from the network's node to reconcile them");
    }
    Ok(ledgers)
}

#[cfg(not(feature = "settle"))]
async fn read_nodes(configured: &[Configured]) -> anyhow::Result<Ledgers> {
    if configured.iter().any(|c| c.rpc_url.is_some()) {
        bail!("this build has no node client (cargo feature `settle`); rebuild with it to use an RPC URL");
    }
    Ok(Ledgers::default())
}

#[cfg(not(feature = "settle"))]
async fn attach_nodes(
    facilitator: BuiltinFacilitator,
    configured: &[Configured],
    _: &PaymentArgs,
    _: Arc<dyn Clock>,
) -> anyhow::Result<Attached> {
    if configured.iter().any(|c| c.rpc_url.is_some()) {
        bail!("this build has no on-chain settlement (cargo feature `settle`); rebuild with it to use an RPC URL");
    }
    Ok((facilitator, Vec::new()))
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::config::{Cli, Command};

    fn serve_args(extra: &[&str]) -> PaymentArgs {
        let cli = Cli::try_parse_from([&["svc", "serve"], extra].concat()).expect("parses");
        let Command::Serve(args) = cli.command else { panic!("serve") };
        args.payments
    }

    fn clock() -> Arc<dyn Clock> {
        Arc::new(svc_domain::SystemClock)
    }

    #[tokio::test]
    async fn production_refuses_verify_only_mode() {
        let pay_to = ["--pay-to-evm", DEV_PAY_TO_EVM, "--pay-to-solana", DEV_PAY_TO_SOLANA];
        let err = build(&serve_args(&[&["--production"], &pay_to[..]].concat()), clock()).await.err();
        assert!(err.is_some_and(|e| e.to_string().contains("verify-only")));
        let Payments { offer, facilitator, payouts } =
            build(&serve_args(&pay_to), clock()).await.expect("development runs verify-only");
        assert!(payouts.is_empty(), "no chain, no payouts: an operator pays them");
        assert!(facilitator.verify_only());
        assert_eq!(offer.networks().len(), 2, "Base and Solana");
    }

    /// Serves `app` on a loopback port; returns its address.
    async fn serve(app: axum::Router) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    }

    /// Beside an external facilitator, a configured node is only read: no relayer key is
    /// asked for, and a payment whose settlement was lost is decided from the token's record
    /// and the chain's clock.
    #[cfg(feature = "settle")]
    #[tokio::test]
    async fn an_external_facilitator_reconciles_through_the_configured_node() {
        let supported = serde_json::json!({"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:8453"}],
            "extensions": [], "signers": {}});
        let facilitator = serve(
            axum::Router::new().route("/supported", axum::routing::get(move || async move { axum::Json(supported) })),
        )
        .await;
        // A Base node (JSON-RPC) at 1_700_000_000 whose token has used no authorization.
        let node = serve(axum::Router::new().route(
            "/",
            axum::routing::post(|axum::Json(call): axum::Json<serde_json::Value>| async move {
                let result = match call["method"].as_str() {
                    Some("eth_chainId") => serde_json::json!("0x2105"),
                    Some("eth_call") => serde_json::json!(format!("0x{:064x}", 0)),
                    Some("eth_getBlockByNumber") => latest_block(1_700_000_000),
                    other => panic!("unexpected node call {other:?}"),
                };
                axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": call["id"], "result": result}))
            }),
        ))
        .await;
        let file = std::env::temp_dir().join(format!("svc-facilitator-node-{}.toml", std::process::id()));
        std::fs::write(&file, format!("[x402]\nfacilitator = \"http://{facilitator}\"\nsolana = false\n"))
            .expect("config");
        let rpc = format!("http://{node}");
        let args = serve_args(&["--config", file.to_str().expect("utf-8"), "--evm-rpc-url", &rpc]);
        let built = build(&args, clock()).await.expect("built without a relayer key").facilitator;
        let _ = std::fs::remove_file(&file);
        let lost = svc_x402::Unresolved {
            network: "eip155:8453",
            payer: "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
            nonce: "0x00000000000000000000000000000000000000000000000000000000000000aa",
            transaction: None,
            abandoned: false,
            valid_before: Some(1_700_000_001),
            now_secs: 1_800_000_000,
        };
        // Our clock is past validBefore; the chain's is not: a transfer may still be mined.
        assert_eq!(built.resolve(lost).await, Ok(svc_x402::Resolution::Unknown));
        let expired = svc_x402::Unresolved { valid_before: Some(1_700_000_000), ..lost };
        assert_eq!(built.resolve(expired).await, Ok(svc_x402::Resolution::NotSettled));
    }

    /// A block as nodes send it, at `timestamp`.
    #[cfg(feature = "settle")]
    fn latest_block(timestamp: u64) -> serde_json::Value {
        let hash = format!("0x{:064x}", 7);
        serde_json::json!({
            "hash": hash, "parentHash": hash, "sha3Uncles": hash, "miner": format!("0x{:040x}", 0),
            "stateRoot": hash, "transactionsRoot": hash, "receiptsRoot": hash,
            "logsBloom": format!("0x{}", "0".repeat(512)), "difficulty": "0x0", "number": "0x10",
            "gasLimit": "0x1c9c380", "gasUsed": "0x0", "timestamp": format!("0x{timestamp:x}"), "extraData": "0x",
            "mixHash": hash, "nonce": "0x0000000000000000", "baseFeePerGas": "0x1", "size": "0x200",
            "uncles": [], "transactions": [],
        })
    }

    /// An external facilitator co-signs Solana payments with its own key: clients must be
    /// told that key, from its `/supported`, not ours.
    #[tokio::test]
    async fn an_external_facilitator_names_the_solana_fee_payer() {
        const THEIRS: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
        let supported = serde_json::json!({"kinds": [
            {"x402Version": 2, "scheme": "exact", "network": svc_x402::network::SOLANA, "extra": {"feePayer": THEIRS}},
            {"x402Version": 2, "scheme": "exact", "network": "eip155:8453"},
        ], "extensions": [], "signers": {}});
        let addr = serve(
            axum::Router::new().route("/supported", axum::routing::get(move || async move { axum::Json(supported) })),
        )
        .await;
        let file = std::env::temp_dir().join(format!("svc-facilitator-{}.toml", std::process::id()));
        std::fs::write(&file, format!("[x402]\nfacilitator = \"http://{addr}\"\n")).expect("config");

        let offer =
            build(&serve_args(&["--config", file.to_str().expect("utf-8")]), clock()).await.expect("built").offer;
        let _ = std::fs::remove_file(&file);
        let solana = offer.network(svc_x402::network::SOLANA).expect("Solana offered");
        assert_eq!(solana.kind, NetworkKind::Solana { fee_payer: THEIRS.to_owned() });
    }
}
