//! Talking to an EVM node: EIP-1271 checks for contract wallets, the token's record of used
//! nonces, and sending `transferWithAuthorization` from a pool of relayer keys that pay the
//! gas, each through its own nonce lane (the `relayer` module).
//! Behind the `settle` feature because the node client is most of this crate's build time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::signers::local::PrivateKeySigner;
use alloy::sol;
use alloy_primitives::{Address, B256, Bytes, U256};

use crate::reads::{ReadError, Reads};
pub use crate::relayer::GasLevel;
use crate::relayer::{Broadcast, Relayer};
use crate::rpc::{CALL_TIMEOUT, rpc_client, within};
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
    /// Simulations and receipts, batched under load.
    reads: Reads,
}

/// A node connection with the relayer keys that submit transfers for one token. Each key has
/// its own nonce lane; a transfer goes to the least busy key that can pay for gas.
#[derive(Clone)]
pub struct EvmSettler {
    reader: EvmReader,
    relayers: Arc<[Relayer]>,
    /// Turns of the pick: among equally busy keys the next one is taken, so an idle server
    /// spreads transfers (and gas use) over every key.
    turn: Arc<std::sync::atomic::AtomicUsize>,
    receipt_timeout: Duration,
    /// The gas each verified transfer's simulation used, by its EIP-712 digest: settling it
    /// moments later needs no second simulation.
    estimates: Arc<Mutex<HashMap<B256, (u64, Instant)>>>,
}

/// Gas a `transferWithAuthorization` is assumed to need when judging a relayer's balance;
/// the real limit of each transfer is estimated.
const TRANSFER_GAS: u128 = 100_000;
/// A relayer that cannot pay for this many transfers is low on gas (a warning).
const LOW_GAS_TRANSFERS: u128 = 1_000;
/// How often relayer balances are read.
const GAS_WATCH_INTERVAL: Duration = Duration::from_secs(30);
/// First wait between receipt polls; it doubles up to [`RECEIPT_POLL_MAX`].
const RECEIPT_POLL_START: Duration = Duration::from_millis(20);
const RECEIPT_POLL_MAX: Duration = Duration::from_secs(1);

/// How long a verified transfer's gas estimate is kept for its settlement.
const ESTIMATE_TTL: Duration = Duration::from_secs(600);
/// Estimates kept before the old ones are dropped.
const ESTIMATES_KEPT: usize = 10_000;

impl std::fmt::Debug for EvmSettler {
    /// Never prints the key; the relayer's address is public.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let relayers: Vec<Address> = self.relayers.iter().map(Relayer::address).collect();
        f.debug_struct("EvmSettler")
            .field("token", &self.reader.token)
            .field("relayers", &relayers)
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

impl EvmReader {
    /// Connects to `rpc_url` and checks the node serves `chain_id`.
    pub async fn connect(rpc_url: &str, token: Address, chain_id: u64) -> Result<Self, EvmError> {
        let provider = ProviderBuilder::new().connect_client(rpc_client(rpc_url)?).erased();
        check_chain(&provider, chain_id).await?;
        Ok(EvmReader::new(provider, token))
    }

    fn new(provider: DynProvider, token: Address) -> Self {
        EvmReader { reads: Reads::start(provider.clone()), provider, token }
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
        let receipt: Option<alloy::rpc::types::TransactionReceipt> =
            self.reads.call("eth_getTransactionReceipt", &(hash,)).await?;
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
    /// fails at start-up rather than on the first paid call. `relayer_keys` are 0x-hex, one
    /// nonce lane each; their gas is read now and every 30 s.
    pub async fn connect(
        rpc_url: &str,
        relayer_keys: &[String],
        token: Address,
        chain_id: u64,
        receipt_timeout: Duration,
    ) -> Result<Self, EvmError> {
        let signers = relayer_keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                key.trim().parse::<PrivateKeySigner>().map_err(|_| {
                    EvmError::Config(format!(
                        "relayer key {} of {} is not a 32-byte hex key",
                        i + 1,
                        relayer_keys.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if signers.is_empty() {
            return Err(EvmError::Config("no relayer key".into()));
        }
        let mut addresses: Vec<Address> = signers.iter().map(PrivateKeySigner::address).collect();
        addresses.sort_unstable();
        if addresses.windows(2).any(|w| w[0] == w[1]) {
            return Err(EvmError::Config("a relayer key is listed twice; each key needs its own nonce lane".into()));
        }
        let provider =
            ProviderBuilder::new().disable_recommended_fillers().connect_client(rpc_client(rpc_url)?).erased();
        check_chain(&provider, chain_id).await?;
        let relayers: Arc<[Relayer]> = signers
            .iter()
            .map(|signer| Relayer::start(signer, provider.clone(), chain_id))
            .collect::<Result<Vec<_>, _>>()?
            .into();
        let settler = EvmSettler {
            reader: EvmReader::new(provider, token),
            relayers,
            turn: Arc::default(),
            receipt_timeout,
            estimates: Arc::default(),
        };
        read_gas_levels(&settler.relayers, &settler.reader).await;
        tokio::spawn(gas_watch(Arc::downgrade(&settler.relayers), settler.reader.clone()));
        Ok(settler)
    }

    /// Each relayer's gas, as last read.
    pub fn gas_levels(&self) -> Vec<(Address, GasLevel)> {
        self.relayers.iter().map(|r| (r.address(), r.gas())).collect()
    }

    /// Whether some relayer can pay for a transfer.
    pub fn can_pay_gas(&self) -> bool {
        self.relayers.iter().any(|r| r.gas() != GasLevel::Empty)
    }

    /// Whether every relayer's transactions have all been mined: the node's pending nonce of
    /// each key is its latest. Then an authorization the token has not used was not sent by
    /// any process on these keys, and (with the process that reserved it stopped) never
    /// will be.
    pub async fn nothing_in_flight(&self) -> Result<bool, EvmError> {
        for relayer in self.relayers.iter() {
            let provider = &self.reader.provider;
            let latest = within("eth_getTransactionCount", provider.get_transaction_count(relayer.address()).latest());
            let pending =
                within("eth_getTransactionCount", provider.get_transaction_count(relayer.address()).pending());
            let (latest, pending) = (latest.await?, pending.await?);
            if pending != latest {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Its reads of the chain.
    pub fn reader(&self) -> &EvmReader {
        &self.reader
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
    /// transfer may still land, so the caller must not treat it as unpaid. Every other error
    /// means nothing was broadcast.
    pub async fn transfer(&self, verified: &VerifiedAuthorization) -> Result<B256, EvmError> {
        let calldata: Bytes = verified.transfer_calldata();
        let mut tried = Vec::with_capacity(self.relayers.len());
        loop {
            let Some(relayer) = self.pick(&tried) else {
                return Err(EvmError::Rpc("no relayer can pay for gas".into()));
            };
            tried.push(relayer.address());
            // The simulation of its verification moments ago, or one now: either runs the
            // transfer first, so one the token would refuse (authorization used, balance
            // short) fails here, before a nonce is spent on it.
            let gas = match self.take_estimate(verified.digest) {
                Some(gas) => gas,
                None => self.simulate(relayer.address(), &calldata).await.map_err(|e| send_refusal(&e))?,
            };
            let gas_limit = gas.saturating_add(gas / 5);
            match relayer.send(self.reader.token, calldata.clone(), gas_limit).await {
                Broadcast::Accepted(hash) => return self.await_receipt(hash).await,
                Broadcast::NoGas => {
                    relayer.set_gas(GasLevel::Empty);
                    tracing::warn!(relayer = %relayer.address(), "relayer cannot pay for gas; trying another");
                }
                Broadcast::NotSent(message) => {
                    return Err(EvmError::Rpc(format!("send transferWithAuthorization: {message}")));
                }
                Broadcast::Unknown(hash, message) => {
                    tracing::warn!(%hash, %message, "transfer may have been sent; left to reconciliation");
                    return Err(EvmError::Pending(hash));
                }
                Broadcast::Lost => return Err(EvmError::SendUnknown("the relayer's lane stopped mid-send".into())),
            }
        }
    }

    /// Whether the token would take this transfer now: x402's simulation of
    /// `transferWithAuthorization`, as the reference facilitator verifies, in one read (it
    /// covers the nonce, the balance and the signature at once). Its gas is kept for the
    /// settlement. A refusal is named by the token's reason, or, when the token gives none
    /// known, by reading its record of the nonce and the payer's balance.
    pub async fn check_transfer(&self, verified: &VerifiedAuthorization) -> Result<(), EvmError> {
        let sender = self.relayers.first().map(Relayer::address).unwrap_or_default();
        match self.simulate(sender, &verified.transfer_calldata()).await {
            Ok(gas) => {
                self.keep_estimate(verified.digest, gas);
                Ok(())
            }
            Err(ReadError::Unanswered(message)) => Err(EvmError::Rpc(message)),
            Err(ReadError::Refused(message)) => match simulation_refusal(&message) {
                Some(known) => Err(known),
                None => {
                    let a = &verified.authorization;
                    let (used, balance) =
                        tokio::join!(self.reader.authorization_used(a.from, a.nonce), self.reader.balance(a.from));
                    if used? {
                        Err(EvmError::NonceUsed)
                    } else if balance? < a.value {
                        Err(EvmError::InsufficientBalance)
                    } else {
                        Err(EvmError::SimulationFailed(message))
                    }
                }
            },
        }
    }

    /// `eth_estimateGas` of `calldata` to the token from `sender`.
    async fn simulate(&self, sender: Address, calldata: &Bytes) -> Result<u64, ReadError> {
        let request = TransactionRequest::default().from(sender).to(self.reader.token).input(calldata.clone().into());
        let gas: alloy_primitives::U64 = self.reader.reads.call("eth_estimateGas", &(request,)).await?;
        Ok(gas.to::<u64>())
    }

    fn keep_estimate(&self, digest: B256, gas: u64) {
        let Ok(mut estimates) = self.estimates.lock() else { return };
        if estimates.len() >= ESTIMATES_KEPT {
            estimates.retain(|_, (_, at)| at.elapsed() < ESTIMATE_TTL);
            if estimates.len() >= ESTIMATES_KEPT {
                estimates.clear();
            }
        }
        estimates.insert(digest, (gas, Instant::now()));
    }

    fn take_estimate(&self, digest: B256) -> Option<u64> {
        let (gas, at) = self.estimates.lock().ok()?.remove(&digest)?;
        (at.elapsed() < ESTIMATE_TTL).then_some(gas)
    }

    /// The least busy relayer not yet tried that can pay for gas; the next in turn among
    /// equals.
    fn pick(&self, tried: &[Address]) -> Option<&Relayer> {
        let count = self.relayers.len();
        let first = self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % count;
        (0..count)
            .map(|i| &self.relayers[(first + i) % count])
            .filter(|r| r.gas() != GasLevel::Empty && !tried.contains(&r.address()))
            .min_by_key(|r| r.queued())
    }

    /// Polls for the receipt of `hash`: at once (a development node mines on send), then at
    /// widening intervals until the receipt timeout.
    async fn await_receipt(&self, hash: B256) -> Result<B256, EvmError> {
        let deadline = tokio::time::Instant::now() + self.receipt_timeout;
        let mut wait = RECEIPT_POLL_START;
        loop {
            match self.reader.receipt(hash).await {
                Ok(Some(true)) => return Ok(hash),
                Ok(Some(false)) => return Err(EvmError::TransactionFailed(hash)),
                // Not mined yet, or the node did not answer: sent either way, so keep asking.
                Ok(None) | Err(_) => {}
            }
            if tokio::time::Instant::now() + wait > deadline {
                return Err(EvmError::Pending(hash));
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(RECEIPT_POLL_MAX);
        }
    }
}

/// Reads every relayer's balance against the current gas price and records its level.
async fn read_gas_levels(relayers: &[Relayer], reader: &EvmReader) {
    let Ok(gas_price) = within("eth_gasPrice", reader.provider.get_gas_price()).await else { return };
    let per_transfer = U256::from(TRANSFER_GAS.saturating_mul(gas_price.max(1)));
    for relayer in relayers {
        let Ok(balance) = within("eth_getBalance", reader.provider.get_balance(relayer.address())).await else {
            continue;
        };
        let level = if balance < per_transfer {
            GasLevel::Empty
        } else if balance < per_transfer.saturating_mul(U256::from(LOW_GAS_TRANSFERS)) {
            GasLevel::Low
        } else {
            GasLevel::Ok
        };
        if level != relayer.gas() || level != GasLevel::Ok {
            match level {
                GasLevel::Ok => tracing::info!(relayer = %relayer.address(), %balance, "relayer has gas again"),
                GasLevel::Low => tracing::warn!(
                    relayer = %relayer.address(), %balance,
                    "relayer is low on gas: fewer than {LOW_GAS_TRANSFERS} transfers left at the current price"
                ),
                GasLevel::Empty => tracing::error!(
                    relayer = %relayer.address(), %balance,
                    "relayer cannot pay for a transfer; payments go to the other relayers"
                ),
            }
        }
        relayer.set_gas(level);
    }
}

/// Reads relayer balances every [`GAS_WATCH_INTERVAL`] while the settler lives.
async fn gas_watch(relayers: Weak<[Relayer]>, reader: EvmReader) {
    loop {
        tokio::time::sleep(GAS_WATCH_INTERVAL).await;
        let Some(relayers) = relayers.upgrade() else { return };
        read_gas_levels(&relayers, &reader).await;
    }
}

/// A failed estimate before sending, as the token's refusal mapped to its x402 code. Nothing is
/// sent here, so every failure means nothing moved.
fn send_refusal(e: &ReadError) -> EvmError {
    match classify_send_error(e.message()) {
        EvmError::SendUnknown(message) => EvmError::Rpc(format!("eth_estimateGas: {message}")),
        known => known,
    }
}

/// What a refused simulation says, where the token names its reason; `None` when it does not.
fn simulation_refusal(message: &str) -> Option<EvmError> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("authorization is used") || lower.contains("authorization used") {
        Some(EvmError::NonceUsed)
    } else if lower.contains("exceeds balance")
        || lower.contains("erc20insufficientbalance")
        || lower.contains("0xe450d38c")
    {
        Some(EvmError::InsufficientBalance)
    } else if lower.contains("invalid signature") {
        Some(EvmError::Signature)
    } else if lower.contains("authorization is expired") {
        Some(EvmError::ValidBefore)
    } else if lower.contains("authorization is not yet valid") {
        Some(EvmError::ValidAfter)
    } else {
        None
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
    fn a_refused_simulation_is_named_by_the_tokens_reason_when_it_gives_one() {
        let reason = |m: &str| simulation_refusal(m).map(|e| e.reason());
        let hardhat = "eth_estimateGas: Error: VM Exception while processing transaction: reverted with reason string";
        assert_eq!(
            reason(&format!("{hardhat} 'FiatTokenV2: authorization is used or canceled'")),
            Some("invalid_exact_evm_nonce_already_used")
        );
        assert_eq!(
            reason("execution reverted: ERC20: transfer amount exceeds balance"),
            Some("invalid_exact_evm_insufficient_balance")
        );
        assert_eq!(
            reason("execution reverted: custom error 0xe450d38c000000"),
            Some("invalid_exact_evm_insufficient_balance")
        );
        assert_eq!(reason(&format!("{hardhat} 'FiatTokenV2: invalid signature'")), Some("invalid_exact_evm_signature"));
        assert_eq!(
            reason("execution reverted: FiatTokenV2: authorization is expired"),
            Some("invalid_exact_evm_payload_authorization_valid_before")
        );
        assert_eq!(
            reason("execution reverted: FiatTokenV2: authorization is not yet valid"),
            Some("invalid_exact_evm_payload_authorization_valid_after")
        );
        assert_eq!(reason("execution reverted: Pausable: paused"), None, "diagnosed by reading the token");
        assert_eq!(EvmError::SimulationFailed("x".into()).reason(), "invalid_exact_evm_transaction_simulation_failed");
    }

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

    #[tokio::test]
    async fn bad_missing_and_repeated_relayer_keys_are_refused_before_any_node_is_asked_and_never_shown() {
        // Nothing listens on port 9: a key refused here was refused before the node was asked.
        let connect = |keys: Vec<String>| async move {
            EvmSettler::connect("http://127.0.0.1:9", &keys, Address::ZERO, 1, Duration::from_secs(1)).await
        };
        let good = format!("0x{}", "11".repeat(32));
        let secret = format!("0x{}", "ab".repeat(31));
        for (keys, expected) in [
            (vec![good.clone(), secret.clone()], "relayer key 2 of 2"),
            (Vec::new(), "no relayer key"),
            (vec![good.clone(), format!(" {good} ")], "listed twice"),
        ] {
            let Err(EvmError::Config(message)) = connect(keys).await else { panic!("{expected}: accepted") };
            assert!(message.contains(expected), "{message}");
            assert!(!message.contains(&secret[2..]) && !message.contains(&good[2..]), "a key in {message}");
        }
    }
}
