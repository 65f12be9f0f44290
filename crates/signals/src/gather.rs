//! Where a snapshot's inputs come from: the upstreams, read as one snapshot needs them. A
//! failing source leaves its part empty and its dimensions marked; it never fails the
//! gathering.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Map, Value, json};
use svc_catalogue::routes::chaindata::{
    ChaindataNetflowPayload, ChaindataPaging, ChaindataScreenerPayload, ChaindataScreenerRow,
    ChaindataSmartMoneyPayload, ChaindataSort, ChaindataSortDirection, ChaindataTgmPayload,
};
use svc_catalogue::routes::common::{SourceState, SourceStatus, TokenRef};
use svc_catalogue::routes::infra::ShieldVerdict;
use svc_catalogue::routes::social::{SocialCountsQuery, SocialGranularity, SocialSearchQuery};
use svc_domain::{Chain, EvmChain};
use svc_upstream::shield::{ScanMode, ScanRequest};
use svc_upstream::solana_rpc::MintAuthorities;
use svc_upstream::{UpstreamError, Upstreams};

use crate::{FlowFacts, MarketFacts, PriceFacts, SafetyFacts, SignalInput, SocialFacts, TokenInput, TradeInput};

/// What a snapshot is computed from: the upstreams in a running service; a test may hand the
/// engine fixed inputs instead.
pub trait Market: Send + Sync {
    /// Everything one snapshot needs, as of `now_ms`.
    fn gather(&self, now_ms: i64) -> Pin<Box<dyn Future<Output = SignalInput> + Send + '_>>;
}

/// The upstreams as the engine's [`Market`].
#[derive(Debug, Clone)]
pub struct UpstreamMarket(pub Arc<Upstreams>);

impl Market for UpstreamMarket {
    fn gather(&self, now_ms: i64) -> Pin<Box<dyn Future<Output = SignalInput> + Send + '_>> {
        Box::pin(gather(&self.0, now_ms))
    }
}

/// Candidates per chain that get the per-token calls (social counts, holders, scan): the
/// per-token budget of §C2 (about 30 in all), spent where a pick can come from.
const DETAILED_PER_CHAIN: usize = 6;
/// Concurrent per-token upstream calls while gathering.
const GATHER_CONCURRENCY: usize = 8;
/// Rows per page of the list feeds.
const FEED_PAGE: u32 = 500;
/// Most pages of DEX trades read per chain per refresh.
const MAX_TRADE_PAGES: u32 = 20;
/// Quote-side symbols: a trade's traded token is the other side.
const QUOTE_SYMBOLS: [&str; 12] =
    ["USDC", "USDT", "DAI", "WETH", "ETH", "WBNB", "BNB", "SOL", "WSOL", "USDC.E", "USDBC", "FDUSD"];
/// Recent mentions read per candidate for engagement and notable authors.
const SOCIAL_SAMPLE: u32 = 25;
/// Followers from which an author is notable (verified authors always are).
const NOTABLE_FOLLOWERS: u64 = 10_000;
/// An address that holds nothing, as the account of token-contract scans.
const SCAN_ACCOUNT: &str = "0x0000000000000000000000000000000000000001";

/// Records a source's outcome.
struct Sources {
    now_ms: i64,
    list: Vec<SourceStatus>,
    degraded: Vec<&'static str>,
}

impl Sources {
    fn record<T>(&mut self, source: &str, dims: &[&'static str], outcome: &Result<T, UpstreamError>) {
        let (status, as_of, detail) = match outcome {
            Ok(_) => (SourceState::Ok, Some(crate::timestamp(self.now_ms)), None),
            Err(err) => {
                tracing::warn!(source, vendor = err.vendor().family(), error = %err, "signal source failed");
                for d in dims {
                    if !self.degraded.contains(d) {
                        self.degraded.push(d);
                    }
                }
                (SourceState::Failed, None, Some(format!("the {} source did not answer", err.vendor().family())))
            }
        };
        self.list.push(SourceStatus { source: source.to_owned(), status, as_of, detail });
    }

    /// Records a per-token source from how many of its `unit`s (calls, mints) failed.
    fn record_many(&mut self, source: &str, dims: &[&'static str], unit: &str, calls: usize, failed: usize) {
        if calls == 0 {
            return;
        }
        let (status, detail) = match failed {
            0 => (SourceState::Ok, None),
            f if f == calls => (SourceState::Failed, Some(format!("all {calls} {unit} failed"))),
            f => (SourceState::Degraded, Some(format!("{f} of {calls} {unit} failed"))),
        };
        if failed > 0 {
            for d in dims {
                if !self.degraded.contains(d) {
                    self.degraded.push(d);
                }
            }
        }
        let as_of = (failed < calls).then(|| crate::timestamp(self.now_ms));
        self.list.push(SourceStatus { source: source.to_owned(), status, as_of, detail });
    }
}

fn paging(page: u32) -> Option<ChaindataPaging> {
    Some(ChaindataPaging { page, per_page: FEED_PAGE })
}

fn sort(field: &str) -> Option<Vec<ChaindataSort>> {
    Some(vec![ChaindataSort { field: field.to_owned(), direction: ChaindataSortDirection::Desc }])
}

fn traded_only() -> Option<Map<String, Value>> {
    match json!({"include_stablecoins": false, "include_native_tokens": false}) {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Labels the vendor gives smart money: its trader cohorts and funds.
fn is_smart_money(label: Option<&str>) -> bool {
    label.is_some_and(|l| l.contains("Smart Trader") || l.starts_with("Fund"))
}

/// Everything one snapshot needs, from the upstreams. A failing source leaves its part
/// empty and its dimensions marked; it never fails the gathering.
async fn gather(up: &Upstreams, now_ms: i64) -> SignalInput {
    let chains = crate::SIGNAL_CHAINS.to_vec();
    let data = &up.chaindata;
    let mut sources = Sources { now_ms, list: Vec::new(), degraded: Vec::new() };

    let netflow_q = ChaindataNetflowPayload {
        chains: chains.clone(),
        filters: traded_only(),
        pagination: paging(1),
        order_by: sort("net_flow_24h_usd"),
    };
    let screener = |timeframe: &str| ChaindataScreenerPayload {
        chains: chains.clone(),
        timeframe: Some(timeframe.to_owned()),
        filters: None,
        pagination: paging(1),
        order_by: sort("volume"),
    };
    let (day_q, week_q) = (screener("24h"), screener("7d"));
    let (netflow, day, week) =
        tokio::join!(data.netflow(&netflow_q), data.token_screener(&day_q), data.token_screener(&week_q));
    sources.record("chaindata.smart-money.netflow", &["flow"], &netflow);
    sources.record("chaindata.token-screener.24h", &["market", "price"], &day);
    sources.record("chaindata.token-screener.7d", &["price"], &week);

    let key = |chain: &str, address: &str| (chain.to_owned(), address.to_lowercase());
    let day: HashMap<(String, String), ChaindataScreenerRow> =
        day.map(|p| p.data).unwrap_or_default().into_iter().map(|r| (key(&r.chain, &r.token_address), r)).collect();
    let week: HashMap<(String, String), f64> = week
        .map(|p| p.data)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| Some((key(&r.chain, &r.token_address), r.price_change?)))
        .collect();

    let mut tokens: Vec<TokenInput> = Vec::new();
    let mut seen = HashSet::new();
    for row in netflow.map(|p| p.data).unwrap_or_default() {
        let Ok(chain) = row.chain.parse::<Chain>() else { continue };
        if !chains.contains(&chain) || !seen.insert(key(&row.chain, &row.token_address)) {
            continue;
        }
        let screen = day.get(&key(&row.chain, &row.token_address));
        tokens.push(TokenInput {
            token: TokenRef {
                chain,
                address: row.token_address.clone(),
                symbol: row.token_symbol.clone(),
                name: screen.map_or_else(|| row.token_symbol.clone(), |s| s.token_name.clone()),
            },
            flow: Some(FlowFacts {
                net_1h_usd: row.net_flow_1h_usd,
                net_24h_usd: row.net_flow_24h_usd,
                net_7d_usd: row.net_flow_7d_usd,
                trader_count: row.trader_count,
                exchange_inflow_usd: None,
            }),
            market: screen.map(|s| MarketFacts {
                market_cap_usd: s.market_cap_usd.or(row.market_cap_usd).unwrap_or(0.0),
                liquidity_usd: s.liquidity_usd.unwrap_or(0.0),
                holders: s.total_holders.unwrap_or(0),
                volume_24h_usd: s.volume,
            }),
            price: screen.map(|s| PriceFacts {
                price_usd: s.price_usd,
                change_24h_pct: s.price_change.unwrap_or(0.0),
                change_7d_pct: week.get(&key(&row.chain, &row.token_address)).copied().unwrap_or(0.0),
                high_7d_usd: None,
                low_7d_usd: None,
            }),
            age_days: row.token_age_days.or(screen.and_then(|s| s.token_age_days)),
            social: None,
            safety: None,
        });
    }

    let candidates: HashSet<(Chain, String)> =
        tokens.iter().map(|t| (t.token.chain, t.token.address.to_lowercase())).collect();
    let trades = gather_trades(up, &chains, &candidates, &mut sources).await;
    detail(up, &mut tokens, &mut sources).await;
    exchange_inflows(up, &mut tokens, &mut sources).await;

    SignalInput { now_ms, tokens, trades, sources: sources.list, degraded: sources.degraded }
}

/// The smart-money and tracked-wallet DEX trades of the last day, per chain, newest first.
async fn gather_trades(
    up: &Upstreams,
    chains: &[Chain],
    candidates: &HashSet<(Chain, String)>,
    sources: &mut Sources,
) -> Vec<TradeInput> {
    let mut trades = Vec::new();
    for &chain in chains {
        let mut outcome: Result<(), UpstreamError> = Ok(());
        for page in 1..=MAX_TRADE_PAGES {
            let q = ChaindataSmartMoneyPayload {
                chains: Some(vec![chain]),
                filters: None,
                pagination: paging(page),
                order_by: Some(vec![ChaindataSort {
                    field: "block_timestamp".into(),
                    direction: ChaindataSortDirection::Desc,
                }]),
            };
            match up.chaindata.smart_money_dex_trades(&q).await {
                Ok(list) => {
                    for row in list.data {
                        let Some(at_ms) = parse_time(&row.block_timestamp.0) else { continue };
                        let is_candidate = |a: &str| candidates.contains(&(chain, a.to_lowercase()));
                        let is_quote = |s: &str| QUOTE_SYMBOLS.contains(&s.to_uppercase().as_str());
                        let buy = if is_candidate(&row.token_bought_address) {
                            true
                        } else if is_candidate(&row.token_sold_address) {
                            false
                        } else {
                            !is_quote(&row.token_bought_symbol) || is_quote(&row.token_sold_symbol)
                        };
                        let (token_address, token_symbol) = if buy {
                            (row.token_bought_address, row.token_bought_symbol)
                        } else {
                            (row.token_sold_address, row.token_sold_symbol)
                        };
                        trades.push(TradeInput {
                            chain,
                            smart_money: is_smart_money(row.trader_address_label.as_deref()),
                            tx_hash: row.transaction_hash,
                            wallet: row.trader_address,
                            label: row.trader_address_label,
                            token_address,
                            token_symbol,
                            buy,
                            value_usd: row.trade_value_usd,
                            at_ms,
                        });
                    }
                    if list.pagination.is_last_page {
                        break;
                    }
                }
                Err(err) => {
                    outcome = Err(err);
                    break;
                }
            }
        }
        sources.record(&format!("chaindata.smart-money.dex-trades.{chain}"), &["flow"], &outcome);
    }
    trades
}

/// The per-token calls' outcomes for one candidate.
struct Detail {
    index: usize,
    social: Result<SocialFacts, UpstreamError>,
    holders: Result<Option<f64>, UpstreamError>,
    scan: Option<Result<ShieldVerdict, UpstreamError>>,
}

/// Social counts, holder concentration and the scan (EVM: the contract; Solana: the mint's
/// mint and freeze authorities) for the strongest candidates of each chain.
async fn detail(up: &Upstreams, tokens: &mut [TokenInput], sources: &mut Sources) {
    let mut chosen: Vec<usize> = Vec::new();
    for chain in crate::SIGNAL_CHAINS {
        let mut on_chain: Vec<usize> = (0..tokens.len())
            .filter(|&i| tokens[i].token.chain == chain && tokens[i].flow.is_some_and(|f| f.net_24h_usd > 0.0))
            .collect();
        on_chain.sort_by(|&a, &b| {
            let net = |i: usize| tokens[i].flow.map_or(0.0, |f| f.net_24h_usd);
            net(b).total_cmp(&net(a))
        });
        chosen.extend(on_chain.into_iter().take(DETAILED_PER_CHAIN));
    }
    let jobs: Vec<(usize, TokenRef)> = chosen.iter().map(|&i| (i, tokens[i].token.clone())).collect();
    // Every Solana candidate's mint in one batched read, beside the per-token calls.
    let mints: Vec<String> =
        jobs.iter().filter(|(_, t)| t.chain == Chain::Solana).map(|(_, t)| t.address.clone()).collect();
    let per_token = futures::stream::iter(jobs)
        .map(|(i, token)| async move {
            let (social, holders, scan) =
                tokio::join!(social_facts(up, &token), top10_share(up, &token), scan(up, &token));
            Detail { index: i, social, holders, scan }
        })
        .buffer_unordered(GATHER_CONCURRENCY)
        .collect::<Vec<Detail>>();
    let (results, authorities) = tokio::join!(per_token, mint_authorities(up, &mints));
    let (mut social_failed, mut holders_failed, mut scans, mut scans_failed, mut mints_failed) = (0, 0, 0, 0, 0);
    let calls = results.len();
    for Detail { index: i, social, holders, scan } in results {
        match social {
            Ok(s) => tokens[i].social = Some(s),
            Err(err) => {
                social_failed += 1;
                tracing::debug!(error = %err, "social counts failed for a candidate");
            }
        }
        let mut safety = SafetyFacts::default();
        let mut known = false;
        match holders {
            Ok(share) => {
                safety.top10_holder_pct = share;
                known = true;
            }
            Err(_) => holders_failed += 1,
        }
        if let Some(scan) = scan {
            scans += 1;
            if read_scan(&mut safety, scan.as_ref().ok().copied()) {
                known = true;
            } else {
                scans_failed += 1;
            }
        }
        if tokens[i].token.chain == Chain::Solana {
            // A failed read, or an address the node holds no mint at, leaves the verdict
            // unknown: never read as revoked.
            match authorities.get(&tokens[i].token.address) {
                Some(Some(mint)) => {
                    safety.mint_authority_live = mint.mint_authority.is_some();
                    safety.freeze_authority_live = mint.freeze_authority.is_some();
                    safety.scanned = true;
                    known = true;
                }
                _ => {
                    mints_failed += 1;
                    safety.scan_missing = true;
                }
            }
        }
        if known {
            tokens[i].safety = Some(safety);
        }
    }
    sources.record_many("social.counts+search", &["social"], "calls", calls, social_failed);
    sources.record_many("chaindata.tgm.holders", &["safety"], "calls", calls, holders_failed);
    sources.record_many("shield.contract-scan", &["safety"], "calls", scans, scans_failed);
    // No dimension is marked for all tokens: each Solana token whose mint went unread says
    // so itself, and no other chain's safety rests on the node.
    sources.record_many("solana-rpc.mint-authorities", &[], "mint reads", mints.len(), mints_failed);
}

/// Reads a contract scan's verdict into `safety`: whether it gave one. A scan that failed, or
/// whose scanner answered that it could not scan (`Error`), leaves the verdict unknown, never
/// clean.
fn read_scan(safety: &mut SafetyFacts, verdict: Option<ShieldVerdict>) -> bool {
    match verdict {
        None | Some(ShieldVerdict::Error) => {
            safety.scan_missing = true;
            false
        }
        Some(verdict) => {
            safety.malicious = verdict == ShieldVerdict::Malicious;
            safety.warning = verdict == ShieldVerdict::Warning;
            safety.scanned = true;
            true
        }
    }
}

/// Exchange deposits over the last day for the tokens smart money leaves fastest on each
/// chain (the exit candidates), from flow intelligence.
async fn exchange_inflows(up: &Upstreams, tokens: &mut [TokenInput], sources: &mut Sources) {
    let mut chosen: Vec<usize> = Vec::new();
    for chain in crate::SIGNAL_CHAINS {
        let net = |i: usize| tokens[i].flow.map_or(0.0, |f| f.net_24h_usd);
        let mut leaving: Vec<usize> =
            (0..tokens.len()).filter(|&i| tokens[i].token.chain == chain && net(i) < 0.0).collect();
        leaving.sort_by(|&a, &b| net(a).total_cmp(&net(b)));
        chosen.extend(leaving.into_iter().take(DETAILED_PER_CHAIN));
    }
    let jobs: Vec<(usize, TokenRef)> = chosen.iter().map(|&i| (i, tokens[i].token.clone())).collect();
    let results: Vec<(usize, Result<f64, UpstreamError>)> = futures::stream::iter(jobs)
        .map(|(i, token)| async move {
            let q = ChaindataTgmPayload {
                token_address: token.address.clone(),
                chain: token.chain,
                date: None,
                timeframe: Some("1d".into()),
                buy_or_sell: None,
                only_smart_money: None,
                label_type: None,
                aggregate_by_entity: None,
                label: None,
                filters: None,
                pagination: None,
                order_by: None,
            };
            (i, up.chaindata.flow_intelligence(&q).await.map(|o| o.data.exchange_net_flow_usd))
        })
        .buffer_unordered(GATHER_CONCURRENCY)
        .collect()
        .await;
    let calls = results.len();
    let mut failed = 0;
    for (i, outcome) in results {
        match outcome {
            Ok(inflow) => {
                if let Some(flow) = tokens[i].flow.as_mut() {
                    flow.exchange_inflow_usd = Some(inflow);
                }
            }
            Err(_) => failed += 1,
        }
    }
    sources.record_many("chaindata.tgm.flow-intelligence", &[], "calls", calls, failed);
}

/// Mentions of `$SYMBOL` in the last hour and the last day (hourly counts), and the
/// engagement and notable authors of the most recent mentions (one search).
async fn social_facts(up: &Upstreams, token: &TokenRef) -> Result<SocialFacts, UpstreamError> {
    let query = format!("${}", token.symbol);
    let counts_q =
        SocialCountsQuery { query: query.clone(), max_results: Some(24), granularity: SocialGranularity::Hour };
    let search_q =
        SocialSearchQuery { query: format!("{query} -is:retweet"), max_results: SOCIAL_SAMPLE, next_token: None };
    let (counts, recent) = tokio::join!(up.social.counts(&counts_q), up.social.search(&search_q));
    let (counts, recent) = (counts?, recent?);
    let last_hour = counts.data.last().map_or(0, |b| b.tweet_count);
    let day: u64 = counts.data.iter().rev().take(24).map(|b| b.tweet_count).sum();
    let engagement = recent
        .data
        .iter()
        .filter_map(|t| t.public_metrics.as_ref())
        .map(|m| m.like_count + m.retweet_count + m.reply_count + m.quote_count)
        .sum();
    let authors: HashSet<&str> = recent.data.iter().filter_map(|t| t.author_id.as_deref()).collect();
    let mut notable: Vec<String> = recent
        .includes
        .users
        .iter()
        .filter(|u| authors.contains(u.id.as_str()))
        .filter(|u| {
            u.verified == Some(true)
                || u.public_metrics.as_ref().is_some_and(|m| m.followers_count >= NOTABLE_FOLLOWERS)
        })
        .map(|u| u.username.clone())
        .collect();
    notable.sort();
    notable.dedup();
    notable.truncate(5);
    Ok(SocialFacts {
        mentions_1h: u32::try_from(last_hour).unwrap_or(u32::MAX),
        mentions_24h: u32::try_from(day).unwrap_or(u32::MAX),
        engagement,
        notable_accounts: notable,
    })
}

/// Whether a holder is an exchange wallet: its balance belongs to the exchange's many
/// customers, so it does not count towards holder concentration.
fn is_exchange(label: Option<&str>) -> bool {
    label.is_some_and(|l| ["Exchange", "Hot Wallet", "Deposit", "CEX"].iter().any(|k| l.contains(k)))
}

/// Share of supply the ten largest holders other than exchanges own, percent.
async fn top10_share(up: &Upstreams, token: &TokenRef) -> Result<Option<f64>, UpstreamError> {
    let q = ChaindataTgmPayload {
        token_address: token.address.clone(),
        chain: token.chain,
        date: None,
        timeframe: None,
        buy_or_sell: None,
        only_smart_money: None,
        label_type: Some("all_holders".into()),
        aggregate_by_entity: None,
        label: None,
        filters: None,
        pagination: Some(ChaindataPaging { page: 1, per_page: 30 }),
        order_by: sort("ownership_percentage"),
    };
    let holders = up.chaindata.token_holders(&q).await?;
    if holders.data.is_empty() {
        return Ok(None);
    }
    let listed: f64 = holders.data.iter().map(|h| h.ownership_percentage).sum();
    if !(0.0..=100.5).contains(&listed) {
        // Shares adding up past the supply are inconsistent data, not a concentration.
        tracing::warn!(chain = %token.chain, token = %token.address, listed, "holder shares exceed the supply; ignored");
        return Ok(None);
    }
    let own = holders.data.iter().filter(|h| !is_exchange(h.address_label.as_deref()));
    Ok(Some(own.take(10).map(|h| h.ownership_percentage).sum()))
}

/// The scanner's verdict on a call to the token's contract (EVM only; `None` elsewhere).
async fn scan(up: &Upstreams, token: &TokenRef) -> Option<Result<ShieldVerdict, UpstreamError>> {
    let chain = EvmChain::try_from(token.chain).ok()?;
    let request =
        ScanRequest { chain, account: SCAN_ACCOUNT, from: SCAN_ACCOUNT, to: &token.address, data: "0x", value: None };
    Some(up.shield.scan(&request, ScanMode::Validate).await.map(|r| r.result_type))
}

/// The authorities of each of `mints` by mint, from the Solana node in one batched read;
/// empty when the read failed (every mint's verdict is then unknown).
async fn mint_authorities(up: &Upstreams, mints: &[String]) -> HashMap<String, Option<MintAuthorities>> {
    if mints.is_empty() {
        return HashMap::new();
    }
    match up.solana_rpc.mint_authorities(mints).await {
        Ok(found) => mints.iter().cloned().zip(found).collect(),
        Err(err) => {
            tracing::warn!(vendor = err.vendor().family(), error = %err, "reading the candidates' mints failed");
            HashMap::new()
        }
    }
}

/// Unix ms of an RFC 3339 timestamp.
pub fn parse_time(text: &str) -> Option<i64> {
    let at = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scanner_that_could_not_scan_leaves_the_verdict_unknown_not_clean() {
        let mut safety = SafetyFacts::default();
        assert!(!read_scan(&mut safety, Some(ShieldVerdict::Error)));
        assert!(safety.scan_missing && !safety.scanned && !safety.complete());
        let mut safety = SafetyFacts::default();
        assert!(!read_scan(&mut safety, None));
        assert!(safety.scan_missing);
        let mut safety = SafetyFacts::default();
        assert!(read_scan(&mut safety, Some(ShieldVerdict::Warning)));
        assert!(safety.scanned && safety.warning && !safety.malicious && !safety.scan_missing);
    }
}
