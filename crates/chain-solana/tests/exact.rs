//! Solana `exact` verification against the transaction the official TypeScript client made
//! (fixtures/x402/svm-solana-mainnet-exact.json), and against transactions built here that
//! break one rule each.

use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey};
use sha2::Digest as _;
use solana_message::v0;
use solana_message::{MessageHeader, VersionedMessage};
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::{Address, CompiledInstruction, Hash, Signature};
use svc_chain_solana::{
    ExactSvmPayload, ExactSvmRequirement, Keypair, SolanaError, associated_token_account, programs, replay_key,
    verify_exact,
};

mod common;

use common::{FEE_PAYER, PAY_TO, USDC, vector};
const PAYER: &str = "9fijMemJYwXS5QD85Qxsq7iKqvSebgb6LvpGftgkeigk";

fn official_transaction() -> String {
    vector()["paymentPayload"]["payload"]["transaction"].as_str().expect("transaction").to_owned()
}

fn requirement() -> ExactSvmRequirement<'static> {
    ExactSvmRequirement {
        amount: 500_000,
        asset: USDC,
        decimals: 6,
        pay_to: PAY_TO,
        fee_payer: Some(FEE_PAYER),
        memo: None,
    }
}

fn ours() -> Vec<String> {
    vec![FEE_PAYER.to_owned()]
}

fn verify(
    transaction: &str,
    requirement: &ExactSvmRequirement<'_>,
) -> Result<svc_chain_solana::VerifiedTransfer, SolanaError> {
    verify_exact(&ExactSvmPayload { transaction }, requirement, &ours())
}

fn fee_payer_key() -> Keypair {
    let seed: [u8; 32] = sha2::Sha256::digest(b"x402-vector-svm-facilitator-fee-payer").into();
    Keypair::parse(&bs58::encode(seed).into_string()).expect("seed")
}

#[test]
fn the_official_clients_transaction_verifies() {
    let verified = verify(&official_transaction(), &requirement()).expect("valid");
    assert_eq!(verified.payer, PAYER);
    assert_eq!(verified.fee_payer, FEE_PAYER);
    assert_eq!(replay_key(&official_transaction()), Some((PAYER.to_owned(), verified.signature.clone())));
}

#[test]
fn cosigning_gives_the_reference_facilitators_transaction_byte_for_byte() {
    let verified = verify(&official_transaction(), &requirement()).expect("valid");
    let key = fee_payer_key();
    assert_eq!(key.address(), FEE_PAYER);
    let (signed, id) = verified.cosigned(&key).expect("cosigned");
    let v = vector();
    assert_eq!(signed, v["fullySignedTransactionBase64"].as_str().expect("signed"));
    assert_eq!(id, v["facilitatorSettleResponse"]["transaction"].as_str().expect("id"));
}

#[test]
fn the_destination_is_the_recipients_associated_token_account() {
    let ata = associated_token_account(PAY_TO, USDC, programs::TOKEN).expect("ata");
    assert_eq!(ata, "G1pxFZF5HcAgxs5J5zmGrmCurCPHcTrdxUuknDjQgqmg");
}

#[test]
fn a_payment_for_another_price_recipient_asset_or_fee_payer_is_refused() {
    let tx = official_transaction();
    let cases: [(ExactSvmRequirement<'_>, SolanaError); 5] = [
        (ExactSvmRequirement { amount: 500_001, ..requirement() }, SolanaError::AmountMismatch),
        (ExactSvmRequirement { pay_to: PAYER, ..requirement() }, SolanaError::RecipientMismatch),
        (ExactSvmRequirement { asset: PAY_TO, ..requirement() }, SolanaError::MintMismatch),
        (ExactSvmRequirement { fee_payer: None, ..requirement() }, SolanaError::MissingFeePayer),
        (ExactSvmRequirement { fee_payer: Some(PAYER), ..requirement() }, SolanaError::FeePayerNotManaged),
    ];
    for (requirement, expected) in cases {
        assert_eq!(verify(&tx, &requirement).expect_err("refused"), expected);
    }
}

#[test]
fn a_requested_memo_must_be_the_one_carried() {
    let err = verify(&official_transaction(), &ExactSvmRequirement { memo: Some("order-17"), ..requirement() });
    assert_eq!(err.expect_err("refused"), SolanaError::MemoMismatch);
}

#[test]
fn a_tampered_or_garbled_transaction_is_refused() {
    let raw = base64::engine::general_purpose::STANDARD.decode(official_transaction()).expect("b64");
    let mut tampered = raw.clone();
    // A byte of the memo text, near the end of the signed message.
    let in_memo = tampered.len() - 3;
    tampered[in_memo] ^= 1;
    let tampered = base64::engine::general_purpose::STANDARD.encode(tampered);
    assert_eq!(verify(&tampered, &requirement()).expect_err("refused"), SolanaError::SignatureInvalid);

    let mut trailing = raw.clone();
    trailing.push(0);
    let trailing = base64::engine::general_purpose::STANDARD.encode(trailing);
    assert_eq!(verify(&trailing, &requirement()).expect_err("refused"), SolanaError::Undecodable);
    assert_eq!(verify("not base64!", &requirement()).expect_err("refused"), SolanaError::Undecodable);
    assert_eq!(verify("", &requirement()).expect_err("refused"), SolanaError::Undecodable);
}

/// Builds and signs a transaction like the official client's, after `edit` changes it.
struct Draft {
    keys: Vec<Address>,
    instructions: Vec<CompiledInstruction>,
    signers: u8,
}

fn address(s: &str) -> Address {
    s.parse().expect("address")
}

fn payer_key() -> SigningKey {
    let seed: [u8; 32] = hex_seed("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
    SigningKey::from_bytes(&seed)
}

fn hex_seed(hex: &str) -> [u8; 32] {
    std::array::from_fn(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
}

impl Draft {
    /// The official client's layout: limit, price, TransferChecked of 0.50 USDC, memo.
    fn standard() -> Draft {
        let source = associated_token_account(PAYER, USDC, programs::TOKEN).expect("ata");
        let destination = associated_token_account(PAY_TO, USDC, programs::TOKEN).expect("ata");
        let keys = vec![
            address(FEE_PAYER),
            address(PAYER),
            address(&source),
            address(&destination),
            address(programs::COMPUTE_BUDGET),
            address(USDC),
            address(programs::MEMO),
            address(programs::TOKEN),
        ];
        let mut transfer = vec![12];
        transfer.extend_from_slice(&500_000u64.to_le_bytes());
        transfer.push(6);
        Draft {
            keys,
            instructions: vec![
                ix(4, vec![], [vec![2], 20_000u32.to_le_bytes().to_vec()].concat()),
                ix(4, vec![], [vec![3], 1u64.to_le_bytes().to_vec()].concat()),
                ix(7, vec![2, 5, 3, 1], transfer),
                ix(6, vec![], b"0123456789abcdef0123456789abcdef".to_vec()),
            ],
            signers: 2,
        }
    }

    fn signed(self) -> String {
        let message = VersionedMessage::V0(v0::Message {
            header: MessageHeader {
                num_required_signatures: self.signers,
                num_readonly_signed_accounts: 1,
                num_readonly_unsigned_accounts: 4,
            },
            account_keys: self.keys,
            recent_blockhash: Hash::new_from_array([7; 32]),
            instructions: self.instructions,
            address_table_lookups: vec![],
        });
        let bytes = message.serialize();
        let mut signatures = vec![Signature::default(); usize::from(self.signers)];
        signatures[1] = Signature::from(payer_key().sign(&bytes).to_bytes());
        let tx = VersionedTransaction { signatures, message };
        base64::engine::general_purpose::STANDARD.encode(wincode::serialize(&tx).expect("encode"))
    }
}

fn ix(program: u8, accounts: Vec<u8>, data: Vec<u8>) -> CompiledInstruction {
    CompiledInstruction { program_id_index: program, accounts, data }
}

#[test]
fn a_transaction_built_like_the_official_clients_verifies() {
    let verified = verify(&Draft::standard().signed(), &requirement()).expect("valid");
    assert_eq!(verified.payer, PAYER);
}

#[test]
fn each_broken_layout_rule_is_refused_with_its_reason() {
    type Edit = fn(&mut Draft);
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("too few instructions", |d| d.instructions.truncate(2), "instructions_length"),
        ("no compute limit", |d| d.instructions[0].data[0] = 9, "compute_limit_instruction"),
        (
            "huge compute limit",
            |d| d.instructions[0].data[1..].copy_from_slice(&1_400_000u32.to_le_bytes()),
            "compute_limit_instruction_too_high",
        ),
        ("no compute price", |d| d.instructions[1].program_id_index = 6, "compute_price_instruction"),
        (
            "price above 5 lamports",
            |d| d.instructions[1].data[1..].copy_from_slice(&5_000_001u64.to_le_bytes()),
            "compute_price_instruction_too_high",
        ),
        ("plain Transfer", |d| d.instructions[2].data[0] = 3, "no_transfer_instruction"),
        ("wrong decimals", |d| d.instructions[2].data[9] = 9, "no_transfer_instruction"),
        ("fee payer as authority", |d| d.instructions[2].accounts[3] = 0, "fee_payer_transferring_funds"),
        ("fee payer in a memo", |d| d.instructions[3].accounts = vec![0], "fee_payer_transferring_funds"),
        ("to the payer's own account", |d| d.instructions[2].accounts[2] = 2, "recipient_mismatch"),
        ("unknown fourth instruction", |d| d.instructions[3].program_id_index = 7, "unknown_fourth_instruction"),
        ("program index out of range", |d| d.instructions[3].program_id_index = 99, "could_not_be_decoded"),
        ("fee payer slot missing", |d| d.keys.swap(0, 5), "fee_payer_mismatch"),
    ];
    for (name, edit, reason) in cases {
        let mut draft = Draft::standard();
        edit(&mut draft);
        let err = verify(&draft.signed(), &requirement()).expect_err(name);
        assert!(err.reason().ends_with(reason), "{name}: {} ({err})", err.reason());
    }
}

#[test]
fn a_transfer_authority_that_did_not_sign_is_refused() {
    let mut draft = Draft::standard();
    // The source's owner is not a signer: the transfer would fail on chain after we served.
    draft.instructions[2].accounts[3] = 3;
    assert_eq!(verify(&draft.signed(), &requirement()).expect_err("refused"), SolanaError::SignatureInvalid);
}

#[test]
fn keys_parse_from_the_usual_formats_and_never_print() {
    let seed = hex_seed("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
    let signing = SigningKey::from_bytes(&seed);
    let pair: Vec<u8> = [seed.as_slice(), signing.verifying_key().as_bytes()].concat();
    let json = format!("{:?}", pair).replace(' ', "");
    for text in [
        "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318".to_owned(),
        bs58::encode(seed).into_string(),
        bs58::encode(&pair).into_string(),
        json,
    ] {
        let key = Keypair::parse(&text).expect("parses");
        assert_eq!(key.address(), PAYER);
        assert!(!format!("{key:?}").contains(&text[..10]));
    }
    let mut wrong = pair.clone();
    wrong[40] ^= 1;
    assert!(Keypair::parse(&bs58::encode(wrong).into_string()).is_none(), "a keypair whose halves disagree");
    assert!(Keypair::parse("0x1234").is_none());
}

proptest::proptest! {
    #[test]
    fn no_bytes_make_verification_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
        let tx = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let _ = verify(&tx, &requirement());
        let _ = replay_key(&tx);
    }

    #[test]
    fn no_single_byte_change_to_a_valid_transaction_panics_or_passes_with_another_payer(i in 0usize..496, flip in 1u8..=255) {
        let mut raw = base64::engine::general_purpose::STANDARD.decode(official_transaction()).expect("b64");
        let i = i % raw.len();
        raw[i] ^= flip;
        let tx = base64::engine::general_purpose::STANDARD.encode(&raw);
        if let Ok(verified) = verify(&tx, &requirement()) {
            // Only the fee payer's empty signature slot is outside what the payer signed.
            proptest::prop_assert!((1..65).contains(&i), "byte {i} changed and still verified");
            proptest::prop_assert_eq!(verified.payer, PAYER);
        }
    }
}
