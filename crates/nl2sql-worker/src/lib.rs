//! Out-of-process workers for the embedded engines (spec: errors-and-recovery.md §5, the
//! third sandbox layer): a datasource served by a child process, so that a crash in an
//! engine's native code (SQLite, DuckDB) kills a disposable worker, not the engine.
//!
//! - [`protocol`]: the request/result contract, one JSON object per line:
//!   [`ExecutionRequest`] `{id, mode, sql?, limits, trace_id?}` in,
//!   [`ExecutionResult`] `{id, success, data?, error?, metrics{execution_time_ms}}` out.
//!   Every value of the adapter SPI crosses it without loss: frames as Arrow IPC.
//! - [`serve`]: the worker loop a child runs on its stdin and stdout; [`run_worker`] is
//!   the whole worker process (arguments in [`WorkerArgs`]), used by the `nl2sql-worker`
//!   binary of this crate.
//! - [`ProcessAdapter`]: a `DatasourceAdapter` that forwards every call to a pool of
//!   children, one call per child at a time. A dead or garbled child fails its call
//!   with `EXECUTOR_CRASH`, a hung one with `EXECUTION_TIMEOUT` at the deadline
//!   (statement timeout + margin); either way it is killed and reaped, and the next call
//!   spawns a fresh child. Dropping a call's future kills its child, so no statement runs
//!   on.
//!
//! The worker binary links SQLite; DuckDB only with the `duckdb` cargo feature.

mod driver;
mod process;
pub mod protocol;
mod serve;
mod worker;

pub use driver::WorkerDriver;
pub use process::{DEFAULT_POOL_SIZE, ProcessAdapter, WorkerOptions};
pub use protocol::{
    ExecutionRequest, ExecutionResult, Metrics, Mode, PROTOCOL_VERSION, ProtocolError, ResultData,
    WireFrame, WorkerInfo,
};
pub use serve::{MAX_REQUEST_LINE_BYTES, serve};
pub use worker::{USAGE, WorkerArgs, open_adapter, run_worker, serve_stdio};
