//! `nl2sql worker`: serves one embedded datasource over the worker protocol on stdin and
//! stdout until stdin closes. The engine starts it for each datasource with
//! `isolation = "process"`; people do not normally run it by hand. Nothing but the
//! protocol is written to stdout (logs go to standard error).

/// Arguments of `worker`: those of `nl2sql-worker` (`--engine`, `--url`, `--id`,
/// `--row-limit`, `--statement-timeout-ms`, `--max-bytes`).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// `--engine sqlite|duckdb --url URL --id ID [--row-limit N]
    /// [--statement-timeout-ms N] [--max-bytes N]`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<String>,
}

/// Serves until stdin closes: exit 0; bad arguments are a usage error (exit 2).
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let worker = match nl2sql_drivers::worker::WorkerArgs::parse(args.args.iter().cloned()) {
        Ok(worker) => worker,
        Err(message) => {
            eprintln!("error: {message}\n{}", nl2sql_drivers::worker::USAGE);
            return Ok(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(nl2sql_drivers::worker::run_worker(&worker));
    // A read of stdin may still be pending on the blocking pool: do not wait for it.
    runtime.shutdown_background();
    outcome?;
    Ok(0)
}
