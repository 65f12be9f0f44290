//! Signing the perp exchange's L1 actions (orders, cancels, leverage) the way its official
//! SDK does, so the exchange accepts what svc sends on behalf of its own agent wallet.
//!
//! ```text
//! connectionId = keccak256( msgpack(action)              -- map keys in wire order
//!                         ‖ nonce as u64 big-endian
//!                         ‖ 0x00                          -- no vault
//!                           | 0x01 ‖ vault (20 bytes)
//!                         [ ‖ 0x00 ‖ expiresAfter u64 BE ] )
//! signature    = EIP-712 sign of Agent { source: "a" (mainnet) | "b" (testnet), connectionId }
//!                in domain { name: "Exchange", version: "1", chainId: 1337, verifyingContract: 0x0 }
//! ```
//!
//! The action is hashed as msgpack, so the key order of the wire types (their field
//! declaration order) is part of the signature, and optional keys must be left out rather
//! than written as nil.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_signer::SignerSync as _;
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{Eip712Domain, SolStruct as _, sol};
use serde::{Deserialize, Serialize};

sol! {
    /// The "phantom agent" the exchange has agents sign: a short label of the chain and the
    /// hash of the action, instead of the action's own fields.
    struct Agent {
        string source;
        bytes32 connectionId;
    }
}

/// The exchange's chain a signature is meant for; a mainnet signature is refused on testnet
/// and the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerpNetwork {
    /// Real money.
    Mainnet,
    /// The exchange's test deployment.
    Testnet,
}

impl PerpNetwork {
    /// The phantom agent's `source`.
    pub fn source(self) -> &'static str {
        match self {
            PerpNetwork::Mainnet => "a",
            PerpNetwork::Testnet => "b",
        }
    }
}

/// Why an action could not be signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The action has a shape msgpack cannot carry (a bug in the wire types).
    #[error("the action cannot be encoded for hashing: {0}")]
    Encode(String),
    /// The configured agent key is not a secp256k1 private key; the key itself is never shown.
    #[error("the agent key is not a 32-byte hex private key")]
    Key,
    /// The signer refused (it does not for a valid key and hash).
    #[error("signing failed: {0}")]
    Sign(String),
}

/// A signature as the exchange's `/exchange` body carries it: `{"r":"0x…","s":"0x…","v":27}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireSignature {
    /// `r`, 0x and 64 hex digits.
    pub r: String,
    /// `s`, 0x and 64 hex digits.
    pub s: String,
    /// 27 or 28.
    pub v: u8,
}

impl WireSignature {
    /// The 65-byte `r ‖ s ‖ v` form, for recovery; `None` if a part is malformed.
    pub fn to_bytes(&self) -> Option<[u8; 65]> {
        let word = |hex: &str| U256::from_str_radix(hex.strip_prefix("0x")?, 16).ok();
        let mut bytes = [0u8; 65];
        bytes[..32].copy_from_slice(&word(&self.r)?.to_be_bytes::<32>());
        bytes[32..64].copy_from_slice(&word(&self.s)?.to_be_bytes::<32>());
        bytes[64] = self.v;
        Some(bytes)
    }
}

/// The EIP-712 domain of L1 actions. Fixed by the exchange: chain id 1337 whatever chain the
/// exchange runs on, and the zero address as the verifying contract.
pub fn exchange_domain() -> Eip712Domain {
    Eip712Domain::new(Some("Exchange".into()), Some("1".into()), Some(U256::from(1337u64)), Some(Address::ZERO), None)
}

/// The `connectionId` of `action` signed with `nonce` (ms), for `vault` (a vault or
/// sub-account the agent trades for, if any) and an optional `expires_after` (ms).
pub fn action_hash<A: Serialize + ?Sized>(
    action: &A,
    vault: Option<Address>,
    nonce: u64,
    expires_after: Option<u64>,
) -> Result<B256, SignError> {
    let mut data = rmp_serde::to_vec_named(action).map_err(|e| SignError::Encode(e.to_string()))?;
    data.extend_from_slice(&nonce.to_be_bytes());
    match vault {
        None => data.push(0),
        Some(vault) => {
            data.push(1);
            data.extend_from_slice(vault.as_slice());
        }
    }
    if let Some(expires_after) = expires_after {
        data.push(0);
        data.extend_from_slice(&expires_after.to_be_bytes());
    }
    Ok(keccak256(&data))
}

/// The EIP-712 digest an agent signs for the action with this `connectionId`.
pub fn agent_digest(connection_id: B256, network: PerpNetwork) -> B256 {
    Agent { source: network.source().to_owned(), connectionId: connection_id }.eip712_signing_hash(&exchange_domain())
}

/// The service's agent wallet: a key approved by the trading account to place actions for
/// it, which cannot withdraw. `Debug` shows only its address.
#[derive(Clone)]
pub struct AgentKey {
    signer: PrivateKeySigner,
}

impl std::fmt::Debug for AgentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentKey").field("address", &self.signer.address()).finish_non_exhaustive()
    }
}

impl AgentKey {
    /// An agent from a 0x-hex private key.
    pub fn from_hex(key: &str) -> Result<Self, SignError> {
        let signer = key.trim().parse::<PrivateKeySigner>().map_err(|_| SignError::Key)?;
        Ok(AgentKey { signer })
    }

    /// The agent's address, which the exchange recovers from every signature.
    pub fn address(&self) -> Address {
        self.signer.address()
    }

    /// Signs `action` as the official SDK's `sign_l1_action` does.
    pub fn sign_l1_action<A: Serialize + ?Sized>(
        &self,
        action: &A,
        vault: Option<Address>,
        nonce: u64,
        expires_after: Option<u64>,
        network: PerpNetwork,
    ) -> Result<WireSignature, SignError> {
        let digest = agent_digest(action_hash(action, vault, nonce, expires_after)?, network);
        let signature = self.signer.sign_hash_sync(&digest).map_err(|e| SignError::Sign(e.to_string()))?;
        Ok(WireSignature {
            r: format!("{:#066x}", signature.r()),
            s: format!("{:#066x}", signature.s()),
            v: 27 + u8::from(signature.v()),
        })
    }
}

/// Who signed `digest`, if `signature` is a valid ECDSA signature over it.
pub fn recover_signer(digest: B256, signature: &WireSignature) -> Option<Address> {
    let bytes = signature.to_bytes()?;
    let parsed = alloy_primitives::Signature::try_from(bytes.as_slice()).ok()?;
    parsed.recover_address_from_prehash(&digest).ok()
}

/// A decimal string in the exchange's canonical wire form (`float_to_wire` in the SDK): no
/// leading zeros, no trailing fractional zeros, no bare point; `"100.0"` → `"100"`,
/// `"0.0147"` → `"0.0147"`. `None` if `value` is not a plain non-negative decimal with at most
/// 8 fractional digits (what the exchange accepts).
pub fn decimal_to_wire(value: &str) -> Option<String> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 8 || value.ends_with('.') {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    let fraction = fraction.trim_end_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    Some(if fraction.is_empty() { whole.to_owned() } else { format!("{whole}.{fraction}") })
}

#[cfg(test)]
mod tests {
    //! Vectors from the official Python SDK's `tests/signing_test.py`: the same key, actions,
    //! nonces and vault give the same connection ids and signatures, to the byte. The SDK
    //! prints `r`/`s` without leading zeros, so they are compared as 256-bit numbers.

    use super::*;
    use serde_json::json;

    const KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

    fn agent() -> AgentKey {
        AgentKey::from_hex(KEY).expect("test key")
    }

    fn word(hex: &str) -> U256 {
        U256::from_str_radix(hex.trim_start_matches("0x"), 16).expect("hex")
    }

    fn assert_signature(signature: &WireSignature, r: &str, s: &str, v: u8) {
        assert_eq!((word(&signature.r), word(&signature.s), signature.v), (word(r), word(s), v), "{signature:?}");
        assert_eq!((signature.r.len(), signature.s.len()), (66, 66), "padded to 32 bytes");
    }

    /// The SDK's `order_request_to_order_wire` + `order_wires_to_order_action` for one limit
    /// order, written out as its msgpack map would be.
    #[derive(Serialize)]
    struct TestOrderAction {
        #[serde(rename = "type")]
        kind: &'static str,
        orders: Vec<TestOrderWire>,
        grouping: &'static str,
    }

    #[derive(Serialize)]
    struct TestOrderWire {
        a: u32,
        b: bool,
        p: String,
        s: String,
        r: bool,
        t: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        c: Option<String>,
    }

    fn order(asset: u32, px: &str, sz: &str, t: serde_json::Value, cloid: Option<&str>) -> TestOrderAction {
        TestOrderAction {
            kind: "order",
            orders: vec![TestOrderWire {
                a: asset,
                b: true,
                p: decimal_to_wire(px).expect("px"),
                s: decimal_to_wire(sz).expect("sz"),
                r: false,
                t,
                c: cloid.map(str::to_owned),
            }],
            grouping: "na",
        }
    }

    fn gtc() -> serde_json::Value {
        json!({"limit": {"tif": "Gtc"}})
    }

    #[test]
    fn phantom_agent_creation_matches_production() {
        let action = order(4, "1670.1", "0.0147", json!({"limit": {"tif": "Ioc"}}), None);
        let hash = action_hash(&action, None, 1_677_777_606_040, None).expect("hash");
        assert_eq!(hash.to_string(), "0x0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908");
    }

    #[test]
    fn l1_action_signing_matches() {
        // float_to_int_for_hashing(1000) = 1000 * 1e8.
        let action = json!({"type": "dummy", "num": 100_000_000_000u64});
        let mainnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &mainnet,
            "0x53749d5b30552aeb2fca34b530185976545bb22d0b3ce6f62e31be961a59298",
            "0x755c40ba9bf05223521753995abb2f73ab3229be8ec921f350cb447e384d8ed8",
            27,
        );
        let testnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &testnet,
            "0x542af61ef1f429707e3c76c5293c80d01f74ef853e34b76efffcb57e574f9510",
            "0x17b8b32f086e8cdede991f1e2c529f5dd5297cbe8128500e00cbaf766204a613",
            28,
        );
    }

    #[test]
    fn l1_action_signing_order_matches() {
        let action = order(1, "100", "100", gtc(), None);
        let mainnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &mainnet,
            "0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e",
            "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e",
            28,
        );
        let testnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &testnet,
            "0x82b2ba28e76b3d761093aaded1b1cdad4960b3af30212b343fb2e6cdfa4e3d54",
            "0x6b53878fc99d26047f4d7e8c90eb98955a109f44209163f52d8dc4278cbbd9f5",
            27,
        );
    }

    #[test]
    fn l1_action_signing_order_with_cloid_matches() {
        let action = order(1, "100", "100", gtc(), Some("0x00000000000000000000000000000001"));
        let mainnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &mainnet,
            "0x41ae18e8239a56cacbc5dad94d45d0b747e5da11ad564077fcac71277a946e3",
            "0x3c61f667e747404fe7eea8f90ab0e76cc12ce60270438b2058324681a00116da",
            27,
        );
        let testnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &testnet,
            "0xeba0664bed2676fc4e5a743bf89e5c7501aa6d870bdb9446e122c9466c5cd16d",
            "0x7f3e74825c9114bc59086f1eebea2928c190fdfbfde144827cb02b85bbe90988",
            28,
        );
    }

    #[test]
    fn l1_action_signing_matches_with_vault() {
        let action = json!({"type": "dummy", "num": 100_000_000_000u64});
        let vault: Address = "0x1719884eb866cb12b2287399b15f7db5e7d775ea".parse().expect("vault");
        let mainnet = agent().sign_l1_action(&action, Some(vault), 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &mainnet,
            "0x3c548db75e479f8012acf3000ca3a6b05606bc2ec0c29c50c515066a326239",
            "0x4d402be7396ce74fbba3795769cda45aec00dc3125a984f2a9f23177b190da2c",
            28,
        );
        let testnet = agent().sign_l1_action(&action, Some(vault), 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &testnet,
            "0xe281d2fb5c6e25ca01601f878e4d69c965bb598b88fac58e475dd1f5e56c362b",
            "0x7ddad27e9a238d045c035bc606349d075d5c5cd00a6cd1da23ab5c39d4ef0f60",
            27,
        );
    }

    #[test]
    fn l1_action_signing_tpsl_order_matches() {
        // The SDK writes trigger keys as isMarket, triggerPx, tpsl whatever order it was given.
        let trigger = json!({"trigger": {"isMarket": true, "triggerPx": decimal_to_wire("103"), "tpsl": "sl"}});
        let action = order(1, "100", "100", trigger, None);
        let mainnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &mainnet,
            "0x98343f2b5ae8e26bb2587daad3863bc70d8792b09af1841b6fdd530a2065a3f9",
            "0x6b5bb6bb0633b710aa22b721dd9dee6d083646a5f8e581a20b545be6c1feb405",
            27,
        );
        let testnet = agent().sign_l1_action(&action, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &testnet,
            "0x971c554d917c44e0e1b6cc45d8f9404f32172a9d3b3566262347d0302896a2e4",
            "0x206257b104788f80450f8e786c329daa589aa0b32ba96948201ae556d5637eac",
            28,
        );
    }

    #[test]
    fn create_sub_account_and_sub_account_transfer_actions_match() {
        let create = json!({"type": "createSubAccount", "name": "example"});
        let signed = agent().sign_l1_action(&create, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &signed,
            "0x51096fe3239421d16b671e192f574ae24ae14329099b6db28e479b86cdd6caa7",
            "0xb71f7d293af92d3772572afb8b102d167a7cef7473388286bc01f52a5c5b423",
            27,
        );
        let transfer = json!({
            "type": "subAccountTransfer",
            "subAccountUser": "0x1d9470d4b963f552e6f671a81619d395877bf409",
            "isDeposit": true,
            "usd": 10,
        });
        let signed = agent().sign_l1_action(&transfer, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &signed,
            "0xe26574013395ad55ee2f4e0575310f003c5bb3351b5425482e2969fa51543927",
            "0xefb08999196366871f919fd0e138b3a7f30ee33e678df7cfaf203e25f0a4278",
            28,
        );
    }

    #[test]
    fn schedule_cancel_with_and_without_time_matches() {
        let bare = json!({"type": "scheduleCancel"});
        let signed = agent().sign_l1_action(&bare, None, 0, None, PerpNetwork::Mainnet).expect("sign");
        assert_signature(
            &signed,
            "0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9",
            "0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0",
            27,
        );
        let timed = json!({"type": "scheduleCancel", "time": 123_456_789u64});
        let signed = agent().sign_l1_action(&timed, None, 0, None, PerpNetwork::Testnet).expect("sign");
        assert_signature(
            &signed,
            "0x4e4f2dbd4107c69783e251b7e1057d9f2b9d11cee213441ccfa2be63516dc5bc",
            "0x706c656b23428c8ba356d68db207e11139ede1670481a9e01ae2dfcdb0e1a678",
            27,
        );
    }

    #[test]
    fn expires_after_changes_the_hash_and_a_signature_recovers_to_the_agent() {
        let action = json!({"type": "scheduleCancel"});
        let plain = action_hash(&action, None, 7, None).expect("hash");
        let expiring = action_hash(&action, None, 7, Some(8)).expect("hash");
        assert_ne!(plain, expiring);
        let signature = agent().sign_l1_action(&action, None, 7, Some(8), PerpNetwork::Mainnet).expect("sign");
        assert_eq!(recover_signer(agent_digest(expiring, PerpNetwork::Mainnet), &signature), Some(agent().address()));
        assert_ne!(recover_signer(agent_digest(plain, PerpNetwork::Mainnet), &signature), Some(agent().address()));
    }

    #[test]
    fn decimals_take_the_sdks_canonical_wire_form() {
        for (input, wire) in [
            ("100", "100"),
            ("100.0", "100"),
            ("1670.10", "1670.1"),
            ("0.0147", "0.0147"),
            ("007.50", "7.5"),
            ("0.00000000", "0"),
        ] {
            assert_eq!(decimal_to_wire(input).as_deref(), Some(wire), "{input}");
        }
        for bad in ["", ".5", "5.", "1e5", "-1", "0.000000001", "1,5"] {
            assert_eq!(decimal_to_wire(bad), None, "{bad}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let printed = format!("{:?}", agent());
        assert!(!printed.contains("0123456789012345678901234567890123456789"), "{printed}");
    }

    #[test]
    fn a_malformed_key_is_refused_without_echoing_it() {
        let err = AgentKey::from_hex("0xnot-a-key-secret").expect_err("bad key");
        assert!(!err.to_string().contains("secret"));
    }
}
