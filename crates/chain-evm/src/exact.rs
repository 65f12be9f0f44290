//! Parsing and checking one EIP-3009 authorization.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;

use alloy_primitives::{Address, B256, Bytes, Signature, U256};
use alloy_sol_types::{Eip712Domain, SolCall, SolStruct, sol};
use serde::{Deserialize, Serialize};

use crate::EvmError;

sol! {
    /// The EIP-3009 message a payer signs.
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }

    /// The FiatToken entry point for a 65-byte ECDSA signature.
    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    );

    /// The FiatToken ≥ 2.2 entry point for any signature (EIP-1271 wallets).
    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        bytes signature
    );
}

/// Seconds an authorization must still be valid for when it is verified, so it cannot expire
/// while the handler runs and the transfer is mined. The official facilitator uses the same 6.
pub const VALID_BEFORE_MARGIN_SECS: u64 = 6;

/// The token's EIP-712 domain, from configuration: a client cannot choose which contract or
/// chain its signature is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenDomain {
    /// EIP-712 `name` (`USD Coin` for USDC on Base).
    pub name: String,
    /// EIP-712 `version` (`2`).
    pub version: String,
    /// The chain id (8453 for Base).
    pub chain_id: u64,
    /// The token contract.
    pub token: Address,
}

impl TokenDomain {
    pub(crate) fn eip712(&self) -> Eip712Domain {
        Eip712Domain::new(
            Some(self.name.clone().into()),
            Some(self.version.clone().into()),
            Some(U256::from(self.chain_id)),
            Some(self.token),
            None,
        )
    }

    /// The domain separator, as the token's `DOMAIN_SEPARATOR()` returns it.
    pub fn separator(&self) -> B256 {
        self.eip712().separator()
    }
}

/// The EIP-712 digest, `keccak256(0x1901 ‖ domain separator ‖ struct hash)`, as
/// `eip712_signing_hash` makes it, from a separator computed ahead of time.
fn signing_hash(separator: &B256, message: &TransferWithAuthorization) -> B256 {
    let mut encoded = [0u8; 66];
    encoded[..2].copy_from_slice(&[0x19, 0x01]);
    encoded[2..34].copy_from_slice(separator.as_slice());
    encoded[34..].copy_from_slice(message.eip712_hash_struct().as_slice());
    alloy_primitives::keccak256(encoded)
}

/// The authorization as it travels: every number a decimal string, addresses in any case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireAuthorization {
    /// Payer.
    pub from: String,
    /// Recipient.
    pub to: String,
    /// Amount in atomic units.
    pub value: String,
    /// Unix seconds from which it is valid.
    pub valid_after: String,
    /// Unix seconds until which it is valid.
    pub valid_before: String,
    /// 32 random bytes, 0x-hex.
    pub nonce: String,
}

/// The `payload` of an `exact` EVM payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExactEvmPayload {
    /// `0x` + hex; 65 bytes for an ordinary wallet.
    pub signature: String,
    /// What was signed.
    pub authorization: WireAuthorization,
}

/// A parsed authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// Payer.
    pub from: Address,
    /// Recipient.
    pub to: Address,
    /// Amount in atomic units.
    pub value: U256,
    /// Unix seconds from which it is valid.
    pub valid_after: U256,
    /// Unix seconds until which it is valid.
    pub valid_before: U256,
    /// The one-time nonce.
    pub nonce: B256,
}

impl TryFrom<&WireAuthorization> for Authorization {
    type Error = EvmError;

    fn try_from(w: &WireAuthorization) -> Result<Self, EvmError> {
        Ok(Authorization {
            from: address(&w.from, "from")?,
            to: address(&w.to, "to")?,
            value: decimal(&w.value, "value")?,
            valid_after: decimal(&w.valid_after, "validAfter")?,
            valid_before: decimal(&w.valid_before, "validBefore")?,
            nonce: B256::from_str(&w.nonce)
                .ok()
                .filter(|_| w.nonce.starts_with("0x"))
                .ok_or_else(|| EvmError::InvalidPayload("authorization.nonce must be 0x + 64 hex digits".into()))?,
        })
    }
}

fn address(s: &str, field: &str) -> Result<Address, EvmError> {
    let hex = s.strip_prefix("0x").filter(|h| h.len() == 40);
    hex.and_then(|h| Address::from_str(h).ok())
        .ok_or_else(|| EvmError::InvalidPayload(format!("authorization.{field} must be a 0x-prefixed address")))
}

fn decimal(s: &str, field: &str) -> Result<U256, EvmError> {
    if s.is_empty() || s.len() > 78 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(EvmError::InvalidPayload(format!("authorization.{field} must be a decimal string")));
    }
    U256::from_str_radix(s, 10).map_err(|_| EvmError::InvalidPayload(format!("authorization.{field} is out of range")))
}

/// What the server requires, rebuilt from its own configuration and price.
#[derive(Debug, Clone, Copy)]
pub struct ExactRequirement {
    /// The token's EIP-712 domain separator ([`TokenDomain::separator`]): computed once per
    /// token, where hashing the domain on every payment was a tenth of verifying it.
    pub separator: B256,
    /// Our recipient.
    pub pay_to: Address,
    /// The price in atomic units.
    pub amount: U256,
}

/// Who vouches for the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer {
    /// ECDSA recovery gave `authorization.from`: nothing more to check.
    Recovered,
    /// Recovery did not give `from`: valid only if `from` is a contract wallet whose EIP-1271
    /// `isValidSignature` accepts it, which only a node can tell.
    NeedsEip1271,
}

/// An authorization that passed every offline check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedAuthorization {
    /// The authorization.
    pub authorization: Authorization,
    /// The signature bytes.
    pub signature: Bytes,
    /// The EIP-712 digest that was signed.
    pub digest: B256,
    /// Whether the signature is settled offline or needs a node.
    pub signer: Signer,
}

impl VerifiedAuthorization {
    /// Calldata of the `transferWithAuthorization` call that moves the funds: the `v,r,s`
    /// overload for a 65-byte signature, the `bytes` overload otherwise.
    pub fn transfer_calldata(&self) -> Bytes {
        let a = &self.authorization;
        if let (Signer::Recovered, Ok(sig)) = (self.signer, Signature::try_from(self.signature.as_ref())) {
            let v = 27 + u8::from(sig.v());
            transferWithAuthorization_0Call {
                from: a.from,
                to: a.to,
                value: a.value,
                validAfter: a.valid_after,
                validBefore: a.valid_before,
                nonce: a.nonce,
                v,
                r: sig.r().into(),
                s: sig.s().into(),
            }
            .abi_encode()
            .into()
        } else {
            transferWithAuthorization_1Call {
                from: a.from,
                to: a.to,
                value: a.value,
                validAfter: a.valid_after,
                validBefore: a.valid_before,
                nonce: a.nonce,
                signature: self.signature.clone(),
            }
            .abi_encode()
            .into()
        }
    }
}

/// Checks an `exact` EVM payload against what we require, at `now` (unix seconds), in the
/// order the official facilitator does, so the first failure reported is the same.
///
/// `contract_wallets`: whether a node can run EIP-1271 for signatures that do not recover to
/// `from`. Without one, such a signature is refused here, first, as the reference does.
pub fn verify_exact(
    payload: &ExactEvmPayload,
    required: &ExactRequirement,
    now: u64,
    contract_wallets: bool,
) -> Result<VerifiedAuthorization, EvmError> {
    verify_with(payload, required, now, contract_wallets, |signature, digest| {
        signature.recover_address_from_prehash(digest).ok()
    })
}

/// Signers recovered lately, by digest and signature. A payment is verified and, moments later,
/// checked again before its transfer is sent; the second check takes its signer from here
/// instead of recovering it again (recovery was a tenth of a settled call's CPU). What is kept
/// is a pure function of its key, so a hit gives exactly what recovery would.
#[derive(Debug, Default)]
pub struct Recoveries {
    kept: Mutex<HashMap<(B256, [u8; 65]), Address>>,
}

/// Signers kept before the lot is dropped: verified payments settle within seconds, and a
/// verify-only server never takes them back.
const RECOVERIES_KEPT: usize = 4_096;

impl Recoveries {
    /// [`verify_exact`], keeping the signer it recovers for the next check of the same payment,
    /// or taking it from the check before.
    pub fn verify_exact(
        &self,
        payload: &ExactEvmPayload,
        required: &ExactRequirement,
        now: u64,
        contract_wallets: bool,
    ) -> Result<VerifiedAuthorization, EvmError> {
        verify_with(payload, required, now, contract_wallets, |signature, digest| {
            let key = (*digest, signature.as_bytes());
            if let Some(signer) = self.kept.lock().ok().and_then(|mut kept| kept.remove(&key)) {
                return Some(signer);
            }
            let signer = signature.recover_address_from_prehash(digest).ok()?;
            if let Ok(mut kept) = self.kept.lock() {
                if kept.len() >= RECOVERIES_KEPT {
                    kept.clear();
                }
                kept.insert(key, signer);
            }
            Some(signer)
        })
    }
}

fn verify_with(
    payload: &ExactEvmPayload,
    required: &ExactRequirement,
    now: u64,
    contract_wallets: bool,
    recover: impl FnOnce(&Signature, &B256) -> Option<Address>,
) -> Result<VerifiedAuthorization, EvmError> {
    let authorization = Authorization::try_from(&payload.authorization)?;
    let signature: Bytes = payload
        .signature
        .strip_prefix("0x")
        .and_then(|h| alloy_primitives::hex::decode(h).ok())
        .ok_or(EvmError::SignatureEncoding)?
        .into();
    let message = TransferWithAuthorization {
        from: authorization.from,
        to: authorization.to,
        value: authorization.value,
        validAfter: authorization.valid_after,
        validBefore: authorization.valid_before,
        nonce: authorization.nonce,
    };
    let digest = signing_hash(&required.separator, &message);
    // A high-s signature recovers too, but USDC's ecrecover refuses it (EIP-2 malleability);
    // accepting it would serve a payment that can never settle.
    let recovered = Signature::try_from(signature.as_ref())
        .ok()
        .filter(|s| s.normalize_s().is_none())
        .and_then(|s| recover(&s, &digest));
    let signer = match recovered == Some(authorization.from) {
        true => Signer::Recovered,
        false if contract_wallets => Signer::NeedsEip1271,
        false => return Err(EvmError::Signature),
    };

    if authorization.to != required.pay_to {
        return Err(EvmError::RecipientMismatch);
    }
    if authorization.valid_before < U256::from(now.saturating_add(VALID_BEFORE_MARGIN_SECS)) {
        return Err(EvmError::ValidBefore);
    }
    if authorization.valid_after > U256::from(now) {
        return Err(EvmError::ValidAfter);
    }
    if authorization.value != required.amount {
        return Err(EvmError::ValueMismatch);
    }
    Ok(VerifiedAuthorization { authorization, signature, digest, signer })
}
