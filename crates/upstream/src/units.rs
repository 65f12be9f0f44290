//! Exact conversion between human token amounts (`"1.5"`) and atomic units (`1500000` at 6
//! decimals). Integer arithmetic on the decimal digits only: a float would turn
//! `0.1` ETH into `99999999999999999` wei.

/// Why a human amount has no atomic form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Not digits with at most one decimal point.
    #[error("not a decimal number")]
    NotDecimal,
    /// More fractional digits than the token has decimals.
    #[error("more than {0} decimal places")]
    TooPrecise(u8),
    /// Larger than 2^256 - 1 atomic units would allow; refused well before that.
    #[error("too large")]
    TooLarge,
    /// Zero.
    #[error("must be more than zero")]
    Zero,
}

/// Atomic units of `human` at `decimals`, as a decimal string without leading zeros.
/// Trailing fractional zeros beyond `decimals` are accepted (`"1.50"` at 1 decimal).
pub fn to_atomic(human: &str, decimals: u8) -> Result<String, AmountError> {
    let (whole, fraction) = human.split_once('.').unwrap_or((human, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AmountError::NotDecimal);
    }
    if human.contains('.') && fraction.is_empty() {
        return Err(AmountError::NotDecimal);
    }
    let fraction = fraction.trim_end_matches('0');
    let places = usize::from(decimals);
    if fraction.len() > places {
        return Err(AmountError::TooPrecise(decimals));
    }
    let mut digits = String::with_capacity(whole.len() + places);
    digits.push_str(whole);
    digits.push_str(fraction);
    digits.extend(std::iter::repeat_n('0', places - fraction.len()));
    let trimmed = digits.trim_start_matches('0');
    if trimmed.is_empty() {
        return Err(AmountError::Zero);
    }
    // 78 digits is the width of a uint256; anything that long is not a real amount.
    if trimmed.len() > 77 {
        return Err(AmountError::TooLarge);
    }
    Ok(trimmed.to_owned())
}

/// `atomic` (decimal digits) as a human amount at `decimals`, without trailing zeros.
pub fn to_human(atomic: &str, decimals: u8) -> String {
    let digits = atomic.trim_start_matches('0');
    let places = usize::from(decimals);
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (whole, fraction) = padded.split_at(padded.len() - places);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() { whole.to_owned() } else { format!("{whole}.{fraction}") }
}

/// `amount * (10000 - bps) / 10000`, rounded down: the least a quote may deliver after
/// slippage, for decimal-string amounts up to 38 digits.
pub fn after_slippage(amount: &str, bps: u32) -> Option<String> {
    let amount: u128 = amount.parse().ok()?;
    let keep = u128::from(10_000u32.checked_sub(bps)?);
    let scaled = amount.checked_mul(keep).map(|v| v / 10_000).unwrap_or_else(|| amount / 10_000 * keep);
    Some(scaled.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_amounts_convert_exactly() {
        assert_eq!(to_atomic("1.5", 6), Ok("1500000".into()));
        assert_eq!(to_atomic("0.1", 18), Ok("100000000000000000".into()));
        assert_eq!(to_atomic("100", 0), Ok("100".into()));
        assert_eq!(to_atomic("0.000001", 6), Ok("1".into()));
        assert_eq!(to_atomic("1.50", 1), Ok("15".into()));
        assert_eq!(to_atomic("007.25", 2), Ok("725".into()));
        assert_eq!(to_atomic("0.0000001", 6), Err(AmountError::TooPrecise(6)));
        assert_eq!(to_atomic("0.000", 6), Err(AmountError::Zero));
        assert_eq!(to_atomic("1.", 6), Err(AmountError::NotDecimal));
        assert_eq!(to_atomic(".5", 6), Err(AmountError::NotDecimal));
        assert_eq!(to_atomic("1e5", 6), Err(AmountError::NotDecimal));
        assert_eq!(to_atomic("-1", 6), Err(AmountError::NotDecimal));
        assert_eq!(to_atomic(&"9".repeat(70), 18), Err(AmountError::TooLarge));
        assert_eq!(to_human("1500000", 6), "1.5");
        assert_eq!(to_human("1", 6), "0.000001");
        assert_eq!(to_human("0", 6), "0");
        assert_eq!(after_slippage("10000", 50), Some("9950".into()));
        assert_eq!(after_slippage("10000", 10_001), None);
    }

    proptest! {
        #[test]
        fn human_to_atomic_and_back_is_exact(whole in 0u64..1_000_000_000_000, fraction in 0u64..1_000_000_000_000_000_000, decimals in 0u8..=30) {
            let places = usize::from(decimals);
            let fraction_text = format!("{fraction:018}");
            let fraction_text = if places >= 18 { fraction_text } else { fraction_text[..places].to_owned() };
            let human = if places == 0 { whole.to_string() } else { format!("{whole}.{fraction_text}") };
            match to_atomic(&human, decimals) {
                Ok(atomic) => {
                    // The atomic value is whole * 10^decimals + the fraction digits, by digits.
                    let expected = format!("{whole}{fraction_text:0<places$}");
                    prop_assert_eq!(&atomic, expected.trim_start_matches('0'));
                    let back = to_human(&atomic, decimals);
                    prop_assert_eq!(to_atomic(&back, decimals), Ok(atomic));
                }
                Err(err) => prop_assert_eq!(err, AmountError::Zero),
            }
        }

        #[test]
        fn atomic_amounts_survive_the_round_trip(atomic in 1u128.., decimals in 0u8..=36) {
            let human = to_human(&atomic.to_string(), decimals);
            prop_assert_eq!(to_atomic(&human, decimals), Ok(atomic.to_string()));
        }

        #[test]
        fn slippage_never_raises_the_amount(amount in 0u128..u128::MAX / 20_000, bps in 0u32..=10_000) {
            let kept: u128 = after_slippage(&amount.to_string(), bps).and_then(|v| v.parse().ok()).unwrap_or(u128::MAX);
            prop_assert!(kept <= amount);
            prop_assert_eq!(kept, amount * u128::from(10_000 - bps) / 10_000);
        }
    }
}
