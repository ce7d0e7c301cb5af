//! The demo's random numbers: splitmix64, seeded per table, so that the same seed always
//! gives the same data on every machine (no `rand`, no clock).

use nl2sql_state::SplitMix64;

/// The demo's generator: `nl2sql_state::SplitMix64` with the draws the data needs.
pub(crate) struct Rng(SplitMix64);

impl Rng {
    /// A generator for `seed`; `stream` separates the tables of one seed.
    pub(crate) fn new(seed: u64, stream: &str) -> Self {
        Rng(SplitMix64::with_stream(seed, stream))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1).max(1) as usize;
        lo + self.below(span) as i64
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    /// Uniform in `[lo, hi)`.
    pub(crate) fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One item of a non-empty slice.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index drawn with the given weights (the first when all are 0).
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut x = self.below(total as usize) as u64;
        for (i, w) in weights.iter().enumerate() {
            if x < u64::from(*w) {
                return i;
            }
            x -= u64::from(*w);
        }
        0
    }

    /// An index in `0..n` skewed towards the start (a few big customers, many small).
    pub(crate) fn skewed(&mut self, n: usize) -> usize {
        let u = self.unit();
        ((u * u * n as f64) as usize).min(n.saturating_sub(1))
    }
}

/// `x` rounded to two decimals (money).
pub(crate) fn money(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `x` rounded to one decimal.
pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
