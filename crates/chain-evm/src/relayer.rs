//! One relayer key's settlement lane: the only place its nonces are given out.
//!
//! A key's transactions must reach the node in nonce order, or the node refuses the gap
//! ("nonce too high") and every later transaction waits behind it. So each key has one task
//! that owns its next nonce: it takes every transfer waiting, gives them consecutive nonces,
//! signs them and sends them in order. Any refusal makes it ask the
//! chain for the nonce again before the next batch, so a transaction sent from the key behind
//! svc's back, or one the node dropped, costs a retry and never wedges the lane. Receipts are
//! awaited by the callers, concurrently, outside the lane.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use alloy::consensus::{SignableTransaction as _, TxEip1559, TxEnvelope};
use alloy::eips::eip2718::Encodable2718 as _;
use alloy::providers::{DynProvider, Provider as _};
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::{RpcError, TransportErrorKind};
use alloy_primitives::{Address, B256, Bytes, Signature, TxKind};
use tokio::sync::{mpsc, oneshot};

use crate::EvmError;
use crate::rpc::{CALL_TIMEOUT, within};

/// Most transfers signed in one round.
const MAX_BATCH: usize = 64;
/// How many times a transfer refused for its nonce is given a fresh one.
const NONCE_ATTEMPTS: u8 = 3;
/// How long fee estimates are reused: fees move per block, and asking per batch would double
/// the lane's round trips.
const FEES_TTL: Duration = Duration::from_secs(2);

/// What became of one transfer handed to the lane.
#[derive(Debug)]
pub(crate) enum Broadcast {
    /// The node took it; its hash.
    Accepted(B256),
    /// The node refused it, or it never left: nothing was broadcast.
    NotSent(String),
    /// The relayer cannot pay for gas; nothing was broadcast. Another key may.
    NoGas,
    /// It may have been broadcast (the request left and no answer came, or the node answered
    /// in a way that does not rule it out); its hash, for the reconciler.
    Unknown(B256, String),
    /// The lane stopped with the transfer in hand: it may have been broadcast, hash unknown.
    Lost,
}

/// Whether a relayer can pay for gas, as last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum GasLevel {
    /// Enough for many transfers.
    Ok = 0,
    /// Enough for a transfer, but running low.
    Low = 1,
    /// Not enough for one transfer.
    Empty = 2,
}

/// One transfer waiting for the lane.
struct Job {
    to: Address,
    input: Bytes,
    gas_limit: u64,
    attempts: u8,
    reply: oneshot::Sender<Broadcast>,
}

/// A relayer key and its lane.
#[derive(Debug)]
pub(crate) struct Relayer {
    address: Address,
    jobs: mpsc::UnboundedSender<Job>,
    /// Transfers handed to the lane and not yet answered: the pool picks the least busy key.
    queued: Arc<AtomicUsize>,
    gas: AtomicU8,
}

impl Relayer {
    /// Starts the lane of `signer` on `provider`, for chain `chain_id`.
    pub(crate) fn start(signer: &PrivateKeySigner, provider: DynProvider, chain_id: u64) -> Result<Self, EvmError> {
        let (jobs, receiver) = mpsc::unbounded_channel();
        let address = signer.address();
        let queued = Arc::new(AtomicUsize::new(0));
        let key = TxKey::of(signer)?;
        let lane = Lane { key, address, provider, chain_id, next_nonce: None, fees: None, queued: queued.clone() };
        tokio::spawn(lane.run(receiver));
        Ok(Relayer { address, jobs, queued, gas: AtomicU8::new(GasLevel::Ok as u8) })
    }

    /// The key's address.
    pub(crate) fn address(&self) -> Address {
        self.address
    }

    /// Transfers waiting in or sent by the lane and not answered yet.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Its gas, as last seen.
    pub(crate) fn gas(&self) -> GasLevel {
        match self.gas.load(Ordering::Relaxed) {
            0 => GasLevel::Ok,
            1 => GasLevel::Low,
            _ => GasLevel::Empty,
        }
    }

    pub(crate) fn set_gas(&self, level: GasLevel) {
        self.gas.store(level as u8, Ordering::Relaxed);
    }

    /// Sends a call of `input` to `to` with `gas_limit`, in this key's nonce order.
    pub(crate) async fn send(&self, to: Address, input: Bytes, gas_limit: u64) -> Broadcast {
        let (reply, answer) = oneshot::channel();
        self.queued.fetch_add(1, Ordering::Relaxed);
        let job = Job { to, input, gas_limit, attempts: 0, reply };
        if self.jobs.send(job).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return Broadcast::NotSent("the relayer's lane has stopped".into());
        }
        // The lane answers every job it takes; a dropped sender means it stopped mid-batch,
        // after which the transfer may or may not have left.
        answer.await.unwrap_or(Broadcast::Lost)
    }
}

/// A relayer's key as the lane signs with it: libsecp256k1, which signs several times faster
/// than the pure-Rust signer of alloy's local key (every settled payment is one signature).
/// Both sign deterministically (RFC 6979, low s), so the signatures are the same.
struct TxKey(secp256k1::SecretKey);

impl TxKey {
    fn of(signer: &PrivateKeySigner) -> Result<Self, EvmError> {
        let bytes: [u8; 32] = signer.credential().to_bytes().into();
        // A key alloy parsed is a valid scalar, which is all libsecp256k1 asks of it.
        let key = secp256k1::SecretKey::from_byte_array(bytes)
            .map_err(|_| EvmError::Config(format!("relayer {} has a key libsecp256k1 refuses", signer.address())))?;
        Ok(TxKey(key))
    }

    /// The signature of a transaction's signing hash.
    fn sign(&self, hash: B256) -> Signature {
        let message = secp256k1::Message::from_digest(hash.0);
        let (recovery, bytes) = secp256k1::SECP256K1.sign_ecdsa_recoverable(message, &self.0).serialize_compact();
        Signature::from_bytes_and_parity(&bytes, i32::from(recovery) == 1)
    }
}

/// The task that owns a key's nonces.
struct Lane {
    key: TxKey,
    address: Address,
    provider: DynProvider,
    chain_id: u64,
    /// The next nonce to use; `None` until asked of the chain, and again after any refusal.
    next_nonce: Option<u64>,
    fees: Option<(Fees, Instant)>,
    queued: Arc<AtomicUsize>,
}

#[derive(Debug, Clone, Copy)]
struct Fees {
    max_fee_per_gas: u128,
    max_priority_fee_per_gas: u128,
}

/// The node's answer to one `eth_sendRawTransaction`.
enum Answer {
    Accepted,
    /// An error object: the node heard the request and said no.
    Refused(String),
    /// No answer.
    Lost(String),
}

impl Lane {
    async fn run(mut self, mut receiver: mpsc::UnboundedReceiver<Job>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        let mut retry: Vec<Job> = Vec::new();
        loop {
            batch.append(&mut retry);
            if batch.is_empty() {
                if receiver.recv_many(&mut batch, MAX_BATCH).await == 0 {
                    return;
                }
            } else {
                while batch.len() < MAX_BATCH {
                    match receiver.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) => break,
                    }
                }
            }
            retry = self.send_batch(std::mem::take(&mut batch)).await;
        }
    }

    fn answer(&self, job: Job, sent: Broadcast) {
        self.queued.fetch_sub(1, Ordering::Relaxed);
        let _ = job.reply.send(sent);
    }

    /// Sends `jobs` with consecutive nonces; returns those refused for their nonce, to go again.
    async fn send_batch(&mut self, jobs: Vec<Job>) -> Vec<Job> {
        let prepared = match self.prepare().await {
            Ok(prepared) => prepared,
            Err(message) => {
                for job in jobs {
                    self.answer(job, Broadcast::NotSent(message.clone()));
                }
                return Vec::new();
            }
        };
        let (nonce, fees) = prepared;
        let mut signed = Vec::with_capacity(jobs.len());
        for (offset, job) in (0u64..).zip(&jobs) {
            let tx = TxEip1559 {
                chain_id: self.chain_id,
                nonce: nonce + offset,
                gas_limit: job.gas_limit,
                max_fee_per_gas: fees.max_fee_per_gas,
                max_priority_fee_per_gas: fees.max_priority_fee_per_gas,
                to: TxKind::Call(job.to),
                input: job.input.clone(),
                ..TxEip1559::default()
            };
            let signature = self.key.sign(tx.signature_hash());
            let envelope = TxEnvelope::from(tx.into_signed(signature));
            signed.push((*envelope.tx_hash(), Bytes::from(envelope.encoded_2718())));
        }
        let answers = self.broadcast(&signed).await;
        let all_accepted = answers.iter().all(|a| matches!(a, Some(Answer::Accepted)));
        self.next_nonce = if all_accepted { Some(nonce + signed.len() as u64) } else { None };
        let mut retry = Vec::new();
        for ((job, (hash, _)), answer) in jobs.into_iter().zip(signed).zip(answers) {
            match answer {
                // Not sent: one before it was not taken.
                None => retry.push(job),
                Some(Answer::Accepted) => self.answer(job, Broadcast::Accepted(hash)),
                Some(Answer::Lost(message)) => self.answer(job, Broadcast::Unknown(hash, message)),
                Some(Answer::Refused(message)) => match refusal(&message) {
                    Refusal::Known => self.answer(job, Broadcast::Accepted(hash)),
                    Refusal::Nonce if job.attempts + 1 < NONCE_ATTEMPTS => {
                        retry.push(Job { attempts: job.attempts + 1, ..job });
                    }
                    Refusal::Nonce => self.answer(job, Broadcast::NotSent(format!("refused for its nonce: {message}"))),
                    Refusal::NoGas => self.answer(job, Broadcast::NoGas),
                    Refusal::MayHaveRun => self.answer(job, Broadcast::Unknown(hash, message)),
                    Refusal::Other => self.answer(job, Broadcast::NotSent(message)),
                },
            }
        }
        if !retry.is_empty() {
            tracing::warn!(relayer = %self.address, count = retry.len(), "nonce refused; resynchronised from the chain");
        }
        retry
    }

    /// The first nonce of the next batch and the fees to offer.
    async fn prepare(&mut self) -> Result<(u64, Fees), String> {
        let nonce = match self.next_nonce {
            Some(nonce) => nonce,
            None => {
                let count = self.provider.get_transaction_count(self.address).pending();
                let nonce = within("eth_getTransactionCount", count).await.map_err(|e| e.to_string())?;
                self.next_nonce = Some(nonce);
                nonce
            }
        };
        let fees = match self.fees {
            Some((fees, at)) if at.elapsed() < FEES_TTL => fees,
            _ => {
                let estimate =
                    within("eth_feeHistory", self.provider.estimate_eip1559_fees()).await.map_err(|e| e.to_string())?;
                let fees = Fees {
                    max_fee_per_gas: estimate.max_fee_per_gas,
                    max_priority_fee_per_gas: estimate.max_priority_fee_per_gas,
                };
                self.fees = Some((fees, Instant::now()));
                fees
            }
        };
        Ok((nonce, fees))
    }

    /// Sends the signed transactions one after another, each once the node has taken the one
    /// before: a JSON-RPC batch would be quicker, but development nodes run a batch's calls
    /// concurrently, out of nonce order, and refuse the gaps. Stops at the first that is not
    /// taken: the rest are not sent (`None`), to go again with fresh nonces.
    async fn broadcast(&self, signed: &[(B256, Bytes)]) -> Vec<Option<Answer>> {
        let mut answers = Vec::with_capacity(signed.len());
        for (_, raw) in signed {
            if answers.last().is_some_and(|a: &Option<Answer>| !matches!(a, Some(Answer::Accepted))) {
                answers.push(None);
                continue;
            }
            let call = self.provider.client().request::<_, B256>("eth_sendRawTransaction", (raw.clone(),));
            answers.push(Some(answer_of(tokio::time::timeout(CALL_TIMEOUT, call).await)));
        }
        answers
    }
}

fn answer_of(result: Result<Result<B256, RpcError<TransportErrorKind>>, tokio::time::error::Elapsed>) -> Answer {
    match result {
        Ok(Ok(_)) => Answer::Accepted,
        Ok(Err(e)) => match e.as_error_resp() {
            Some(payload) => Answer::Refused(payload.message.to_string()),
            None => Answer::Lost(format!("eth_sendRawTransaction: {e}")),
        },
        Err(_) => Answer::Lost(format!("eth_sendRawTransaction: no answer in {CALL_TIMEOUT:?}")),
    }
}

/// What a node's refusal of `eth_sendRawTransaction` means.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// The node has this very transaction already: it was sent.
    Known,
    /// The nonce was wrong (used behind our back, or a gap): resync and send again.
    Nonce,
    /// The key cannot pay for gas.
    NoGas,
    /// Refused after running: some development nodes mine a reverting transaction and answer
    /// with its revert, so the nonce was used and only the receipt can say more.
    MayHaveRun,
    /// Refused before it ran: nothing happened.
    Other,
}

fn refusal(message: &str) -> Refusal {
    let lower = message.to_ascii_lowercase();
    if lower.contains("already known") || lower.contains("known transaction") {
        Refusal::Known
    } else if lower.contains("nonce too low")
        || lower.contains("nonce too high")
        || lower.contains("replacement transaction underpriced")
        || lower.contains("invalid nonce")
    {
        Refusal::Nonce
    } else if lower.contains("insufficient funds") {
        Refusal::NoGas
    } else if lower.contains("revert") || lower.contains("vm exception") {
        Refusal::MayHaveRun
    } else {
        Refusal::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_signs_transactions_exactly_as_alloys_local_key_does() {
        use alloy::network::TxSignerSync as _;
        for seed in 1u8..=8 {
            let signer: PrivateKeySigner = format!("0x{}", format!("{seed:02x}").repeat(32)).parse().expect("key");
            let mut tx = TxEip1559 {
                chain_id: 31337,
                nonce: u64::from(seed) * 7,
                gas_limit: 90_000,
                max_fee_per_gas: 2_000_000_000,
                max_priority_fee_per_gas: 1_000_000_000,
                to: TxKind::Call(Address::repeat_byte(seed)),
                input: Bytes::from(vec![seed; 36]),
                ..TxEip1559::default()
            };
            let ours = TxKey::of(&signer).expect("key").sign(tx.signature_hash());
            let alloys = signer.sign_transaction_sync(&mut tx).expect("signed");
            assert_eq!(ours, alloys);
            assert_eq!(ours.recover_address_from_prehash(&tx.signature_hash()).expect("recovers"), signer.address());
        }
    }

    #[test]
    fn node_refusals_are_read_by_what_they_say_of_the_nonce_and_the_gas() {
        assert_eq!(refusal("Nonce too low. Expected nonce to be 42 but got 41."), Refusal::Nonce);
        assert_eq!(refusal("Nonce too high. Expected nonce to be 41 but got 42"), Refusal::Nonce);
        assert_eq!(refusal("nonce too low: next nonce 7, tx nonce 6"), Refusal::Nonce);
        assert_eq!(refusal("replacement transaction underpriced"), Refusal::Nonce);
        assert_eq!(refusal("already known"), Refusal::Known);
        assert_eq!(refusal("insufficient funds for gas * price + value"), Refusal::NoGas);
        assert_eq!(
            refusal("VM Exception while processing transaction: reverted with reason string 'x'"),
            Refusal::MayHaveRun
        );
        assert_eq!(refusal("transaction type not supported"), Refusal::Other);
    }
}
