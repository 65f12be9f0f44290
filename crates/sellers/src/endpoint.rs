//! The seller's endpoint: the one place svc makes a request to an address a user chose, so
//! the one place server-side request forgery is stopped.
//!
//! A URL is checked twice. When it is registered, by its form: `https` (plain `http` only to
//! hosts an operator allows), no credentials, and no literal address svc must not reach. When
//! it is called, at connect time: every address its name resolves to is checked (loopback,
//! private, link-local, shared, multicast, documentation, the metadata address...), so a name
//! that resolves to 127.0.0.1, or re-resolves there later, reaches nothing. Redirects are not
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

/// Whether svc may connect to `ip` on a seller's behalf: a global unicast address only.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms are their IPv4.
            if let Some(v4) = v6.to_ipv4() {
                return is_public_v4(v4);
            }
            let segments = v6.segments();
            let unique_local = (segments[0] & 0xfe00) == 0xfc00;
            let link_local = (segments[0] & 0xffc0) == 0xfe80;
            // Site-local (deprecated, still routed privately) and the local-use NAT64 prefix.
            let site_local = (segments[0] & 0xffc0) == 0xfec0;
            let local_nat64 = segments[0] == 0x64 && segments[1] == 0xff9b && segments[2] == 1;
            let documentation = segments[0] == 0x2001 && segments[1] == 0x0db8;
            // 64:ff9b::/96 translates to IPv4 behind a NAT64: the embedded address decides.
            let nat64 = segments[0] == 0x64 && segments[1] == 0xff9b && segments[2..6] == [0, 0, 0, 0];
            if nat64 {
                let [a, b] = segments[6].to_be_bytes();
                let [c, d] = segments[7].to_be_bytes();
                return is_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            // 6to4 and Teredo embed IPv4 addresses too; none is a seller's endpoint.
            let tunnelled = segments[0] == 0x2002 || (segments[0] == 0x2001 && segments[1] == 0);
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || unique_local
                || link_local
                || site_local
                || local_nat64
                || documentation
                || tunnelled
                || v6 == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254))
        }
    }
}

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
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

/// Resolves names and keeps only public addresses, at connect time: the check the URL's form
/// cannot make.
#[derive(Debug, Clone)]
struct PublicOnly {
    allowed_as_is: Arc<Vec<String>>,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let as_is = self.allowed_as_is.iter().any(|h| h.eq_ignore_ascii_case(&host));
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
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
        let resolver = PublicOnly { allowed_as_is: Arc::new(policy.allow_http_hosts.clone()) };
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

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_reaches_nothing() {
        let resolver = PublicOnly { allowed_as_is: Arc::new(Vec::new()) };
        let name: Name = "localhost".parse().expect("name");
        assert!(resolver.resolve(name).await.is_err(), "localhost resolves to loopback only");
        let allowed = PublicOnly { allowed_as_is: Arc::new(vec!["localhost".to_owned()]) };
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
