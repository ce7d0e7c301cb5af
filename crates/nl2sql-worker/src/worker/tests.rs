//! Unit tests of the worker's command line.

use nl2sql_adapter::{AdapterOptions, Limits, ResultErrorCode};
use nl2sql_state::Engine;

use super::*;

fn check(args: &[&str], expect: Result<WorkerArgs, &str>) {
    let got = WorkerArgs::parse(args.iter().copied());
    match expect {
        Ok(want) => {
            let got = got.unwrap();
            assert_eq!(got, want);
            // What `to_args` writes parses back to the same arguments.
            assert_eq!(WorkerArgs::parse(got.to_args()).unwrap(), got);
        }
        Err(message) => {
            let err = got.unwrap_err();
            assert!(err.contains(message), "{args:?}: {err}");
        }
    }
}

fn sqlite(url: &str, id: &str, limits: Limits) -> WorkerArgs {
    WorkerArgs {
        engine: Engine::Sqlite,
        id: id.to_owned(),
        url: url.to_owned(),
        limits,
        options: AdapterOptions::default(),
    }
}

#[test]
fn reads_engine_url_id_and_limits() {
    check(
        &[
            "--engine",
            "sqlite",
            "--url",
            "sqlite:///d/a.db",
            "--id",
            "sales",
        ],
        Ok(sqlite("sqlite:///d/a.db", "sales", Limits::default())),
    );
    check(
        &[
            "--url=sqlite:///d/a=b.db",
            "--id=x",
            "--row-limit=5",
            "--statement-timeout-ms",
            "250",
            "--max-bytes",
            "1024",
        ],
        Ok(sqlite(
            "sqlite:///d/a=b.db",
            "x",
            Limits {
                row_limit: 5,
                statement_timeout_ms: 250,
                max_bytes: 1024,
            },
        )),
    );
    check(
        &[
            "--engine",
            "DuckDB",
            "--url",
            "duckdb:///d/a.duckdb",
            "--id",
            "d",
        ],
        Ok(WorkerArgs {
            engine: Engine::Duckdb,
            id: "d".to_owned(),
            url: "duckdb:///d/a.duckdb".to_owned(),
            limits: Limits::default(),
            options: AdapterOptions::default(),
        }),
    );
    check(
        &[
            "--url",
            "sqlite:///d/a.db",
            "--id",
            "s",
            "--schema-stats-timeout-ms",
            "900",
            "--schema-stats-sample-rows=50",
        ],
        Ok(WorkerArgs {
            options: AdapterOptions {
                schema_stats_timeout_ms: 900,
                schema_stats_sample_rows: 50,
                ..AdapterOptions::default()
            },
            ..sqlite("sqlite:///d/a.db", "s", Limits::default())
        }),
    );
}

#[test]
fn refuses_bad_arguments() {
    check(&["--id", "x"], Err("--url is required"));
    check(&["--url", "sqlite:///a.db"], Err("--id is required"));
    check(
        &["--url", "/a.db", "--id", "x"],
        Err("--engine is required"),
    );
    check(
        &["--engine", "oracle", "--url", "/a.db", "--id", "x"],
        Err("unknown engine 'oracle'"),
    );
    check(
        &["--url", "postgres://u@h/db", "--id", "x"],
        Err("only embedded engines"),
    );
    check(
        &["--url", "sqlite:///a.db", "--id", "x", "--row-limit", "0"],
        Err("--row-limit: '0'"),
    );
    check(
        &["--url", "sqlite:///a.db", "--id"],
        Err("--id needs a value"),
    );
    check(
        &["--url", "sqlite:///a.db", "--id", "x", "extra"],
        Err("unexpected argument 'extra'"),
    );
}

#[test]
fn an_engine_this_build_lacks_is_service_unavailable() {
    let args = WorkerArgs {
        engine: Engine::Mysql,
        ..sqlite("mysql://h/db", "m", Limits::default())
    };
    let err = open_adapter(&args).err().unwrap();
    assert_eq!(err.error_code, ResultErrorCode::ServiceUnavailable);
    assert_eq!(err.datasource_id.as_deref(), Some("m"));
    let missing = sqlite("sqlite:///no/such/file.db", "s", Limits::default());
    let err = open_adapter(&missing).err().unwrap();
    assert_eq!(err.error_code, ResultErrorCode::ServiceUnavailable);
}
