//! The seller's endpoint: the one place svc makes a request to an address a user chose, so
//! the one place server-side request forgery is stopped.
//!
//! A URL is checked twice. When it is registered, by its form: `https` (plain `http` only to
//! hosts an operator allows), no credentials, and no literal address svc must not reach. When
//! it is called, at connect time: every address its name resolves to is checked (loopback,
//! private, link-local, shared, multicast, documentation, the metadata address...), so a name
//! that resolves to 127.0.0.1, or re-resolves there later, reaches nothing. Both checks are
//! [`is_public`], which judges an IPv6 address that carries an IPv4 one (mapped, translated,
//! NAT64, 6to4, Teredo, ISATAP) by that IPv4 too. Redirects are not
//! followed and no proxy is used, so the checked address is the one connected to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why a URL cannot be an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefused {
    /// Not a URL.
    #[error("not a URL")]
    Malformed,
    /// Not `https` (and not `http` to a host the operator allows).
    #[error("the endpoint must be https")]
    Scheme,
    /// A user name or password in the URL.
    #[error("the endpoint must not carry credentials")]
    Credentials,
    /// A literal address svc must not reach (loopback, private, link-local, metadata...).
    #[error("the endpoint's address is not public")]
    PrivateAddress,
    /// No host.
    #[error("the endpoint has no host")]
    NoHost,
}

/// Which endpoints may be called.
#[derive(Debug, Clone, Default)]
pub struct EndpointPolicy {
    /// Hosts an operator allows over plain `http`, whatever they resolve to (how tests reach a
    /// seller on loopback). Empty in production.
    pub allow_http_hosts: Vec<String>,
}

impl EndpointPolicy {
    /// Whether `host` is one the operator allows as is.
    fn allowed_as_is(&self, host: &str) -> bool {
        self.allow_http_hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks a URL's form, as when it is registered and again before each call.
    pub fn check(&self, raw: &str) -> Result<Url, UrlRefused> {
        let url = Url::parse(raw.trim()).map_err(|_| UrlRefused::Malformed)?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefused::Credentials);
        }
        if !matches!(url.scheme(), "https" | "http") {
            return Err(UrlRefused::Scheme);
        }
        let host = url.host_str().ok_or(UrlRefused::NoHost)?.to_owned();
        let operator_allowed = self.allowed_as_is(&host);
        match url.scheme() {
            "https" => {}
            "http" if operator_allowed => {}
            _ => return Err(UrlRefused::Scheme),
        }
        if !operator_allowed {
            // The URL parser writes every literal address in its one canonical form
            // (`2130706433` and `0x7f.1` become `127.0.0.1`; IPv6 in brackets).
            let literal = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok();
            if literal.is_some_and(|ip| !is_public(ip)) {
                return Err(UrlRefused::PrivateAddress);
            }
            let lower = host.trim_end_matches('.').to_ascii_lowercase();
            if lower == "localhost" || lower.ends_with(".localhost") || lower.ends_with(".internal") {
                return Err(UrlRefused::PrivateAddress);
            }
        }
        Ok(url)
    }
}

/// Whether svc may connect to `ip` on a seller's behalf: a global unicast address only. The
/// one judgement of every address a user chose, at registration (a literal in the URL) and at
/// connect time (what a name resolves to).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// An IPv6 address is public when it is global unicast (2000::/3) outside the special-purpose
/// blocks, and every IPv4 address it carries is public too: a packet to an address that embeds
/// an IPv4 one may be delivered to that IPv4 by a translator or a tunnel on the way (a NAT64,
/// a 6to4 relay, a Teredo server, an ISATAP router, an SIIT gateway), so `::ffff:0:10.0.0.1`
/// is judged as 10.0.0.1. Everything outside 2000::/3 is refused unless it is one of the IPv4
/// embeddings there: loopback, unspecified, unique-local, link-local, site-local, multicast,
/// discard-only, SRv6, the reserved rest, and the local-use NAT64 prefix (64:ff9b:1::/48, a
/// network's own translator, where the IPv4's place depends on a prefix length only that
/// network knows).
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    let embedded = match s {
        // IPv4-compatible ::a.b.c.d (which holds :: and ::1 too), IPv4-mapped ::ffff:a.b.c.d,
        // IPv4-translated ::ffff:0:a.b.c.d, and the NAT64 well-known prefix 64:ff9b::/96: the
        // IPv4 is the last 32 bits, and nothing else is left to judge.
        [0, 0, 0, 0, 0, 0 | 0xffff, high, low] | [0, 0, 0, 0, 0xffff, 0, high, low] => {
            return is_public_v4(v4(high, low));
        }
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => return is_public_v4(v4(high, low)),
        // 6to4, 2002:V4::/48: the site's IPv4 in bits 16..48.
        [0x2002, high, low, ..] => Some(v4(high, low)),
        // Teredo, 2001::/32: the server's IPv4 in bits 32..64, and the client's, inverted, in the
        // last 32 (a packet goes to the client's NAT through the server's relay).
        [0x2001, 0, high, low, _, _, client_high, client_low] => {
            if !is_public_v4(v4(!client_high, !client_low)) {
                return false;
            }
            Some(v4(high, low))
        }
        _ => None,
    };
    if embedded.is_some_and(|v4| !is_public_v4(v4)) {
        return false;
    }
    // An ISATAP interface identifier (::0:5efe:a.b.c.d, or ::200:5efe:a.b.c.d for a global
    // IPv4, with the group bit either way) under any prefix: the ISATAP router delivers it to
    // that IPv4.
    if (s[4] & 0xfcff) == 0 && s[5] == 0x5efe && !is_public_v4(v4(s[6], s[7])) {
        return false;
    }
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    let documentation = (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000);
    // IETF protocol assignments, 2001::/23 (benchmarking, ORCHID, ...): Teredo (2001::/32) is
    // the one judged above by what it carries.
    let protocol_assignment = s[0] == 0x2001 && s[1] < 0x0200 && s[1] != 0;
    global_unicast && !documentation && !protocol_assignment
}

/// An IPv4 address svc may reach for a seller: none of the special-purpose blocks, and no
/// cloud metadata address.
fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24; benchmarking, 198.18.0.0/15.
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        // 6to4 relays' anycast, 192.88.99.0/24: whatever answers there is a tunnel.
        || (a == 192 && b == 88 && c == 99)
        // Azure's host address (metadata, its DNS and the VM agent's wire server): public in
        // form, but every Azure machine reaches its own host there. 169.254.169.254, the other
        // clouds' metadata address, is link-local above.
        || ip == Ipv4Addr::new(168, 63, 129, 16)
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

/// Where names are looked up: the system's resolver, or fixed answers (how tests play a name
/// server that answers a hostile address).
#[derive(Debug, Clone)]
enum Lookup {
    System,
    #[cfg(test)]
    Fixed(Arc<Vec<IpAddr>>),
}

impl Lookup {
    async fn addresses(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        match self {
            Lookup::System => Ok(tokio::net::lookup_host((host, 0)).await?.collect()),
            #[cfg(test)]
            Lookup::Fixed(answers) => Ok(answers.iter().map(|ip| SocketAddr::new(*ip, 0)).collect()),
        }
    }
}

/// Resolves names and keeps only public addresses, at connect time: the check the URL's form
/// cannot make.
#[derive(Debug, Clone)]
struct PublicOnly {
    allowed_as_is: Arc<Vec<String>>,
    lookup: Lookup,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let as_is = self.allowed_as_is.iter().any(|h| h.eq_ignore_ascii_case(&host));
        let lookup = self.lookup.clone();
        Box::pin(async move {
            let found = lookup.addresses(&host).await?;
            let kept: Vec<SocketAddr> = found.into_iter().filter(|addr| as_is || is_public(addr.ip())).collect();
            if kept.is_empty() {
                tracing::warn!(host = %host, "a seller endpoint resolved to no public address; not connecting");
                return Err(Box::new(PrivateName) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// A name that resolved to no address svc may reach.
#[derive(Debug, thiserror::Error)]
#[error("the endpoint's name resolves to no public address")]
struct PrivateName;

/// How a forwarded call failed; each charges nothing.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// The URL or the address it resolved to is not one svc may reach.
    #[error("the seller's endpoint is not reachable from svc: {0}")]
    Refused(String),
    /// No answer in time.
    #[error("the seller's endpoint did not answer within {0} s")]
    Timeout(u64),
    /// A connection or protocol failure.
    #[error("the seller's endpoint could not be reached")]
    Unreachable(String),
    /// An answer that was not a 2xx.
    #[error("the seller's endpoint answered HTTP {0}")]
    Status(u16),
    /// A 2xx that is not JSON.
    #[error("the seller's endpoint answered something other than JSON")]
    NotJson,
    /// A 2xx larger than allowed.
    #[error("the seller's answer is larger than {0} bytes")]
    TooLarge(usize),
}

/// Calls sellers' endpoints.
#[derive(Debug, Clone)]
pub struct Forwarder {
    client: reqwest::Client,
    policy: EndpointPolicy,
    max_answer_bytes: usize,
}

/// The header svc signs forwarded calls in.
pub const SIGNATURE_HEADER: &str = "x-svc-signature";

impl Forwarder {
    /// A forwarder under `policy`, reading answers of at most `max_answer_bytes`.
    pub fn new(policy: EndpointPolicy, max_answer_bytes: usize) -> Result<Self, ForwardError> {
        Self::resolving(policy, max_answer_bytes, Lookup::System)
    }

    fn resolving(policy: EndpointPolicy, max_answer_bytes: usize, lookup: Lookup) -> Result<Self, ForwardError> {
        // TLS through ring, the provider the rest of the build links; a no-op once installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let resolver = PublicOnly { allowed_as_is: Arc::new(policy.allow_http_hosts.clone()), lookup };
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(resolver))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(30))
            .user_agent(concat!("svc-sellers/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ForwardError::Unreachable(e.to_string()))?;
        Ok(Forwarder { client, policy, max_answer_bytes })
    }

    /// The policy endpoints are checked against.
    pub fn policy(&self) -> &EndpointPolicy {
        &self.policy
    }

    /// POSTs `body` to `endpoint` with `headers`, within `timeout`; the answer's JSON when it
    /// is a 2xx JSON answer of at most the size allowed. Nothing of the seller's answer but
    /// its body is kept.
    pub async fn post(
        &self,
        endpoint: &str,
        body: Bytes,
        headers: &[(&'static str, String)],
        timeout: Duration,
    ) -> Result<Bytes, ForwardError> {
        let url = self.policy.check(endpoint).map_err(|e| ForwardError::Refused(e.to_string()))?;
        let mut request = self.client.post(url).header("content-type", "application/json").body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let secs = timeout.as_secs();
        let call = async {
            let response = request.send().await.map_err(classify)?;
            let status = response.status();
            if !status.is_success() {
                return Err(ForwardError::Status(status.as_u16()));
            }
            let json = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(svc_domain::media::is_json);
            if !json {
                return Err(ForwardError::NotJson);
            }
            if response.content_length().is_some_and(|n| n > self.max_answer_bytes as u64) {
                return Err(ForwardError::TooLarge(self.max_answer_bytes));
            }
            let mut stream = response.bytes_stream();
            let mut read = Vec::new();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(classify)?;
                if read.len() + chunk.len() > self.max_answer_bytes {
                    return Err(ForwardError::TooLarge(self.max_answer_bytes));
                }
                read.extend_from_slice(&chunk);
            }
            if serde_json::from_slice::<serde::de::IgnoredAny>(&read).is_err() {
                return Err(ForwardError::NotJson);
            }
            Ok(Bytes::from(read))
        };
        tokio::time::timeout(timeout, call).await.map_err(|_| ForwardError::Timeout(secs))?
    }
}

/// What a transport error means for the caller. The URL is left out of what is kept: a seller
/// may put a token in its endpoint's query, and the error reaches the log.
fn classify(err: reqwest::Error) -> ForwardError {
    let err = err.without_url();
    let mut source: Option<&dyn std::error::Error> = Some(&err);
    while let Some(cause) = source {
        if cause.downcast_ref::<PrivateName>().is_some() {
            return ForwardError::Refused(cause.to_string());
        }
        source = cause.source();
    }
    if err.is_timeout() {
        return ForwardError::Timeout(0);
    }
    ForwardError::Unreachable(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_global_unicast_addresses_are_public() {
        let private = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "192.0.0.170",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::7f00:1",
            "::a00:1",
            "fec0::1",
            "64:ff9b:1::a00:1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "ff02::1",
        ];
        for ip in private {
            assert!(!is_public(ip.parse().expect(ip)), "{ip} must not be reachable");
        }
        for ip in ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "64:ff9b::5db8:d70e"] {
            assert!(is_public(ip.parse().expect(ip)), "{ip} is public");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, with a private, loopback, link-local,
    /// metadata or otherwise unreachable IPv4 inside.
    const EMBEDDED_PRIVATE: [&str; 22] = [
        // IPv4-mapped, IPv4-compatible and IPv4-translated (SIIT).
        "::ffff:10.0.0.1",
        "::169.254.169.254",
        "::ffff:0:127.0.0.1",
        "::ffff:0:a9fe:a9fe",
        "::ffff:0:10.0.0.1",
        "::ffff:0:0.0.0.0",
        "::ffff:0:168.63.129.16",
        // NAT64, the well-known prefix and the local-use one.
        "64:ff9b::127.0.0.1",
        "64:ff9b::192.168.1.1",
        "64:ff9b:1::a00:1",
        "64:ff9b:1:5db8:d70e::",
        // 6to4: the IPv4 in bits 16..48.
        "2002:7f00:1::",
        "2002:a9fe:a9fe::1",
        "2002:c0a8:101:1::1",
        // Teredo: the server's IPv4 in bits 32..64, the client's inverted in the last 32.
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:a00:1:8000:63bf:a247:28f1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        // ISATAP interface identifiers (::0:5efe:a.b.c.d, ::200:5efe:a.b.c.d), under any prefix.
        "2606:4700::5efe:a00:1",
        "2606:4700::200:5efe:7f00:1",
        "2002:5db8:d70e::5efe:c0a8:101",
        // The Azure host's metadata address, and 6to4 relays' anycast.
        "168.63.129.16",
        "192.88.99.1",
    ];

    #[test]
    fn embedded_ipv4_addresses_are_judged_as_ipv4() {
        for ip in EMBEDDED_PRIVATE {
            assert!(!is_public(ip.parse().expect(ip)), "{ip} must not be reachable");
        }
        for ip in [
            "::ffff:0:93.184.215.14",
            "::ffff:93.184.215.14",
            "2002:5db8:d70e::1",
            "2001:0:4136:e378:8000:63bf:a247:28f1",
            "2606:4700::200:5efe:5db8:d70e",
        ] {
            assert!(is_public(ip.parse().expect(ip)), "{ip} carries a public IPv4");
        }
    }

    #[test]
    fn reserved_ipv6_space_is_not_public() {
        for ip in ["100::1", "3fff::1", "5f00::1", "2001:2::1", "2001:20::1", "::1:0:0:1", "4000::1", "ff0e::1"] {
            assert!(!is_public(ip.parse().expect(ip)), "{ip} must not be reachable");
        }
    }

    #[test]
    fn embedded_ipv4_forms_are_refused_at_registration() {
        let policy = EndpointPolicy::default();
        for ip in EMBEDDED_PRIVATE {
            let host = if ip.contains(':') { format!("[{ip}]") } else { ip.to_owned() };
            let url = format!("https://{host}/run");
            assert_eq!(policy.check(&url).map(|_| ()), Err(UrlRefused::PrivateAddress), "{url}");
        }
    }

    #[tokio::test]
    async fn a_name_answered_with_an_embedded_private_address_is_never_connected_to() {
        for ip in EMBEDDED_PRIVATE {
            let lookup = Lookup::Fixed(Arc::new(vec![ip.parse().expect(ip)]));
            let forwarder = Forwarder::resolving(EndpointPolicy::default(), 1024, lookup).expect("forwarder");
            let sent =
                forwarder.post("https://seller.test/run", Bytes::from_static(b"{}"), &[], Duration::from_secs(5));
            match sent.await {
                Err(ForwardError::Refused(_)) => {}
                other => panic!("{ip}: expected a refusal before connecting, got {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_reaches_nothing() {
        let resolver = PublicOnly { allowed_as_is: Arc::new(Vec::new()), lookup: Lookup::System };
        let name: Name = "localhost".parse().expect("name");
        assert!(resolver.resolve(name).await.is_err(), "localhost resolves to loopback only");
        let allowed = PublicOnly { allowed_as_is: Arc::new(vec!["localhost".to_owned()]), lookup: Lookup::System };
        let name: Name = "localhost".parse().expect("name");
        assert!(allowed.resolve(name).await.is_ok(), "an operator-allowed host resolves as is");
    }

    #[test]
    fn a_url_is_refused_for_its_form_before_any_request() {
        let policy = EndpointPolicy { allow_http_hosts: vec!["127.0.0.1".into()] };
        assert!(policy.check("https://agent.example.com/run").is_ok());
        assert!(policy.check("http://127.0.0.1:9000/run").is_ok(), "an operator-allowed host");
        for (url, why) in [
            ("http://agent.example.com/run", UrlRefused::Scheme),
            ("ftp://agent.example.com/", UrlRefused::Scheme),
            ("file:///etc/passwd", UrlRefused::Scheme),
            ("https://user:pw@agent.example.com/", UrlRefused::Credentials),
            ("https://127.0.0.2/", UrlRefused::PrivateAddress),
            ("https://[::1]/", UrlRefused::PrivateAddress),
            ("https://169.254.169.254/latest/meta-data", UrlRefused::PrivateAddress),
            ("https://2130706434/", UrlRefused::PrivateAddress),
            ("https://0x7f.2/", UrlRefused::PrivateAddress),
            ("https://localhost/", UrlRefused::PrivateAddress),
            ("https://LOCALHOST./", UrlRefused::PrivateAddress),
            ("https://metadata.google.internal/", UrlRefused::PrivateAddress),
            ("not a url", UrlRefused::Malformed),
        ] {
            assert_eq!(policy.check(url).map(|_| ()), Err(why), "{url}");
        }
    }
}
