//! Media types: the one rule for "this body is JSON", for what clients send svc and what
//! sellers' endpoints answer it.

/// Whether a `Content-Type` value names JSON: `application/json` or an `application/*+json`
/// type, any case, parameters (`; charset=utf-8`) ignored.
pub fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_recognised_by_its_essence_whatever_the_case_and_parameters() {
        for yes in
            ["application/json", "Application/JSON; charset=utf-8", "application/problem+json", " application/json "]
        {
            assert!(is_json(yes), "{yes}");
        }
        for no in ["text/plain", "text/json", "application/jsonp", "", "application/x-www-form-urlencoded"] {
            assert!(!is_json(no), "{no}");
        }
    }
}
