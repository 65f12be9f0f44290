//! Solana token mints as the chain holds them: supply, decimals, and the two authorities a
//! buyer must know about. A live mint authority can inflate the supply; a live freeze
//! authority can freeze any holder's tokens. What the simulated Solana node serves.

use svc_domain::Chain;

use super::{TokenKind, World, address, mix3, seed_of};
use crate::world::Scenario;

/// Salt of the mints' random stream.
pub(super) const MINTS_SALT: u64 = 0x6d69_6e74_7300_0001;

/// Program that owns classic token mints.
pub const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/// USDC's issuer keeps both authorities, as the real mint does.
const USDC_MINT_AUTHORITY: &str = "BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG";
const USDC_FREEZE_AUTHORITY: &str = "7dGbd2QZcCKcTndnHcTL8q7SMVXAkp688NTQYwrRCrar";

/// Chance, percent, that a traded token's mint authority is still live.
const LIVE_MINT_PCT: u64 = 30;
/// Chance, percent, that a traded token's freeze authority is still live.
const LIVE_FREEZE_PCT: u64 = 15;

/// A token mint account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mint {
    /// Its address.
    pub address: String,
    /// Decimals.
    pub decimals: u8,
    /// Supply, smallest units.
    pub supply: u64,
    /// Who may mint more; `None` once revoked.
    pub mint_authority: Option<String>,
    /// Who may freeze holders' token accounts; `None` once revoked.
    pub freeze_authority: Option<String>,
}

impl World {
    /// The mint at `at`: a Solana token of the market or a launchpad coin; `None` for any
    /// other address (the node holds no such account). The planted accumulation token's
    /// authorities are both revoked and the freeze trap's freeze authority is live; other
    /// traded tokens keep each authority by a roll fixed per seed and mint.
    pub fn mint(&self, at: &str) -> Option<Mint> {
        if let Some(coin) = self.coin(at) {
            // The launchpad revokes both authorities when it creates a coin.
            let supply = self.coin_state(coin).total_supply;
            return Some(Mint {
                address: at.to_owned(),
                decimals: 6,
                supply,
                mint_authority: None,
                freeze_authority: None,
            });
        }
        let t = self.token_index(Chain::Solana, at)?;
        let token = &self.tokens()[t];
        let roll = mix3(self.mints_seed, seed_of(&token.address), 0);
        let mut rng = fastrand::Rng::with_seed(roll);
        let (mint_live, freeze_live) = match token.kind {
            TokenKind::Native => (false, false),
            TokenKind::Stable => (true, true),
            TokenKind::Traded if self.freeze_trap_token().is_some_and(|f| f.address == token.address) => (false, true),
            TokenKind::Traded if token.scenario == Scenario::Accumulated => (false, false),
            TokenKind::Traded => (roll % 100 < LIVE_MINT_PCT, (roll >> 16) % 100 < LIVE_FREEZE_PCT),
        };
        let (mint_authority, freeze_authority) = if token.kind == TokenKind::Stable {
            (USDC_MINT_AUTHORITY.to_owned(), USDC_FREEZE_AUTHORITY.to_owned())
        } else {
            (address(&mut rng), address(&mut rng))
        };
        let units = token.supply * 10f64.powi(i32::from(token.decimals));
        Some(Mint {
            address: token.address.clone(),
            decimals: token.decimals,
            supply: if units.is_finite() && units > 0.0 { units.min(u64::MAX as f64) as u64 } else { 0 },
            mint_authority: mint_live.then_some(mint_authority),
            freeze_authority: freeze_live.then_some(freeze_authority),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn the_world_plants_live_and_revoked_authorities() {
        let world = World::new(402, Arc::new(FixedClock::at_ms(NOW)));
        let solana: Vec<Mint> = world
            .tokens()
            .iter()
            .filter(|t| t.chain == Chain::Solana)
            .map(|t| world.mint(&t.address).expect("every Solana token is a mint"))
            .collect();
        assert!(solana.iter().any(|m| m.mint_authority.is_some()));
        assert!(solana.iter().any(|m| m.mint_authority.is_none() && m.freeze_authority.is_none()));
        let accumulated = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted");
        let clean = world.mint(&accumulated.address).expect("mint");
        assert_eq!((clean.mint_authority, clean.freeze_authority), (None, None));
        let trap = world.freeze_trap_token().expect("planted trap");
        assert_ne!(trap.address, accumulated.address);
        let trap = world.mint(&trap.address).expect("mint");
        assert!(trap.freeze_authority.is_some() && trap.mint_authority.is_none());
        let coin = world.mint(&world.coins()[0].mint).expect("a launchpad coin is a mint");
        assert_eq!((coin.mint_authority, coin.freeze_authority), (None, None));
        assert_eq!(world.mint(&world.wallets()[0].address), None, "a wallet is no mint");
        let again = World::new(402, Arc::new(FixedClock::at_ms(NOW + 1_000)));
        assert_eq!(again.mint(&trap.address), Some(trap), "the same seed holds the same authorities");
    }
}
