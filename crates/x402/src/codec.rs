//! The header codec: standard base64 (with padding) of UTF-8 JSON, as every official SDK
//! writes it. Decoding is strict about the base64 and lenient about the JSON (any key order,
//! any whitespace); anything undecodable is treated as no payment at all, so the client gets
//! a fresh challenge rather than an error it cannot act on.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::wire::{PaymentPayload, PaymentRequirements};

/// Largest header accepted, in bytes. An EVM payment with an echoed schema is ~2 KB; this
/// leaves room for Solana transactions and extensions without letting a client make us decode
/// megabytes.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Encodes a message for a header.
pub fn encode_header<T: Serialize>(message: &T) -> String {
    // Serialising our own plain structs cannot fail; an empty object is the safe fallback.
    let json = serde_json::to_vec(message).unwrap_or_else(|_| b"{}".to_vec());
    STANDARD.encode(json)
}

/// The JSON a header carries (a `PAYMENT-RESPONSE` read back by a surface that moves it
/// elsewhere, as the MCP server moves it into a tool result), or None.
pub fn decode_json(header: &[u8]) -> Option<Value> {
    serde_json::from_slice(&STANDARD.decode(header).ok()?).ok()
}

/// Encodes JSON already serialised (a challenge sent both as body and header).
pub fn encode_bytes(json: &[u8]) -> String {
    STANDARD.encode(json)
}

/// The payment a request presents, read once per request: the rate limiter and the paywall
/// both work from it.
#[derive(Debug)]
pub enum Presented {
    /// No payment header.
    Nothing,
    /// A header too large to be a payment of ours.
    TooLarge(usize),
    /// A header that does not decode as a payment.
    Junk,
    /// A decoded payment (not yet verified).
    Payment(Box<DecodedPayment>),
}

impl Presented {
    /// Reads a payment header's value, if the request has one.
    pub fn read(header: Option<&[u8]>) -> Self {
        let Some(header) = header else { return Presented::Nothing };
        if header.len() > MAX_HEADER_BYTES {
            return Presented::TooLarge(header.len());
        }
        match decode_payment(header) {
            Some(payment) => Presented::Payment(Box::new(payment)),
            None => Presented::Junk,
        }
    }

    /// The payer the payment names: a claim until it verifies.
    pub fn claimed_payer(&self) -> Option<String> {
        match self {
            Presented::Payment(payment) => payment.replay_key().map(|(payer, _)| payer),
            _ => None,
        }
    }
}

/// Which requirement the client says it paid.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// v2: the whole requirement, copied from the challenge.
    Accepted(PaymentRequirements),
    /// v1: only the scheme and the network (mapped to CAIP-2); the amount is in the signature.
    SchemeNetwork {
        /// Scheme.
        scheme: String,
        /// CAIP-2 network.
        network: String,
    },
}

/// A payment header, decoded.
#[derive(Debug, Clone)]
pub struct DecodedPayment {
    /// 1 or 2.
    pub version: u8,
    /// What the client chose.
    pub choice: Choice,
    /// The scheme payload (signature and authorization, or a transaction).
    pub payload: Value,
    /// Extensions the client echoed (v2).
    pub extensions: Option<Map<String, Value>>,
    /// The message as received, forwarded verbatim to an external facilitator (a v2 one).
    pub raw: Box<RawValue>,
    /// [`DecodedPayment::replay_key`], read on first ask: the rate limiter and the paywall
    /// both ask, and on Solana it costs a transaction decode. The fields above are the decoded
    /// message as it came, never changed afterwards.
    replay: OnceLock<Option<(String, String)>>,
}

impl DecodedPayment {
    /// The network the client paid on (CAIP-2).
    pub fn network(&self) -> &str {
        match &self.choice {
            Choice::Accepted(r) => &r.network,
            Choice::SchemeNetwork { network, .. } => network,
        }
    }

    /// Whether the client paid on Solana; every other network offered is EVM. The payload's
    /// shape is the client's to choose, so the network, not the keys present, decides how a
    /// payment is read.
    fn on_solana(&self) -> bool {
        self.network().starts_with("solana:")
    }

    /// The URL of the resource a v2 payment says it pays for (`resource.url`, copied from the
    /// challenge it answers), if it names one.
    pub fn resource_url(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Named {
            resource: Option<Resource>,
        }
        #[derive(Deserialize)]
        struct Resource {
            url: Option<String>,
        }
        let named: Named = serde_json::from_str(self.raw.get()).ok()?;
        named.resource?.url
    }

    /// What makes this payment one of a kind, read before verification: the payer and the
    /// EIP-3009 nonce (lowercased hex), or the Solana payer and its transaction signature
    /// (base58, case kept). A forged key fails verification; a real one can be spent once.
    pub fn replay_key(&self) -> Option<(String, String)> {
        self.replay.get_or_init(|| self.read_replay_key()).clone()
    }

    fn read_replay_key(&self) -> Option<(String, String)> {
        if self.on_solana() {
            return svc_chain_solana::replay_key(self.payload.get("transaction")?.as_str()?);
        }
        let authorization = self.payload.get("authorization")?;
        let field = |name: &str| authorization.get(name).and_then(Value::as_str).map(payer_key);
        Some((field("from")?, field("nonce")?))
    }

    /// A digest of the scheme payload, signature included: what identifies this very payment
    /// when an answer kept for it is asked for again. Keys are sorted first, so a client that
    /// re-encodes the same payload gets the same digest.
    pub fn payload_digest(&self) -> String {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        canonical(&self.payload, &mut hasher);
        hex::encode(hasher.finalize())
    }

    /// Unix seconds after which this payment can no longer move funds: an EIP-3009
    /// authorization's `validBefore`; for a Solana transaction, whose recent blockhash lets it
    /// land for only about a minute and a half after the client fetched it, ten minutes from
    /// `now_secs`, when it arrived. Until then a settlement sent for it may still land.
    pub fn valid_before(&self, now_secs: u64) -> Option<u64> {
        if self.on_solana() {
            return Some(now_secs + SOLANA_TRANSACTION_LIFETIME_SECS);
        }
        let bound = self.payload.get("authorization")?.get("validBefore")?;
        bound.as_str().and_then(|b| b.parse().ok()).or_else(|| bound.as_u64())
    }

    /// Whether an EIP-3009 authorization stays usable longer than the challenge it answers:
    /// a challenge expires after its `maxTimeoutSeconds`, and the official clients sign
    /// `validBefore` as their clock's now plus exactly that, so anything further ahead than
    /// [`CLOCK_SKEW_SECS`] past it was signed for some other purpose (an authorization meant
    /// to be held and spent later). A Solana transaction's lifetime is its blockhash's.
    pub fn outlives_challenge(&self, requirement: &PaymentRequirements, now_secs: u64) -> bool {
        let latest = now_secs.saturating_add(requirement.max_timeout_seconds).saturating_add(CLOCK_SKEW_SECS);
        !self.on_solana() && self.valid_before(now_secs).is_none_or(|bound| bound > latest)
    }

    /// The payment as a v2 message whose `accepted` is `requirement`: for v2 the client's own
    /// message, for v1 a faithful translation (a facilitator speaks v2).
    pub fn as_v2(&self, requirement: &PaymentRequirements) -> std::borrow::Cow<'_, RawValue> {
        match self.version {
            2 => std::borrow::Cow::Borrowed(&self.raw),
            _ => {
                let message = serde_json::json!({"x402Version": 2, "accepted": requirement, "payload": self.payload});
                // A Value of our own making always serialises.
                std::borrow::Cow::Owned(serde_json::value::to_raw_value(&message).unwrap_or_else(|_| empty_object()))
            }
        }
    }
}

/// How long after its arrival a Solana payment is treated as possibly still landing: far
/// beyond its blockhash's life (150 slots, about a minute), so that no clock skew matters.
pub const SOLANA_TRANSACTION_LIFETIME_SECS: u64 = 600;

/// How far a client's clock may run ahead of svc's when it signs an authorization's
/// `validBefore` ([`DecodedPayment::outlives_challenge`]).
pub const CLOCK_SKEW_SECS: u64 = 60;

/// The reason a payment whose authorization outlives its challenge is refused: the official
/// code for a `validBefore` out of bounds.
pub const VALID_BEFORE_REFUSED: &str = "invalid_exact_evm_payload_authorization_valid_before";

/// A payer as payments are keyed and counted: EVM addresses lowercased (their case is only a
/// checksum), Solana addresses as they are (base58 is case-sensitive).
pub fn payer_key(payer: &str) -> String {
    if payer.starts_with("0x") || payer.starts_with("0X") { payer.to_ascii_lowercase() } else { payer.to_owned() }
}

/// Decodes a `PAYMENT-SIGNATURE` or `X-PAYMENT` header value. `None` means "no usable
/// payment": the caller answers with a challenge.
pub fn decode_payment(header: &[u8]) -> Option<DecodedPayment> {
    if header.len() > MAX_HEADER_BYTES {
        return None;
    }
    let json = String::from_utf8(STANDARD.decode(header).ok()?).ok()?;
    // The version first (a scan that allocates nothing), then the message read straight into
    // its types: no intermediate tree, which cost as much again as the parse.
    let Version { x402_version } = serde_json::from_str(&json).ok()?;
    let (version, choice, payload, extensions) = match x402_version {
        2 => {
            let message: PaymentPayload = serde_json::from_str(&json).ok()?;
            (2, Choice::Accepted(message.accepted), message.payload, message.extensions)
        }
        1 => {
            let message: V1Payment = serde_json::from_str(&json).ok()?;
            let network = v1_network(&message.network)?.to_owned();
            (1, Choice::SchemeNetwork { scheme: message.scheme, network }, message.payload, None)
        }
        _ => return None,
    };
    let raw = RawValue::from_string(json).ok()?;
    Some(DecodedPayment { version, choice, payload, extensions, raw, replay: OnceLock::new() })
}

/// The one field every version of the message has.
#[derive(Deserialize)]
struct Version {
    #[serde(rename = "x402Version")]
    x402_version: u64,
}

/// What a v1 payment says (v1 named its network, and its requirement was not echoed).
#[derive(Deserialize)]
struct V1Payment {
    scheme: String,
    network: String,
    payload: Value,
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}

/// v1 network names as CAIP-2 ids, for the networks svc can be configured with by name.
/// A CAIP-2 id given where a name was expected is taken as is.
pub fn v1_network(name: &str) -> Option<&str> {
    Some(match name {
        "base" => "eip155:8453",
        "base-sepolia" => "eip155:84532",
        "ethereum" => "eip155:1",
        "polygon" => "eip155:137",
        "arbitrum" => "eip155:42161",
        "optimism" => "eip155:10",
        "avalanche" => "eip155:43114",
        "solana" => "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
        "solana-devnet" => "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
        other if other.contains(':') => other,
        _ => return None,
    })
}

/// Feeds `value` to `hasher` as JSON with every object's keys sorted.
fn canonical(value: &Value, hasher: &mut sha2::Sha256) {
    use sha2::Digest as _;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hasher.update(b"{");
            for key in keys {
                hasher.update(Value::from(key.as_str()).to_string().as_bytes());
                hasher.update(b":");
                canonical(&map[key], hasher);
                hasher.update(b",");
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for item in items {
                canonical(item, hasher);
                hasher.update(b",");
            }
            hasher.update(b"]");
        }
        scalar => hasher.update(scalar.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_payment_is_bounded_by_its_authorization_or_by_its_blockhash() {
        let decoded = |payload: Value| {
            let value = serde_json::json!({"x402Version": 2, "accepted": {"scheme": "exact",
                "network": "eip155:8453", "amount": "1", "asset": "0xa", "payTo": "0xb", "maxTimeoutSeconds": 300},
                "payload": payload});
            decode_payment(encode_header(&value).as_bytes()).expect("decodes")
        };
        let evm =
            |bound: Value| decoded(serde_json::json!({"signature": "0x", "authorization": {"validBefore": bound}}));
        assert_eq!(evm("1700000300".into()).valid_before(1_700_000_000), Some(1_700_000_300));
        // Beyond u64, or missing: no bound is known.
        assert_eq!(evm("1".repeat(40).into()).valid_before(1_700_000_000), None);
        assert_eq!(decoded(serde_json::json!({"authorization": {}})).valid_before(5), None);
    }

    /// A stray `authorization` beside a Solana transaction is not read: it would let a client
    /// pick the replay key (and so pay twice with one transfer) or another payer's identity.
    #[test]
    fn a_payment_is_read_by_its_network_not_by_the_keys_its_payload_has() {
        let solana = serde_json::json!({"x402Version": 2, "accepted": {"scheme": "exact",
            "network": crate::network::SOLANA, "amount": "1", "asset": "m", "payTo": "p", "maxTimeoutSeconds": 300},
            "payload": {"transaction": "AQID", "authorization": {"from": "0xabc", "nonce": "0x01", "validBefore": "0"}}});
        let decoded = decode_payment(encode_header(&solana).as_bytes()).expect("decodes");
        assert_eq!(decoded.valid_before(1_700_000_000), Some(1_700_000_000 + SOLANA_TRANSACTION_LIFETIME_SECS));
        assert_eq!(decoded.replay_key(), None, "only the (here malformed) transaction keys a Solana payment");
    }

    #[test]
    fn a_padded_standard_header_round_trips_and_url_safe_or_unpadded_does_not() {
        let value = serde_json::json!({"x402Version": 2, "accepted": {"scheme": "exact", "network": "eip155:8453",
            "amount": "1", "asset": "0xa", "payTo": "0xb", "maxTimeoutSeconds": 300}, "payload": {"n": "?>?"}});
        let mut value = value;
        let mut header = encode_header(&value);
        while !header.ends_with('=') {
            value["pad"] = Value::from(format!("{}x", value["pad"].as_str().unwrap_or_default()));
            header = encode_header(&value);
        }
        let decoded = decode_payment(header.as_bytes()).expect("decodes");
        assert_eq!(serde_json::from_str::<Value>(decoded.raw.get()).expect("json"), value);
        assert_eq!(decoded.network(), "eip155:8453");
        let url_safe = header.replace('+', "-").replace('/', "_");
        if url_safe != header {
            assert!(decode_payment(url_safe.as_bytes()).is_none());
        }
        assert!(decode_payment(header.trim_end_matches('=').as_bytes()).is_none(), "padding is required");
        assert!(decode_payment(format!(" {header}").as_bytes()).is_none());
    }

    /// A message naming a field twice is no payment: the built-in facilitator would read one
    /// copy and an external facilitator, sent the message verbatim, perhaps the other.
    #[test]
    fn a_message_with_a_field_twice_is_no_payment() {
        let accepted = r#"{"scheme":"exact","network":"eip155:8453","amount":"1","asset":"0xa","payTo":"0xb","maxTimeoutSeconds":300}"#;
        let once = format!(r#"{{"x402Version":2,"accepted":{accepted},"payload":{{"n":1}}}}"#);
        let twice = format!(r#"{{"x402Version":2,"accepted":{accepted},"payload":{{"n":1}},"payload":{{"n":2}}}}"#);
        assert!(decode_payment(STANDARD.encode(once).as_bytes()).is_some());
        assert!(decode_payment(STANDARD.encode(twice).as_bytes()).is_none());
    }

    #[test]
    fn v1_payments_map_their_network_name() {
        let v1 = serde_json::json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": {}});
        let decoded = decode_payment(encode_header(&v1).as_bytes()).expect("v1");
        assert_eq!(decoded.version, 1);
        assert_eq!(decoded.network(), "eip155:8453");
        let unknown = serde_json::json!({"x402Version": 1, "scheme": "exact", "network": "dogechain", "payload": {}});
        assert!(decode_payment(encode_header(&unknown).as_bytes()).is_none());
        let v3 = serde_json::json!({"x402Version": 3});
        assert!(decode_payment(encode_header(&v3).as_bytes()).is_none());
    }

    proptest! {
        #[test]
        fn garbage_is_no_payment_and_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode_payment(&bytes);
            let b64 = STANDARD.encode(&bytes);
            let _ = decode_payment(b64.as_bytes());
        }

        #[test]
        fn key_order_and_whitespace_never_change_the_payment_decoded(
            order in Just(vec!["x402Version", "accepted", "payload", "resource", "extensions"]).prop_shuffle(),
            gaps in proptest::collection::vec("[ \t\r\n]{0,3}", 24),
        ) {
            let fields = serde_json::json!({
                "x402Version": 2,
                "accepted": {"scheme": "exact", "network": "eip155:8453", "amount": "5000",
                    "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0xb", "maxTimeoutSeconds": 300},
                "payload": {"signature": "0x01", "authorization": {"from": "0xAbC", "nonce": "0x02"}},
                "resource": {"url": "https://svc.example/api/x402/alpha/top-picks"},
                "extensions": {},
            });
            let mut gap = gaps.iter().cycle();
            let mut text = format!("{}{{", gap.next().expect("gap"));
            for (i, key) in order.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let value = serde_json::to_string(&fields[*key]).expect("json");
                text.push_str(&format!("{}\"{key}\"{}:{}{value}{}", gap.next().expect("gap"),
                    gap.next().expect("gap"), gap.next().expect("gap"), gap.next().expect("gap")));
            }
            text.push('}');
            let decoded = decode_payment(STANDARD.encode(text.as_bytes()).as_bytes()).expect("decodes");
            let canonical = decode_payment(encode_header(&fields).as_bytes()).expect("decodes");
            prop_assert_eq!(&serde_json::from_str::<Value>(decoded.raw.get()).expect("json"), &fields);
            prop_assert_eq!(decoded.network(), canonical.network());
            prop_assert!(canonical.replay_key().is_some());
            prop_assert_eq!(decoded.replay_key(), canonical.replay_key());
            prop_assert_eq!(decoded.version, 2);
        }

        #[test]
        fn any_json_value_round_trips_through_the_header(s in ".{0,64}", n in any::<u64>()) {
            let value = serde_json::json!({"s": s, "n": n});
            let back: Value = serde_json::from_slice(&STANDARD.decode(encode_header(&value)).expect("b64")).expect("json");
            prop_assert_eq!(back, value);
        }
    }
}
