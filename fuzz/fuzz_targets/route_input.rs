//! Every route's input validation, as a client can call it: the first two bytes pick a route
//! of the catalogue, the rest are split at 0xFF into path values, the query string and the
//! body. Validation must never panic, and a valid input is priced within its route's rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_catalogue::RawInput;

fuzz_target!(|data: &[u8]| {
    let routes = svc_catalogue::catalogue().routes();
    let Some((pick, rest)) = data.split_first_chunk::<2>() else { return };
    let route = &routes[usize::from(u16::from_le_bytes(*pick)) % routes.len()];
    let mut parts = rest.split(|&b| b == 0xFF);
    let names: Vec<&str> = route.path_params().collect();
    let values: Vec<String> =
        names.iter().map(|_| String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned()).collect();
    let path: Vec<(&str, &str)> = names.iter().copied().zip(values.iter().map(String::as_str)).collect();
    let query = parts.next().map(String::from_utf8_lossy);
    let body = parts.next();
    let raw = RawInput { path: &path, query: query.as_deref(), body };
    if let Ok(input) = route.parse_input(&raw) {
        let price = route.price.price(input.price_units());
        assert!(price <= route.price.max(), "{}: priced {price} over its maximum", route.id);
        assert!(price >= route.price.min(), "{}: priced {price} under its minimum", route.id);
    }
});
