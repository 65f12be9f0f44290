//! Tokens, prices, yield pools and DeFi positions: what the swap aggregators, the EVM
//! router, the yields index and the transaction scanner of the simulated market serve.
//! Prices and yields drift with the clock; the token lists and pools are fixed per seed.

use super::{DAY_MS, HOUR_MS, World, address};

/// The address EVM routers use for the chain's native coin.
pub const NATIVE_SENTINEL: &str = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";

/// A Solana token the swap aggregators route.
#[derive(Debug, Clone)]
pub struct SolToken {
    /// Mint (base58).
    pub mint: String,
    /// Ticker.
    pub symbol: String,
    /// Decimals of the mint.
    pub decimals: u8,
    base_usd: f64,
    swing: f64,
    phase: f64,
}

/// An EVM token the router prices and routes.
#[derive(Debug, Clone)]
pub struct EvmToken {
    /// Chain id (1 or 8453).
    pub chain_id: u64,
    /// Lowercase `0x…` address ([`NATIVE_SENTINEL`] for the native coin).
    pub address: String,
    /// Ticker.
    pub symbol: String,
    /// Name.
    pub name: String,
    /// Decimals.
    pub decimals: u8,
    base_usd: f64,
    swing: f64,
    phase: f64,
}

/// A tokenized DeFi position (a lending market's receipt token, a vault share) on an EVM
/// chain, as the router lists it.
#[derive(Debug, Clone)]
pub struct DefiPosition {
    /// Chain id.
    pub chain_id: u64,
    /// Protocol slug (`aave-v3`).
    pub protocol: String,
    /// The position token's address.
    pub address: String,
    /// The contract deposits go to.
    pub primary_address: String,
    /// Ticker of the position token.
    pub symbol: String,
    /// Name of the position token.
    pub name: String,
    /// The token deposited.
    pub underlying: EvmToken,
    apy_base: f64,
    apy_reward: f64,
    tvl_usd: f64,
}

/// A non-tokenized position (a concentrated-liquidity NFT, a restaking vault).
#[derive(Debug, Clone)]
pub struct NontokenizedPosition {
    /// Chain id.
    pub chain_id: u64,
    /// Protocol slug.
    pub protocol: String,
    /// Project the protocol belongs to.
    pub project: String,
    /// The position manager contract.
    pub address: String,
    /// Position id within the contract.
    pub position_id: String,
    /// Contract deposits go to.
    pub primary_address: String,
    /// Name.
    pub name: String,
    /// Underlying token addresses.
    pub underlying: Vec<String>,
}

/// A pool of the yields index (every chain, capitalised chain names as the index writes them).
#[derive(Debug, Clone)]
pub struct YieldPool {
    /// The index's pool id (a UUID).
    pub pool: String,
    /// `Solana`, `Ethereum` or `Base`.
    pub chain: String,
    /// Project slug.
    pub project: String,
    /// Pool symbol (`USDC`, `SOL-USDC`).
    pub symbol: String,
    /// Underlying token addresses or mints.
    pub underlying: Vec<String>,
    /// Single-asset pools have no impermanent loss.
    pub exposure_single: bool,
    /// Pays out stablecoins only.
    pub stablecoin: bool,
    apy_base: f64,
    apy_reward: f64,
    tvl_usd: f64,
    phase: f64,
}

/// Yields of a pool or position now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Yields {
    /// Base APY, percent.
    pub apy_base: f64,
    /// Reward APY, percent.
    pub apy_reward: f64,
    /// TVL, USD.
    pub tvl_usd: f64,
}

impl Yields {
    /// Base plus reward APY.
    pub fn apy(&self) -> f64 {
        self.apy_base + self.apy_reward
    }
}

/// The fixed DeFi side of a world.
#[derive(Debug)]
pub(crate) struct Defi {
    sol_tokens: Vec<SolToken>,
    evm_tokens: Vec<EvmToken>,
    positions: Vec<DefiPosition>,
    nontokenized: Vec<NontokenizedPosition>,
    pools: Vec<YieldPool>,
    drainer: String,
}

const SOL_TOKENS: [(&str, &str, u8, f64, f64); 6] = [
    ("So11111111111111111111111111111111111111112", "SOL", 9, 180.0, 0.05),
    ("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC", 6, 1.0, 0.0),
    ("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", "USDT", 6, 1.0, 0.0),
    ("JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN", "JUP", 6, 0.9, 0.08),
    ("DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", "BONK", 5, 0.00002, 0.12),
    ("J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn", "JitoSOL", 9, 215.0, 0.05),
];

/// Chain id, address, symbol, name, decimals, USD price, daily swing.
const EVM_TOKENS: [(u64, &str, &str, &str, u8, f64, f64); 10] = [
    (8453, NATIVE_SENTINEL, "ETH", "Ether", 18, 3200.0, 0.04),
    (8453, "0x4200000000000000000000000000000000000006", "WETH", "Wrapped Ether", 18, 3200.0, 0.04),
    (8453, "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "USDC", "USD Coin", 6, 1.0, 0.0),
    (8453, "0xcbb7c0000ab88b473b1f5afd9ef808440eed33bf", "cbBTC", "Coinbase Wrapped BTC", 8, 95_000.0, 0.03),
    (8453, "0x50c5725949a6f0c72e6c4a641f24049a917db0cb", "DAI", "Dai Stablecoin", 18, 1.0, 0.0),
    (1, NATIVE_SENTINEL, "ETH", "Ether", 18, 3200.0, 0.04),
    (1, "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "WETH", "Wrapped Ether", 18, 3200.0, 0.04),
    (1, "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USDC", "USD Coin", 6, 1.0, 0.0),
    (1, "0xdac17f958d2ee523a2206206994597c13d831ec7", "USDT", "Tether USD", 6, 1.0, 0.0),
    (1, "0x6b175474e89094c44da98b954eedeac495271d0f", "DAI", "Dai Stablecoin", 18, 1.0, 0.0),
];

/// Lending and vault protocols by chain id.
const PROTOCOLS: [(u64, &str); 7] = [
    (8453, "aave-v3"),
    (8453, "compound-v3"),
    (8453, "morpho-blue"),
    (8453, "moonwell"),
    (1, "aave-v3"),
    (1, "compound-v3"),
    (1, "spark"),
];

/// Chain, project, symbol: pools of the yields index.
const YIELD_POOLS: [(&str, &str, &str); 14] = [
    ("Solana", "kamino-lend", "USDC"),
    ("Solana", "kamino-lend", "SOL"),
    ("Solana", "marginfi-lending", "USDC"),
    ("Solana", "marginfi-lending", "JITOSOL"),
    ("Solana", "jito-liquid-staking", "JITOSOL"),
    ("Solana", "raydium-amm", "SOL-USDC"),
    ("Solana", "orca-dex", "SOL-USDC"),
    ("Solana", "orca-dex", "JUP-SOL"),
    ("Solana", "drift-staked-sol", "DSOL"),
    ("Solana", "save", "USDT"),
    ("Ethereum", "aave-v3", "WETH"),
    ("Ethereum", "lido", "STETH"),
    ("Base", "aave-v3", "USDC"),
    ("Base", "aerodrome-v1", "WETH-USDC"),
];

/// Salt of the DeFi rng stream.
const SALT: u64 = 0xdef1_0000_5a1f_0001;

pub(super) fn grow(seed: u64) -> Defi {
    let mut rng = fastrand::Rng::with_seed(seed ^ SALT);
    let sol_tokens = SOL_TOKENS
        .iter()
        .map(|(mint, symbol, decimals, usd, swing)| SolToken {
            mint: (*mint).to_owned(),
            symbol: (*symbol).to_owned(),
            decimals: *decimals,
            base_usd: *usd,
            swing: *swing,
            phase: rng.f64() * std::f64::consts::TAU,
        })
        .collect();
    let evm_tokens: Vec<EvmToken> = EVM_TOKENS
        .iter()
        .map(|(chain_id, address, symbol, name, decimals, usd, swing)| EvmToken {
            chain_id: *chain_id,
            address: (*address).to_owned(),
            symbol: (*symbol).to_owned(),
            name: (*name).to_owned(),
            decimals: *decimals,
            base_usd: *usd,
            swing: *swing,
            // Wrapped and native ether move together.
            phase: if symbol.ends_with("ETH") { 1.0 } else { rng.f64() * std::f64::consts::TAU },
        })
        .collect();
    let mut positions = Vec::new();
    for (chain_id, protocol) in PROTOCOLS {
        let primary = evm_address(&mut rng);
        for token in evm_tokens.iter().filter(|t| t.chain_id == chain_id && t.address != NATIVE_SENTINEL) {
            if rng.f64() < 0.25 {
                continue;
            }
            let prefix = protocol.split('-').next().unwrap_or(protocol);
            positions.push(DefiPosition {
                chain_id,
                protocol: protocol.to_owned(),
                address: evm_address(&mut rng),
                primary_address: if protocol == "morpho-blue" { evm_address(&mut rng) } else { primary.clone() },
                symbol: format!("{prefix}{}", token.symbol),
                name: format!("{protocol} {}", token.symbol),
                underlying: token.clone(),
                apy_base: rng.f64() * 8.0 + 0.5,
                apy_reward: if rng.bool() { rng.f64() * 3.0 } else { 0.0 },
                tvl_usd: 10f64.powf(rng.f64() * 3.0 + 5.0),
            });
        }
    }
    let mut nontokenized = Vec::new();
    for (chain_id, protocol, project) in
        [(8453, "uniswap-v3", "uniswap"), (8453, "aerodrome-slipstream", "aerodrome"), (1, "uniswap-v3", "uniswap")]
    {
        let manager = evm_address(&mut rng);
        let pairs: Vec<&EvmToken> =
            evm_tokens.iter().filter(|t| t.chain_id == chain_id && t.address != NATIVE_SENTINEL).collect();
        for i in 0..4 {
            let (a, b) = (pairs[i % pairs.len()], pairs[(i + 1) % pairs.len()]);
            nontokenized.push(NontokenizedPosition {
                chain_id,
                protocol: protocol.to_owned(),
                project: project.to_owned(),
                address: manager.clone(),
                position_id: rng.u64(100_000..2_000_000).to_string(),
                primary_address: evm_address(&mut rng),
                name: format!("{} {}/{}", project, a.symbol, b.symbol),
                underlying: vec![a.address.clone(), b.address.clone()],
            });
        }
    }
    let pools = YIELD_POOLS
        .iter()
        .map(|(chain, project, symbol)| YieldPool {
            pool: uuid_like(&mut rng),
            chain: (*chain).to_owned(),
            project: (*project).to_owned(),
            symbol: (*symbol).to_owned(),
            underlying: symbol
                .split('-')
                .map(|part| {
                    SOL_TOKENS
                        .iter()
                        .find(|(_, s, ..)| s.eq_ignore_ascii_case(part))
                        .map_or_else(|| address(&mut rng), |(mint, ..)| (*mint).to_owned())
                })
                .collect(),
            exposure_single: !symbol.contains('-'),
            stablecoin: symbol.starts_with("USD"),
            apy_base: rng.f64() * 12.0 + 1.0,
            apy_reward: if rng.bool() { rng.f64() * 6.0 } else { 0.0 },
            tvl_usd: 10f64.powf(rng.f64() * 3.0 + 6.0),
            phase: rng.f64() * std::f64::consts::TAU,
        })
        .collect();
    let drainer = evm_address(&mut rng);
    Defi { sol_tokens, evm_tokens, positions, nontokenized, pools, drainer }
}

/// A random lowercase EVM address.
fn evm_address(rng: &mut fastrand::Rng) -> String {
    let mut out = String::from("0x");
    for _ in 0..20 {
        out.push_str(&format!("{:02x}", rng.u8(..)));
    }
    out
}

fn uuid_like(rng: &mut fastrand::Rng) -> String {
    let hex: String = (0..16).map(|_| format!("{:02x}", rng.u8(..))).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

impl World {
    /// Solana tokens the aggregators route.
    pub fn sol_tokens(&self) -> &[SolToken] {
        &self.defi.sol_tokens
    }

    /// The Solana token with this mint.
    pub fn sol_token(&self, mint: &str) -> Option<&SolToken> {
        self.defi.sol_tokens.iter().find(|t| t.mint == mint)
    }

    /// EVM tokens the router prices, on every chain.
    pub fn evm_tokens(&self) -> &[EvmToken] {
        &self.defi.evm_tokens
    }

    /// The EVM token at `address` (any case) on `chain_id`.
    pub fn evm_token(&self, chain_id: u64, address: &str) -> Option<&EvmToken> {
        self.defi.evm_tokens.iter().find(|t| t.chain_id == chain_id && t.address.eq_ignore_ascii_case(address))
    }

    /// Tokenized DeFi positions on every chain.
    pub fn defi_positions(&self) -> &[DefiPosition] {
        &self.defi.positions
    }

    /// Non-tokenized positions on every chain.
    pub fn nontokenized_positions(&self) -> &[NontokenizedPosition] {
        &self.defi.nontokenized
    }

    /// Pools of the yields index.
    pub fn yield_pools(&self) -> &[YieldPool] {
        &self.defi.pools
    }

    /// A contract planted in the world that steals what is sent or approved to it, on every
    /// EVM chain; the scanner flags any transaction touching it.
    pub fn drainer_address(&self) -> &str {
        &self.defi.drainer
    }

    /// `swing` percent of daily sine drift around `base`, plus a slower weekly one.
    fn drift(&self, base: f64, swing: f64, phase: f64) -> f64 {
        let t = self.now_ms() as f64 / DAY_MS as f64;
        let tau = std::f64::consts::TAU;
        base * (1.0 + swing * (t * tau + phase).sin() + swing * 0.5 * (t / 7.0 * tau + phase).cos())
    }

    /// USD price of a Solana token now.
    pub fn sol_token_usd(&self, token: &SolToken) -> f64 {
        self.drift(token.base_usd, token.swing, token.phase)
    }

    /// USD price of an EVM token now.
    pub fn evm_token_usd(&self, token: &EvmToken) -> f64 {
        self.drift(token.base_usd, token.swing, token.phase)
    }

    /// A position's yields now.
    pub fn position_yields(&self, position: &DefiPosition) -> Yields {
        let wobble = self.drift(1.0, 0.1, position.apy_base);
        Yields {
            apy_base: position.apy_base * wobble,
            apy_reward: position.apy_reward,
            tvl_usd: self.drift(position.tvl_usd, 0.03, position.apy_reward),
        }
    }

    /// A yields-index pool's yields now.
    pub fn pool_yields(&self, pool: &YieldPool) -> Yields {
        Yields {
            apy_base: self.drift(pool.apy_base, 0.15, pool.phase),
            apy_reward: pool.apy_reward,
            tvl_usd: self.drift(pool.tvl_usd, 0.05, pool.phase + 1.0),
        }
    }

    /// Output of an `amount` (smallest units) swap of `from` into `to` (each a USD price and
    /// decimals) through a venue charging `fee_bps`, with impact growing with the trade's
    /// size against a pool of `depth_usd`. Returns the output and the impact as a fraction.
    pub fn swap_out(&self, amount: u64, from: (f64, u8), to: (f64, u8), fee_bps: f64, depth_usd: f64) -> (u64, f64) {
        let ((from_usd, from_decimals), (to_usd, to_decimals)) = (from, to);
        let value_usd = amount as f64 / 10f64.powi(i32::from(from_decimals)) * from_usd;
        let impact = value_usd / (value_usd + depth_usd);
        let out_whole = value_usd * (1.0 - fee_bps / 10_000.0) * (1.0 - impact) / to_usd;
        ((out_whole * 10f64.powi(i32::from(to_decimals))).floor().min(u64::MAX as f64) as u64, impact)
    }

    /// How much better or worse than par an aggregator does right now, in basis points of
    /// fee: each aggregator's edge wanders over the hour, so neither always wins.
    pub fn aggregator_fee_bps(&self, salt: f64) -> f64 {
        let t = self.now_ms() as f64 / HOUR_MS as f64;
        12.0 + 8.0 * (t * std::f64::consts::TAU + salt).sin()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn prices_and_yields_move_with_the_clock_and_the_drainer_is_planted() {
        let clock = FixedClock::at_ms(NOW);
        let world = World::new(1, Arc::new(clock.clone()));
        let sol = world.sol_tokens()[0].clone();
        let pool = world.yield_pools()[0].clone();
        let before = (world.sol_token_usd(&sol), world.pool_yields(&pool));
        clock.advance_ms(3 * HOUR_MS);
        assert_ne!(before.0, world.sol_token_usd(&sol));
        assert_ne!(before.1, world.pool_yields(&pool));
        assert_eq!(world.drainer_address().len(), 42);
        assert!(world.defi_positions().iter().any(|p| p.chain_id == 8453 && p.protocol == "aave-v3"));
        let usdc = world.sol_token("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v").expect("usdc");
        assert!((world.sol_token_usd(usdc) - 1.0).abs() < 1e-9);
        let eth = world.evm_token(8453, NATIVE_SENTINEL).expect("eth");
        let weth = world.evm_token(8453, "0x4200000000000000000000000000000000000006").expect("weth");
        assert_eq!(world.evm_token_usd(eth), world.evm_token_usd(weth), "wrapped ether tracks ether");
    }

    #[test]
    fn a_bigger_swap_moves_the_price_more() {
        let world = World::new(1, Arc::new(FixedClock::at_ms(NOW)));
        let (small, small_impact) = world.swap_out(1_000_000_000, (180.0, 9), (1.0, 6), 10.0, 5e6);
        let (big, big_impact) = world.swap_out(1_000_000_000_000, (180.0, 9), (1.0, 6), 10.0, 5e6);
        assert!(big_impact > small_impact);
        assert!(big / 1000 < small);
    }
}
