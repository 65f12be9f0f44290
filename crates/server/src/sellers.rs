//! The seller side's settings: the `[sellers]` table of the config file, and
//! `SVC_SELLER_FEE_BPS` from the environment.

use anyhow::Context as _;
use svc_domain::Money;
use svc_sellers::{EndpointPolicy, SellersConfig};
use svc_x402::Offer;

/// The `[sellers]` table: what svc allows the sellers of agents.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SellersFile {
    /// The platform's fee, basis points of each invoke's price (`SVC_SELLER_FEE_BPS` wins);
    /// shown in every agent's revenue.
    #[schemars(extend("default" = SellersConfig::default().fee_bps))]
    pub fee_bps: Option<u32>,
    /// The lowest price a seller may set, USDC.
    #[schemars(extend("default" = SellersConfig::default().min_price))]
    pub min_price: Option<String>,
    /// The highest price a seller may set, USDC.
    #[schemars(extend("default" = SellersConfig::default().max_price))]
    pub max_price: Option<String>,
    /// The largest answer a seller may give, bytes; a larger one is a 502 that charges nothing.
    #[schemars(extend("default" = SellersConfig::default().max_answer_bytes))]
    pub max_answer_bytes: Option<usize>,
    /// The smallest withdrawal, USDC: each is a transfer whose gas svc pays.
    #[schemars(extend("default" = SellersConfig::default().min_withdrawal))]
    pub min_withdrawal: Option<String>,
    /// Hosts sellers may register over plain http, whatever they resolve to: for a seller
    /// running beside svc in development. `--production` refuses any.
    #[serde(default)]
    #[schemars(example = ["127.0.0.1"])]
    pub allow_http_hosts: Vec<String>,
}

/// The settings, for svc reached at `base_url`, paying out on the EVM networks `offer` takes
/// payments on.
pub fn build(file: &SellersFile, base_url: String, offer: &Offer, production: bool) -> anyhow::Result<SellersConfig> {
    let defaults = SellersConfig::default();
    let fee_bps = match std::env::var("SVC_SELLER_FEE_BPS") {
        Ok(text) => text.trim().parse().context("SVC_SELLER_FEE_BPS must be a whole number of basis points")?,
        Err(_) => file.fee_bps.unwrap_or(defaults.fee_bps),
    };
    anyhow::ensure!(fee_bps <= 10_000, "the seller fee is at most 10000 basis points (100%)");
    let price = |text: &Option<String>, default: Money, what: &str| -> anyhow::Result<Money> {
        text.as_deref().map_or(Ok(default), |t| t.parse().with_context(|| format!("[sellers] {what}")))
    };
    let min_price = price(&file.min_price, defaults.min_price, "min_price")?;
    let max_price = price(&file.max_price, defaults.max_price, "max_price")?;
    let min_withdrawal = price(&file.min_withdrawal, defaults.min_withdrawal, "min_withdrawal")?;
    anyhow::ensure!(min_price > Money::ZERO && min_price <= max_price, "[sellers] needs 0 < min_price <= max_price");
    anyhow::ensure!(
        !production || file.allow_http_hosts.is_empty(),
        "--production refuses [sellers] allow_http_hosts: sellers' endpoints must be https"
    );
    let payout_networks: Vec<String> =
        offer.networks().iter().map(|n| n.network.clone()).filter(|n| n.starts_with("eip155:")).collect();
    Ok(SellersConfig {
        fee_bps,
        min_price,
        max_price,
        base_url,
        endpoints: EndpointPolicy { allow_http_hosts: file.allow_http_hosts.clone() },
        max_answer_bytes: file.max_answer_bytes.unwrap_or(defaults.max_answer_bytes),
        payout_networks,
        min_withdrawal,
    })
}
