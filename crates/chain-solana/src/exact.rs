//! Verification of a Solana `exact` payment transaction.

use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use solana_address::Address;
use solana_transaction::versioned::VersionedTransaction;

use crate::programs;

/// The protocol's cap on the compute-unit price: 5 lamports per unit.
pub const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS: u64 = 5_000_000;

/// Our cap on the compute-unit limit. The fee payer pays `limit × price`; the official client
/// asks for 20,000 units, and a transfer never needs more than this.
pub const MAX_COMPUTE_UNITS: u32 = 200_000;

/// Largest transaction Solana accepts on the wire.
const MAX_TRANSACTION_BYTES: usize = 1232;

const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;
const TRANSFER_CHECKED: u8 = 12;

/// Why a transaction was refused. [`SolanaError::reason`] is the reference facilitator's code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolanaError {
    /// The requirement names no fee payer.
    #[error("the requirement names no fee payer")]
    MissingFeePayer,
    /// The requirement's fee payer is not one of ours.
    #[error("the fee payer is not managed by this facilitator")]
    FeePayerNotManaged,
    /// Not base64, not a versioned transaction, or trailing bytes.
    #[error("the transaction could not be decoded")]
    Undecodable,
    /// Uses address lookup tables, which this facilitator does not resolve.
    #[error("address lookup tables are not supported")]
    LookupTables,
    /// Account 0 is not the fee payer the requirement named.
    #[error("the transaction's fee payer is not the one offered")]
    FeePayerMismatch,
    /// A required signature is missing or does not verify.
    #[error("a required signature is missing or invalid")]
    SignatureInvalid,
    /// Fewer than 3 or more than 7 instructions.
    #[error("the transaction must have 3 to 7 instructions")]
    InstructionCount,
    /// Instruction 0 is not SetComputeUnitLimit.
    #[error("instruction 0 must set the compute unit limit")]
    ComputeLimit,
    /// The compute unit limit is above [`MAX_COMPUTE_UNITS`].
    #[error("the compute unit limit is above {MAX_COMPUTE_UNITS}")]
    ComputeLimitTooHigh,
    /// Instruction 1 is not SetComputeUnitPrice.
    #[error("instruction 1 must set the compute unit price")]
    ComputePrice,
    /// The compute unit price is above 5 lamports.
    #[error("the compute unit price is above {MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS} microlamports")]
    ComputePriceTooHigh,
    /// Instruction 2 is not a TransferChecked of the Token or Token-2022 program.
    #[error("instruction 2 must be a TransferChecked")]
    NoTransfer,
    /// The transfer would move the fee payer's funds, or the fee payer appears in an instruction.
    #[error("the fee payer may not take part in the transfer")]
    FeePayerTransferring,
    /// The transfer's mint is not the asset.
    #[error("the transfer moves another token")]
    MintMismatch,
    /// The destination is not the recipient's associated token account for the asset.
    #[error("the transfer goes to another account")]
    RecipientMismatch,
    /// The amount is not the price.
    #[error("the transfer amount is not the price")]
    AmountMismatch,
    /// The decimals in TransferChecked are not the asset's.
    #[error("the transfer's decimals are not the asset's")]
    DecimalsMismatch,
    /// An instruction after the transfer that is neither a memo nor a wallet assertion.
    #[error("instruction {0} is not allowed")]
    UnknownInstruction(usize),
    /// The requirement asks for a memo and the transaction has none or several.
    #[error("the transaction must carry exactly one memo")]
    MemoCount,
    /// The memo differs from the requested one.
    #[error("the memo is not the requested one")]
    MemoMismatch,
}

impl SolanaError {
    /// The x402 reason code, as the reference facilitator spells it.
    pub fn reason(&self) -> &'static str {
        match self {
            SolanaError::MissingFeePayer => "invalid_exact_svm_payload_missing_fee_payer",
            SolanaError::FeePayerNotManaged => "invalid_exact_svm_fee_payer_not_managed_by_facilitator",
            SolanaError::Undecodable => "invalid_exact_svm_payload_transaction_could_not_be_decoded",
            SolanaError::LookupTables => "invalid_exact_svm_smart_wallet_alt_resolution_not_available",
            SolanaError::FeePayerMismatch => "invalid_exact_svm_fee_payer_mismatch",
            SolanaError::SignatureInvalid => "invalid_exact_svm_payload_signature_invalid",
            SolanaError::InstructionCount => "invalid_exact_svm_payload_transaction_instructions_length",
            SolanaError::ComputeLimit => "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction",
            SolanaError::ComputeLimitTooHigh => {
                "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high"
            }
            SolanaError::ComputePrice => "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction",
            SolanaError::ComputePriceTooHigh => {
                "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"
            }
            SolanaError::NoTransfer | SolanaError::DecimalsMismatch => {
                "invalid_exact_svm_payload_no_transfer_instruction"
            }
            SolanaError::FeePayerTransferring => "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds",
            SolanaError::MintMismatch => "invalid_exact_svm_payload_mint_mismatch",
            SolanaError::RecipientMismatch => "invalid_exact_svm_payload_recipient_mismatch",
            SolanaError::AmountMismatch => "invalid_exact_svm_payload_amount_mismatch",
            SolanaError::UnknownInstruction(3) => "invalid_exact_svm_payload_unknown_fourth_instruction",
            SolanaError::UnknownInstruction(4) => "invalid_exact_svm_payload_unknown_fifth_instruction",
            SolanaError::UnknownInstruction(5) => "invalid_exact_svm_payload_unknown_sixth_instruction",
            SolanaError::UnknownInstruction(6) => "invalid_exact_svm_payload_unknown_seventh_instruction",
            SolanaError::UnknownInstruction(_) => "invalid_exact_svm_payload_unknown_optional_instruction",
            SolanaError::MemoCount => "invalid_exact_svm_payload_memo_count",
            SolanaError::MemoMismatch => "invalid_exact_svm_payload_memo_mismatch",
        }
    }
}

/// The `payload` of a Solana `exact` payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactSvmPayload<'a> {
    /// Base64 of the partially signed transaction.
    pub transaction: &'a str,
}

/// What the transaction must do: our requirement, never the client's copy.
#[derive(Debug, Clone, Copy)]
pub struct ExactSvmRequirement<'a> {
    /// Price in the asset's smallest units.
    pub amount: u64,
    /// The token mint (USDC).
    pub asset: &'a str,
    /// Its decimals, checked against TransferChecked's.
    pub decimals: u8,
    /// The recipient wallet; funds go to its associated token account.
    pub pay_to: &'a str,
    /// `extra.feePayer` of the requirement.
    pub fee_payer: Option<&'a str>,
    /// `extra.memo`, when the requirement asks for one.
    pub memo: Option<&'a str>,
}

/// A transaction that passed every check.
#[derive(Debug, Clone)]
pub struct VerifiedTransfer {
    /// The token authority: who pays.
    pub payer: String,
    /// The payer's signature (base58), unique per signed message: the replay key.
    pub signature: String,
    /// The transaction's fee payer (ours).
    pub fee_payer: String,
    transaction: VersionedTransaction,
    message: Vec<u8>,
}

impl VerifiedTransfer {
    /// The transaction with the fee payer's signature added, base64 for `sendTransaction`.
    /// `key` must be the fee payer's.
    pub fn cosigned(&self, key: &Keypair) -> Result<(String, String), SolanaError> {
        if key.address() != self.fee_payer {
            return Err(SolanaError::FeePayerMismatch);
        }
        let signature = key.0.sign(&self.message);
        let mut transaction = self.transaction.clone();
        let first = transaction.signatures.first_mut().ok_or(SolanaError::SignatureInvalid)?;
        *first = solana_transaction::Signature::from(signature.to_bytes());
        let bytes = wincode::serialize(&transaction).map_err(|_| SolanaError::Undecodable)?;
        let id = bs58::encode(signature.to_bytes()).into_string();
        Ok((base64::engine::general_purpose::STANDARD.encode(bytes), id))
    }
}

/// An ed25519 key (a fee payer's), kept out of `Debug`.
pub struct Keypair(SigningKey);

impl Keypair {
    /// From a 32-byte seed, as base58 or 0x-hex, or a 64-byte Solana keypair as base58 or a
    /// JSON byte array (the CLI's file format).
    pub fn parse(text: &str) -> Option<Keypair> {
        let text = text.trim();
        let bytes: Vec<u8> = if text.starts_with('[') {
            text.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|b| b.trim().parse::<u8>().ok())
                .collect::<Option<Vec<u8>>>()?
        } else if let Some(hex) = text.strip_prefix("0x") {
            (0..hex.len())
                .step_by(2)
                .map(|i| hex.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
                .collect::<Option<Vec<u8>>>()?
        } else {
            bs58::decode(text).into_vec().ok()?
        };
        let seed: [u8; 32] = bytes.get(..32)?.try_into().ok()?;
        let key = SigningKey::from_bytes(&seed);
        // A 64-byte keypair carries its public half: it must be this seed's.
        if bytes.len() == 64 && bytes[32..] != key.verifying_key().to_bytes() {
            return None;
        }
        (bytes.len() == 32 || bytes.len() == 64).then_some(Keypair(key))
    }

    /// The public key, base58.
    pub fn address(&self) -> String {
        bs58::encode(self.0.verifying_key().to_bytes()).into_string()
    }

    /// The ed25519 signature of `message` by this key.
    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

impl std::fmt::Debug for Keypair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keypair({})", self.address())
    }
}

/// The associated token account of `owner` for `mint` under `token_program`.
pub fn associated_token_account(owner: &str, mint: &str, token_program: &str) -> Option<String> {
    let owner: Address = owner.parse().ok()?;
    let mint: Address = mint.parse().ok()?;
    let program: Address = token_program.parse().ok()?;
    let ata_program: Address = programs::ASSOCIATED_TOKEN.parse().ok()?;
    let (ata, _) = Address::find_program_address(&[owner.as_ref(), program.as_ref(), mint.as_ref()], &ata_program);
    Some(ata.to_string())
}

/// Decodes a transaction strictly: base64, the versioned wire format, no trailing bytes, and
/// a message that re-encodes to exactly the signed bytes.
fn decode(transaction: &str) -> Result<(VersionedTransaction, Vec<u8>), SolanaError> {
    let raw = base64::engine::general_purpose::STANDARD.decode(transaction).map_err(|_| SolanaError::Undecodable)?;
    if raw.len() > MAX_TRANSACTION_BYTES {
        return Err(SolanaError::Undecodable);
    }
    let tx: VersionedTransaction = wincode::deserialize(&raw).map_err(|_| SolanaError::Undecodable)?;
    let message = tx.message.serialize();
    let signatures_len = raw.len().checked_sub(message.len()).ok_or(SolanaError::Undecodable)?;
    // The signature section is a short-vec length (1 byte below 128 signatures) and 64 bytes each.
    if !raw.ends_with(&message) || signatures_len != 1 + 64 * tx.signatures.len() {
        return Err(SolanaError::Undecodable);
    }
    Ok((tx, message))
}

/// Who pays and the signature that makes this payment unique, read without verifying
/// (the paywall's replay key is taken before verification; a forged one fails later).
pub fn replay_key(transaction: &str) -> Option<(String, String)> {
    let (tx, _) = decode(transaction).ok()?;
    let payer = tx.message.static_account_keys().get(1)?;
    let signature = tx.signatures.get(1)?;
    Some((payer.to_string(), bs58::encode(signature.as_ref()).into_string()))
}

/// Checks a Solana `exact` payment against our requirement, in the reference facilitator's
/// order. `fee_payers` are the facilitator's own keys (base58).
pub fn verify_exact(
    payload: &ExactSvmPayload<'_>,
    requirement: &ExactSvmRequirement<'_>,
    fee_payers: &[String],
) -> Result<VerifiedTransfer, SolanaError> {
    let fee_payer = requirement.fee_payer.ok_or(SolanaError::MissingFeePayer)?;
    if !fee_payers.iter().any(|k| k == fee_payer) {
        return Err(SolanaError::FeePayerNotManaged);
    }
    let (tx, message) = decode(payload.transaction)?;
    if tx.message.address_table_lookups().is_some_and(|l| !l.is_empty()) {
        return Err(SolanaError::LookupTables);
    }
    let keys: Vec<String> = tx.message.static_account_keys().iter().map(ToString::to_string).collect();
    if keys.first().map(String::as_str) != Some(fee_payer) {
        return Err(SolanaError::FeePayerMismatch);
    }
    let signers = usize::from(tx.message.header().num_required_signatures);
    if signers < 2 || tx.signatures.len() != signers || keys.len() < signers {
        return Err(SolanaError::SignatureInvalid);
    }
    for (key, signature) in tx.message.static_account_keys().iter().zip(&tx.signatures).take(signers).skip(1) {
        let key = VerifyingKey::from_bytes(&key.to_bytes()).map_err(|_| SolanaError::SignatureInvalid)?;
        let bytes: [u8; 64] = signature.as_ref().try_into().map_err(|_| SolanaError::SignatureInvalid)?;
        key.verify_strict(&message, &Signature::from_bytes(&bytes)).map_err(|_| SolanaError::SignatureInvalid)?;
    }

    // Instructions with their program and accounts resolved to addresses.
    let instructions = tx
        .message
        .instructions()
        .iter()
        .map(|ix| {
            let program = keys.get(usize::from(ix.program_id_index)).ok_or(SolanaError::Undecodable)?;
            let accounts = ix
                .accounts
                .iter()
                .map(|&i| keys.get(usize::from(i)).map(String::as_str).ok_or(SolanaError::Undecodable))
                .collect::<Result<Vec<&str>, _>>()?;
            Ok((program.as_str(), accounts, ix.data.as_slice()))
        })
        .collect::<Result<Vec<_>, SolanaError>>()?;
    if !(3..=7).contains(&instructions.len()) {
        return Err(SolanaError::InstructionCount);
    }

    let (program, _, data) = &instructions[0];
    let units = match (*program == programs::COMPUTE_BUDGET, data.split_first()) {
        (true, Some((&SET_COMPUTE_UNIT_LIMIT, rest))) if rest.len() == 4 => {
            u32::from_le_bytes(rest.try_into().map_err(|_| SolanaError::ComputeLimit)?)
        }
        _ => return Err(SolanaError::ComputeLimit),
    };
    if units > MAX_COMPUTE_UNITS {
        return Err(SolanaError::ComputeLimitTooHigh);
    }
    let (program, _, data) = &instructions[1];
    let price = match (*program == programs::COMPUTE_BUDGET, data.split_first()) {
        (true, Some((&SET_COMPUTE_UNIT_PRICE, rest))) if rest.len() == 8 => {
            u64::from_le_bytes(rest.try_into().map_err(|_| SolanaError::ComputePrice)?)
        }
        _ => return Err(SolanaError::ComputePrice),
    };
    if price > MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS {
        return Err(SolanaError::ComputePriceTooHigh);
    }

    let (token_program, accounts, data) = &instructions[2];
    if ![programs::TOKEN, programs::TOKEN_2022].contains(token_program) {
        return Err(SolanaError::NoTransfer);
    }
    let (amount, decimals) = match data.split_first() {
        Some((&TRANSFER_CHECKED, rest)) if rest.len() == 9 && accounts.len() >= 4 => {
            let amount = u64::from_le_bytes(rest[..8].try_into().map_err(|_| SolanaError::NoTransfer)?);
            (amount, rest[8])
        }
        _ => return Err(SolanaError::NoTransfer),
    };
    let (mint, destination, authority) = (accounts[1], accounts[2], accounts[3]);
    if fee_payers.iter().any(|k| k == authority) {
        return Err(SolanaError::FeePayerTransferring);
    }
    // The fee payer signs only to pay fees: it may not appear in any instruction, where a
    // crafted transaction could make it a source or an authority of something.
    if instructions.iter().any(|(_, accounts, _)| accounts.contains(&fee_payer)) {
        return Err(SolanaError::FeePayerTransferring);
    }
    if mint != requirement.asset {
        return Err(SolanaError::MintMismatch);
    }
    let expected = associated_token_account(requirement.pay_to, requirement.asset, token_program);
    if expected.as_deref() != Some(destination) {
        return Err(SolanaError::RecipientMismatch);
    }
    if amount != requirement.amount {
        return Err(SolanaError::AmountMismatch);
    }
    if decimals != requirement.decimals {
        return Err(SolanaError::DecimalsMismatch);
    }
    // The authority must be the one that signed: a transfer whose authority is not a signer
    // would fail on chain after we had served.
    if !keys[1..signers].iter().any(|k| k == authority) {
        return Err(SolanaError::SignatureInvalid);
    }

    let optional = &instructions[3..];
    for (i, (program, _, _)) in optional.iter().enumerate() {
        if *program != programs::MEMO && *program != programs::LIGHTHOUSE {
            return Err(SolanaError::UnknownInstruction(i + 3));
        }
    }
    if let Some(expected) = requirement.memo.filter(|m| !m.is_empty()) {
        let memos: Vec<&[u8]> =
            optional.iter().filter(|(program, _, _)| *program == programs::MEMO).map(|(_, _, data)| *data).collect();
        match memos.as_slice() {
            [memo] if *memo == expected.as_bytes() => {}
            [_] => return Err(SolanaError::MemoMismatch),
            _ => return Err(SolanaError::MemoCount),
        }
    }

    let payer_index = keys[1..signers].iter().position(|k| k == authority).map_or(1, |i| i + 1);
    Ok(VerifiedTransfer {
        payer: authority.to_owned(),
        signature: bs58::encode(tx.signatures[payer_index].as_ref()).into_string(),
        fee_payer: fee_payer.to_owned(),
        transaction: tx,
        message,
    })
}
