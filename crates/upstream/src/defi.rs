//! The router's quotes as svc's DeFi routes ask for them: human amounts in the token's
//! decimals, protocol lists fanned out to one call each, and the arguments of the router's
//! actions. The only computation is what the vendor cannot do for us.

use std::collections::BTreeMap;

use futures::future::try_join_all;
use svc_catalogue::routes::infra::{
    DefiAction, DefiApproval, DefiDiscoverResponse, DefiNontokenizedRequest, DefiNontokenizedResponse, DefiPool,
    DefiQuoteRequest, DefiQuoteResponse, EvmSwapQuoteRequest, EvmSwapQuoteResponse, EvmToken, SwapNetwork,
};
use svc_domain::{Chain, EvmChain};

use crate::enso::{self, BundleAction, Enso, WirePosition};
use crate::{UpstreamError, Vendor, units};

/// The sender of routes built for a quote only; their transaction is never returned.
pub const NO_SENDER: &str = "0x0000000000000000000000000000000000000000";

/// Protocol lists fan out to one vendor call each; the input allows at most this many.
const MAX_PROTOCOLS: usize = 20;

/// The router's address for `token`.
fn router_address(token: &EvmToken) -> &str {
    match token {
        EvmToken::Native(_) => enso::NATIVE,
        EvmToken::Contract(address) => address.as_str(),
    }
}

/// `token` as the client wrote it (`eth` or the address).
fn token_label(token: &EvmToken) -> String {
    match token {
        EvmToken::Native(_) => "eth".to_owned(),
        EvmToken::Contract(address) => address.as_str().to_owned(),
    }
}

/// A human amount the token's decimals cannot express is the client's error.
fn atomic(amount: &str, decimals: u8) -> Result<String, UpstreamError> {
    units::to_atomic(amount, decimals).map_err(|error| UpstreamError::BadAmount { field: "amount", error })
}

fn swap_chain(network: SwapNetwork) -> EvmChain {
    match network {
        SwapNetwork::Base => EvmChain::BASE,
        SwapNetwork::Ethereum => {
            EvmChain::try_from(Chain::Ethereum).unwrap_or_else(|_| unreachable!("ethereum is an EVM chain"))
        }
    }
}

/// The protocols to ask for: each listed one, or all at once.
fn protocol_list(protocols: Option<&Vec<String>>) -> Vec<Option<&str>> {
    match protocols {
        Some(list) if !list.is_empty() => list.iter().take(MAX_PROTOCOLS).map(|p| Some(p.as_str())).collect(),
        _ => vec![None],
    }
}

impl Enso {
    /// A swap quote: the human amount in the sold token's decimals, then the router's route;
    /// the transaction only when the signer is known.
    pub async fn swap_quote(&self, input: &EvmSwapQuoteRequest) -> Result<EvmSwapQuoteResponse, UpstreamError> {
        let chain = swap_chain(input.network);
        let (token_in, token_out) = (router_address(&input.token_in), router_address(&input.token_out));
        let amount_in = atomic(&input.amount, self.decimals(chain, token_in).await?)?;
        // Validated as at most 10000 by the route's input checks.
        let slippage_bps: u32 = input.slippage.parse().unwrap_or(50);
        let from = input.from_address.as_ref().map(|a| a.as_str());
        let route = self
            .route(chain, token_in, token_out, &amount_in, &slippage_bps.to_string(), from.unwrap_or(NO_SENDER))
            .await?;
        let min_amount_out = match route.min_amount_out {
            Some(min) => min,
            None => units::after_slippage(&route.amount_out, slippage_bps).unwrap_or_else(|| route.amount_out.clone()),
        };
        Ok(EvmSwapQuoteResponse {
            network: input.network,
            token_in: token_label(&input.token_in),
            token_out: token_label(&input.token_out),
            amount_in,
            amount_out: route.amount_out,
            min_amount_out,
            // The router reports basis points.
            price_impact: route.price_impact.map(|bps| bps / 100.0),
            gas: route.gas,
            tx: from.map(|_| route.tx.into()),
        })
    }

    /// Positions on `chain`, one call per protocol, merged by APY.
    pub async fn discover(
        &self,
        chain: EvmChain,
        protocols: Option<&Vec<String>>,
        min_apy: Option<f64>,
        min_tvl: Option<f64>,
        page_size: u32,
    ) -> Result<DefiDiscoverResponse, UpstreamError> {
        let pages = try_join_all(
            protocol_list(protocols)
                .into_iter()
                .map(|protocol| self.positions(chain, protocol, None, min_apy, min_tvl, page_size)),
        )
        .await?;
        let mut total = 0;
        let mut pools = Vec::new();
        for page in pages {
            total += page.meta.as_ref().and_then(|m| m.total).unwrap_or(page.data.len() as u64);
            pools.extend(page.data.into_iter().map(|p| p.into_pool(chain.as_str())));
        }
        let apy = |p: &DefiPool| p.apy.unwrap_or(f64::NEG_INFINITY);
        pools.sort_by(|a, b| apy(b).total_cmp(&apy(a)).then_with(|| a.pool.cmp(&b.pool)));
        pools.truncate(page_size as usize);
        Ok(DefiDiscoverResponse { pools, page_size, total })
    }

    /// Non-tokenized positions, one call per protocol.
    pub async fn nontokenized_positions(
        &self,
        input: &DefiNontokenizedRequest,
    ) -> Result<DefiNontokenizedResponse, UpstreamError> {
        let lists = try_join_all(
            protocol_list(input.protocols.as_ref())
                .into_iter()
                .map(|protocol| self.nontokenized(input.network, protocol)),
        )
        .await?;
        Ok(DefiNontokenizedResponse { positions: lists.into_iter().flatten().collect() })
    }

    /// A DeFi action: finds the protocol's market for the token (the largest one), converts
    /// the amount by the token's decimals, and has the router build the action.
    pub async fn defi_quote(&self, input: DefiQuoteRequest) -> Result<DefiQuoteResponse, UpstreamError> {
        let chain = input.network;
        let wanted = input.token.as_ref().map(router_address);
        let page = self.positions(chain, Some(&input.protocol), wanted, None, None, 50).await?;
        let tvl = |p: &WirePosition| p.tvl.unwrap_or(0.0);
        let market = page
            .data
            .into_iter()
            .filter(|p| p.primary_address.is_some())
            .max_by(|a, b| tvl(a).total_cmp(&tvl(b)))
            .ok_or_else(|| {
                let token = input.token.as_ref().map_or_else(|| "any token".to_owned(), token_label);
                UpstreamError::NotFound {
                    vendor: Vendor::Enso,
                    what: "market",
                    id: format!("of {} for {token} on {chain}", input.protocol),
                }
            })?;
        let underlying = market.underlying_tokens.as_ref().and_then(|u| u.first()).cloned();
        let moved = match (wanted, &underlying) {
            (Some(token), _) => token.to_owned(),
            (None, Some(token)) => token.address.to_lowercase(),
            (None, None) => market.address.clone(),
        };
        let decimals =
            match underlying.as_ref().filter(|u| u.address.eq_ignore_ascii_case(&moved)).and_then(|u| u.decimals) {
                Some(decimals) => decimals,
                None => self.decimals(chain, &moved).await?,
            };
        let amount = atomic(&input.amount, decimals)?;
        let primary = market.primary_address.clone().unwrap_or_default();
        let (name, args): (&'static str, Vec<(&'static str, String)>) = match input.action {
            DefiAction::Deposit => ("deposit", vec![("tokenIn", moved.clone()), ("amountIn", amount.clone())]),
            DefiAction::Withdraw => ("withdraw", vec![("tokenOut", moved.clone()), ("amountOut", amount.clone())]),
            DefiAction::Borrow => (
                "borrow",
                vec![
                    ("collateral", market.address.clone()),
                    ("tokenOut", moved.clone()),
                    ("amountOut", amount.clone()),
                ],
            ),
            DefiAction::Repay => ("repay", vec![("tokenIn", moved.clone()), ("amountIn", amount.clone())]),
        };
        let mut args: BTreeMap<&'static str, String> = args.into_iter().collect();
        args.insert("primaryAddress", primary);
        let action = BundleAction { protocol: input.protocol.clone(), action: name, args };
        let from = input.from_address.as_ref().map(|a| a.as_str());
        let bundle = self.bundle(chain, from.unwrap_or(NO_SENDER), &[action]).await?;
        // Tokens paid in through the router contract need its allowance first; the native
        // coin travels as the transaction's value.
        let pays_in = matches!(input.action, DefiAction::Deposit | DefiAction::Repay);
        let approvals = if pays_in && moved != enso::NATIVE {
            vec![DefiApproval { token: moved, spender: bundle.tx.to.clone(), amount: amount.clone() }]
        } else {
            Vec::new()
        };
        let amounts_out = bundle
            .amounts_out
            .iter()
            .filter_map(|(token, value)| Some((token.clone(), enso::amount_text(value)?)))
            .collect();
        Ok(DefiQuoteResponse {
            network: chain,
            protocol: input.protocol,
            action: input.action,
            amount_in: amount,
            amounts_out,
            price_impact: bundle.price_impact.map(|bps| bps / 100.0),
            gas: bundle.gas,
            tx: from.map(|_| bundle.tx.into()),
            approvals,
        })
    }
}
