//! The per-datasource DB circuit breaker (spec: errors-and-recovery.md §4).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::types::{ResultError, ResultErrorCode};

/// The state of a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls pass.
    Closed,
    /// Calls fail at once with `SERVICE_UNAVAILABLE`.
    Open,
    /// One trial call runs after the reset timeout.
    HalfOpen,
}

impl BreakerState {
    /// `closed`, `open` or `half_open` (metric labels and logs).
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// Breaker settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Consecutive counted failures that open the breaker.
    pub fail_max: u32,
    /// How long the breaker stays open before a trial call.
    pub reset_timeout: Duration,
}

impl Default for BreakerConfig {
    /// `DB_BREAKER`: 5 failures, 30 s.
    fn default() -> Self {
        BreakerConfig {
            fail_max: 5,
            reset_timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Debug)]
struct Inner {
    state: BreakerState,
    failures: u32,
    opened_at: Option<Instant>,
}

/// A circuit breaker around one datasource's dry-run, cost estimate, execute and schema
/// snapshot calls. Only connectivity failures, timeouts and crashes count
/// ([`ResultErrorCode::counts_for_breaker`]); errors caused by the SQL pass through.
#[derive(Debug)]
pub struct CircuitBreaker {
    name: String,
    config: BreakerConfig,
    inner: Mutex<Inner>,
}

impl CircuitBreaker {
    /// A closed breaker named after its datasource.
    pub fn new(name: impl Into<String>, config: BreakerConfig) -> Self {
        CircuitBreaker {
            name: name.into(),
            config,
            inner: Mutex::new(Inner {
                state: BreakerState::Closed,
                failures: 0,
                opened_at: None,
            }),
        }
    }

    /// The current state (an open breaker past its reset timeout reads as half-open).
    pub fn state(&self) -> BreakerState {
        let inner = self.lock();
        match inner.state {
            BreakerState::Open if self.reset_elapsed(&inner) => BreakerState::HalfOpen,
            s => s,
        }
    }

    /// Asks to make a call: `Err(SERVICE_UNAVAILABLE)` while open, without calling.
    pub fn before_call(&self) -> Result<(), ResultError> {
        let mut inner = self.lock();
        if inner.state == BreakerState::Open {
            if self.reset_elapsed(&inner) {
                self.transition(&mut inner, BreakerState::HalfOpen);
            } else {
                return Err(ResultError::new(
                    ResultErrorCode::ServiceUnavailable,
                    format!(
                        "datasource '{}' is unavailable (circuit breaker open)",
                        self.name
                    ),
                )
                .at("breaker", &self.name));
            }
        }
        Ok(())
    }

    /// Records a call's outcome: `None` for success, or the error it returned.
    pub fn record(&self, error: Option<&ResultError>) {
        let mut inner = self.lock();
        match error {
            Some(e) if e.error_code.counts_for_breaker() => {
                inner.failures += 1;
                metrics::counter!("nl2sql.breaker.failure", "breaker" => self.name.clone())
                    .increment(1);
                tracing::error!(
                    target: "resilience",
                    breaker = %self.name,
                    failures = inner.failures,
                    code = %e.error_code,
                    "counted datasource failure"
                );
                if inner.state == BreakerState::HalfOpen || inner.failures >= self.config.fail_max {
                    inner.opened_at = Some(Instant::now());
                    self.transition(&mut inner, BreakerState::Open);
                }
            }
            _ => {
                inner.failures = 0;
                if inner.state != BreakerState::Closed {
                    inner.opened_at = None;
                    self.transition(&mut inner, BreakerState::Closed);
                }
            }
        }
    }

    fn transition(&self, inner: &mut Inner, to: BreakerState) {
        if inner.state != to {
            metrics::counter!(
                "nl2sql.breaker.state_change",
                "breaker" => self.name.clone(),
                "from" => inner.state.as_str(),
                "to" => to.as_str()
            )
            .increment(1);
            tracing::warn!(target: "resilience", breaker = %self.name, from = inner.state.as_str(), to = to.as_str(), "circuit breaker state change");
            inner.state = to;
        }
    }

    fn reset_elapsed(&self, inner: &Inner) -> bool {
        inner
            .opened_at
            .is_none_or(|t| t.elapsed() >= self.config.reset_timeout)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked while recording; the
        // counters are still meaningful.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
