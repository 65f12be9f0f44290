//! Building a Solana `exact` payment: the official TypeScript client's transaction from the
//! same inputs (fixtures/x402/svm-solana-mainnet-exact.json), and payments for any amount,
//! key, recipient and memo that svc's own check accepts.

use base64::Engine as _;
use proptest::prelude::*;
use solana_transaction::versioned::VersionedTransaction;
use svc_chain_solana::{
    BuildError, ExactSvmPayload, ExactSvmPayment, ExactSvmRequirement, Keypair, SolanaError, build_exact, programs,
    replay_key, verify_exact,
};

mod common;

use common::{FEE_PAYER, PAY_TO, USDC, vector};

/// The vector's payer: its seed is in the fixture.
fn vector_payer() -> Keypair {
    let seed = vector()["keys"]["payerEd25519SeedHex"].as_str().expect("seed").to_owned();
    Keypair::parse(&format!("0x{seed}")).expect("key")
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

/// The vector's memo is the client's random nonce, hex: the bytes it was made from.
fn vector_nonce() -> [u8; 16] {
    let memo = vector()["clientTransactionDecoded"]["instructions"][3]["dataHex"].as_str().expect("memo").to_owned();
    let text = String::from_utf8(
        (0..memo.len()).step_by(2).map(|i| u8::from_str_radix(&memo[i..i + 2], 16).expect("hex")).collect(),
    )
    .expect("ascii");
    std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex nonce"))
}

fn decoded(transaction: &str) -> VersionedTransaction {
    let raw = base64::engine::general_purpose::STANDARD.decode(transaction).expect("base64");
    wincode::deserialize(&raw).expect("transaction")
}

fn verify(
    transaction: &str,
    requirement: &ExactSvmRequirement<'_>,
) -> Result<svc_chain_solana::VerifiedTransfer, SolanaError> {
    verify_exact(&ExactSvmPayload { transaction }, requirement, &[FEE_PAYER.to_owned()])
}

#[test]
fn from_the_official_clients_inputs_the_official_clients_transaction_is_built_byte_for_byte() {
    let v = vector();
    let blockhash = v["paymentRequired"]["accepts"][0]["extra"]["recentBlockhash"].as_str().expect("blockhash");
    let payment =
        ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: blockhash, nonce: vector_nonce() };
    let built = build_exact(&requirement(), &vector_payer(), &payment).expect("built");
    assert_eq!(built, v["paymentPayload"]["payload"]["transaction"].as_str().expect("transaction"));
}

/// Each account's (signer, writable) role, as the message header lays them out.
fn role(tx: &VersionedTransaction, index: u8) -> (bool, bool) {
    let header = tx.message.header();
    let (i, n) = (usize::from(index), tx.message.static_account_keys().len());
    let signers = usize::from(header.num_required_signatures);
    let writable = if i < signers {
        i < signers - usize::from(header.num_readonly_signed_accounts)
    } else {
        i < n - usize::from(header.num_readonly_unsigned_accounts)
    };
    (i < signers, writable)
}

/// An instruction's program, its accounts' roles, and its data's length and tag.
type Shape = (String, Vec<(bool, bool)>, usize, Option<u8>);

/// Each instruction's shape (a memo's data is text, with no tag).
fn shape(tx: &VersionedTransaction) -> Vec<Shape> {
    let keys = tx.message.static_account_keys();
    tx.message
        .instructions()
        .iter()
        .map(|ix| {
            let roles = ix.accounts.iter().map(|&i| role(tx, i)).collect();
            let program = keys[usize::from(ix.program_id_index)].to_string();
            let tag = ix.data.first().copied().filter(|_| program != programs::MEMO);
            (program, roles, ix.data.len(), tag)
        })
        .collect()
}

/// Another payer, price and nonce: the official client's message layout (header, the fee
/// payer first with its signature slot empty, the same programs in the same order with the
/// same account roles); only the values differ.
#[test]
fn another_payment_has_the_official_clients_shape() {
    let official = decoded(vector()["paymentPayload"]["payload"]["transaction"].as_str().expect("transaction"));
    let payer = Keypair::parse(&bs58::encode([9u8; 32]).into_string()).expect("key");
    let payment = ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: PAY_TO, nonce: [0xab; 16] };
    let asked = ExactSvmRequirement { amount: 1_234, ..requirement() };
    let built = build_exact(&asked, &payer, &payment).expect("built");
    let ours = decoded(&built);

    assert_eq!(ours.message.header(), official.message.header());
    assert_eq!(ours.message.static_account_keys().len(), official.message.static_account_keys().len());
    assert_eq!(ours.signatures.len(), official.signatures.len());
    assert_eq!(ours.signatures[0], solana_transaction::Signature::default(), "the fee payer's slot is left empty");
    assert_eq!(ours.message.static_account_keys()[0].to_string(), FEE_PAYER);
    assert_eq!(ours.message.static_account_keys()[1].to_string(), payer.address());
    assert_eq!(shape(&ours), shape(&official));
    let (ix, theirs) = (ours.message.instructions(), official.message.instructions());
    assert_eq!(ix[0].data, theirs[0].data, "the same compute unit limit");
    assert_eq!(ix[1].data, theirs[1].data, "the same compute unit price");
    assert_eq!(ix[2].data[1..9], 1_234u64.to_le_bytes());
    assert_eq!(ix[3].data, b"abababababababababababababababab");
    verify(&built, &asked).expect("svc accepts it");
}

#[test]
fn a_requested_memo_is_carried_instead_of_the_nonce() {
    let payment = ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: PAY_TO, nonce: [1; 16] };
    let asked = ExactSvmRequirement { memo: Some("order-17"), ..requirement() };
    let built = build_exact(&asked, &vector_payer(), &payment).expect("built");
    assert_eq!(decoded(&built).message.instructions()[3].data, b"order-17");
    verify(&built, &asked).expect("valid");
}

#[test]
fn what_cannot_be_paid_is_refused_before_signing() {
    let payment = ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: PAY_TO, nonce: [1; 16] };
    let payer = vector_payer();
    let long = "m".repeat(257);
    let payer_address = payer.address();
    let cases: [(ExactSvmRequirement<'_>, ExactSvmPayment<'_>, BuildError); 6] = [
        (ExactSvmRequirement { fee_payer: None, ..requirement() }, payment, BuildError::MissingFeePayer),
        (
            ExactSvmRequirement { fee_payer: Some(&payer_address), ..requirement() },
            payment,
            BuildError::PayerIsFeePayer,
        ),
        (requirement(), ExactSvmPayment { token_program: programs::MEMO, ..payment }, BuildError::UnknownTokenProgram),
        (ExactSvmRequirement { memo: Some(&long), ..requirement() }, payment, BuildError::MemoTooLong),
        (ExactSvmRequirement { pay_to: "0xnot-base58", ..requirement() }, payment, BuildError::Malformed("payTo")),
        (
            requirement(),
            ExactSvmPayment { recent_blockhash: "short", ..payment },
            BuildError::Malformed("recent blockhash"),
        ),
    ];
    for (requirement, payment, expected) in cases {
        assert_eq!(build_exact(&requirement, &payer, &payment), Err(expected));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the amount, keys, recipient, decimals, token program, blockhash and memo,
    /// the payment built passes svc's own check as it stands, names its payer, and no other
    /// amount.
    #[test]
    fn every_payment_built_passes_svcs_check(
        amount in 1..=u64::MAX,
        payer_seed in any::<[u8; 32]>(),
        pay_to_seed in any::<[u8; 32]>(),
        decimals in 0u8..=30,
        token_2022 in any::<bool>(),
        blockhash in any::<[u8; 32]>(),
        nonce in any::<[u8; 16]>(),
        memo in proptest::option::of("[ -~]{1,256}"),
    ) {
        let payer = Keypair::parse(&bs58::encode(payer_seed).into_string()).expect("seed");
        let pay_to = Keypair::parse(&bs58::encode(pay_to_seed).into_string()).expect("seed").address();
        prop_assume!(payer.address() != FEE_PAYER);
        let requirement = ExactSvmRequirement { amount, decimals, pay_to: &pay_to, memo: memo.as_deref(), ..requirement() };
        let blockhash = bs58::encode(blockhash).into_string();
        let token_program = if token_2022 { programs::TOKEN_2022 } else { programs::TOKEN };
        let payment = ExactSvmPayment { token_program, recent_blockhash: &blockhash, nonce };
        let built = build_exact(&requirement, &payer, &payment).expect("built");

        let verified = verify(&built, &requirement).expect("svc accepts what it builds");
        prop_assert_eq!(&verified.payer, &payer.address());
        prop_assert_eq!(&verified.fee_payer, FEE_PAYER);
        prop_assert_eq!(replay_key(&built), Some((payer.address(), verified.signature.clone())));
        let other = ExactSvmRequirement { amount: amount.wrapping_add(1).max(1), ..requirement };
        prop_assert_eq!(verify(&built, &other).expect_err("another amount"), SolanaError::AmountMismatch);
    }
}
