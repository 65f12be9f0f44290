//! `svc pay`: a small x402 client, so a user can pay a route end to end in one command.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use base64::Engine as _;
use svc_chain_evm::{B256, Payer};
use svc_x402::PaymentRequired;

use crate::config::PayArgs;

/// Runs `svc pay`; prints the answer's status, body and decoded `PAYMENT-RESPONSE` as JSON, and
/// fails (a non-zero exit) on any answer that is not a 2xx, so scripts can rely on it.
pub async fn run(args: PayArgs) -> anyhow::Result<()> {
    let Some(key) = args.payer_key.as_deref() else {
        bail!("set SVC_PAYER_KEY to the paying wallet's private key (0x followed by 64 hex digits)");
    };
    // The key's text never goes into the message.
    let payer = Payer::from_key(key.trim())
        .map_err(|_| anyhow::anyhow!("SVC_PAYER_KEY is not a private key: expected 0x followed by 64 hex digits"))?;
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
    // Where the service offers sign-in, prove the wallet first: the challenge that answers
    // quotes this wallet's own price (its volume discount).
    let network = svc_x402::client::choose(&challenge, args.network.as_deref()).map(|r| r.network.clone());
    if let Some(proof) = network.and_then(|n| svc_x402::client::sign_in_header(&challenge, &n, &payer)) {
        let proof = proof.context("signing in with the wallet")?;
        let signed_in =
            request(Some((svc_x402::siwx::SIGN_IN_WITH_X, &proof))).await.context("signing in with the wallet")?;
        if signed_in.status() == reqwest::StatusCode::PAYMENT_REQUIRED {
            challenge = challenge_of(&signed_in)?;
        } else {
            return print(signed_in).await;
        }
    }
    let Some(requirement) = svc_x402::client::choose(&challenge, args.network.as_deref()) else {
        bail!("the challenge offers nothing an EVM wallet can pay: {:?}", challenge.accepts);
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    eprintln!(
        "paying {} atomic units of {} on {} from {}",
        requirement.amount,
        requirement.asset,
        requirement.network,
        payer.address()
    );
    let payment = svc_x402::client::pay_header(&challenge, requirement, &payer, now, B256::random())?;
    let paid = request(Some((svc_x402::PAYMENT_SIGNATURE, &payment))).await.context("retrying with the payment")?;
    print(paid).await
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
