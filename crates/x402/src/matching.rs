//! Matching the client's chosen requirement against the ones we rebuilt for this request.
//! Never trust the client's copy for price, asset or recipient: it must equal ours.

use serde_json::{Map, Value};

use crate::codec::Choice;
use crate::wire::PaymentRequirements;

/// `extra` fields the server may vary per challenge (a Solana blockhash); a client echoing an
/// older value still matches.
const DYNAMIC_EXTRA: [&str; 2] = ["recentBlockhash", "lastValidBlockHeight"];

/// The index of the offered requirement the client's choice matches, if any.
///
/// v2: scheme, network, amount, asset, payTo and maxTimeoutSeconds must be equal (addresses
/// compared without regard to hex case, which carries no meaning), and every non-dynamic
/// `extra` field we offered must be present with the same value. v1 carries only scheme and
/// network; its amount is checked against the signed authorization during verification.
pub fn find_match(offered: &[PaymentRequirements], choice: &Choice) -> Option<usize> {
    offered.iter().position(|ours| match choice {
        Choice::Accepted(theirs) => requirement_matches(ours, theirs),
        Choice::SchemeNetwork { scheme, network } => ours.scheme == *scheme && ours.network == *network,
    })
}

fn requirement_matches(ours: &PaymentRequirements, theirs: &PaymentRequirements) -> bool {
    ours.scheme == theirs.scheme
        && ours.network == theirs.network
        && ours.amount == theirs.amount
        && same_address(&ours.network, &ours.asset, &theirs.asset)
        && same_address(&ours.network, &ours.pay_to, &theirs.pay_to)
        && ours.max_timeout_seconds == theirs.max_timeout_seconds
        && extra_is_subset(ours.extra.as_ref(), theirs.extra.as_ref())
}

fn same_address(network: &str, a: &str, b: &str) -> bool {
    if network.starts_with("eip155:") { a.eq_ignore_ascii_case(b) } else { a == b }
}

fn extra_is_subset(ours: Option<&Map<String, Value>>, theirs: Option<&Map<String, Value>>) -> bool {
    let Some(ours) = ours else { return true };
    ours.iter()
        .filter(|(key, _)| !DYNAMIC_EXTRA.contains(&key.as_str()))
        .all(|(key, value)| theirs.and_then(|t| t.get(key)) == Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours() -> PaymentRequirements {
        serde_json::from_value(serde_json::json!({
            "scheme": "exact", "network": "eip155:8453", "amount": "500000",
            "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "maxTimeoutSeconds": 300,
            "extra": {"name": "USD Coin", "version": "2"}
        }))
        .expect("requirement")
    }

    fn with(edit: impl FnOnce(&mut PaymentRequirements)) -> Choice {
        let mut theirs = ours();
        edit(&mut theirs);
        Choice::Accepted(theirs)
    }

    #[test]
    fn every_compared_field_must_match() {
        let offered = [ours()];
        assert_eq!(find_match(&offered, &with(|_| {})), Some(0));
        assert_eq!(find_match(&offered, &with(|t| t.pay_to = t.pay_to.to_lowercase())), Some(0));
        assert_eq!(
            find_match(
                &offered,
                &with(|t| {
                    t.extra.get_or_insert_default().insert("assetTransferMethod".into(), "eip3009".into());
                })
            ),
            Some(0),
            "the client may add to extra"
        );
        for miss in [
            with(|t| t.amount = "499999".into()),
            with(|t| t.network = "eip155:84532".into()),
            with(|t| t.scheme = "upto".into()),
            with(|t| t.asset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e".into()),
            with(|t| t.pay_to = "0x0000000000000000000000000000000000000001".into()),
            with(|t| t.max_timeout_seconds = 3600),
            with(|t| t.extra = None),
            with(|t| {
                t.extra =
                    Some(serde_json::from_value(serde_json::json!({"name": "USDC", "version": "2"})).expect("map"))
            }),
        ] {
            assert_eq!(find_match(&offered, &miss), None, "{miss:?}");
        }
    }

    #[test]
    fn dynamic_solana_extra_fields_are_ignored() {
        let mut sol = ours();
        sol.network = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp".into();
        sol.extra = serde_json::from_value(serde_json::json!({"feePayer": "F", "recentBlockhash": "old"})).ok();
        let mut theirs = sol.clone();
        theirs.extra = serde_json::from_value(serde_json::json!({"feePayer": "F", "recentBlockhash": "new"})).ok();
        assert_eq!(find_match(&[sol.clone()], &Choice::Accepted(theirs)), Some(0));
        let mut lower = sol.clone();
        lower.pay_to = sol.pay_to.to_lowercase();
        assert_eq!(find_match(&[sol], &Choice::Accepted(lower)), None, "base58 is case-sensitive");
    }
}
