//! The agents' skill files: one `SKILL.md` per skill (AgentSkills format: YAML front matter
//! with `name` and `description`, then Markdown), generated from the catalogue, so a skill can
//! never name a route, an input or a price that does not exist.
//!
//! The files hold two placeholders, filled when a sandbox starts: `{SVC_API_URL}` (the
//! service's address) is substituted into the text; the API key is never written into a
//! file (the agent reads its skills into its transcript), only referred to as the environment
//! variable `$SVC_API_TOKEN`.

use std::fmt::Write as _;

use crate::route::{Access, PriceRule, RouteSpec};
use crate::{Catalogue, HttpMethod};

/// Replaced by the service's base URL when a sandbox starts.
pub const API_URL_PLACEHOLDER: &str = "{SVC_API_URL}";
/// The environment variable the sandbox's API key is in; skills name it, never its value.
pub const API_TOKEN_ENV: &str = "SVC_API_TOKEN";

/// One skill: what it is for, and which routes it teaches.
#[derive(Debug, Clone, Copy)]
pub struct Skill {
    /// The skill's identity (front matter `name`).
    pub name: &'static str,
    /// One line for the agent's skill index (front matter `description`): kept short, it is
    /// in every prompt.
    pub description: &'static str,
    /// What the body says before the route list.
    intro: &'static str,
    /// The routes it lists.
    covers: fn(&RouteSpec) -> bool,
}

fn id_starts(route: &RouteSpec, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| route.id.starts_with(p))
}

/// The eleven skills.
pub const SKILLS: [Skill; 11] = [
    Skill {
        name: "svc",
        description: "Index of svc: paid crypto market data and on-chain actions; which skill covers what.",
        intro: "svc sells crypto market data and on-chain actions per call. Read the skill for the task at hand; \
                every call in them is made with your API key and billed in your account's credits. The free \
                routes below need no key.",
        covers: |r| r.access == Access::Free && r.id.starts_with("public."),
    },
    Skill {
        name: "svc-trading",
        description: "Quotes and orders: swaps, the perp DEX, the order-book DEX, prediction-market quotes and books.",
        intro: "Routes that quote and place trades. Size every position before you call an order route; a \
                quote costs little, an order moves funds.",
        covers: |r| {
            id_starts(
                r,
                &[
                    "infra.swap_quote",
                    "infra.evm_swap_quote",
                    "infra.perpdex_",
                    "infra.orderbookdex_",
                    "predmkt.quote",
                    "predmkt.orderbook",
                ],
            )
        },
    },
    Skill {
        name: "svc-wallet",
        description: "Wallets: balances, PnL, transfers, counterparties and labels; transaction safety checks.",
        intro: "Look into any wallet, and check a transaction or a token contract before you sign anything.",
        covers: |r| id_starts(r, &["chaindata.profiler.", "infra.shield_"]),
    },
    Skill {
        name: "svc-data",
        description: "Market data: token prices, prediction-market search and comparisons, ready-made data products.",
        intro: "General market data, for questions that are not about one wallet or one vendor feed.",
        covers: |r| {
            id_starts(
                r,
                &[
                    "infra.evm_token_price",
                    "predmkt.search",
                    "predmkt.compare",
                    "predmkt.arbitrage",
                    "tools.data_products",
                    "public.tokens_stats",
                ],
            )
        },
    },
    Skill {
        name: "svc-data-provider",
        description: "The on-chain data vendor: smart-money flows, holders, screeners, DEX and perp trades, PnL boards.",
        intro: "The chain-data vendor's endpoints, relayed as the vendor answers them: smart-money activity, token \
                god-mode views and the perp boards.",
        covers: |r| r.id.starts_with("chaindata."),
    },
    Skill {
        name: "svc-token-launch",
        description: "Launchpad coins: a new coin's curve, market cap and creator before you touch it.",
        intro: "Read a launchpad coin's state before buying into it.",
        covers: |r| id_starts(r, &["infra.launchpad_"]),
    },
    Skill {
        name: "svc-defi",
        description: "DeFi: discover yield positions, quote entering them, non-tokenized positions.",
        intro: "Find DeFi positions and quote the route into them.",
        covers: |r| id_starts(r, &["infra.defi_"]),
    },
    Skill {
        name: "svc-social",
        description: "Social network: search posts, counts, trends, users, timelines and engagement.",
        intro: "What people say about a token or an account, as the social network answers it.",
        covers: |r| r.id.starts_with("social."),
    },
    Skill {
        name: "svc-x402",
        description: "Paying per call with x402 (USDC), prices and discounts, and your own receipts.",
        intro: "Every paid route can also be paid per call without an account: call it, get the 402 challenge, sign \
                the USDC authorization it asks for, and send the call again with `PAYMENT-SIGNATURE`. Add \
                `?preview=true` to see real, truncated data and the price for free.",
        covers: |r| id_starts(r, &["x402.", "credits.purchase", "auth."]),
    },
    Skill {
        name: "svc-credits",
        description: "Your account: credit balance and ledger, usage and discount tier, API keys, LLM token and top-up.",
        intro: "The account your API key belongs to: what it holds, what it spent, and its keys. When credits run \
                low, buy more over x402.",
        covers: |r| id_starts(r, &["account.", "credits.purchase"]),
    },
    Skill {
        name: "svc-alpha",
        description: "Signals: Top Picks, Exodus exits, whale alerts, data products and their track record.",
        intro: "svc's own signals, scored from smart-money flows, social, price, market and safety. Each answer \
                names its sources and when it was computed; a degraded dimension says what is missing.",
        covers: |r| id_starts(r, &["alpha.", "public.alpha_track_record", "tools.data_products"]),
    },
];

/// The routes of the catalogue a skill lists, in catalogue order: those an agent can call with
/// its API key (routes for a wallet's sign-in alone are left out).
pub fn routes_of<'a>(skill: &Skill, catalogue: &'a Catalogue) -> Vec<&'a RouteSpec> {
    catalogue.routes().iter().filter(|r| r.access != Access::SignedIn && (skill.covers)(r)).collect()
}

/// How a route is reached with the sandbox's API key: a paid route through its credit twin.
fn call_path(route: &RouteSpec) -> String {
    route.credits_path().unwrap_or_else(|| route.path.to_owned())
}

/// What one call costs, as the skill states it.
fn price(route: &RouteSpec) -> String {
    match (route.access, route.price) {
        (Access::Free, _) => "free".to_owned(),
        (Access::Account, _) => "free, with your key".to_owned(),
        (Access::SignedIn, _) => "free, with a wallet's sign-in".to_owned(),
        (Access::Paid, _) if !route.billed_as_data => "the amount bought".to_owned(),
        (Access::Paid, PriceRule::Fixed(_)) => format!("{} USD in credits", route.credit_price),
        (Access::Paid, PriceRule::PerUnit { max, .. }) => {
            format!("{} USD in credits per unit, at most {max} USD", route.credit_price)
        }
    }
}

/// A route's input fields, required first, as `name*` (required) and `name`.
fn inputs(route: &RouteSpec) -> String {
    let schema = crate::discovery::bazaar_schema(route);
    let input = &schema["properties"]["input"]["properties"];
    let mut fields = Vec::new();
    for part in ["pathParams", "queryParams", "body"] {
        let object = &input[part];
        let required: Vec<&str> =
            object["required"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_str).collect();
        for name in object["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
            let star = if required.contains(&name.as_str()) { "*" } else { "" };
            fields.push(format!("`{name}`{star}"));
        }
    }
    if fields.is_empty() { "none".to_owned() } else { fields.join(", ") }
}

/// The `SKILL.md` of `skill`.
pub fn render(skill: &Skill, catalogue: &Catalogue) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "---\nname: {}\ndescription: {}\n---\n", skill.name, skill.description);
    let _ = writeln!(out, "# {}\n\n{}\n", skill.name, skill.intro);
    let _ = writeln!(
        out,
        "Base URL: `{API_URL_PLACEHOLDER}`. Send your key as `X-API-Key: ${API_TOKEN_ENV}` (never write the key \
         itself anywhere). JSON bodies need `Content-Type: application/json`. A `422` names the field at fault; \
         a `402 insufficient_credits` means the account needs credits (see `svc-credits`).\n"
    );
    let routes = routes_of(skill, catalogue);
    if skill.name == "svc" {
        let _ = writeln!(out, "## Skills\n");
        for other in SKILLS.iter().filter(|s| s.name != "svc") {
            let _ = writeln!(out, "- `{}`: {}", other.name, other.description);
        }
        let _ = writeln!(out);
    }
    if !routes.is_empty() {
        let _ = writeln!(out, "## Routes\n");
    }
    for route in routes {
        let method = route.method.as_str();
        let _ = writeln!(out, "### {method} {}\n", call_path(route));
        let _ = writeln!(out, "{}\n", route.description);
        let _ = writeln!(out, "- price: {}", price(route));
        let _ = writeln!(out, "- inputs (* required): {}", inputs(route));
        if route.moves_funds {
            let scopes = route.twin_key_scopes().join(" or ");
            let _ = writeln!(out, "- moves funds: only a key with the {scopes} scope may call it; others get 403");
        }
        if route.access == Access::Paid && route.credits_path().is_none() {
            let _ = writeln!(out, "- call: pay it per call over x402 (see `svc-x402`); it has no credit twin\n");
            continue;
        }
        let example = match route.method {
            HttpMethod::Get | HttpMethod::Delete => format!(
                "curl -s -X {method} \"{API_URL_PLACEHOLDER}{}\" -H \"X-API-Key: ${API_TOKEN_ENV}\"",
                call_path(route)
            ),
            HttpMethod::Post | HttpMethod::Put | HttpMethod::Patch => format!(
                "curl -s -X {method} \"{API_URL_PLACEHOLDER}{}\" -H \"X-API-Key: ${API_TOKEN_ENV}\" \
                 -H 'Content-Type: application/json' -d '{{...}}'",
                call_path(route)
            ),
        };
        let _ = writeln!(out, "- call: `{example}`\n");
    }
    out
}

/// Every skill's name and `SKILL.md`.
pub fn skill_files(catalogue: &Catalogue) -> Vec<(&'static str, String)> {
    SKILLS.iter().map(|skill| (skill.name, render(skill, catalogue))).collect()
}

/// A skill file with the sandbox's base URL filled in.
pub fn fill(file: &str, api_url: &str) -> String {
    file.replace(API_URL_PLACEHOLDER, api_url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_that_moves_funds_says_which_key_may_call_it() {
        let catalogue = crate::catalogue();
        let files = skill_files(catalogue);
        for route in catalogue.routes().iter().filter(|r| r.moves_funds) {
            let heading = format!("### {} {}\n", route.method.as_str(), call_path(route));
            let (_, file) = files.iter().find(|(_, f)| f.contains(&heading)).expect("taught");
            let section = &file[file.find(&heading).expect("heading")..];
            let section = &section[..section[1..].find("\n### ").map_or(section.len(), |end| end + 1)];
            assert!(section.contains("gateway:wallet_write"), "{section}");
        }
    }

    #[test]
    fn every_paid_route_is_taught_by_some_skill() {
        let catalogue = crate::catalogue();
        for route in catalogue.routes().iter().filter(|r| r.is_paid()) {
            assert!(SKILLS.iter().any(|s| (s.covers)(route)), "no skill teaches {}", route.id);
        }
    }

    #[test]
    fn a_skill_names_only_routes_and_prices_the_catalogue_has() {
        let catalogue = crate::catalogue();
        let by_heading = |heading: &str| {
            catalogue.routes().iter().find(|r| format!("{} {}", r.method.as_str(), call_path(r)) == heading)
        };
        assert_eq!(skill_files(catalogue).len(), 11);
        for (name, file) in skill_files(catalogue) {
            assert!(file.starts_with(&format!("---\nname: {name}\ndescription: ")), "{name}: front matter");
            let mut route: Option<&RouteSpec> = None;
            for line in file.lines() {
                if let Some(heading) = line.strip_prefix("### ") {
                    route = by_heading(heading);
                    assert!(route.is_some(), "{name} names {heading}, which the catalogue lacks");
                }
                let Some(stated) = line.strip_prefix("- price: ") else { continue };
                let route = route.expect("a price under a route");
                let expected = match route.access {
                    Access::Paid if route.billed_as_data => format!("{} USD in credits", route.credit_price),
                    Access::Paid => "the amount bought".to_owned(),
                    _ => "free".to_owned(),
                };
                assert!(stated.starts_with(&expected), "{name}: {} costs {expected}, not {stated}", route.id);
            }
        }
    }

    #[test]
    fn skills_list_no_route_a_key_cannot_call() {
        for (name, file) in skill_files(crate::catalogue()) {
            assert!(!file.contains("with a wallet's sign-in"), "{name}");
            assert!(!file.contains("/api/account/keys") && !file.contains("llm-token/rotate"), "{name}");
        }
    }

    #[test]
    fn skills_carry_the_url_placeholder_and_never_a_key() {
        for (name, file) in skill_files(crate::catalogue()) {
            assert!(file.contains(API_URL_PLACEHOLDER), "{name}");
            assert!(!file.contains("svck_"), "{name}");
            let filled = fill(&file, "http://127.0.0.1:8402/");
            assert!(!filled.contains(API_URL_PLACEHOLDER) && filled.contains("http://127.0.0.1:8402/api/"), "{name}");
        }
    }
}
