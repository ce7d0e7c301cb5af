//! The workspace's one backoff and one seeded generator: every retry (the SQL agent's
//! re-plans, the LLM client's re-sends) waits [`Backoff::delay`], and every random number
//! (retry jitter, the demo's synthetic data) comes from a [`SplitMix64`], so the same seed
//! gives the same numbers on every machine.

use std::time::Duration;

/// Exponential backoff with bounded jitter: `min(max, base·2ⁿ) + jitter·u` for the n-th
/// retry (n from 0) and a uniform `u` in `[0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first delay.
    pub base: Duration,
    /// The cap of the exponential part.
    pub max: Duration,
    /// The bound of the random part added to it.
    pub jitter: Duration,
}

impl Backoff {
    /// The delay before retry `n` (0 for the first), with `unit` drawn uniformly from
    /// `[0, 1)` (values outside are clamped).
    pub fn delay(&self, n: u32, unit: f64) -> Duration {
        let exp = self
            .base
            .saturating_mul(2u32.saturating_pow(n.min(16)))
            .min(self.max);
        exp + self.jitter.mul_f64(unit.clamp(0.0, 1.0 - f64::EPSILON))
    }
}

/// The splitmix64 generator: small, fast, and the same sequence for the same seed
/// everywhere (no `rand`, no clock unless the caller seeds from one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator for `seed` and a named stream (FNV-1a of the name mixed into the seed),
    /// so that streams of one seed differ.
    pub fn with_stream(seed: u64, stream: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in stream.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        SplitMix64(seed ^ h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` (53 random bits).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
