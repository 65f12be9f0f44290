//! Who the client is, as limits count it, and the headers that tell it where it stands.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use svc_limits::Decision;

/// The client's IP: the socket's peer, or, when the peer is a trusted proxy, the address the
/// proxy says it forwarded for (the last `X-Forwarded-For` entry that is not itself a trusted
/// proxy). Anyone else's `X-Forwarded-For` is ignored: it is whatever the client wrote. An
/// IPv4-mapped address is its IPv4, so a proxy is known whichever way a dual-stack socket
/// shows it.
pub fn client_ip(parts: &Parts, trusted_proxies: &[IpAddr]) -> Option<IpAddr> {
    let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip().to_canonical())?;
    let trusted = |ip: &IpAddr| trusted_proxies.iter().any(|proxy| proxy.to_canonical() == *ip);
    if !trusted(&peer) {
        return Some(peer);
    }
    let forwarded = parts.headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let hops: Vec<IpAddr> = forwarded
        .flat_map(|v| v.split(','))
        .filter_map(|hop| hop.trim().parse::<IpAddr>().ok().map(|ip| ip.to_canonical()))
        .collect();
    Some(hops.into_iter().rev().find(|hop| !trusted(hop)).unwrap_or(peer))
}

/// The client as counters name it: its IPv4 address or IPv6 /64 (see `client_of`), or `unknown`
/// when the socket address is not known (a request built in-process).
pub fn client_label(parts: &Parts, trusted_proxies: &[IpAddr]) -> String {
    client_ip(parts, trusted_proxies).map_or_else(|| "unknown".to_owned(), |ip| client_of(ip).to_string())
}

/// The client a limit counts: an IPv4 address (an IPv4-mapped one is its IPv4), or an IPv6
/// /64, one subscriber's network, where a host may take any of 2^64 addresses at will, so
/// counting addresses would count nothing. Connections, rates and previews all count by it.
pub(crate) fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        v4 => v4,
    }
}

/// `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds), as the IETF
/// draft names them; on a refusal `Retry-After` too.
/// Nothing is added for a call no limit applies to ([`Decision::unlimited`]).
pub fn rate_headers(headers: &mut HeaderMap, decision: &Decision, now_ms: i64) {
    if decision.is_unlimited() {
        return;
    }
    let reset = decision.reset_secs(now_ms);
    headers.insert("ratelimit-limit", HeaderValue::from(decision.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(decision.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(reset));
    if !decision.allowed {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(reset));
    }
}
