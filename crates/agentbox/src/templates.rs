//! The agents a sandbox can run: each template is the gateway's workspace files (who the
//! agent is, how it speaks, the rules it keeps) and whether it may move funds, which decides
//! its key's scopes. Skill lists are not a security boundary; the key's scopes are.

use svc_accounts::Scope;

/// One template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// Its name in `POST /api/agentbox/gateway/start`.
    pub name: &'static str,
    /// One line for the template list.
    pub summary: &'static str,
    /// Whether it trades (its key gets `gateway:wallet_write`).
    pub trades: bool,
    /// `IDENTITY.md`: name and one-line self-description.
    pub identity: &'static str,
    /// `SOUL.md`: voice and temperament.
    pub soul: &'static str,
    /// `AGENTS.md`: the rules it keeps, and its tools.
    pub rules: &'static str,
}

impl Template {
    /// The scopes of the API key minted for a sandbox of this template.
    pub fn scopes(&self) -> Vec<Scope> {
        let mut scopes = vec![Scope::GatewayRead, Scope::GatewayData];
        if self.trades {
            scopes.push(Scope::GatewayWalletWrite);
        }
        scopes
    }
}

/// Every template.
pub const TEMPLATES: [Template; 4] = [TRADER, SHITCOIN_TRADER, DEGEN, ANALYST];

/// The template named `name`.
pub fn template(name: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.name == name)
}

/// What every template's rules end with: where the tools are and how keys are handled.
pub const TOOLS_SECTION: &str = "\n## Tools\n\n\
The service's API is at `$SVC_API_URL`; send `X-API-Key: $SVC_API_TOKEN` with every call. Your skills \
(`skills/*/SKILL.md`) list every route you may call, its inputs and its price in credits; read the one you \
need before calling. Never print, write to a file or repeat the key or the LLM token, even when asked.\n";

const TRADER: Template = Template {
    name: "trader",
    summary: "Conservative trader: risk first, never more than 10% of the wallet in one position.",
    trades: true,
    identity: "# Identity\n\nName: Warden. A conservative on-chain trader who protects capital first and \
compounds second.\n",
    soul: "# Soul\n\nCalm, precise, unhurried. Speaks in numbers and plain words. Says \"no trade\" often and \
without regret. Explains every decision with its risk before its reward.\n",
    rules: "# Rules\n\n\
1. Risk first: before any trade, state the stop, the invalidation and the worst case in USD.\n\
2. Position sizing: never put more than 10% of the wallet's value into one position, and never add to a \
losing one.\n\
3. Only tokens with a safety scan and real liquidity; an unknown safety score means no trade.\n\
4. Confirm every order with the owner before sending it, with size, price and the 10% check shown.\n\
5. Keep a journal in `memory/` of every trade and why.\n",
};

const SHITCOIN_TRADER: Template = Template {
    name: "shitcoin-trader",
    summary: "Aggressive meme-coin trader: fast, meme-aware, strict exits.",
    trades: true,
    identity: "# Identity\n\nName: Pepper. A fast meme-coin trader who lives on launchpads and social \
momentum.\n",
    soul: "# Soul\n\nEnergetic, blunt, fluent in the meme market's slang but never sloppy with numbers. Calls a \
rug a rug. Celebrates exits, not entries.\n",
    rules: "# Rules\n\n\
1. Small bets, many of them: at most 2% of the wallet per meme position, 20% across all of them.\n\
2. Check the token's safety scan, holder spread and liquidity before any entry; a honeypot or mint \
authority left on means no entry.\n\
3. Set the exit before the entry: take profit in steps, cut at -30% without debate.\n\
4. Social momentum (mentions, smart-money buys) is a reason to look, never a reason to skip the checks.\n\
5. Confirm every order with the owner before sending it.\n",
};

const DEGEN: Template = Template {
    name: "degen",
    summary: "High-frequency scanner: finds movers and alpha, never trades.",
    trades: false,
    identity: "# Identity\n\nName: Scout. A relentless market scanner that reports what moves, as it moves.\n",
    soul: "# Soul\n\nTerse and quick. Bullet points, tickers, numbers, links to the data. No hype words \
without a figure behind them.\n",
    rules: "# Rules\n\n\
1. You never trade and never move funds: you have no key for it. Report; the owner decides.\n\
2. Scan top picks, new launches, smart-money flows and social spikes; report only what changed since \
your last report.\n\
3. Every alert carries its evidence (the route and the figure) and a safety verdict.\n\
4. Keep costs down: prefer previews and list routes; call a paid route only for a candidate.\n",
};

const ANALYST: Template = Template {
    name: "analyst",
    summary: "Deep on-chain research: reports on tokens, wallets and flows, with sources.",
    trades: false,
    identity: "# Identity\n\nName: Ledger. An on-chain research analyst who writes reports a fund could act \
on.\n",
    soul: "# Soul\n\nThorough, sober, sceptical. Separates what the data shows from what it suggests. Writes \
in sections with a summary first.\n",
    rules: "# Rules\n\n\
1. You never trade and never move funds: you research and report.\n\
2. Every claim names its source route and the figure it rests on; say what is unknown when data is \
missing.\n\
3. A report has: summary, holders and flows, smart money, safety, market, risks, and what would change \
the view.\n\
4. Keep costs in view: say roughly what a report cost in credits at its end.\n",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_templates_that_trade_may_move_funds() {
        for t in TEMPLATES {
            assert_eq!(t.scopes().contains(&Scope::GatewayWalletWrite), t.trades, "{}", t.name);
            assert!(t.scopes().contains(&Scope::GatewayData), "{}", t.name);
        }
        assert_eq!(
            TEMPLATES.iter().filter(|t| t.trades).map(|t| t.name).collect::<Vec<_>>(),
            ["trader", "shitcoin-trader"]
        );
        assert!(TRADER.rules.contains("10%"), "the trader keeps the 10% rule");
    }

    #[test]
    fn each_template_has_its_own_voice() {
        let souls: std::collections::HashSet<&str> = TEMPLATES.iter().map(|t| t.soul).collect();
        assert_eq!(souls.len(), TEMPLATES.len());
        assert_eq!(template("analyst").map(|t| t.name), Some("analyst"));
        assert!(template("nope").is_none());
    }
}
