//! Free previews of paid routes (`?preview=true`), as data: whether a query asks for one, and
//! the real answer cut down (the first items of every list, premium fields dropped) and
//! labelled with its price and freshness, so an agent can judge the data before paying. Routes
//! that act (orders, transactions) only quote: a preview never acts. The quota and the answer
//! itself are the HTTP layer's.

use serde_json::{Map, Value, json};

use crate::input::{FieldError, InputError, Loc};
use crate::route::RouteSpec;
use crate::wire::{PreviewInfo, PreviewList, PreviewPrice};

/// Whether the query asks for a preview: `preview=true` (any case). `preview=false`, or no
/// `preview`, is a paid call; any other value is a 422, so a typo is never answered with a
/// challenge to pay for what was meant as a free look.
pub fn requested(query: Option<&str>) -> Result<bool, InputError> {
    let mut asked = false;
    for (name, value) in query.unwrap_or_default().split('&').filter_map(|pair| pair.split_once('=')) {
        if name != "preview" {
            continue;
        }
        if value.eq_ignore_ascii_case("true") {
            asked = true;
        } else if !value.eq_ignore_ascii_case("false") {
            return Err(InputError {
                errors: vec![FieldError::new(
                    [Loc::from("query"), Loc::from("preview")],
                    "preview must be true or false",
                    "bool_parsing",
                )],
            });
        }
    }
    Ok(asked)
}

/// What a preview of `route` for an input of `units` says of itself before anything is cut:
/// the list prices, when it was served, and the caller's quota (`remaining` previews and when
/// the window resets, RFC 3339), if previews are limited.
pub fn about(route: &RouteSpec, units: u64, served_at: String, quota: Option<(u32, String)>) -> PreviewInfo {
    let list = route.price.price(units);
    let (remaining, resets_at) = quota.unzip();
    PreviewInfo {
        price: PreviewPrice {
            usd: list.to_string(),
            atomic: list.atomic().to_string(),
            asset: "USDC".into(),
            credits: route.credit_price_for(units).to_string(),
            your_tier: None,
            your_credits: None,
        },
        served_at,
        remaining,
        resets_at,
        pay: "Send the same request without preview=true for the x402 challenge, pay it, and get the whole answer."
            .into(),
        truncated: true,
        note: None,
        max_items: None,
        lists: None,
        omitted: None,
        data_as_of: None,
    }
}

/// The preview of a route that acts: the request validated and its price quoted, no data.
pub fn quote_only(mut about: PreviewInfo) -> Value {
    about.note = Some("This route acts; a preview only validates the request and quotes its price.".into());
    json!({ "preview": about })
}

/// The preview of `answer` (the route's whole JSON answer): at most `max_items` of every list,
/// `omit` fields dropped, and `about` in its `preview` field, saying what was cut.
pub fn cut_down(
    answer: &[u8],
    mut about: PreviewInfo,
    max_items: usize,
    omit: &[&str],
) -> Result<Value, serde_json::Error> {
    let mut answer: Value = serde_json::from_slice(answer)?;
    let mut lists = Vec::new();
    about.truncated = cut(&mut answer, max_items, omit, "", &mut lists);
    about.max_items = Some(max_items);
    about.lists = Some(lists);
    about.omitted = Some(omit.iter().map(|name| (*name).to_owned()).collect());
    about.data_as_of = data_as_of(&answer);
    let about = serde_json::to_value(about)?;
    match &mut answer {
        Value::Object(fields) => {
            fields.insert("preview".into(), about);
        }
        other => {
            let data = std::mem::take(other);
            *other = json!({ "data": data, "preview": about });
        }
    }
    Ok(answer)
}

/// Keeps at most `max_items` of every array and drops `omit` fields, at any depth. Returns
/// whether anything was cut; every list that lost items is noted in `lists` as its JSON
/// pointer (from `at`), its length and what is shown.
fn cut(value: &mut Value, max_items: usize, omit: &[&str], at: &str, lists: &mut Vec<PreviewList>) -> bool {
    match value {
        Value::Array(items) => {
            let total = items.len();
            let mut cut_any = total > max_items;
            if cut_any {
                lists.push(PreviewList {
                    path: if at.is_empty() { "/" } else { at }.to_owned(),
                    total,
                    shown: max_items,
                });
            }
            items.truncate(max_items);
            for (i, item) in items.iter_mut().enumerate() {
                cut_any |= cut(item, max_items, omit, &format!("{at}/{i}"), lists);
            }
            cut_any
        }
        Value::Object(fields) => {
            let before = fields.len();
            fields.retain(|name, _| !omit.contains(&name.as_str()));
            let mut cut_any = fields.len() != before;
            for (name, field) in fields.iter_mut() {
                let escaped = name.replace('~', "~0").replace('/', "~1");
                cut_any |= cut(field, max_items, omit, &format!("{at}/{escaped}"), lists);
            }
            cut_any
        }
        _ => false,
    }
}

/// When the data was made, as the answer itself says (`generated_at`, `as_of`, `updated_at`).
fn data_as_of(answer: &Value) -> Option<String> {
    let fields: Option<&Map<String, Value>> = answer.as_object();
    ["generated_at", "as_of", "updated_at", "fetched_at"]
        .iter()
        .find_map(|name| fields.and_then(|f| f.get(*name)).and_then(Value::as_str).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_is_asked_only_by_preview_true_and_junk_is_refused() {
        assert_eq!(requested(Some("preview=true")), Ok(true));
        assert_eq!(requested(Some("a=1&preview=TRUE")), Ok(true));
        assert_eq!(requested(Some("preview=false")), Ok(false));
        assert_eq!(requested(Some("nopreview=true")), Ok(false));
        assert_eq!(requested(None), Ok(false));
        for junk in ["preview=null", "preview=1", "preview=", "a=1&preview=yes"] {
            assert!(requested(Some(junk)).is_err(), "{junk}");
        }
    }

    #[test]
    fn cutting_keeps_the_first_items_at_every_depth_and_drops_premium_fields() {
        let mut answer = json!({"picks": [{"thesis": "x", "n": 1, "tags": [1, 2, 3]}, {"n": 2}], "total": 2});
        let mut lists = Vec::new();
        assert!(cut(&mut answer, 1, &["thesis"], "", &mut lists));
        assert_eq!(answer, json!({"picks": [{"n": 1, "tags": [1]}], "total": 2}));
        assert_eq!(
            lists,
            [
                PreviewList { path: "/picks".into(), total: 2, shown: 1 },
                PreviewList { path: "/picks/0/tags".into(), total: 3, shown: 1 }
            ]
        );
        let mut small = json!({"items": [1]});
        assert!(!cut(&mut small, 3, &[], "", &mut Vec::new()));
    }
}
