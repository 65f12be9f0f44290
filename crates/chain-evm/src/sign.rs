//! The payer's side: signing an EIP-3009 authorization, for `svc pay` and for tests that pay
//! the server the way a real client does.

use alloy_primitives::{Address, B256, U256};
use alloy_signer::SignerSync as _;
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::SolStruct as _;

use crate::exact::TransferWithAuthorization;
use crate::{EvmError, ExactEvmPayload, TokenDomain, WireAuthorization};

/// A wallet that signs authorizations. Its key never leaves it, and `Debug` shows only the
/// address.
#[derive(Clone)]
pub struct Payer {
    signer: PrivateKeySigner,
}

impl std::fmt::Debug for Payer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payer").field("address", &self.signer.address()).finish_non_exhaustive()
    }
}

impl Payer {
    /// A payer from a 0x-hex private key.
    pub fn from_key(key: &str) -> Result<Self, EvmError> {
        let signer =
            key.trim().parse().map_err(|_| EvmError::Config("the payer key is not a 32-byte hex key".into()))?;
        Ok(Payer { signer })
    }

    /// The payer's address.
    pub fn address(&self) -> Address {
        self.signer.address()
    }

    /// Signs `message` as `personal_sign` does (EIP-191), 0x-hex: how a wallet proves it is
    /// itself to sign in or to read its receipts.
    pub fn sign_message(&self, message: &str) -> Result<String, EvmError> {
        let signature =
            self.signer.sign_message_sync(message.as_bytes()).map_err(|e| EvmError::Config(format!("signing: {e}")))?;
        Ok(format!("0x{}", alloy_primitives::hex::encode(signature.as_bytes())))
    }

    /// Signs a transfer of `value` to `to`, valid from `valid_after` until `valid_before`
    /// (unix seconds), with a one-time `nonce`, as the official clients do.
    pub fn authorize(
        &self,
        domain: &TokenDomain,
        to: Address,
        value: U256,
        valid_after: u64,
        valid_before: u64,
        nonce: B256,
    ) -> Result<ExactEvmPayload, EvmError> {
        let message = TransferWithAuthorization {
            from: self.address(),
            to,
            value,
            validAfter: U256::from(valid_after),
            validBefore: U256::from(valid_before),
            nonce,
        };
        let digest = message.eip712_signing_hash(&domain.eip712());
        let signature = self.signer.sign_hash_sync(&digest).map_err(|e| EvmError::Config(format!("signing: {e}")))?;
        Ok(ExactEvmPayload {
            signature: format!("0x{}", alloy_primitives::hex::encode(signature.as_bytes())),
            authorization: WireAuthorization {
                from: self.address().to_checksum(None),
                to: to.to_checksum(None),
                value: value.to_string(),
                valid_after: valid_after.to_string(),
                valid_before: valid_before.to_string(),
                nonce: nonce.to_string(),
            },
        })
    }
}
