//! One retry after a lost connection (adapters.md §6.2), shared by the adapters of the
//! server engines: a statement whose pooled connection dropped before anything came back
//! runs once more on a new connection; a second loss is the error. SQL errors are never
//! retried (they are [`Attempt::Done`]). The guard that stops a statement whose call was
//! dropped ([`SpawnOnDrop`]), and what one read-only transaction runs and returns
//! ([`SessionOp`], [`SessionOut`], [`Ran`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Instant;

use nl2sql_state::SchemaSnapshot;

use crate::{AdapterOptions, Limits, ResultError, ResultFrame};

/// What the adapters of the server engines run inside one read-only transaction on a
/// pooled connection; `D` is the engine's own snapshot detail level.
#[derive(Clone)]
pub enum SessionOp<D> {
    /// A round trip (`SELECT 1`).
    Ping,
    /// A checked statement, with its limits and when the call started.
    Execute {
        /// The statement.
        sql: String,
        /// Its limits.
        limits: Limits,
        /// When the call started (for the frame's elapsed time).
        started: Instant,
    },
    /// `EXPLAIN` of a statement.
    Explain(String),
    /// A schema snapshot.
    Snapshot {
        /// The adapter's options (schemas, samples).
        options: AdapterOptions,
        /// How much to read.
        detail: D,
    },
}

/// What a [`SessionOp`] returns.
pub enum SessionOut {
    /// A ping's nothing.
    Unit,
    /// An execution's frame.
    Frame(ResultFrame),
    /// An `EXPLAIN`'s plan.
    Plan(serde_json::Value),
    /// A snapshot.
    Snapshot(Box<SchemaSnapshot>),
}

/// What one transaction did: the op's outcome, and whether the connection is gone.
pub struct Ran {
    /// The op's outcome.
    pub out: Result<SessionOut, ResultError>,
    /// The connection could not finish the transaction: do not reuse it.
    pub lost: bool,
}

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

type Cleanup<T> = Box<dyn FnOnce(T) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// Holds what a running statement needs to be stopped (a cancel token, the connection
/// itself) and, when dropped while it still holds it, stops the statement from a spawned
/// task: the future of the call was dropped (a cancelled or timed-out run). Dropping never
/// blocks. The adapters of the server engines share it (PostgreSQL sends a cancel request,
/// MySQL a `KILL QUERY` while it holds the connection). [`SpawnOnDrop::disarm`] takes the
/// value back once the call has decided for itself.
pub struct SpawnOnDrop<T: Send + 'static> {
    value: Option<T>,
    cleanup: Option<Cleanup<T>>,
}

impl<T: Send + 'static> SpawnOnDrop<T> {
    /// Armed with `value`; `cleanup(value)` runs on the current Tokio runtime if the guard
    /// is dropped armed (outside a runtime it is skipped).
    pub fn new<F, Fut>(value: T, cleanup: F) -> Self
    where
        F: FnOnce(T) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        SpawnOnDrop {
            value: Some(value),
            cleanup: Some(Box::new(move |v| Box::pin(cleanup(v)))),
        }
    }

    /// The value, while armed.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.as_mut()
    }

    /// Takes the value back: nothing runs on drop any more.
    pub fn disarm(&mut self) -> Option<T> {
        self.cleanup = None;
        self.value.take()
    }
}

impl<T: Send + 'static> Drop for SpawnOnDrop<T> {
    fn drop(&mut self) {
        let (Some(value), Some(cleanup)) = (self.value.take(), self.cleanup.take()) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(cleanup(value));
        }
    }
}
