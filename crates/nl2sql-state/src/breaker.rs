//! The circuit breaker, one for every dependency that can fail for a while (a database, an
//! LLM endpoint; spec: errors-and-recovery.md §4): `closed` → `open` after `fail_max`
//! consecutive counted failures; calls fail fast while `open`; after the reset timeout ONE
//! trial call runs (`half_open`): its success closes the breaker, its failure opens it
//! again, and a trial abandoned without an outcome (a cancelled call) reopens it, so the
//! breaker never stays half-open for ever. State changes are logged as warnings and
//! counted (`nl2sql.breaker.state_change`, labels `closed`, `open`, `half_open`), counted
//! failures as errors (`nl2sql.breaker.failure`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls run; failures are counted.
    Closed,
    /// Calls fail fast until the reset timeout has passed.
    Open,
    /// One trial call is running.
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

/// When a breaker opens and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Consecutive counted failures that open the breaker (at least 1).
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

/// A circuit breaker around one dependency.
#[derive(Debug)]
pub struct Breaker {
    name: String,
    fail_max: u32,
    reset_timeout: Duration,
    inner: Mutex<Inner>,
}

/// Why a call may not run: the breaker is open (or its trial call is running).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// Time left until a trial call may run.
    pub retry_in: Duration,
}

impl Breaker {
    /// A closed breaker named `name` (used in logs, metrics and errors).
    pub fn new(name: impl Into<String>, config: BreakerConfig) -> Self {
        Breaker {
            name: name.into(),
            fail_max: config.fail_max.max(1),
            reset_timeout: config.reset_timeout,
            inner: Mutex::new(Inner {
                state: BreakerState::Closed,
                failures: 0,
                opened_at: None,
            }),
        }
    }

    /// The dependency's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The current state (an open breaker past its reset timeout is still `Open` until
    /// a call asks to run).
    pub fn state(&self) -> BreakerState {
        self.lock().state
    }

    /// Asks to run a call now. The permit reports the outcome; a permit dropped without
    /// one (a cancelled call) counts as a failure if it was the half-open trial, so the
    /// breaker never stays half-open for ever.
    pub fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        self.try_acquire_at(Instant::now())?;
        Ok(Permit {
            breaker: self,
            done: false,
        })
    }

    /// [`Breaker::try_acquire`] at a given instant, without a permit (for tests of the
    /// state machine; report the outcome with `on_success` / `on_failure_at`).
    pub fn try_acquire_at(&self, now: Instant) -> Result<(), Rejected> {
        let mut inner = self.lock();
        match inner.state {
            BreakerState::Closed => Ok(()),
            BreakerState::HalfOpen => Err(Rejected {
                retry_in: self.reset_timeout,
            }),
            BreakerState::Open => {
                let opened_at = inner.opened_at.unwrap_or(now);
                let elapsed = now.saturating_duration_since(opened_at);
                if elapsed >= self.reset_timeout {
                    self.transition(&mut inner, BreakerState::HalfOpen);
                    Ok(())
                } else {
                    Err(Rejected {
                        retry_in: self.reset_timeout - elapsed,
                    })
                }
            }
        }
    }

    /// Reports a call that reached the dependency and got an answer (including the
    /// excluded errors, which neither count nor trip).
    pub fn on_success(&self) {
        let mut inner = self.lock();
        inner.failures = 0;
        if inner.state != BreakerState::Closed {
            inner.opened_at = None;
            self.transition(&mut inner, BreakerState::Closed);
        }
    }

    /// Reports a counted failure (a timeout, a lost connection, a crash, a 5xx).
    pub fn on_failure(&self) {
        self.on_failure_at(Instant::now());
    }

    /// A permit was dropped without an outcome: a half-open trial is reopened.
    fn on_abandoned(&self) {
        let mut inner = self.lock();
        if inner.state == BreakerState::HalfOpen {
            inner.opened_at = Some(Instant::now());
            self.transition(&mut inner, BreakerState::Open);
        }
    }

    /// [`Breaker::on_failure`] at a given instant.
    pub fn on_failure_at(&self, now: Instant) {
        let mut inner = self.lock();
        inner.failures = inner.failures.saturating_add(1);
        metrics::counter!("nl2sql.breaker.failure", "breaker" => self.name.clone()).increment(1);
        tracing::error!(
            target: "resilience",
            breaker = %self.name,
            failures = inner.failures,
            fail_max = self.fail_max,
            "breaker counted a failure"
        );
        let trips = inner.state == BreakerState::HalfOpen
            || (inner.state == BreakerState::Closed && inner.failures >= self.fail_max);
        if trips {
            inner.opened_at = Some(now);
            self.transition(&mut inner, BreakerState::Open);
        }
    }

    fn transition(&self, inner: &mut Inner, to: BreakerState) {
        if inner.state == to {
            return;
        }
        metrics::counter!(
            "nl2sql.breaker.state_change",
            "breaker" => self.name.clone(),
            "from" => inner.state.as_str(),
            "to" => to.as_str()
        )
        .increment(1);
        tracing::warn!(
            target: "resilience",
            breaker = %self.name,
            from = inner.state.as_str(),
            to = to.as_str(),
            "breaker state change"
        );
        inner.state = to;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked while holding it; the
        // state is still a valid value, so keep using it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Leave to run one call; report its outcome with [`Permit::success`] or
/// [`Permit::failure`].
#[derive(Debug)]
pub struct Permit<'a> {
    breaker: &'a Breaker,
    done: bool,
}

impl Permit<'_> {
    /// The dependency answered (excluded errors included).
    pub fn success(mut self) {
        self.done = true;
        self.breaker.on_success();
    }

    /// Reports the outcome: a counted failure when `counted` is true, else a success.
    pub fn finish(self, counted: bool) {
        if counted {
            self.failure();
        } else {
            self.success();
        }
    }

    /// A counted failure.
    pub fn failure(mut self) {
        self.done = true;
        self.breaker.on_failure();
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.breaker.on_abandoned();
        }
    }
}
