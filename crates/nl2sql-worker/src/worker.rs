//! The worker process: its arguments (`--engine`, `--url`, `--id`, limits), the adapter
//! they open, and the loop on stdin and stdout.

use std::io;
use std::sync::Arc;

use nl2sql_adapter::{AdapterOptions, DatasourceAdapter, Limits, ResultError, ResultErrorCode};
use nl2sql_state::Engine;

use crate::serve::{Source, serve_source};

/// The usage text of the worker's arguments.
pub const USAGE: &str = "usage: nl2sql-worker --url <sqlite:///path | duckdb:///path> --id <datasource id> \
[--engine sqlite|duckdb] [--row-limit N] [--statement-timeout-ms N] [--max-bytes N] \
[--schema-stats-timeout-ms N] [--schema-stats-sample-rows N]";

/// The datasource a worker process serves, as given on its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerArgs {
    /// The engine (an embedded one: `sqlite`, `duckdb`).
    pub engine: Engine,
    /// The datasource id.
    pub id: String,
    /// The database URL (a file path: no credentials).
    pub url: String,
    /// The datasource's limits.
    pub limits: Limits,
    /// The adapter's options (the snapshot's statistics budget and sample size; a file
    /// has no connect timeout).
    pub options: AdapterOptions,
}

impl WorkerArgs {
    /// Parses `--engine E --url U --id I [--row-limit N] [--statement-timeout-ms N]
    /// [--max-bytes N] [--schema-stats-timeout-ms N] [--schema-stats-sample-rows N]` (also
    /// `--key=value`). The engine defaults to the URL's; limits and options default to
    /// the built-in defaults. Server engines are refused: workers are for the
    /// embedded engines.
    pub fn parse<I, S>(args: I) -> Result<WorkerArgs, String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut engine = None;
        let mut id = None;
        let mut url = None;
        let mut limits = Limits::default();
        let mut options = AdapterOptions::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (key, inline) = match arg.split_once('=') {
                Some((k, v)) if k.starts_with("--") => (k.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{key} needs a value"))
            };
            match key.as_str() {
                "--engine" => engine = Some(parse_engine(&value()?)?),
                "--url" => url = Some(value()?),
                "--id" => id = Some(value()?),
                "--row-limit" => limits.row_limit = positive(&key, &value()?)?,
                "--statement-timeout-ms" => {
                    limits.statement_timeout_ms = positive(&key, &value()?)?;
                }
                "--max-bytes" => limits.max_bytes = positive(&key, &value()?)?,
                "--schema-stats-timeout-ms" => {
                    options.schema_stats_timeout_ms = positive(&key, &value()?)?;
                }
                "--schema-stats-sample-rows" => {
                    options.schema_stats_sample_rows = positive(&key, &value()?)?;
                }
                _ => return Err(format!("unexpected argument '{arg}'")),
            }
        }
        let url = url.ok_or("--url is required")?;
        let id = id.ok_or("--id is required")?;
        let engine = match engine {
            Some(engine) => engine,
            None => Engine::from_url(&url)
                .ok_or("--engine is required when the URL has no known scheme")?,
        };
        if engine.is_server() {
            return Err(format!(
                "workers run only embedded engines (sqlite, duckdb), not {engine}"
            ));
        }
        Ok(WorkerArgs {
            engine,
            id,
            url,
            limits,
            options,
        })
    }

    /// The command-line arguments that [`WorkerArgs::parse`] reads back into `self`.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--engine".to_owned(),
            self.engine.as_str().to_owned(),
            "--url".to_owned(),
            self.url.clone(),
            "--id".to_owned(),
            self.id.clone(),
            "--row-limit".to_owned(),
            self.limits.row_limit.to_string(),
            "--statement-timeout-ms".to_owned(),
            self.limits.statement_timeout_ms.to_string(),
            "--max-bytes".to_owned(),
            self.limits.max_bytes.to_string(),
            "--schema-stats-timeout-ms".to_owned(),
            self.options.schema_stats_timeout_ms.to_string(),
            "--schema-stats-sample-rows".to_owned(),
            self.options.schema_stats_sample_rows.to_string(),
        ]
    }
}

fn parse_engine(value: &str) -> Result<Engine, String> {
    let lower = value.to_ascii_lowercase();
    Engine::ALL
        .into_iter()
        .find(|e| e.schemes().contains(&lower.as_str()))
        .ok_or_else(|| format!("unknown engine '{value}' (expected sqlite or duckdb)"))
}

fn positive(key: &str, value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{key}: '{value}' is not a whole number > 0")),
    }
}

/// Opens the adapter `args` name, in this process. An engine this build lacks is
/// `SERVICE_UNAVAILABLE`.
pub fn open_adapter(args: &WorkerArgs) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    match args.engine {
        Engine::Sqlite => {
            let adapter = nl2sql_adapter_sqlite::SqliteAdapter::from_url_with_options(
                &args.id,
                &args.url,
                args.limits,
                args.options,
            )?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "duckdb")]
        Engine::Duckdb => {
            let adapter = nl2sql_adapter_duckdb::DuckDbAdapter::from_url_with_options(
                &args.id,
                &args.url,
                args.limits,
                args.options,
            )?;
            Ok(Arc::new(adapter))
        }
        engine => Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            format!(
                "this worker has no {engine} engine (cargo feature '{engine}' of nl2sql-worker)"
            ),
        )
        .at("connect", &args.id)),
    }
}

/// What a worker process does: opens the adapter `args` name and serves it on stdin and
/// stdout until stdin ends. When the adapter cannot be opened, every request is answered
/// with that error (so the caller sees `SERVICE_UNAVAILABLE` and why, not a crash).
pub async fn run_worker(args: &WorkerArgs) -> io::Result<()> {
    let source = match open_adapter(args) {
        Ok(adapter) => Source::Adapter(adapter),
        Err(error) => {
            tracing::warn!(target: "nl2sql::worker", datasource = %args.id, error = %error, "the worker cannot open its datasource");
            Source::Unavailable(error)
        }
    };
    let (reader, writer) = stdio()?;
    serve_source(&source, reader, writer).await
}

/// [`crate::serve`] on this process's stdin and stdout. Nothing else may write to stdout
/// meanwhile (logs go to stderr).
pub async fn serve_stdio(adapter: Arc<dyn DatasourceAdapter>) -> io::Result<()> {
    let (reader, writer) = stdio()?;
    crate::serve(adapter, reader, writer).await
}

/// Stdin and stdout as tokio streams (duplicated descriptors read and written on tokio's
/// blocking pool).
#[cfg(unix)]
fn stdio() -> io::Result<(tokio::io::BufReader<tokio::fs::File>, tokio::fs::File)> {
    use std::os::fd::AsFd;
    let stdin = io::stdin().as_fd().try_clone_to_owned()?;
    let stdout = io::stdout().as_fd().try_clone_to_owned()?;
    Ok((
        tokio::io::BufReader::new(tokio::fs::File::from_std(std::fs::File::from(stdin))),
        tokio::fs::File::from_std(std::fs::File::from(stdout)),
    ))
}

/// Stdin and stdout as tokio streams (duplicated handles read and written on tokio's
/// blocking pool).
#[cfg(windows)]
fn stdio() -> io::Result<(tokio::io::BufReader<tokio::fs::File>, tokio::fs::File)> {
    use std::os::windows::io::AsHandle;
    let stdin = io::stdin().as_handle().try_clone_to_owned()?;
    let stdout = io::stdout().as_handle().try_clone_to_owned()?;
    Ok((
        tokio::io::BufReader::new(tokio::fs::File::from_std(std::fs::File::from(stdin))),
        tokio::fs::File::from_std(std::fs::File::from(stdout)),
    ))
}

#[cfg(test)]
mod tests;
