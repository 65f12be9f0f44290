//! `svc pay`: a small x402 client, so a user can pay a route end to end in one command, from
//! an EVM wallet (an EIP-3009 authorization) or a Solana wallet (a partially signed transfer
//! the facilitator co-signs).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use base64::Engine as _;
use serde_json::{Value, json};
use svc_chain_evm::{B256, Payer};
use svc_chain_solana::{ExactSvmPayment, Keypair, programs};
use svc_x402::{PaymentRequired, PaymentRequirements};

use crate::config::{PayArgs, WalletArgs};

/// The blockhash a Solana payment is signed with when no node is given and the challenge
/// offers none: 32 zero bytes, recognisably not a real one. svc checks no blockhash (its
/// verify-only mode accepts the payment); a node refuses the transaction, so a service that
/// settles answers with an error and nothing moves.
pub const PLACEHOLDER_BLOCKHASH: &str = "11111111111111111111111111111111";

/// The wallet that pays.
pub(crate) enum Wallet {
    /// From `SVC_PAYER_KEY`.
    Evm(Payer),
    /// From `SVC_PAYER_SOLANA_KEY`.
    Solana(Keypair),
}

/// The wallet `args` pay from: Solana when `--network` names Solana (or only the Solana key is
/// set), EVM otherwise. A bad key is reported as one, without its text.
pub(crate) fn wallet(args: &WalletArgs) -> anyhow::Result<Wallet> {
    let on_solana = match args.network.as_deref() {
        Some(network) => network == "solana" || network.starts_with("solana:"),
        None => args.payer_key.is_none() && args.payer_solana_key.is_some(),
    };
    if on_solana {
        let Some(key) = args.payer_solana_key.as_deref() else {
            bail!(
                "set SVC_PAYER_SOLANA_KEY to the paying Solana wallet's key (its base58 secret key, or the JSON \
                 array solana-keygen writes)"
            );
        };
        // The key's text never goes into the message.
        return Keypair::parse(key).map(Wallet::Solana).ok_or_else(|| {
            anyhow::anyhow!(
                "SVC_PAYER_SOLANA_KEY is not a Solana key: expected a base58 secret key of 64 bytes (as Phantom \
                 or solana-keygen export it), or the JSON array of 64 bytes solana-keygen writes"
            )
        });
    }
    let Some(key) = args.payer_key.as_deref() else {
        bail!(
            "set SVC_PAYER_KEY to the paying wallet's private key (0x followed by 64 hex digits), or \
             SVC_PAYER_SOLANA_KEY to pay on Solana"
        );
    };
    // The key's text never goes into the message.
    Payer::from_key(key.trim())
        .map(Wallet::Evm)
        .map_err(|_| anyhow::anyhow!("SVC_PAYER_KEY is not a private key: expected 0x followed by 64 hex digits"))
}

/// Runs `svc pay`; prints the answer's status, body and decoded `PAYMENT-RESPONSE` as JSON, and
/// fails (a non-zero exit) on any answer that is not a 2xx, so scripts can rely on it.
pub async fn run(args: PayArgs) -> anyhow::Result<()> {
    let wallet = wallet(&args.wallet)?;
    let url = if args.path.starts_with("http://") || args.path.starts_with("https://") {
        args.path.clone()
    } else {
        format!("{}{}", args.url.trim_end_matches('/'), args.path)
    };
    let method: reqwest::Method = args.method.to_uppercase().parse().context("method")?;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(120)).build()?;
    let request = |header: Option<(&str, &str)>| {
        let mut builder = client.request(method.clone(), &url);
        if let Some(body) = &args.body {
            builder = builder.header("content-type", "application/json").body(body.clone());
        }
        if let Some((name, value)) = header {
            builder = builder.header(name, value);
        }
        builder.send()
    };

    let first = request(None).await.with_context(|| format!("requesting {url}"))?;
    if first.status() != reqwest::StatusCode::PAYMENT_REQUIRED {
        return print(first).await;
    }
    let mut challenge = challenge_of(&first)?;
    match &wallet {
        Wallet::Evm(payer) => {
            // Where the service offers sign-in, prove the wallet first: the challenge that
            // answers quotes this wallet's own price (its volume discount).
            let network =
                svc_x402::client::choose(&challenge, args.wallet.network.as_deref()).map(|r| r.network.clone());
            if let Some(proof) = network.and_then(|n| svc_x402::client::sign_in_header(&challenge, &n, payer)) {
                let proof = proof.context("signing in with the wallet")?;
                let signed_in = request(Some((svc_x402::siwx::SIGN_IN_WITH_X, &proof)))
                    .await
                    .context("signing in with the wallet")?;
                if signed_in.status() == reqwest::StatusCode::PAYMENT_REQUIRED {
                    challenge = challenge_of(&signed_in)?;
                } else {
                    return print(signed_in).await;
                }
            }
        }
        Wallet::Solana(_) => {}
    }
    let requirement = requirement(&wallet, &args.wallet, &challenge)?;
    let payment = pay(&wallet, &args.wallet, &challenge, requirement).await?;
    let paid = request(Some((svc_x402::PAYMENT_SIGNATURE, &payment))).await.context("retrying with the payment")?;
    print(paid).await
}

/// What `wallet` pays of `challenge`: the first requirement on its kind of chain (and on
/// `--network`, when given).
pub(crate) fn requirement<'c>(
    wallet: &Wallet,
    args: &WalletArgs,
    challenge: &'c PaymentRequired,
) -> anyhow::Result<&'c PaymentRequirements> {
    let network = args.network.as_deref();
    match wallet {
        Wallet::Evm(_) => svc_x402::client::choose(challenge, network)
            .with_context(|| format!("the challenge offers nothing an EVM wallet can pay: {}", networks(challenge))),
        Wallet::Solana(_) => svc_x402::client::choose_solana(challenge, network)
            .with_context(|| format!("the challenge offers nothing a Solana wallet can pay: {}", networks(challenge))),
    }
}

/// The `PAYMENT-SIGNATURE` paying `requirement` of `challenge` from `wallet`.
pub(crate) async fn pay(
    wallet: &Wallet,
    args: &WalletArgs,
    challenge: &PaymentRequired,
    requirement: &PaymentRequirements,
) -> anyhow::Result<String> {
    match wallet {
        Wallet::Evm(payer) => pay_evm(challenge, requirement, payer),
        Wallet::Solana(payer) => pay_solana(args, challenge, requirement, payer).await,
    }
}

/// The `PAYMENT-SIGNATURE` paying `requirement` from an EVM wallet.
fn pay_evm(challenge: &PaymentRequired, requirement: &PaymentRequirements, payer: &Payer) -> anyhow::Result<String> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    announce(requirement, &payer.address());
    Ok(svc_x402::client::pay_header(challenge, requirement, payer, now, B256::random())?)
}

/// The `PAYMENT-SIGNATURE` paying `requirement` from a Solana wallet: the official client's
/// transaction, with the blockhash the challenge offers, else the node's, else (no node given)
/// [`PLACEHOLDER_BLOCKHASH`], said on stderr.
async fn pay_solana(
    args: &WalletArgs,
    challenge: &PaymentRequired,
    requirement: &PaymentRequirements,
    payer: &Keypair,
) -> anyhow::Result<String> {
    let node = args.solana_rpc_url.as_deref().map(SolanaNode::new).transpose()?;
    // The official client reads the mint's program and decimals from a node; without one,
    // the challenge's word (or USDC's known mints) decides, and USDC is an SPL Token mint.
    let (token_program, decimals) = match &node {
        Some(node) => node.mint(&requirement.asset).await?,
        None => {
            let decimals = svc_x402::client::solana_decimals(requirement).with_context(|| {
                format!(
                    "the decimals of mint {} are unknown: give a Solana node (--solana-rpc-url or \
                     SVC_SOLANA_RPC_URL) to read them",
                    requirement.asset
                )
            })?;
            (programs::TOKEN, decimals)
        }
    };
    let blockhash = match (offered_blockhash(requirement), &node) {
        (Some(offered), _) => offered.to_owned(),
        (None, Some(node)) => node.latest_blockhash().await?,
        (None, None) => {
            eprintln!(
                "no Solana node given (--solana-rpc-url or SVC_SOLANA_RPC_URL) and the challenge offers no \
                 recentBlockhash: signing with a placeholder blockhash. A verify-only service (svc's default) \
                 accepts it; one that settles on chain refuses it, and nothing moves."
            );
            PLACEHOLDER_BLOCKHASH.to_owned()
        }
    };
    let mut nonce = [0u8; 16];
    nonce.copy_from_slice(&B256::random()[..16]);
    announce(requirement, &payer.address());
    let payment = ExactSvmPayment { token_program, recent_blockhash: &blockhash, nonce };
    Ok(svc_x402::client::pay_header_solana(challenge, requirement, payer, decimals, &payment)?)
}

/// Says on stderr what is about to be paid, and from which wallet (scripts read the amount).
fn announce(requirement: &svc_x402::PaymentRequirements, from: &dyn std::fmt::Display) {
    eprintln!(
        "paying {} atomic units of {} on {} from {from}",
        requirement.amount, requirement.asset, requirement.network
    );
}

/// The blockhash a Solana requirement offers (`extra.recentBlockhash`); the official client
/// takes it instead of asking a node.
fn offered_blockhash(requirement: &PaymentRequirements) -> Option<&str> {
    requirement.extra.as_ref()?.get("recentBlockhash")?.as_str()
}

/// The networks a challenge offers, for an error message.
fn networks(challenge: &PaymentRequired) -> String {
    let offered: Vec<&str> = challenge.accepts.iter().map(|r| r.network.as_str()).collect();
    if offered.is_empty() { "none".to_owned() } else { offered.join(", ") }
}

/// A Solana JSON-RPC node, read by the paying side only. Its URL (which may carry an API key)
/// never goes into a message.
struct SolanaNode {
    http: reqwest::Client,
    url: String,
}

impl SolanaNode {
    fn new(url: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(15)).build()?;
        Ok(SolanaNode { http, url: url.to_owned() })
    }

    async fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let reply: Value =
            async { self.http.post(&self.url).json(&body).send().await?.error_for_status()?.json().await }
                .await
                .map_err(|e: reqwest::Error| anyhow::anyhow!("the Solana node's {method}: {}", e.without_url()))?;
        if let Some(error) = reply.get("error") {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("an error");
            bail!("the Solana node's {method} answered: {message}");
        }
        reply.get("result").cloned().with_context(|| format!("the Solana node's {method} answered no result"))
    }

    /// `getLatestBlockhash` at `confirmed`, the official client's commitment.
    async fn latest_blockhash(&self) -> anyhow::Result<String> {
        let result = self.call("getLatestBlockhash", json!([{"commitment": "confirmed"}])).await?;
        result["value"]["blockhash"]
            .as_str()
            .map(str::to_owned)
            .context("the Solana node's getLatestBlockhash answered no blockhash")
    }

    /// The mint's token program (its owner) and decimals (byte 44 of the SPL mint layout,
    /// which Token-2022 keeps), as the official client reads them.
    async fn mint(&self, mint: &str) -> anyhow::Result<(&'static str, u8)> {
        let result =
            self.call("getAccountInfo", json!([mint, {"encoding": "base64", "commitment": "confirmed"}])).await?;
        let account = &result["value"];
        if account.is_null() {
            bail!("the mint {mint} does not exist on the Solana node given");
        }
        let program = match account["owner"].as_str() {
            Some(programs::TOKEN) => programs::TOKEN,
            Some(programs::TOKEN_2022) => programs::TOKEN_2022,
            _ => bail!("the asset {mint} was not created by a known token program"),
        };
        let data = account["data"][0]
            .as_str()
            .and_then(|data| base64::engine::general_purpose::STANDARD.decode(data).ok())
            .with_context(|| format!("the Solana node's account {mint} has no base64 data"))?;
        // An SPL mint is 82 bytes: authority option (36), supply (8), decimals (1), ...
        let decimals = data.get(44).copied().filter(|_| data.len() >= 82);
        Ok((program, decimals.with_context(|| format!("the account {mint} is not a token mint"))?))
    }
}

/// The challenge a 402 carries in `PAYMENT-REQUIRED`.
fn challenge_of(response: &reqwest::Response) -> anyhow::Result<PaymentRequired> {
    let header = response.headers().get(svc_x402::PAYMENT_REQUIRED).context("a 402 without PAYMENT-REQUIRED")?;
    let json =
        base64::engine::general_purpose::STANDARD.decode(header.as_bytes()).context("PAYMENT-REQUIRED base64")?;
    serde_json::from_slice(&json).context("PAYMENT-REQUIRED JSON")
}

/// Prints the answer; an answer that is not a 2xx is an error naming its status and code.
async fn print(response: reqwest::Response) -> anyhow::Result<()> {
    use std::io::Write as _;
    let status = response.status().as_u16();
    let settlement = response
        .headers()
        .get(svc_x402::PAYMENT_RESPONSE)
        .and_then(|h| base64::engine::general_purpose::STANDARD.decode(h.as_bytes()).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let text = response.text().await?;
    let body = serde_json::from_str::<serde_json::Value>(&text).unwrap_or(serde_json::Value::String(text));
    let out = serde_json::json!({"status": status, "payment_response": settlement, "body": body});
    writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&out)?)?;
    if !(200..300).contains(&status) {
        let code = body.get("code").or_else(|| body.get("error")).and_then(serde_json::Value::as_str);
        match code {
            Some(code) => bail!("the service answered {status} ({code})"),
            None => bail!("the service answered {status}"),
        }
    }
    Ok(())
}
