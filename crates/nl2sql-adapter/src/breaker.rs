//! The per-datasource DB circuit breaker (spec: errors-and-recovery.md §4): the one
//! breaker of the workspace, `nl2sql_state::Breaker`, with what a datasource adds: a
//! refusal is a [`ResultError`] (`SERVICE_UNAVAILABLE`), and only connectivity failures,
//! timeouts and crashes count ([`ResultErrorCode::counts_for_breaker`]); errors caused by
//! the SQL pass through.
//!
//! A call holds a [`Permit`] from [`DatasourceBreaker::enter`] to [`PermitOutcome::settle`]:
//! a call whose future is dropped (cancelled) drops its permit, which reopens a half-open
//! breaker instead of leaving it waiting for an outcome that never comes.

pub use nl2sql_state::{Breaker as CircuitBreaker, BreakerConfig, BreakerState, Permit};

use crate::types::{ResultError, ResultErrorCode};

/// A datasource's use of a [`CircuitBreaker`].
pub trait DatasourceBreaker {
    /// Asks to make a call: `SERVICE_UNAVAILABLE` while the breaker is open (or its one
    /// trial call is running), without calling.
    fn enter(&self) -> Result<Permit<'_>, ResultError>;
}

impl DatasourceBreaker for CircuitBreaker {
    fn enter(&self) -> Result<Permit<'_>, ResultError> {
        self.try_acquire().map_err(|rejected| {
            ResultError::new(
                ResultErrorCode::ServiceUnavailable,
                format!(
                    "datasource '{}' is unavailable (circuit breaker open, next trial in {} ms)",
                    self.name(),
                    rejected.retry_in.as_millis()
                ),
            )
            .at("breaker", self.name())
        })
    }
}

/// How a datasource call reports its outcome to its permit.
pub trait PermitOutcome {
    /// `None` for success, or the error the call returned: only errors that
    /// [`ResultErrorCode::counts_for_breaker`] count as failures.
    fn settle(self, error: Option<&ResultError>);
}

impl PermitOutcome for Permit<'_> {
    fn settle(self, error: Option<&ResultError>) {
        self.finish(error.is_some_and(|e| e.error_code.counts_for_breaker()));
    }
}
