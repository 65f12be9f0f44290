//! The console's charts (the overview's spend, a seller agent's revenue): a bar a day, stacked
//! by kind, drawn as SVG on the server so they show without JavaScript. Each bar says its day
//! and amount in a `<title>`.

use svc_domain::Money;
use svc_store::DailySpend;

/// The chart's drawing area, in SVG units.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 160.0;
/// The overview's products, bottom to top, each its CSS class.
pub(crate) const PRODUCTS: &[&str] = &["data", "llm", "sandbox"];

/// One rectangle of the chart.
#[derive(Debug)]
pub(crate) struct Bar {
    pub x: String,
    pub y: String,
    pub width: String,
    pub height: String,
    pub product: &'static str,
    pub title: String,
}

/// The chart, ready to draw.
#[derive(Debug)]
pub(crate) struct SpendChart {
    /// The drawing area, in SVG units: the `viewBox`.
    pub width: f64,
    pub height: f64,
    pub bars: Vec<Bar>,
    /// The largest day's spend, USD: the top of the scale.
    pub top: String,
    /// The first and last day, `YYYY-MM-DD`.
    pub first_day: String,
    pub last_day: String,
    /// Whether anything was spent at all.
    pub empty: bool,
}

impl SpendChart {
    /// The chart of `spent` over `days` days from `since_ms` (the start of a UTC day).
    pub(crate) fn new(spent: &[DailySpend], since_ms: i64, days: i64) -> Self {
        let points: Vec<(i64, &str, i64)> = spent.iter().map(|s| (s.day, s.product.as_str(), s.amount)).collect();
        Self::of(&points, PRODUCTS, since_ms, days)
    }

    /// The chart of `points` (day from `since_ms`, kind, amount) over `days` days, stacked in
    /// the order of `kinds`; points of another kind are left out.
    pub(crate) fn of(points: &[(i64, &str, i64)], kinds: &'static [&'static str], since_ms: i64, days: i64) -> Self {
        let slots = usize::try_from(days).unwrap_or(0);
        let mut by_day = vec![vec![0i64; kinds.len()]; slots];
        for (day, kind, amount) in points {
            let (Ok(day), Some(kind)) = (usize::try_from(*day), kinds.iter().position(|k| k == kind)) else {
                continue;
            };
            if let Some(slot) = by_day.get_mut(day) {
                slot[kind] += amount;
            }
        }
        let top = by_day.iter().map(|d| d.iter().map(|a| (*a).max(0)).sum::<i64>()).max().unwrap_or(0);
        let step = WIDTH / days.max(1) as f64;
        let mut bars = Vec::new();
        for (day, amounts) in by_day.iter().enumerate() {
            let mut base = HEIGHT;
            let date = date_of(since_ms + i64::try_from(day).unwrap_or(0) * 86_400_000);
            for (product, amount) in kinds.iter().zip(amounts) {
                if *amount <= 0 || top == 0 {
                    continue;
                }
                let height = *amount as f64 / top as f64 * HEIGHT;
                base -= height;
                bars.push(Bar {
                    x: format!("{:.1}", day as f64 * step + 1.0),
                    y: format!("{base:.1}"),
                    width: format!("{:.1}", (step - 2.0).max(1.0)),
                    height: format!("{height:.1}"),
                    product,
                    title: format!("{date}: {} USD, {product}", usd(*amount)),
                });
            }
        }
        SpendChart {
            width: WIDTH,
            height: HEIGHT,
            empty: bars.is_empty(),
            bars,
            top: usd(top),
            first_day: date_of(since_ms),
            last_day: date_of(since_ms + (days - 1) * 86_400_000),
        }
    }
}

fn usd(atomic: i64) -> String {
    Money::from_atomic(u64::try_from(atomic).unwrap_or(0)).to_string()
}

/// `YYYY-MM-DD` of a unix-ms time.
fn date_of(ms: i64) -> String {
    svc_domain::rfc3339(ms).chars().take(10).collect()
}
