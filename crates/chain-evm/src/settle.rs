//! Talking to an EVM node: EIP-1271 checks for contract wallets, the token's record of used
//! nonces, and sending `transferWithAuthorization` from a relayer key that pays the gas.
//! Behind the `settle` feature because the node client is most of this crate's build time.

use std::time::Duration;

use alloy::network::EthereumWallet;
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::signers::local::PrivateKeySigner;
use alloy::sol;
use alloy_primitives::{Address, B256, Bytes, U256};

use crate::{EvmError, VerifiedAuthorization};

sol! {
    #[sol(rpc)]
    interface IEip3009 {
        function authorizationState(address authorizer, bytes32 nonce) external view returns (bool);
        function balanceOf(address account) external view returns (uint256);
    }

    #[sol(rpc)]
    interface IErc1271 {
        function isValidSignature(bytes32 hash, bytes signature) external view returns (bytes4);
    }
}

/// The value `isValidSignature` returns for a valid signature.
const ERC1271_MAGIC: [u8; 4] = [0x16, 0x26, 0xba, 0x7e];

/// A read-only node connection for one token: what it did with authorizations and
/// transactions. Needs no key, so a server whose settlement an external facilitator makes can
/// still reconcile payments.
#[derive(Clone)]
pub struct EvmReader {
    provider: DynProvider,
    token: Address,
}

/// A node connection with the relayer key that submits transfers for one token.
#[derive(Clone)]
pub struct EvmSettler {
    reader: EvmReader,
    relayer: Address,
    receipt_timeout: Duration,
}

/// Longest wait for one node call: a paid request must not hang on a node that stopped
/// answering.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// `call` within [`CALL_TIMEOUT`], its error and a timeout both an [`EvmError::Rpc`].
async fn within<T, E: std::fmt::Display>(
    what: &str,
    call: impl std::future::IntoFuture<Output = Result<T, E>>,
) -> Result<T, EvmError> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(result) => result.map_err(|e| EvmError::Rpc(format!("{what}: {e}"))),
        Err(_) => Err(EvmError::Rpc(format!("{what}: no answer in {CALL_TIMEOUT:?}"))),
    }
}

impl std::fmt::Debug for EvmSettler {
    /// Never prints the key; the relayer's address is public.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvmSettler")
            .field("token", &self.reader.token)
            .field("relayer", &self.relayer)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for EvmReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvmReader").field("token", &self.token).finish_non_exhaustive()
    }
}

/// Checks the node at `provider` serves `chain_id`, so a misconfigured URL fails at start-up
/// rather than on the first payment.
async fn check_chain(provider: &DynProvider, chain_id: u64) -> Result<(), EvmError> {
    let served = within("eth_chainId", provider.get_chain_id()).await?;
    if served != chain_id {
        return Err(EvmError::Config(format!("the node serves chain {served}, configured {chain_id}")));
    }
    Ok(())
}

fn parse_url(rpc_url: &str) -> Result<alloy::transports::http::reqwest::Url, EvmError> {
    // The node client uses reqwest over rustls; ring is the provider the build links.
    let _ = rustls::crypto::ring::default_provider().install_default();
    rpc_url.parse().map_err(|_| EvmError::Config("the RPC URL does not parse".into()))
}

impl EvmReader {
    /// Connects to `rpc_url` and checks the node serves `chain_id`.
    pub async fn connect(rpc_url: &str, token: Address, chain_id: u64) -> Result<Self, EvmError> {
        let provider = ProviderBuilder::new().connect_http(parse_url(rpc_url)?).erased();
        check_chain(&provider, chain_id).await?;
        Ok(EvmReader { provider, token })
    }

    /// Whether the token consumed `payer`'s authorization `nonce` (so the transfer happened).
    pub async fn authorization_used(&self, payer: Address, nonce: B256) -> Result<bool, EvmError> {
        let token = IEip3009::new(self.token, &self.provider);
        within("authorizationState", token.authorizationState(payer, nonce).call()).await
    }

    /// The token balance of `owner`, atomic units.
    pub async fn balance(&self, owner: Address) -> Result<U256, EvmError> {
        let token = IEip3009::new(self.token, &self.provider);
        within("balanceOf", token.balanceOf(owner).call()).await
    }

    /// The outcome of a sent transaction: `Some(true)` mined and succeeded, `Some(false)`
    /// mined and reverted, `None` not mined (yet).
    pub async fn receipt(&self, hash: B256) -> Result<Option<bool>, EvmError> {
        let receipt = within("eth_getTransactionReceipt", self.provider.get_transaction_receipt(hash)).await?;
        Ok(receipt.map(|r| r.status()))
    }

    /// The latest block's timestamp: the chain's own clock, which decides whether an
    /// authorization has expired (ours may run ahead of it).
    pub async fn block_time(&self) -> Result<u64, EvmError> {
        let latest = self.provider.get_block_by_number(alloy::eips::BlockNumberOrTag::Latest);
        let block = within("eth_getBlockByNumber", latest).await?;
        block.map(|b| b.header.timestamp).ok_or_else(|| EvmError::Rpc("eth_getBlockByNumber: no latest block".into()))
    }
}

impl EvmSettler {
    /// Connects to `rpc_url` and checks the node serves `chain_id`, so a misconfigured URL
    /// fails at start-up rather than on the first paid call. `relayer_key` is 0x-hex.
    pub async fn connect(
        rpc_url: &str,
        relayer_key: &str,
        token: Address,
        chain_id: u64,
        receipt_timeout: Duration,
    ) -> Result<Self, EvmError> {
        let signer: PrivateKeySigner = relayer_key
            .trim()
            .parse()
            .map_err(|_| EvmError::Config("the relayer key is not a 32-byte hex key".into()))?;
        let relayer = signer.address();
        let provider =
            ProviderBuilder::new().wallet(EthereumWallet::from(signer)).connect_http(parse_url(rpc_url)?).erased();
        check_chain(&provider, chain_id).await?;
        Ok(EvmSettler { reader: EvmReader { provider, token }, relayer, receipt_timeout })
    }

    /// Its reads of the chain.
    pub fn reader(&self) -> &EvmReader {
        &self.reader
    }

    /// The relayer's address (it needs native gas).
    pub fn relayer(&self) -> Address {
        self.relayer
    }

    /// EIP-1271: asks the payer's contract whether it accepts the signature.
    pub async fn is_valid_signature(&self, verified: &VerifiedAuthorization) -> Result<bool, EvmError> {
        let wallet = IErc1271::new(verified.authorization.from, &self.reader.provider);
        let call = wallet.isValidSignature(verified.digest, verified.signature.clone());
        let answer = tokio::time::timeout(CALL_TIMEOUT, call.call())
            .await
            .map_err(|_| EvmError::Rpc(format!("isValidSignature: no answer in {CALL_TIMEOUT:?}")))?;
        match answer {
            Ok(magic) => Ok(magic.0 == ERC1271_MAGIC),
            // A plain account (no code) or a contract without the method reverts: not valid.
            Err(alloy::contract::Error::TransportError(e)) if !e.is_error_resp() => Err(EvmError::Rpc(e.to_string())),
            Err(_) => Ok(false),
        }
    }

    /// The token balance of `owner`, atomic units.
    pub async fn balance(&self, owner: Address) -> Result<U256, EvmError> {
        self.reader.balance(owner).await
    }

    /// Sends the transfer and waits for its receipt. A revert is
    /// [`EvmError::TransactionFailed`]; no receipt in time, or a failure to read it, is
    /// [`EvmError::Pending`], and a send that may have left is [`EvmError::SendUnknown`]: the
    /// transfer may still land, so the caller must not treat it as unpaid.
    pub async fn transfer(&self, verified: &VerifiedAuthorization) -> Result<B256, EvmError> {
        let calldata: Bytes = verified.transfer_calldata();
        let tx = TransactionRequest::default().to(self.reader.token).input(calldata.into());
        let pending = match tokio::time::timeout(CALL_TIMEOUT, self.reader.provider.send_transaction(tx)).await {
            Ok(sent) => sent.map_err(|e| classify_send_error(&e.to_string()))?,
            // The request left and no answer came back: it may have been broadcast.
            Err(_) => {
                return Err(EvmError::SendUnknown(format!("eth_sendRawTransaction: no answer in {CALL_TIMEOUT:?}")));
            }
        };
        let hash = *pending.tx_hash();
        match tokio::time::timeout(self.receipt_timeout, pending.get_receipt()).await {
            Err(_) => Err(EvmError::Pending(hash)),
            // Sent: only the chain can say what became of it.
            Ok(Err(_)) => Err(EvmError::Pending(hash)),
            Ok(Ok(receipt)) if receipt.status() => Ok(hash),
            Ok(Ok(_)) => Err(EvmError::TransactionFailed(hash)),
        }
    }
}

/// Gas estimation runs the call first, so a transfer the token refuses fails here with the
/// token's revert reason; map the common ones to their x402 codes. What cannot be placed
/// before the broadcast is [`EvmError::SendUnknown`], never a failure: a transfer that did
/// leave would otherwise be taken while the payer is told to sign a new payment.
fn classify_send_error(message: &str) -> EvmError {
    let lower = message.to_ascii_lowercase();
    if lower.contains("insufficient funds for gas") {
        // The relayer, not the payer, is out of funds: an operator problem.
        EvmError::Rpc("the relayer cannot pay for gas".into())
    } else if lower.contains("authorization is used") || lower.contains("authorization used") {
        EvmError::NonceUsed
    } else if lower.contains("exceeds balance")
        || lower.contains("erc20insufficientbalance")
        || lower.contains("0xe450d38c")
    {
        EvmError::InsufficientBalance
    } else if lower.contains("execution reverted") || lower.contains("nonce too low") {
        // Refused by estimation or by the node's pool check: nothing was broadcast.
        EvmError::Rpc(format!("send transferWithAuthorization: {message}"))
    } else {
        EvmError::SendUnknown(format!("send transferWithAuthorization: {message}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_refusals_known_to_precede_the_broadcast_count_as_failures() {
        let reason = |m: &str| classify_send_error(m).reason();
        assert_eq!(
            reason("server returned an error response: insufficient funds for gas * price + value"),
            "unexpected_settle_error"
        );
        assert_eq!(
            reason("execution reverted: FiatTokenV2: authorization is used or canceled"),
            "invalid_exact_evm_nonce_already_used"
        );
        assert_eq!(
            reason("execution reverted: ERC20: transfer amount exceeds balance"),
            "invalid_exact_evm_insufficient_balance"
        );
        assert_eq!(reason("execution reverted: FiatTokenV2: invalid signature"), "unexpected_settle_error");
        assert_eq!(reason("error sending request: connection closed before message completed"), "settlement_pending");
        assert_eq!(reason("operation timed out"), "settlement_pending");
    }
}
