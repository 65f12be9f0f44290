//! Where svc is reached, from outside and from this machine: the sign-in site and the
//! sandboxes' way back to svc are built on the same rule.

use std::net::SocketAddr;

/// svc's public base URL: the configured one, or on a development run the address it listens
/// on. The one rule every address svc gives out of itself follows.
pub fn public_base(public_url: Option<&str>, listening: SocketAddr) -> String {
    public_url.map_or_else(|| format!("http://{}", reachable(listening)), |url| url.trim_end_matches('/').to_owned())
}

/// Where this machine reaches svc listening on `listening`: loopback for an unspecified address.
pub fn reachable(listening: SocketAddr) -> SocketAddr {
    if listening.ip().is_unspecified() {
        SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), listening.port())
    } else {
        listening
    }
}
