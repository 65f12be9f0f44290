//! gzip for answers encoded ahead of time. Signal answers are tens of kilobytes of JSON served
//! many times from one snapshot: they are compressed once, when the snapshot arrives, and a
//! client that sends `Accept-Encoding: gzip` (Node's fetch, Python's httpx and requests all
//! do) gets the compressed copy. Nothing is compressed per request.

use std::io::Write as _;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

/// The gzip form of a response's body, carried beside it until the response leaves the
/// pipeline, where the request's `Accept-Encoding` decides which one is sent.
#[derive(Debug, Clone)]
pub(crate) struct Precompressed(pub Bytes);

/// Compresses `bytes` at the best ratio: it runs once per answer, not per request.
pub fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    gzip_at(bytes, flate2::Compression::best())
}

/// Compresses `bytes` at `level`: the fastest for what is made per request (console pages).
pub fn gzip_at(bytes: &[u8], level: flate2::Compression) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 4), level);
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// Whether the request's `Accept-Encoding` allows gzip (RFC 9110 §12.5.3): `gzip` (or its
/// alias `x-gzip`) with a non-zero weight, else `*` with a non-zero weight.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut wildcard = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let weighted = parts.all(|param| match param.trim().split_once('=') {
                Some((name, q)) if name.trim().eq_ignore_ascii_case("q") => nonzero_weight(q.trim()),
                _ => true,
            });
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                return weighted;
            }
            if coding == "*" {
                wildcard = weighted;
            }
        }
    }
    wildcard
}

/// A weight (`0` to `1` with up to three decimals) other than zero; a malformed one is
/// treated as zero, so a coding is only used when the client clearly allows it.
fn nonzero_weight(q: &str) -> bool {
    let (whole, fraction) = q.split_once('.').unwrap_or((q, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = matches!(whole, "0" | "1") && fraction.len() <= 3 && digits(fraction);
    well_formed && (whole == "1" || fraction.bytes().any(|b| b != b'0'))
}

/// Sends the gzip copy of a 200's body when the request's headers accept it. Any response
/// that has one says it varies by `Accept-Encoding`, so caches keep the two forms apart.
/// Requests whose answer has no gzip copy are not read at all.
pub(crate) fn negotiate(mut response: Response, request: &HeaderMap) -> Response {
    let Some(Precompressed(compressed)) = response.extensions_mut().remove::<Precompressed>() else {
        return response;
    };
    let headers = response.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    if response.status() == StatusCode::OK && accepts_gzip(request) {
        response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        *response.body_mut() = Body::from(compressed);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn accepts(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(value).expect("header"));
        accepts_gzip(&headers)
    }

    #[test]
    fn reads_accept_encoding_as_clients_send_it() {
        for yes in
            ["gzip", "gzip, deflate", "gzip, deflate, br, zstd", "br;q=1.0, GZIP;q=0.5", "x-gzip", "*", "gzip;q=1"]
        {
            assert!(accepts(yes), "{yes:?} allows gzip");
        }
        for no in [
            "identity",
            "br",
            "gzip;q=0",
            "gzip; q=0.000",
            "*;q=0",
            "gzip;q=0, *",
            "*, gzip;q=0",
            "gzip;q=2",
            "gzip;q=abc",
            "",
        ] {
            assert!(!accepts(no), "{no:?} does not allow gzip");
        }
        assert!(!accepts_gzip(&HeaderMap::new()), "no header: identity");
    }

    #[test]
    fn compressed_answers_decompress_to_the_same_bytes() {
        let json = br#"{"picks":[{"symbol":"ABC","score":91}],"generated_at":"2026-11-23T00:00:00Z"}"#.repeat(50);
        let compressed = gzip(&json).expect("gzip");
        assert!(compressed.len() * 5 < json.len(), "repetitive JSON shrinks");
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&compressed[..]), &mut decoded).expect("gunzip");
        assert_eq!(decoded, json);
    }

    proptest! {
        #[test]
        fn any_header_text_is_read_without_panic(value in "[ -~]{0,64}") {
            if let Ok(value) = HeaderValue::from_str(&value) {
                let mut headers = HeaderMap::new();
                headers.insert(header::ACCEPT_ENCODING, value);
                let _ = accepts_gzip(&headers);
            }
        }
    }
}
