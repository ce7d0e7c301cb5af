//! The `nl2sql-worker` binary: serves one embedded datasource over the worker protocol on
//! stdin and stdout until stdin closes (see the `nl2sql_worker` library docs).
//!
//! `nl2sql-worker --engine sqlite --url sqlite:///path/file.db --id sales` — exit status 0
//! when stdin ends, 2 on bad arguments, 1 on an IO error on the pipes.

use std::process::ExitCode;

use nl2sql_worker::{USAGE, WorkerArgs, run_worker};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        eprintln!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match WorkerArgs::parse(args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("nl2sql-worker: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("nl2sql-worker: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run_worker(&args));
    // Do not wait for a read of stdin that may still be pending on the blocking pool.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nl2sql-worker: {e}");
            ExitCode::FAILURE
        }
    }
}
