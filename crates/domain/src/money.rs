//! Money as integer USDC atomic units. USDC has 6 decimals, so `1.5` USD is `1_500_000` units.
//! Floats never touch money: they cannot represent `0.1` exactly, and a rounding error in a
//! price is a charge the client did not agree to.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Atomic units per whole USDC.
pub const UNITS_PER_USDC: u64 = 1_000_000;
/// Decimal places of USDC.
pub const DECIMALS: u32 = 6;

/// The smallest credit purchase (and top-up): below it the payment's fees would outweigh the
/// credits.
pub const MIN_CREDIT_PURCHASE: Money = Money::from_atomic(1_000_000);
/// The largest credit purchase in one payment.
pub const MAX_CREDIT_PURCHASE: Money = Money::from_atomic(1_000_000_000);

/// An amount of USDC in atomic units. Serialised as a decimal string (`"0.012"`) because
/// JSON numbers are floats to most clients.
///
/// Text and arithmetic never make more than [`Money::MAX`], so every amount that enters from
/// a request fits where it is stored; [`Money::from_atomic`] is for amounts svc computed or
/// read back from its own store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(u64);

/// Why an amount could not be parsed or computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    /// The text is not a plain non-negative decimal like `0.012`.
    #[error("not a decimal amount: {0:?}")]
    Syntax(String),
    /// More than 6 decimals: USDC cannot represent it.
    #[error("more than 6 decimal places: {0:?}")]
    TooPrecise(String),
    /// The amount is above [`Money::MAX`].
    #[error("more than the largest amount, {}", Money::MAX)]
    Overflow,
}

impl Money {
    /// Zero USDC.
    pub const ZERO: Money = Money(0);

    /// The largest amount: `i64::MAX` atomic units (about 9.2 trillion USDC, far beyond every
    /// USDC in existence), what the store's `BIGINT` columns hold. Above it an amount is a
    /// mistake or an attack, refused where it is read instead of failing where it is stored.
    pub const MAX: Money = Money(i64::MAX.unsigned_abs());

    /// An amount from atomic units (`1_000_000` = 1 USDC).
    pub const fn from_atomic(units: u64) -> Self {
        Money(units)
    }

    /// The amount in atomic units, as it travels in x402 `amount` fields.
    pub const fn atomic(self) -> u64 {
        self.0
    }

    /// Sum, or `None` above [`Money::MAX`].
    pub fn checked_add(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).map(Money).filter(|sum| *sum <= Money::MAX)
    }

    /// Difference, or `None` if it would go negative.
    pub fn checked_sub(self, other: Money) -> Option<Money> {
        self.0.checked_sub(other.0).map(Money)
    }

    /// Multiplies by a count (e.g. per-item pricing), or `None` above [`Money::MAX`].
    pub fn checked_mul(self, n: u64) -> Option<Money> {
        self.0.checked_mul(n).map(Money).filter(|product| *product <= Money::MAX)
    }

    /// Takes `percent_off` percent off, rounding the discounted price *up* to the next atomic
    /// unit, so a discount never makes a price free by rounding.
    pub fn discounted(self, percent_off: u8) -> Money {
        let pct = u128::from(percent_off.min(100));
        let kept = u128::from(self.0) * (100 - pct);
        // Ceiling division; the result is <= self.0 so it fits in u64.
        let units = kept.div_ceil(100);
        Money(u64::try_from(units).unwrap_or(self.0))
    }
}

impl fmt::Display for Money {
    /// Shortest decimal form: `0.5`, `0.012`, `1`, `0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / UNITS_PER_USDC;
        let frac = self.0 % UNITS_PER_USDC;
        if frac == 0 {
            return write!(f, "{whole}");
        }
        let digits = format!("{frac:06}");
        write!(f, "{whole}.{}", digits.trim_end_matches('0'))
    }
}

impl FromStr for Money {
    type Err = MoneyError;

    /// Parses `"0.012"`, `"1"`, `"1.50"`. Rejects signs, exponents, spaces, more than six
    /// decimals and amounts above [`Money::MAX`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || MoneyError::Syntax(s.to_owned());
        let (whole, frac) = match s.split_once('.') {
            Some((w, f)) => (w, f),
            None => (s, ""),
        };
        let digits_only = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits_only(whole) || !digits_only(frac) || (s.contains('.') && frac.is_empty()) {
            return Err(syntax());
        }
        if frac.len() > DECIMALS as usize {
            return Err(MoneyError::TooPrecise(s.to_owned()));
        }
        let whole: u64 = whole.parse().map_err(|_| MoneyError::Overflow)?;
        let frac_units: u64 = if frac.is_empty() {
            0
        } else {
            let padded = format!("{frac:0<6}");
            padded.parse().map_err(|_| syntax())?
        };
        whole
            .checked_mul(UNITS_PER_USDC)
            .and_then(|w| w.checked_add(frac_units))
            .map(Money)
            .filter(|amount| *amount <= Money::MAX)
            .ok_or(MoneyError::Overflow)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Money {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UsdAmount".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9]+(\\.[0-9]{1,6})?$",
            "description": "An amount in USD(C) as a decimal string with at most 6 decimals, e.g. \"0.012\", up to 9223372036854.775807.",
            "examples": ["0.5"]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_and_prints_the_shortest_decimal() {
        for (text, units, shown) in [
            ("0.012", 12_000, "0.012"),
            ("0.50", 500_000, "0.5"),
            ("1", 1_000_000, "1"),
            ("1.2", 1_200_000, "1.2"),
            ("0.000001", 1, "0.000001"),
            ("0", 0, "0"),
        ] {
            let m: Money = text.parse().expect("valid amount");
            assert_eq!(m.atomic(), units, "{text}");
            assert_eq!(m.to_string(), shown);
        }
    }

    #[test]
    fn refuses_what_usdc_cannot_represent() {
        for bad in ["", ".5", "5.", "-1", "+1", "1e3", " 1", "1.0000001", "0x10", "1.2.3", "١"] {
            assert!(bad.parse::<Money>().is_err(), "{bad:?} should be refused");
        }
        assert_eq!("99999999999999999999".parse::<Money>(), Err(MoneyError::Overflow));
    }

    #[test]
    fn the_largest_amount_is_what_the_store_holds() {
        assert_eq!("9223372036854.775807".parse::<Money>(), Ok(Money::MAX));
        assert_eq!(Money::MAX.atomic(), i64::MAX as u64);
        for above in ["9223372036854.775808", "18446744073709.551615", "18446744073709.551616", "9223372036854776"] {
            assert_eq!(above.parse::<Money>(), Err(MoneyError::Overflow), "{above}");
        }
        assert_eq!(Money::MAX.checked_add(Money::from_atomic(1)), None);
        assert_eq!(Money::MAX.checked_mul(2), None);
        assert_eq!(Money::from_atomic(1).checked_mul(i64::MAX as u64), Some(Money::MAX));
    }

    /// The amount `text` names, by long arithmetic on its digits: the parser's reference.
    fn reference(text: &str) -> Result<u128, MoneyError> {
        let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
        if frac.len() > DECIMALS as usize {
            return Err(MoneyError::TooPrecise(text.to_owned()));
        }
        let digits = format!("{whole}{frac:0<6}");
        let mut units: u128 = 0;
        for digit in digits.bytes() {
            units = units * 10 + u128::from(digit - b'0');
            if units > u128::from(Money::MAX.atomic()) {
                return Err(MoneyError::Overflow);
            }
        }
        Ok(units)
    }

    #[test]
    fn discounts_round_up_and_never_reach_zero_for_a_priced_call() {
        let p = Money::from_atomic(12_000);
        assert_eq!(p.discounted(0), p);
        assert_eq!(p.discounted(20).atomic(), 9_600);
        assert_eq!(p.discounted(40).atomic(), 7_200);
        assert_eq!(Money::from_atomic(1).discounted(40).atomic(), 1);
        assert_eq!(Money::from_atomic(5).discounted(100).atomic(), 0);
    }

    proptest! {
        #[test]
        fn parsing_arbitrary_text_never_panics(s in ".*") {
            let _ = s.parse::<Money>();
        }

        #[test]
        fn every_amount_up_to_the_largest_round_trips_and_none_above(units in any::<u64>()) {
            let parsed = Money::from_atomic(units).to_string().parse::<Money>();
            if units <= Money::MAX.atomic() {
                prop_assert_eq!(parsed, Ok(Money::from_atomic(units)));
            } else {
                prop_assert_eq!(parsed, Err(MoneyError::Overflow));
            }
        }

        #[test]
        fn decimals_parse_to_the_amount_long_arithmetic_gives(text in "[0-9]{1,30}(\\.[0-9]{1,8})?") {
            let parsed = text.parse::<Money>().map(|m| u128::from(m.atomic()));
            prop_assert_eq!(parsed, reference(&text));
        }

        #[test]
        fn sums_and_products_never_pass_the_largest_amount(a in any::<u64>(), b in any::<u64>()) {
            let (a, b) = (Money::from_atomic(a % (Money::MAX.atomic() + 1)), Money::from_atomic(b));
            let exact = u128::from(a.atomic()) + u128::from(b.atomic());
            let fits = exact <= u128::from(Money::MAX.atomic());
            prop_assert_eq!(a.checked_add(b).map(|m| u128::from(m.atomic())), fits.then_some(exact));
            let exact = u128::from(a.atomic()) * u128::from(b.atomic());
            let fits = exact <= u128::from(Money::MAX.atomic());
            prop_assert_eq!(a.checked_mul(b.atomic()).map(|m| u128::from(m.atomic())), fits.then_some(exact));
        }

        #[test]
        fn discount_never_increases_a_price(units in any::<u64>(), pct in 0u8..=255) {
            prop_assert!(Money::from_atomic(units).discounted(pct) <= Money::from_atomic(units));
        }
    }
}
