//! One retry after a lost connection (adapters.md §6.2), shared by the adapters of the
//! server engines: a statement whose pooled connection dropped before anything came back
//! runs once more on a new connection; a second loss is the error. SQL errors are never
//! retried (they are [`Attempt::Done`]).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ResultError;

/// The outcome of one attempt at a statement.
#[derive(Debug)]
pub enum Attempt<T> {
    /// The result to return (a success or an error that is not a lost connection).
    Done(Result<T, ResultError>),
    /// The connection dropped before the statement returned anything: worth one retry.
    Lost(ResultError),
}

/// Awaits `first`; when it lost its connection, adds one to `retries`, logs it, and
/// awaits `again()` (which opens a new connection and makes the second attempt). A second
/// lost connection is returned as its error.
pub async fn retry_once_when_lost<T, Again>(
    engine: &str,
    datasource_id: &str,
    retries: &AtomicU64,
    first: impl Future<Output = Attempt<T>>,
    again: impl FnOnce() -> Again,
) -> Result<T, ResultError>
where
    Again: Future<Output = Result<Attempt<T>, ResultError>>,
{
    let lost = match first.await {
        Attempt::Done(out) => return out,
        Attempt::Lost(e) => e,
    };
    retries.fetch_add(1, Ordering::Relaxed);
    tracing::info!(
        datasource = %datasource_id,
        error = ?lost.detail,
        "the {engine} connection dropped under a statement; running it once more"
    );
    match again().await? {
        Attempt::Done(out) => out,
        Attempt::Lost(e) => Err(e),
    }
}
