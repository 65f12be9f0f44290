//! The paying side of a Solana `exact` payment: the partially signed transaction a client
//! sends, built the way the official x402 TypeScript client (`@x402/svm`) builds it.

use std::cmp::Ordering;

use base64::Engine as _;
use solana_message::{MessageHeader, VersionedMessage, v0};
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::{Address, CompiledInstruction, Hash, Signature};

use crate::{ExactSvmRequirement, Keypair, associated_token_account, programs};

/// The compute-unit limit the official client asks for; a `transferChecked` needs less.
pub const DEFAULT_COMPUTE_UNIT_LIMIT: u32 = 20_000;

/// The compute-unit price the official client offers: 1 microlamport, far under the
/// facilitators' cap ([`crate::MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS`]), so the fee payer
/// spends almost nothing on priority.
pub const DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS: u64 = 1;

/// The longest memo a requirement may ask for, in bytes.
pub const MAX_MEMO_BYTES: usize = 256;

const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;
const TRANSFER_CHECKED: u8 = 12;

/// What a payment needs beyond the requirement: facts about the chain the client reads from a
/// node (or knows), and the client's own randomness.
#[derive(Debug, Clone, Copy)]
pub struct ExactSvmPayment<'a> {
    /// The program that owns the mint: SPL Token or Token-2022 ([`programs`]). Token accounts
    /// are derived under it, and the transfer is its instruction.
    pub token_program: &'a str,
    /// The recent blockhash (base58) the transaction lives by: it can land only while the
    /// cluster still knows it (about a minute).
    pub recent_blockhash: &'a str,
    /// 16 random bytes. When the requirement asks for no memo, their hex is the memo, so two
    /// payments of the same price from the same wallet are different transactions.
    pub nonce: [u8; 16],
}

/// Why a payment could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The requirement names no fee payer (`extra.feePayer`): the facilitator must pay fees.
    #[error("the requirement names no fee payer (extra.feePayer)")]
    MissingFeePayer,
    /// A field that is not a Solana address (or hash).
    #[error("the {0} is not a base58 Solana address")]
    Malformed(&'static str),
    /// The mint's program is neither SPL Token nor Token-2022.
    #[error("the token program is neither SPL Token nor Token-2022")]
    UnknownTokenProgram,
    /// The requested memo is longer than [`MAX_MEMO_BYTES`].
    #[error("the requested memo is longer than {MAX_MEMO_BYTES} bytes")]
    MemoTooLong,
    /// The paying key is the fee payer's: a facilitator refuses to move its own funds.
    #[error("the paying key is the facilitator's fee payer")]
    PayerIsFeePayer,
    /// The transaction did not serialize.
    #[error("the transaction could not be encoded")]
    Encode,
}

/// An instruction before compiling: its program, its accounts as (address, signer, writable),
/// its data.
struct Instruction<'a> {
    program: &'a str,
    accounts: Vec<(&'a str, bool, bool)>,
    data: Vec<u8>,
}

/// An account of the message with its role; roles of an address met twice are merged.
struct Account {
    address: Address,
    text: String,
    signer: bool,
    writable: bool,
}

/// The base64 transaction (`payload.transaction`) paying `requirement` from `payer`'s token
/// account, exactly as the official x402 TypeScript client builds it, so that svc pays other
/// x402 servers, and its tests pay svc, the way a real client does.
///
/// A v0 message without lookup tables whose fee payer (account 0) is `requirement.fee_payer`,
/// with the client's instructions in its order: SetComputeUnitLimit
/// ([`DEFAULT_COMPUTE_UNIT_LIMIT`]), SetComputeUnitPrice
/// ([`DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS`]), `transferChecked` of `amount` (with
/// `decimals`) of the mint from the payer's associated token account to `pay_to`'s, then a
/// memo: the requirement's, or the hex of `payment.nonce`. Accounts are ordered as
/// `@solana/kit` compiles them. Only the payer signs; the fee payer's signature slot is left
/// zeroed for the facilitator, which co-signs when it settles. Same inputs, same bytes
/// (ed25519 signatures are deterministic).
pub fn build_exact(
    requirement: &ExactSvmRequirement<'_>,
    payer: &Keypair,
    payment: &ExactSvmPayment<'_>,
) -> Result<String, BuildError> {
    let fee_payer = requirement.fee_payer.ok_or(BuildError::MissingFeePayer)?;
    let payer_address = payer.address();
    if payer_address == fee_payer {
        return Err(BuildError::PayerIsFeePayer);
    }
    if ![programs::TOKEN, programs::TOKEN_2022].contains(&payment.token_program) {
        return Err(BuildError::UnknownTokenProgram);
    }
    let address = |text: &str, field: &'static str| text.parse::<Address>().map_err(|_| BuildError::Malformed(field));
    let blockhash: [u8; 32] = bs58::decode(payment.recent_blockhash)
        .into_vec()
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or(BuildError::Malformed("recent blockhash"))?;
    address(requirement.asset, "asset")?;
    address(requirement.pay_to, "payTo")?;
    let source = associated_token_account(&payer_address, requirement.asset, payment.token_program)
        .ok_or(BuildError::Malformed("asset"))?;
    let destination = associated_token_account(requirement.pay_to, requirement.asset, payment.token_program)
        .ok_or(BuildError::Malformed("payTo"))?;
    let memo = match requirement.memo.filter(|m| !m.is_empty()) {
        Some(memo) if memo.len() > MAX_MEMO_BYTES => return Err(BuildError::MemoTooLong),
        Some(memo) => memo.as_bytes().to_vec(),
        None => payment.nonce.iter().map(|b| format!("{b:02x}")).collect::<String>().into_bytes(),
    };

    let mut transfer = vec![TRANSFER_CHECKED];
    transfer.extend_from_slice(&requirement.amount.to_le_bytes());
    transfer.push(requirement.decimals);
    // In the client's order.
    let instructions = [
        Instruction {
            program: programs::COMPUTE_BUDGET,
            accounts: vec![],
            data: [&[SET_COMPUTE_UNIT_LIMIT][..], &DEFAULT_COMPUTE_UNIT_LIMIT.to_le_bytes()].concat(),
        },
        Instruction {
            program: programs::COMPUTE_BUDGET,
            accounts: vec![],
            data: [&[SET_COMPUTE_UNIT_PRICE][..], &DEFAULT_COMPUTE_UNIT_PRICE_MICROLAMPORTS.to_le_bytes()].concat(),
        },
        Instruction {
            program: payment.token_program,
            accounts: vec![
                (source.as_str(), false, true),
                (requirement.asset, false, false),
                (destination.as_str(), false, true),
                (payer_address.as_str(), true, false),
            ],
            data: transfer,
        },
        Instruction { program: programs::MEMO, accounts: vec![], data: memo },
    ];

    let mut accounts = vec![Account {
        address: address(fee_payer, "feePayer")?,
        text: fee_payer.to_owned(),
        signer: true,
        writable: true,
    }];
    let mut add = |text: &str, signer: bool, writable: bool| -> Result<(), BuildError> {
        match accounts.iter_mut().find(|a| a.text == text) {
            Some(account) => {
                account.signer |= signer;
                account.writable |= writable;
            }
            None => {
                accounts.push(Account { address: address(text, "account")?, text: text.to_owned(), signer, writable })
            }
        }
        Ok(())
    };
    for instruction in &instructions {
        add(instruction.program, false, false)?;
        for &(text, signer, writable) in &instruction.accounts {
            add(text, signer, writable)?;
        }
    }
    // The fee payer first, then signers before the rest, writable before read-only, then by
    // address as `@solana/kit` compares them.
    accounts[1..].sort_by(|a, b| {
        b.signer.cmp(&a.signer).then(b.writable.cmp(&a.writable)).then_with(|| kit_address_order(&a.text, &b.text))
    });
    let index = |text: &str| {
        accounts.iter().position(|a| a.text == text).and_then(|i| u8::try_from(i).ok()).ok_or(BuildError::Encode)
    };
    let compiled = instructions
        .iter()
        .map(|instruction| {
            Ok(CompiledInstruction {
                program_id_index: index(instruction.program)?,
                accounts: instruction.accounts.iter().map(|(text, _, _)| index(text)).collect::<Result<_, _>>()?,
                data: instruction.data.clone(),
            })
        })
        .collect::<Result<Vec<_>, BuildError>>()?;
    let count = |keep: fn(&Account) -> bool| {
        u8::try_from(accounts.iter().filter(|a| keep(a)).count()).map_err(|_| BuildError::Encode)
    };
    let header = MessageHeader {
        num_required_signatures: count(|a| a.signer)?,
        num_readonly_signed_accounts: count(|a| a.signer && !a.writable)?,
        num_readonly_unsigned_accounts: count(|a| !a.signer && !a.writable)?,
    };
    let payer_index = usize::from(index(&payer_address)?);
    let message = VersionedMessage::V0(v0::Message {
        header,
        account_keys: accounts.iter().map(|a| a.address).collect(),
        recent_blockhash: Hash::new_from_array(blockhash),
        instructions: compiled,
        address_table_lookups: vec![],
    });
    let mut signatures = vec![Signature::default(); usize::from(header.num_required_signatures)];
    signatures[payer_index] = Signature::from(payer.sign(&message.serialize()));
    let transaction = VersionedTransaction { signatures, message };
    let bytes = wincode::serialize(&transaction).map_err(|_| BuildError::Encode)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The order `@solana/kit` gives addresses of the same role: `Intl.Collator('en', {caseFirst:
/// 'lower'})`. Over base58 (ASCII digits and letters) that is: letters regardless of case,
/// digits before letters; on a tie, lower case before upper case at the first difference.
fn kit_address_order(a: &str, b: &str) -> Ordering {
    let folded = |s: &str| s.bytes().map(|c| c.to_ascii_lowercase()).collect::<Vec<u8>>();
    let upper = |s: &str| s.bytes().map(|c| c.is_ascii_uppercase()).collect::<Vec<bool>>();
    folded(a).cmp(&folded(b)).then_with(|| upper(a).cmp(&upper(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs whose order `Intl.Collator('en', {caseFirst: 'lower'})` gives (checked with
    /// Node.js 20), most of them the reverse of byte order.
    #[test]
    fn addresses_are_ordered_as_kit_orders_them() {
        let ordered = [
            ("9R5a5XN5zd98KuhfZpYd4J51r2pQSyDrK6H2d7ZU8d38", "G1pxFZF5HcAgxs5J5zmGrmCurCPHcTrdxUuknDjQgqmg"),
            ("abc", "Abd"),
            ("aBc", "Abc"),
            ("abC", "aBc"),
            ("Zz", "zZz"),
            ("a", "B"),
            ("9", "a"),
            ("ComputeBudget111111111111111111111111111111", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
            ("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
        ];
        for (a, b) in ordered {
            assert_eq!(kit_address_order(a, b), Ordering::Less, "{a} < {b}");
            assert_eq!(kit_address_order(b, a), Ordering::Greater, "{b} > {a}");
        }
    }
}
