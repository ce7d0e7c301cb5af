//! A small circuit breaker (spec: errors-and-recovery.md §4): `closed` → `open` after
//! `fail_max` consecutive counted failures, calls fail fast while `open`, and after the
//! reset timeout one trial call runs (`half-open`): success closes the breaker, failure
//! opens it again. State changes are logged as warnings, counted failures as errors.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BreakerState {
    /// Calls run; failures are counted.
    Closed,
    /// Calls fail fast until the reset timeout has passed.
    Open,
    /// One trial call is running.
    HalfOpen,
}

impl BreakerState {
    fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half-open",
        }
    }
}

#[derive(Debug)]
struct Inner {
    state: BreakerState,
    failures: u32,
    opened_at: Option<Instant>,
}

/// A circuit breaker around one dependency (an LLM endpoint).
#[derive(Debug)]
pub(crate) struct Breaker {
    name: String,
    fail_max: u32,
    reset_timeout: Duration,
    inner: Mutex<Inner>,
}

/// Why a call may not run: the breaker is open (or its trial call is running).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected {
    /// Time left until a trial call may run.
    pub(crate) retry_in: Duration,
}

impl Breaker {
    /// A closed breaker named `name` (used in logs and errors).
    pub(crate) fn new(name: impl Into<String>, fail_max: u32, reset_timeout: Duration) -> Self {
        Breaker {
            name: name.into(),
            fail_max: fail_max.max(1),
            reset_timeout,
            inner: Mutex::new(Inner {
                state: BreakerState::Closed,
                failures: 0,
                opened_at: None,
            }),
        }
    }

    /// The dependency's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The current state.
    #[cfg(test)]
    pub(crate) fn state(&self) -> BreakerState {
        self.lock().state
    }

    /// Asks to run a call now. The permit reports the outcome; a permit dropped without
    /// one (a cancelled call) counts as a failure if it was the half-open trial, so the
    /// breaker never stays half-open for ever.
    pub(crate) fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        self.try_acquire_at(Instant::now())?;
        Ok(Permit {
            breaker: self,
            done: false,
        })
    }

    pub(crate) fn try_acquire_at(&self, now: Instant) -> Result<(), Rejected> {
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
    pub(crate) fn on_success(&self) {
        let mut inner = self.lock();
        inner.failures = 0;
        if inner.state != BreakerState::Closed {
            inner.opened_at = None;
            self.transition(&mut inner, BreakerState::Closed);
        }
    }

    /// Reports a counted failure (timeout, connection failure, 5xx).
    pub(crate) fn on_failure(&self) {
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

    pub(crate) fn on_failure_at(&self, now: Instant) {
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
pub(crate) struct Permit<'a> {
    breaker: &'a Breaker,
    done: bool,
}

impl Permit<'_> {
    /// The dependency answered (excluded errors included).
    pub(crate) fn success(mut self) {
        self.done = true;
        self.breaker.on_success();
    }

    /// A counted failure.
    pub(crate) fn failure(mut self) {
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
