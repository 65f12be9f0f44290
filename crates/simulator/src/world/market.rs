//! The on-chain token market behind the chain-data vendor: tokens on five chains, labelled
//! wallets (smart traders, funds, whales, exchanges, public figures, fresh and retail
//! wallets), their holdings, DEX trades and transfers, perp-DEX traders, and DCA orders.
//!
//! Everything is a function of the seed and the time. Holdings follow a smooth per-position
//! rate, so net flows over any window are exact and cheap; trades and transfers are drawn
//! per minute from `(seed, minute)`, so a query over a window regenerates exactly the same
//! events. Planted scenarios give tests and the signal engine something to find: a token
//! smart money is accumulating, a token smart money is leaving (and sending to exchanges),
//! and whale-sized trades every few minutes.

use svc_domain::Chain;

use super::{DAY_MS, HOUR_MS, World, address};

/// Mixed into the seed so this part of the world has its own random stream.
const MARKET_SALT: u64 = 0x6d61_726b_6574_0001;
/// One minute, ms.
pub const MINUTE_MS: i64 = 60_000;
/// Longest window of trades or transfers one query may cover; longer ones are cut to the
/// most recent part, so a query costs at most this many minutes of generation.
pub const MAX_EVENT_WINDOW_MS: i64 = 7 * DAY_MS;
/// The chains the market spans, in a stable order.
pub const MARKET_CHAINS: [Chain; 5] = [Chain::Solana, Chain::Base, Chain::Ethereum, Chain::Bnb, Chain::Arbitrum];
/// A trade at or above this USD value is whale-sized.
pub const WHALE_TRADE_USD: f64 = 50_000.0;

/// What a token is in the market.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// The chain's wrapped native coin.
    Native,
    /// A dollar stablecoin.
    Stable,
    /// Everything else: the tokens people trade for a move.
    Traded,
}

/// A planted story the world tells about a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Nothing in particular.
    Quiet,
    /// Smart money and funds are buying it: holdings, net flow and price rise.
    Accumulated,
    /// Smart money is selling it and moving it to exchanges: holdings and price fall.
    Exodus,
}

/// A token's fixed facts; price, holdings and volume follow from the time.
#[derive(Debug, Clone)]
pub struct Token {
    /// Chain it lives on.
    pub chain: Chain,
    /// Contract (lowercase `0x…`) or mint (base58), valid for `chain`.
    pub address: String,
    /// Ticker.
    pub symbol: String,
    /// Name.
    pub name: String,
    /// Decimals of the smallest unit.
    pub decimals: u8,
    /// Sectors, e.g. `Memecoins`.
    pub sectors: Vec<&'static str>,
    /// Native, stable or traded.
    pub kind: TokenKind,
    /// The planted story.
    pub scenario: Scenario,
    /// Deployment time, unix ms.
    pub deployed_ms: i64,
    /// Total supply, whole tokens.
    pub supply: f64,
    /// Price at genesis, USD.
    base_price: f64,
    /// Log-price drift per day.
    trend_per_day: f64,
    /// Phase of the price waves.
    phase: f64,
    /// Pool liquidity at genesis, USD.
    base_liquidity: f64,
    /// Spot DEX volume per day, USD.
    daily_volume: f64,
    /// Holders at genesis.
    base_holders: u64,
}

/// Who a wallet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletKind {
    /// A wallet with a smart-trader track record.
    SmartTrader,
    /// An investment fund.
    Fund,
    /// A large holder.
    Whale,
    /// An exchange's hot or deposit wallet.
    Exchange,
    /// A known person.
    PublicFigure,
    /// A recently created wallet.
    Fresh,
    /// Everyone else (unlabelled).
    Retail,
}

impl WalletKind {
    /// Counted as smart money (the vendor's smart-money cohorts are traders and funds).
    pub fn is_smart_money(self) -> bool {
        matches!(self, WalletKind::SmartTrader | WalletKind::Fund)
    }

    /// The label category the vendor gives this kind.
    pub fn category(self) -> &'static str {
        match self {
            WalletKind::SmartTrader => "smart_money",
            WalletKind::Fund => "fund",
            WalletKind::Whale => "whale",
            WalletKind::Exchange => "cex",
            WalletKind::PublicFigure => "public_figure",
            WalletKind::Fresh => "fresh_wallet",
            WalletKind::Retail => "others",
        }
    }
}

/// A wallet of the market.
#[derive(Debug, Clone)]
pub struct Wallet {
    /// Chain it lives on.
    pub chain: Chain,
    /// Address, valid for `chain`.
    pub address: String,
    /// Who it is.
    pub kind: WalletKind,
    /// Its display label, e.g. `Smart Trader: Quiet Otter` (none for retail).
    pub label: Option<String>,
    /// Its smart-money cohort as the vendor's filters name it (`Fund`, `30D Smart Trader`, ...).
    pub smart_money_label: Option<&'static str>,
    /// Entity name, for funds, exchanges and public figures.
    pub entity: Option<String>,
    /// When the wallet earned its smart-money label, unix ms.
    pub labelled_ms: i64,
    /// When the wallet first appeared, unix ms.
    pub created_ms: i64,
}

/// A wallet's holding of one token: its balance moves at a steady rate.
#[derive(Debug, Clone)]
pub struct Position {
    /// Index into [`World::wallets`].
    pub wallet: usize,
    /// Index into [`World::tokens`].
    pub token: usize,
    /// Balance at genesis, whole tokens.
    base_balance: f64,
    /// Log-balance drift per day.
    rate_per_day: f64,
    /// Average cost of what was bought, USD per token.
    pub cost_basis: f64,
    /// Buys so far at genesis.
    pub buys: u32,
    /// Sells so far at genesis.
    pub sells: u32,
}

/// A swap on a DEX.
#[derive(Debug, Clone, PartialEq)]
pub struct Trade {
    /// Index into [`World::tokens`] of the token the trade is about.
    pub token: usize,
    /// Index of the other side (the chain's stablecoin or native coin).
    pub counter: usize,
    /// Index into [`World::wallets`].
    pub wallet: usize,
    /// The trader bought `token` (else sold it).
    pub buy: bool,
    /// Amount of `token`, whole tokens.
    pub token_amount: f64,
    /// Amount of `counter`, whole tokens.
    pub counter_amount: f64,
    /// Value, USD.
    pub value_usd: f64,
    /// Time, unix ms.
    pub at_ms: i64,
    /// Transaction hash, well-formed for the chain.
    pub tx_hash: String,
}

/// A token transfer between wallets.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    /// Index into [`World::tokens`].
    pub token: usize,
    /// Sender, index into [`World::wallets`].
    pub from: usize,
    /// Recipient.
    pub to: usize,
    /// Amount, whole tokens.
    pub amount: f64,
    /// Value, USD.
    pub value_usd: f64,
    /// Time, unix ms.
    pub at_ms: i64,
    /// Transaction hash.
    pub tx_hash: String,
}

impl Transfer {
    /// The vendor's transfer type: deposits to and withdrawals from exchanges stand out.
    pub fn kind(&self, world: &World) -> &'static str {
        match (world.wallets()[self.from].kind, world.wallets()[self.to].kind) {
            (_, WalletKind::Exchange) => "CEX Deposit",
            (WalletKind::Exchange, _) => "CEX Withdrawal",
            _ => "Transfer",
        }
    }
}

/// A perp-DEX market.
#[derive(Debug, Clone)]
pub struct PerpCoin {
    /// Coin, e.g. `BTC`.
    pub symbol: &'static str,
    base_price: f64,
    trend_per_day: f64,
    /// Funding per hour, as a fraction.
    pub funding: f64,
    /// Open interest at genesis, USD.
    pub open_interest: f64,
    /// Perp volume per day, USD.
    pub daily_volume: f64,
}

/// A perp trade.
#[derive(Debug, Clone, PartialEq)]
pub struct PerpTrade {
    /// Index into [`World::perp_coins`].
    pub coin: usize,
    /// Index into [`World::wallets`] (an EVM wallet).
    pub wallet: usize,
    /// Long side (else short).
    pub long: bool,
    /// `Open`, `Add`, `Reduce` or `Close`.
    pub action: &'static str,
    /// Size, coins.
    pub size: f64,
    /// Fill price, USD.
    pub price: f64,
    /// Time, unix ms.
    pub at_ms: i64,
    /// `Market` or `Limit`.
    pub order_type: &'static str,
    /// Transaction hash.
    pub tx_hash: String,
}

/// An open perp position.
#[derive(Debug, Clone, PartialEq)]
pub struct WalletPerpPosition {
    /// Index into [`World::perp_coins`].
    pub coin: usize,
    /// Index into [`World::wallets`].
    pub wallet: usize,
    /// Long side (else short).
    pub long: bool,
    /// Size, coins.
    pub size: f64,
    /// Entry price, USD.
    pub entry_price: f64,
    /// Leverage, times.
    pub leverage: u32,
    /// Cross margin (else isolated).
    pub cross: bool,
    /// Realised PnL so far, USD.
    pub realised_usd: f64,
    /// Trades in the coin.
    pub trades: u32,
}

/// A DCA order on the Solana aggregator.
#[derive(Debug, Clone, PartialEq)]
pub struct DcaOrder {
    /// Index into [`World::wallets`].
    pub wallet: usize,
    /// Token spent (index into [`World::tokens`]).
    pub input: usize,
    /// Token bought.
    pub output: usize,
    /// Deposit, input-token units.
    pub deposit: f64,
    /// Deposit, USD.
    pub deposit_usd: f64,
    /// Created, unix ms.
    pub created_ms: i64,
    /// Runs for this long, ms.
    pub duration_ms: i64,
    /// Creating transaction.
    pub tx_hash: String,
    /// The order's vault account.
    pub vault: String,
}

impl DcaOrder {
    /// Share of the deposit spent at `now_ms`, 0–1.
    pub fn progress(&self, now_ms: i64) -> f64 {
        ((now_ms - self.created_ms) as f64 / self.duration_ms as f64).clamp(0.0, 1.0)
    }
}

/// Everything the market part of the world holds.
#[derive(Debug, Clone)]
pub(super) struct Market {
    seed: u64,
    tokens: Vec<Token>,
    wallets: Vec<Wallet>,
    positions: Vec<Position>,
    perp_coins: Vec<PerpCoin>,
    perp_positions: Vec<WalletPerpPosition>,
    /// Per chain of [`MARKET_CHAINS`], the positions in traded tokens (indices into
    /// `positions`): what per-minute transfers draw from, kept so a week of minutes is quick.
    traded_positions: Vec<Vec<usize>>,
    /// Per chain of [`MARKET_CHAINS`], its wallets (indices into `wallets`).
    chain_wallets: Vec<Vec<usize>>,
    /// Per chain of [`MARKET_CHAINS`], its traded tokens (indices into `tokens`).
    traded_tokens: Vec<Vec<usize>>,
    /// Per token, the smart-money wallets holding it: the ones that trade it, so a token's
    /// smart-money count follows how much smart money holds it.
    smart_holders: Vec<Vec<usize>>,
}

const WORDS: [&str; 20] = [
    "Otter", "Falcon", "Comet", "Maple", "Quartz", "Nova", "Ember", "Tidal", "Atlas", "Lumen", "Cobalt", "Orchid",
    "Vortex", "Saffron", "Granite", "Zephyr", "Harbor", "Prism", "Juniper", "Onyx",
];
const SECTORS: [&str; 6] = ["Memecoins", "AI", "DeFi", "Gaming", "Infrastructure", "RWA"];
const FUNDS: [&str; 6] =
    ["Orbit Capital", "Meridian Ventures", "Basalt Partners", "Northwind Fund", "Kite Labs", "Helix"];
const EXCHANGES: [&str; 4] = ["Alpha Exchange", "Bayside Exchange", "Crest Exchange", "Delta Exchange"];
const SM_LABELS: [&str; 4] = ["Smart Trader", "30D Smart Trader", "90D Smart Trader", "180D Smart Trader"];

/// A 64-bit mix of two values (splitmix64), to seed per-minute streams.
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random EVM address, lowercase.
fn evm_address(rng: &mut fastrand::Rng) -> String {
    random_hex(rng, 20)
}

/// `0x` and `bytes` random bytes in lowercase hex.
fn random_hex(rng: &mut fastrand::Rng, bytes: usize) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 + 2 * bytes);
    s.push_str("0x");
    for _ in 0..bytes {
        let b = rng.u8(..);
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// A random address valid on `chain`.
fn chain_address(rng: &mut fastrand::Rng, chain: Chain) -> String {
    if chain.is_evm() { evm_address(rng) } else { address(rng) }
}

/// A transaction hash as `chain` writes them: 0x + 64 hex, or a base58 signature.
fn tx_hash(rng: &mut fastrand::Rng, chain: Chain) -> String {
    if chain.is_evm() {
        random_hex(rng, 32)
    } else {
        // Drawn as base58 text rather than encoded (encoding is quadratic, and a week of
        // events holds tens of thousands): 87 digits led by one of at least 2 is always a
        // 64-byte value, as a signature is.
        const DIGITS: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
        let mut s = String::with_capacity(87);
        s.push(char::from(DIGITS[rng.usize(2..58)]));
        for _ in 0..86 {
            s.push(char::from(DIGITS[rng.usize(..58)]));
        }
        s
    }
}

/// The well-known native and stable tokens of each chain: (symbol, name, address, decimals, price).
fn majors(chain: Chain) -> [(&'static str, &'static str, &'static str, u8, f64); 2] {
    match chain {
        Chain::Solana => [
            ("SOL", "Wrapped SOL", "So11111111111111111111111111111111111111112", 9, 180.0),
            ("USDC", "USD Coin", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6, 1.0),
        ],
        Chain::Base => [
            ("WETH", "Wrapped Ether", "0x4200000000000000000000000000000000000006", 18, 3_400.0),
            ("USDC", "USD Coin", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", 6, 1.0),
        ],
        Chain::Bnb => [
            ("WBNB", "Wrapped BNB", "0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c", 18, 620.0),
            ("USDT", "Tether USD", "0x55d398326f99059ff775485246999027b3197955", 18, 1.0),
        ],
        Chain::Arbitrum => [
            ("WETH", "Wrapped Ether", "0x82af49447d8a07e3bd95bd0d56f35241523fbab1", 18, 3_400.0),
            ("USDC", "USD Coin", "0xaf88d065e77c8cc2239327c5edb3a432268e5831", 6, 1.0),
        ],
        _ => [
            ("WETH", "Wrapped Ether", "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", 18, 3_400.0),
            ("USDC", "USD Coin", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", 6, 1.0),
        ],
    }
}

/// The planted story of the `n`th traded token of `chain`.
fn planted(chain: Chain, n: usize) -> Scenario {
    match (chain, n) {
        // Base's second accumulated token is the honeypot (see `World::honeypot_token`): the
        // strongest flows, and a contract the scanner flags. Solana's is the freeze trap (see
        // `World::freeze_trap_token`): as strong flows, and a mint whose issuer can freeze holders.
        (Chain::Solana | Chain::Base, 0) | (Chain::Base, HONEYPOT_INDEX) | (Chain::Solana, FREEZE_TRAP_INDEX) => {
            Scenario::Accumulated
        }
        (Chain::Solana | Chain::Ethereum, 1) => Scenario::Exodus,
        _ => Scenario::Quiet,
    }
}

/// Which traded token of Base is the honeypot.
const HONEYPOT_INDEX: usize = 2;

/// Which traded token of Solana is the freeze trap.
const FREEZE_TRAP_INDEX: usize = 2;

/// Traded tokens per chain.
const TRADED_PER_CHAIN: usize = 6;

pub(super) fn grow(seed: u64, genesis_ms: i64) -> Market {
    let mut rng = fastrand::Rng::with_seed(seed ^ MARKET_SALT);
    let mut tokens = Vec::new();
    let mut wallets = Vec::new();
    for chain in MARKET_CHAINS {
        for (i, (symbol, name, addr, decimals, price)) in majors(chain).into_iter().enumerate() {
            let native = i == 0;
            tokens.push(Token {
                chain,
                address: addr.to_owned(),
                symbol: symbol.to_owned(),
                name: name.to_owned(),
                decimals,
                sectors: vec![if native { "Layer 1" } else { "Stablecoins" }],
                kind: if native { TokenKind::Native } else { TokenKind::Stable },
                scenario: Scenario::Quiet,
                deployed_ms: genesis_ms - rng.i64(900..2_000) * DAY_MS,
                supply: if native { 500_000_000.0 } else { 30_000_000_000.0 },
                base_price: price,
                trend_per_day: if native { rng.f64() * 0.01 - 0.005 } else { 0.0 },
                phase: rng.f64() * std::f64::consts::TAU,
                base_liquidity: if native { 400_000_000.0 } else { 900_000_000.0 },
                daily_volume: if native { 1.5e9 } else { 2.5e9 },
                base_holders: if native { 4_000_000 } else { 9_000_000 },
            });
        }
        for n in 0..TRADED_PER_CHAIN {
            let first = WORDS[rng.usize(..WORDS.len())];
            let second = WORDS[rng.usize(..WORDS.len())];
            let scenario = planted(chain, n);
            let trend_per_day = match scenario {
                Scenario::Accumulated => 0.05,
                Scenario::Exodus => -0.07,
                Scenario::Quiet => rng.f64() * 0.03 - 0.015,
            };
            let market_cap = 10f64.powf(6.0 + rng.f64() * 3.0);
            let supply = [1e9, 1e8, 1e10][rng.usize(..3)];
            tokens.push(Token {
                chain,
                address: chain_address(&mut rng, chain),
                symbol: format!("{}{}", &first[..3], &second[..1]).to_uppercase(),
                name: format!("{first} {second}"),
                decimals: if chain == Chain::Solana { 6 } else { 18 },
                sectors: vec![SECTORS[rng.usize(..SECTORS.len())]],
                kind: TokenKind::Traded,
                scenario,
                deployed_ms: genesis_ms - rng.i64(3..700) * DAY_MS - rng.i64(0..DAY_MS),
                supply,
                base_price: market_cap / supply,
                trend_per_day,
                phase: rng.f64() * std::f64::consts::TAU,
                base_liquidity: market_cap * (0.03 + rng.f64() * 0.1),
                daily_volume: market_cap * (0.05 + rng.f64() * 0.4),
                base_holders: rng.u64(800..250_000),
            });
        }
        let kinds: [(WalletKind, usize); 7] = [
            (WalletKind::SmartTrader, 10),
            (WalletKind::Fund, 3),
            (WalletKind::Whale, 5),
            (WalletKind::Exchange, 2),
            (WalletKind::PublicFigure, 2),
            (WalletKind::Fresh, 3),
            (WalletKind::Retail, 25),
        ];
        for (kind, count) in kinds {
            for i in 0..count {
                let addr = chain_address(&mut rng, chain);
                let nick = format!("{} {}", WORDS[rng.usize(..WORDS.len())], WORDS[rng.usize(..WORDS.len())]);
                let short = &addr[..8];
                let (label, sm, entity) = match kind {
                    WalletKind::SmartTrader => {
                        let sm = SM_LABELS[rng.usize(..SM_LABELS.len())];
                        (Some(format!("{sm}: {nick}")), Some(sm), None)
                    }
                    WalletKind::Fund => {
                        let fund = FUNDS[rng.usize(..FUNDS.len())];
                        (Some(format!("Fund: {fund}")), Some("Fund"), Some(fund.to_owned()))
                    }
                    WalletKind::Whale => (Some(format!("Whale [{short}]")), None, None),
                    WalletKind::Exchange => {
                        let ex = EXCHANGES[(i + rng.usize(..EXCHANGES.len())) % EXCHANGES.len()];
                        (Some(format!("{ex}: Hot Wallet")), None, Some(ex.to_owned()))
                    }
                    WalletKind::PublicFigure => (Some(format!("Public Figure: {nick}")), None, Some(nick.clone())),
                    WalletKind::Fresh => (Some(format!("Fresh Wallet [{short}]")), None, None),
                    WalletKind::Retail => (None, None, None),
                };
                let created_ms = match kind {
                    WalletKind::Fresh => genesis_ms - rng.i64(HOUR_MS..3 * DAY_MS),
                    _ => genesis_ms - rng.i64(60..1_500) * DAY_MS,
                };
                wallets.push(Wallet {
                    chain,
                    address: addr,
                    kind,
                    label,
                    smart_money_label: sm,
                    entity,
                    labelled_ms: genesis_ms - rng.i64(10..400) * DAY_MS,
                    created_ms,
                });
            }
        }
    }
    let positions = grow_positions(&mut rng, &tokens, &wallets);
    let perp_coins = vec![
        perp("BTC", 95_000.0, 0.004, 0.000_012, 9e9, 4e9),
        perp("ETH", 3_400.0, 0.002, 0.000_010, 5e9, 2.5e9),
        perp("SOL", 180.0, 0.0, 0.000_015, 1.8e9, 1.2e9),
        perp("HYPE", 32.0, 0.01, 0.000_025, 1.1e9, 6e8),
        perp("kPEPE", 0.012, -0.02, -0.000_020, 9e7, 1.4e8),
        perp("ARB", 0.75, -0.005, 0.000_008, 2e8, 1.1e8),
    ];
    let perp_positions = grow_perp_positions(&mut rng, &wallets, &perp_coins, genesis_ms);
    let traded_positions = MARKET_CHAINS
        .iter()
        .map(|chain| {
            (0..positions.len())
                .filter(|p| {
                    let token = &tokens[positions[*p].token];
                    token.chain == *chain && token.kind == TokenKind::Traded
                })
                .collect()
        })
        .collect();
    let chain_wallets = MARKET_CHAINS
        .iter()
        .map(|chain| (0..wallets.len()).filter(|w| wallets[*w].chain == *chain).collect())
        .collect();
    let traded_tokens = MARKET_CHAINS
        .iter()
        .map(|chain| {
            (0..tokens.len()).filter(|t| tokens[*t].chain == *chain && tokens[*t].kind == TokenKind::Traded).collect()
        })
        .collect();
    let mut smart_holders = vec![Vec::new(); tokens.len()];
    for p in &positions {
        if wallets[p.wallet].kind.is_smart_money() {
            smart_holders[p.token].push(p.wallet);
        }
    }
    Market {
        seed,
        tokens,
        wallets,
        positions,
        perp_coins,
        perp_positions,
        traded_positions,
        chain_wallets,
        traded_tokens,
        smart_holders,
    }
}

fn perp(symbol: &'static str, price: f64, trend: f64, funding: f64, oi: f64, volume: f64) -> PerpCoin {
    PerpCoin { symbol, base_price: price, trend_per_day: trend, funding, open_interest: oi, daily_volume: volume }
}

fn grow_positions(rng: &mut fastrand::Rng, tokens: &[Token], wallets: &[Wallet]) -> Vec<Position> {
    let mut positions = Vec::new();
    // How much smart money follows each token: heavy-tailed, as in a real market, where a few
    // tokens draw many smart wallets and most draw a handful.
    let following: Vec<f64> = tokens.iter().map(|_| 0.08 + 1.5 * rng.f64().powi(3)).collect();
    for (w, wallet) in wallets.iter().enumerate() {
        for (t, token) in tokens.iter().enumerate() {
            if token.chain != wallet.chain {
                continue;
            }
            let (chance, usd_lo, usd_hi) = match wallet.kind {
                WalletKind::SmartTrader => (0.55, 5e3, 2e5),
                WalletKind::Fund => (0.8, 2e5, 3e6),
                WalletKind::Whale => (0.5, 5e5, 5e6),
                WalletKind::Exchange => (1.0, 5e6, 5e7),
                WalletKind::PublicFigure => (0.4, 1e4, 5e5),
                WalletKind::Fresh => (0.3, 1e3, 5e4),
                WalletKind::Retail => (0.3, 1e2, 5e3),
            };
            // Every smart wallet is in the planted tokens, so their stories show in the flows.
            let planted = token.scenario != Scenario::Quiet && wallet.kind.is_smart_money();
            let chance = if wallet.kind.is_smart_money() { (chance * following[t]).min(0.95) } else { chance };
            if !planted && rng.f64() >= chance {
                continue;
            }
            let usd = usd_lo + rng.f64() * (usd_hi - usd_lo);
            let smart = wallet.kind.is_smart_money();
            let rate_per_day = match (token.scenario, smart, wallet.kind) {
                (Scenario::Accumulated, true, _) => 0.12 + rng.f64() * 0.08,
                (Scenario::Exodus, true, _) => -(0.15 + rng.f64() * 0.1),
                (Scenario::Exodus, _, WalletKind::Exchange) => 0.04,
                _ if token.kind == TokenKind::Stable => 0.0,
                _ => rng.f64() * 0.04 - 0.02,
            };
            let cost_basis = token.base_price * (0.5 + rng.f64() * 0.8);
            positions.push(Position {
                wallet: w,
                token: t,
                base_balance: usd / token.base_price,
                rate_per_day,
                cost_basis,
                buys: rng.u32(1..60),
                sells: rng.u32(0..40),
            });
        }
    }
    positions
}

fn grow_perp_positions(
    rng: &mut fastrand::Rng,
    wallets: &[Wallet],
    coins: &[PerpCoin],
    genesis_ms: i64,
) -> Vec<WalletPerpPosition> {
    let mut positions = Vec::new();
    for (w, wallet) in wallets.iter().enumerate() {
        if wallet.chain != Chain::Ethereum || wallet.kind == WalletKind::Exchange {
            continue;
        }
        for (c, coin) in coins.iter().enumerate() {
            if rng.f64() >= 0.35 {
                continue;
            }
            let usd = match wallet.kind {
                WalletKind::Whale | WalletKind::Fund => 2e5 + rng.f64() * 5e6,
                WalletKind::SmartTrader => 2e4 + rng.f64() * 8e5,
                _ => 5e2 + rng.f64() * 5e4,
            };
            let opened_days_ago = rng.f64() * 10.0;
            let entry_price = perp_price_at(coin, genesis_ms, genesis_ms - (opened_days_ago * DAY_MS as f64) as i64);
            positions.push(WalletPerpPosition {
                coin: c,
                wallet: w,
                long: rng.f64() < 0.6,
                size: usd / entry_price,
                entry_price,
                leverage: [2, 3, 5, 10, 20, 25][rng.usize(..6)],
                cross: rng.bool(),
                realised_usd: (rng.f64() - 0.35) * usd * 0.4,
                trades: rng.u32(1..300),
            });
        }
    }
    positions
}

fn perp_price_at(coin: &PerpCoin, genesis_ms: i64, at_ms: i64) -> f64 {
    let days = (at_ms - genesis_ms) as f64 / DAY_MS as f64;
    let wave = 0.02 * (at_ms as f64 / (5.0 * HOUR_MS as f64)).sin() + 0.006 * (at_ms as f64 / 1.3e6).sin();
    coin.base_price * (coin.trend_per_day * days + wave).exp()
}

impl World {
    /// Every token of the market.
    pub fn tokens(&self) -> &[Token] {
        &self.market.tokens
    }

    /// Every wallet of the market.
    pub fn wallets(&self) -> &[Wallet] {
        &self.market.wallets
    }

    /// Every holding.
    pub fn positions(&self) -> &[Position] {
        &self.market.positions
    }

    /// The perp-DEX markets.
    pub fn perp_coins(&self) -> &[PerpCoin] {
        &self.market.perp_coins
    }

    /// Open perp positions.
    pub fn perp_positions(&self) -> &[WalletPerpPosition] {
        &self.market.perp_positions
    }

    /// The token with this address on `chain` (EVM addresses compare case-insensitively).
    pub fn token_index(&self, chain: Chain, address: &str) -> Option<usize> {
        self.market.tokens.iter().position(|t| t.chain == chain && t.address.eq_ignore_ascii_case(address))
    }

    /// The wallet with this address on `chain`.
    pub fn wallet_index(&self, chain: Chain, address: &str) -> Option<usize> {
        self.market.wallets.iter().position(|w| w.chain == chain && w.address.eq_ignore_ascii_case(address))
    }

    /// The perp coin with this symbol (case-insensitive, as the perp DEX matches them).
    pub fn perp_coin_index(&self, symbol: &str) -> Option<usize> {
        self.market.perp_coins.iter().position(|c| c.symbol.eq_ignore_ascii_case(symbol))
    }

    /// The planted honeypot: a Base token smart money appears to accumulate as hard as the
    /// planted accumulation token, whose contract the transaction scanner flags as malicious.
    /// A signal product must never pick it.
    pub fn honeypot_token(&self) -> Option<&Token> {
        self.market.tokens.iter().filter(|t| t.chain == Chain::Base && t.scenario == Scenario::Accumulated).nth(1)
    }

    /// The planted freeze trap: a Solana token smart money appears to accumulate as hard as the
    /// planted accumulation token, whose mint keeps a live freeze authority, so its issuer can
    /// freeze any holder's tokens and a buyer may never sell. A signal product must never pick it.
    pub fn freeze_trap_token(&self) -> Option<&Token> {
        self.market.tokens.iter().filter(|t| t.chain == Chain::Solana && t.scenario == Scenario::Accumulated).nth(1)
    }

    /// The first token with the planted `scenario` on `chain`, if the world plants one there.
    pub fn planted_token(&self, chain: Chain, scenario: Scenario) -> Option<&Token> {
        self.market.tokens.iter().find(|t| t.chain == chain && t.scenario == scenario)
    }

    /// The stablecoin of `chain`.
    pub fn stable_of(&self, chain: Chain) -> usize {
        self.kind_of(chain, TokenKind::Stable)
    }

    /// The wrapped native coin of `chain`.
    pub fn native_of(&self, chain: Chain) -> usize {
        self.kind_of(chain, TokenKind::Native)
    }

    fn kind_of(&self, chain: Chain, kind: TokenKind) -> usize {
        let found = self.market.tokens.iter().position(|t| t.chain == chain && t.kind == kind);
        found.unwrap_or_else(|| unreachable!("every market chain has its majors"))
    }

    /// Token `t`'s price at `at_ms`, USD: a daily trend with waves of hours and minutes;
    /// SOL follows the launchpad's SOL price so both parts of the world agree.
    pub fn token_price_at(&self, t: usize, at_ms: i64) -> f64 {
        let token = &self.market.tokens[t];
        match token.kind {
            TokenKind::Stable => 1.0 + 0.0004 * (at_ms as f64 / 7.7e6 + token.phase).sin(),
            TokenKind::Native if token.chain == Chain::Solana => self.sol_usd_at(at_ms),
            _ => {
                let days = (at_ms - self.genesis_ms) as f64 / DAY_MS as f64;
                let x = at_ms as f64;
                let wave = 0.04 * (x / (6.0 * HOUR_MS as f64) + token.phase).sin()
                    + 0.015 * (x / (37.0 * MINUTE_MS as f64) + 2.0 * token.phase).sin();
                token.base_price * (token.trend_per_day * days + wave).exp()
            }
        }
    }

    /// Token `t`'s price now, USD.
    pub fn token_price(&self, t: usize) -> f64 {
        self.token_price_at(t, self.now_ms())
    }

    /// Market cap of token `t` at `at_ms`, USD (whole supply circulating).
    pub fn market_cap_at(&self, t: usize, at_ms: i64) -> f64 {
        self.token_price_at(t, at_ms) * self.market.tokens[t].supply
    }

    /// Pool liquidity of token `t` at `at_ms`, USD: follows the price by half.
    pub fn liquidity_at(&self, t: usize, at_ms: i64) -> f64 {
        let token = &self.market.tokens[t];
        token.base_liquidity * (self.token_price_at(t, at_ms) / token.base_price).sqrt()
    }

    /// Holders of token `t` at `at_ms`: grows with the token's age, faster for planted ones.
    pub fn holders_at(&self, t: usize, at_ms: i64) -> u64 {
        let token = &self.market.tokens[t];
        let days = (at_ms - self.genesis_ms) as f64 / DAY_MS as f64;
        let growth = match token.scenario {
            Scenario::Accumulated => 0.02,
            Scenario::Exodus => -0.01,
            Scenario::Quiet => 0.002,
        };
        (token.base_holders as f64 * (growth * days).exp()).max(1.0) as u64
    }

    /// DEX volume of token `t` over `[from_ms, to_ms)`, USD.
    pub fn volume_between(&self, t: usize, from_ms: i64, to_ms: i64) -> f64 {
        let token = &self.market.tokens[t];
        let span = (to_ms - from_ms).max(0) as f64 / DAY_MS as f64;
        let busy = match token.scenario {
            Scenario::Quiet => 1.0,
            _ => 1.8,
        };
        token.daily_volume * span * busy * (1.0 + 0.2 * (to_ms as f64 / 1.1e7 + token.phase).sin())
    }

    /// Days between deployment of token `t` and `at_ms`.
    pub fn token_age_days(&self, t: usize, at_ms: i64) -> u32 {
        u32::try_from((at_ms - self.market.tokens[t].deployed_ms).max(0) / DAY_MS).unwrap_or(u32::MAX)
    }

    /// Position `p`'s balance at `at_ms`, whole tokens.
    pub fn balance_at(&self, p: &Position, at_ms: i64) -> f64 {
        let days = (at_ms - self.genesis_ms) as f64 / DAY_MS as f64;
        p.base_balance * (p.rate_per_day * days).exp()
    }

    /// Positions in token `t`.
    pub fn holders_of(&self, t: usize) -> impl Iterator<Item = &Position> {
        self.market.positions.iter().filter(move |p| p.token == t)
    }

    /// Positions of wallet `w`.
    pub fn holdings_of(&self, w: usize) -> impl Iterator<Item = &Position> {
        self.market.positions.iter().filter(move |p| p.wallet == w)
    }

    /// Net USD flow into token `t` over `[now - window_ms, now]` by wallets `who` accepts:
    /// the change of their balances, valued at today's price.
    pub fn netflow_usd(&self, t: usize, window_ms: i64, who: impl Fn(&Wallet) -> bool) -> f64 {
        let now = self.now_ms();
        let price = self.token_price_at(t, now);
        self.holders_of(t)
            .filter(|p| who(&self.market.wallets[p.wallet]))
            .map(|p| (self.balance_at(p, now) - self.balance_at(p, now - window_ms)) * price)
            .sum()
    }

    /// Wallets `who` accepts holding token `t`, with their balance now.
    pub fn holders_count(&self, t: usize, who: impl Fn(&Wallet) -> bool) -> u32 {
        let count = self.holders_of(t).filter(|p| who(&self.market.wallets[p.wallet])).count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// The per-minute random stream of events of kind `what` at minute `minute`.
    fn minute_rng(&self, what: u64, minute: i64) -> fastrand::Rng {
        fastrand::Rng::with_seed(mix(self.market.seed ^ MARKET_SALT ^ what, minute as u64))
    }

    /// Wallet indices on `chain` of the given kinds.
    fn wallets_on(&self, chain: Chain, kinds: &[WalletKind]) -> Vec<usize> {
        let on_chain = MARKET_CHAINS.iter().position(|c| *c == chain).map(|c| &self.market.chain_wallets[c]);
        on_chain.into_iter().flatten().copied().filter(|w| kinds.contains(&self.market.wallets[*w].kind)).collect()
    }

    /// The DEX trades of minute `minute` (unix ms / 60 000), in time order: up to two per
    /// chain, plus a whale-sized one every seven minutes. Smart money trades the planted
    /// tokens the way their story goes.
    pub fn trades_in_minute(&self, minute: i64) -> Vec<Trade> {
        let mut rng = self.minute_rng(1, minute);
        let start = minute * MINUTE_MS;
        let mut trades = Vec::new();
        for (c, chain) in MARKET_CHAINS.into_iter().enumerate() {
            let whale = minute.rem_euclid(7) == 0 && minute.div_euclid(7).rem_euclid(5) == c as i64;
            let count = rng.usize(0..3) + usize::from(whale);
            let traded = &self.market.traded_tokens[c];
            for i in 0..count {
                let is_whale = whale && i == count - 1;
                let roll = rng.f64();
                let kinds: &[WalletKind] = if is_whale {
                    &[WalletKind::Whale, WalletKind::Fund]
                } else if roll < 0.45 {
                    &[WalletKind::SmartTrader, WalletKind::Fund]
                } else if roll < 0.55 {
                    &[WalletKind::PublicFigure, WalletKind::Fresh, WalletKind::Whale]
                } else {
                    &[WalletKind::Retail]
                };
                let token = traded[rng.usize(..traded.len())];
                // Smart money trades what it holds; everyone else, anything.
                let holders = &self.market.smart_holders[token];
                let pool = if !is_whale && kinds.contains(&WalletKind::SmartTrader) && !holders.is_empty() {
                    holders.clone()
                } else {
                    self.wallets_on(chain, kinds)
                };
                let wallet = pool[rng.usize(..pool.len())];
                let kind = self.market.wallets[wallet].kind;
                let bias = match (self.market.tokens[token].scenario, kind.is_smart_money()) {
                    (Scenario::Accumulated, true) => 0.85,
                    (Scenario::Exodus, true) => 0.15,
                    (Scenario::Accumulated, false) => 0.6,
                    (Scenario::Exodus, false) => 0.4,
                    _ => 0.5,
                };
                let buy = rng.f64() < bias;
                let value_usd = if is_whale {
                    WHALE_TRADE_USD * (1.2 + rng.f64() * 8.0)
                } else {
                    match kind {
                        WalletKind::SmartTrader | WalletKind::Fund => 2e3 + rng.f64() * 4e4,
                        WalletKind::Whale => 1e4 + rng.f64() * 3e4,
                        _ => 50.0 + rng.f64() * 5e3,
                    }
                };
                let at_ms = start + rng.i64(0..MINUTE_MS);
                let counter = if rng.bool() { self.stable_of(chain) } else { self.native_of(chain) };
                trades.push(Trade {
                    token,
                    counter,
                    wallet,
                    buy,
                    token_amount: value_usd / self.token_price_at(token, at_ms),
                    counter_amount: value_usd / self.token_price_at(counter, at_ms),
                    value_usd,
                    at_ms,
                    tx_hash: tx_hash(&mut rng, chain),
                });
            }
        }
        trades.sort_by_key(|t| t.at_ms);
        trades
    }

    /// The transfers of minute `minute`: one per chain, in a traded token, between two
    /// wallets; smart money sends the token it is leaving to exchanges.
    pub fn transfers_in_minute(&self, minute: i64) -> Vec<Transfer> {
        let mut rng = self.minute_rng(2, minute);
        let start = minute * MINUTE_MS;
        let mut transfers = Vec::new();
        for (c, chain) in MARKET_CHAINS.into_iter().enumerate() {
            let held = &self.market.traded_positions[c];
            let from = &self.market.positions[held[rng.usize(..held.len())]];
            let sender = &self.market.wallets[from.wallet];
            let exodus = self.market.tokens[from.token].scenario == Scenario::Exodus;
            let targets = if exodus && sender.kind.is_smart_money() {
                self.wallets_on(chain, &[WalletKind::Exchange])
            } else {
                self.wallets_on(
                    chain,
                    &[WalletKind::Retail, WalletKind::Fresh, WalletKind::Exchange, WalletKind::Whale],
                )
            };
            let to = targets[rng.usize(..targets.len())];
            if to == from.wallet {
                continue;
            }
            let at_ms = start + rng.i64(0..MINUTE_MS);
            let amount = self.balance_at(from, at_ms) * (0.005 + rng.f64() * 0.05);
            transfers.push(Transfer {
                token: from.token,
                from: from.wallet,
                to,
                amount,
                value_usd: amount * self.token_price_at(from.token, at_ms),
                at_ms,
                tx_hash: tx_hash(&mut rng, chain),
            });
        }
        transfers.sort_by_key(|t| t.at_ms);
        transfers
    }

    /// The perp trades of minute `minute`: two on average, by EVM traders.
    pub fn perp_trades_in_minute(&self, minute: i64) -> Vec<PerpTrade> {
        let mut rng = self.minute_rng(3, minute);
        let start = minute * MINUTE_MS;
        let traders = self.wallets_on(
            Chain::Ethereum,
            &[WalletKind::SmartTrader, WalletKind::Fund, WalletKind::Whale, WalletKind::Retail],
        );
        let mut trades: Vec<PerpTrade> = (0..rng.usize(0..5))
            .map(|_| {
                let coin = rng.usize(..self.market.perp_coins.len());
                let wallet = traders[rng.usize(..traders.len())];
                let at_ms = start + rng.i64(0..MINUTE_MS);
                let price = self.perp_price_at(coin, at_ms);
                let usd = match self.market.wallets[wallet].kind {
                    WalletKind::Whale | WalletKind::Fund => 5e4 + rng.f64() * 2e6,
                    WalletKind::SmartTrader => 5e3 + rng.f64() * 3e5,
                    _ => 1e2 + rng.f64() * 2e4,
                };
                PerpTrade {
                    coin,
                    wallet,
                    long: rng.f64() < 0.55,
                    action: ["Open", "Add", "Reduce", "Close"][rng.usize(..4)],
                    size: usd / price,
                    price,
                    at_ms,
                    order_type: if rng.f64() < 0.7 { "Market" } else { "Limit" },
                    tx_hash: tx_hash(&mut rng, Chain::Ethereum),
                }
            })
            .collect();
        trades.sort_by_key(|t| t.at_ms);
        trades
    }

    /// Events `of` every minute in `[from_ms, to_ms)`, cut to the last
    /// [`MAX_EVENT_WINDOW_MS`] of the range and to the present, in time order.
    pub fn events_between<E>(&self, from_ms: i64, to_ms: i64, of: impl Fn(&World, i64) -> Vec<E>) -> Vec<E>
    where
        E: EventTime,
    {
        let to_ms = to_ms.min(self.now_ms());
        let from_ms = from_ms.max(to_ms - MAX_EVENT_WINDOW_MS);
        if to_ms <= from_ms {
            return Vec::new();
        }
        let mut out = Vec::new();
        for minute in from_ms.div_euclid(MINUTE_MS)..=(to_ms - 1).div_euclid(MINUTE_MS) {
            out.extend(of(self, minute).into_iter().filter(|e| (from_ms..to_ms).contains(&e.at_ms())));
        }
        out
    }

    /// DEX trades in `[from_ms, to_ms)` (see [`World::events_between`]).
    pub fn trades_between(&self, from_ms: i64, to_ms: i64) -> Vec<Trade> {
        self.events_between(from_ms, to_ms, World::trades_in_minute)
    }

    /// Transfers in `[from_ms, to_ms)`.
    pub fn transfers_between(&self, from_ms: i64, to_ms: i64) -> Vec<Transfer> {
        self.events_between(from_ms, to_ms, World::transfers_in_minute)
    }

    /// Perp trades in `[from_ms, to_ms)`.
    pub fn perp_trades_between(&self, from_ms: i64, to_ms: i64) -> Vec<PerpTrade> {
        self.events_between(from_ms, to_ms, World::perp_trades_in_minute)
    }

    /// Perp coin `c`'s mark price at `at_ms`, USD; SOL follows the spot SOL price.
    pub fn perp_price_at(&self, c: usize, at_ms: i64) -> f64 {
        let coin = &self.market.perp_coins[c];
        if coin.symbol == "SOL" {
            return self.sol_usd_at(at_ms);
        }
        perp_price_at(coin, self.genesis_ms, at_ms)
    }

    /// The DCA orders opened in `[from_ms, to_ms)`: one every two hours by a Solana smart
    /// wallet, spending USDC on a traded Solana token (cut like [`World::events_between`]).
    pub fn dca_orders_between(&self, from_ms: i64, to_ms: i64) -> Vec<DcaOrder> {
        let to_ms = to_ms.min(self.now_ms());
        let from_ms = from_ms.max(to_ms - 30 * DAY_MS);
        let period = 2 * HOUR_MS;
        let buyers = self.wallets_on(Chain::Solana, &[WalletKind::SmartTrader, WalletKind::Fund]);
        let outputs: Vec<usize> = (0..self.market.tokens.len())
            .filter(|t| {
                self.market.tokens[*t].chain == Chain::Solana && self.market.tokens[*t].kind == TokenKind::Traded
            })
            .collect();
        let usdc = self.stable_of(Chain::Solana);
        let mut orders = Vec::new();
        if to_ms <= from_ms {
            return orders;
        }
        for slot in from_ms.div_euclid(period)..=(to_ms - 1).div_euclid(period) {
            let mut rng = self.minute_rng(4, slot);
            let created_ms = slot * period + rng.i64(0..period);
            if !(from_ms..to_ms).contains(&created_ms) {
                continue;
            }
            let deposit_usd = 1e3 + rng.f64() * 9e4;
            // The accumulated token gets every other order, as the story goes.
            let output = if slot % 2 == 0 {
                self.planted_token(Chain::Solana, Scenario::Accumulated)
                    .and_then(|t| self.token_index(Chain::Solana, &t.address))
                    .unwrap_or(outputs[0])
            } else {
                outputs[rng.usize(..outputs.len())]
            };
            orders.push(DcaOrder {
                wallet: buyers[rng.usize(..buyers.len())],
                input: usdc,
                output,
                deposit: deposit_usd,
                deposit_usd,
                created_ms,
                duration_ms: rng.i64(1..14) * DAY_MS,
                tx_hash: tx_hash(&mut rng, Chain::Solana),
                vault: address(&mut rng),
            });
        }
        orders
    }

    /// SOL in USD at `at_ms` (the launchpad's SOL price, at any time).
    pub fn sol_usd_at(&self, at_ms: i64) -> f64 {
        let t = at_ms as f64 / DAY_MS as f64;
        180.0 * (1.0 + 0.04 * (t * std::f64::consts::TAU).sin())
    }
}

/// An event with a time, so windows can be cut exactly.
pub trait EventTime {
    /// When it happened, unix ms.
    fn at_ms(&self) -> i64;
}

impl EventTime for Trade {
    fn at_ms(&self) -> i64 {
        self.at_ms
    }
}

impl EventTime for Transfer {
    fn at_ms(&self) -> i64 {
        self.at_ms
    }
}

impl EventTime for PerpTrade {
    fn at_ms(&self) -> i64 {
        self.at_ms
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Instant;

    use super::*;
    use svc_domain::{Address, FixedClock};

    const NOW: i64 = 1_795_341_600_000;

    fn grown() -> (World, FixedClock) {
        let clock = FixedClock::at_ms(NOW);
        (World::new(402, Arc::new(clock.clone())), clock)
    }

    #[test]
    fn the_world_is_quick_to_grow_and_every_address_is_valid_for_its_chain() {
        let started = Instant::now();
        let (world, _) = grown();
        assert!(started.elapsed().as_millis() < 50, "took {:?}", started.elapsed());
        assert_eq!(world.tokens().len(), MARKET_CHAINS.len() * (TRADED_PER_CHAIN + 2));
        for token in world.tokens() {
            Address::parse_for(token.chain, &token.address).expect("token address");
        }
        for wallet in world.wallets() {
            Address::parse_for(wallet.chain, &wallet.address).expect("wallet address");
        }
        for chain in MARKET_CHAINS {
            assert!(world.wallets().iter().any(|w| w.chain == chain && w.kind == WalletKind::Exchange));
        }
    }

    #[test]
    fn prices_move_with_the_clock_and_the_same_seed_gives_the_same_market() {
        let (world, clock) = grown();
        let t = 4;
        let before = world.token_price(t);
        clock.advance_ms(3 * HOUR_MS);
        assert_ne!(before, world.token_price(t));
        let (again, _) = grown();
        assert_eq!(again.tokens()[t].address, world.tokens()[t].address);
        assert_eq!(again.trades_in_minute(NOW / MINUTE_MS), world.trades_in_minute(NOW / MINUTE_MS));
    }

    #[test]
    fn smart_money_accumulates_one_token_and_leaves_another() {
        let (world, _) = grown();
        let smart = |w: &Wallet| w.kind.is_smart_money();
        let up = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
        let down = world.planted_token(Chain::Solana, Scenario::Exodus).expect("planted");
        let up = world.token_index(Chain::Solana, &up.address).expect("index");
        let down = world.token_index(Chain::Solana, &down.address).expect("index");
        for window in [HOUR_MS, DAY_MS, 7 * DAY_MS] {
            assert!(world.netflow_usd(up, window, smart) > 0.0);
            assert!(world.netflow_usd(down, window, smart) < 0.0);
        }
        let day = world.trades_between(NOW - DAY_MS, NOW);
        let smart_side = |t: usize, buy: bool| {
            day.iter()
                .filter(|x| x.token == t && x.buy == buy && world.wallets()[x.wallet].kind.is_smart_money())
                .count()
        };
        assert!(smart_side(up, true) > smart_side(up, false));
        assert!(smart_side(down, false) > smart_side(down, true));
    }

    #[test]
    fn whale_trades_happen_every_hour_and_windows_are_exact() {
        let (world, _) = grown();
        let hour = world.trades_between(NOW - HOUR_MS, NOW);
        assert!(hour.iter().filter(|t| t.value_usd >= WHALE_TRADE_USD).count() >= 5);
        assert!(hour.iter().all(|t| (NOW - HOUR_MS..NOW).contains(&t.at_ms)));
        assert!(hour.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        let future = world.trades_between(NOW, NOW + HOUR_MS);
        assert!(future.is_empty(), "nothing has happened yet after now");
    }

    #[test]
    fn solana_transaction_hashes_are_64_byte_signatures() {
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..200 {
            let hash = tx_hash(&mut rng, Chain::Solana);
            assert_eq!(bs58::decode(&hash).into_vec().expect("base58").len(), 64, "{hash}");
        }
        let evm = tx_hash(&mut rng, Chain::Base);
        assert!(evm.len() == 66 && evm.starts_with("0x"));
    }

    #[test]
    fn a_week_of_events_is_quick_and_longer_ranges_are_cut() {
        let (world, _) = grown();
        let started = Instant::now();
        let week = world.trades_between(NOW - 30 * DAY_MS, NOW);
        assert!(week.iter().all(|t| t.at_ms >= NOW - MAX_EVENT_WINDOW_MS));
        assert!(!world.transfers_between(NOW - 7 * DAY_MS, NOW).is_empty());
        assert!(started.elapsed().as_secs() < 5, "took {:?}", started.elapsed());
        let transfers = world.transfers_between(NOW - HOUR_MS, NOW);
        assert!(!transfers.is_empty());
        assert!(!world.perp_trades_between(NOW - HOUR_MS, NOW).is_empty());
        assert!(!world.dca_orders_between(NOW - 7 * DAY_MS, NOW).is_empty());
    }
}
