//! The `nl2sql` binary: argument parsing, output formats and exit codes only; every
//! decision is made by the library crates.
//!
//! Exit codes: 0 = ok, 1 = findings that block (rewrite or rejected), a failed
//! `datasources test` or `doctor` check, or a policy with integrity errors, 2 = usage or
//! configuration error, 3 = a datasource could not be reached or described.
//!
//! Before any command: the env file is applied ([`env_file`]), logging is set up, and
//! every setting is parsed ([`settings::validate`]): a bad or unsupported one is a
//! configuration error naming it (exit 2), whatever the command.

#![allow(clippy::print_stdout)] // reason: a CLI writes its results to standard output

mod ask;
mod benchmark;
mod benchmark_spider;
mod columns;
mod datasources;
mod doctor;
mod env_file;
mod list_adapters;
mod logging;
mod mcp;
mod plan_dag;
mod policy;
mod render_plan;
mod run_commands;
mod serve;
mod settings;
mod source;
mod validate_plan;
mod validate_sql;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Answers questions over databases, safely.
#[derive(Debug, Parser)]
#[command(name = "nl2sql", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Answers a question in plain English over the datasources (by default the
    /// embedded demo, created on first use) and prints the answer and its table.
    #[command(visible_alias = "run")]
    Ask(ask::Args),
    /// Creates the demo datasets (DuckDB and SQLite databases, config, policy, questions).
    Demo(run_commands::DemoArgs),
    /// Snapshots and indexes every datasource (the demo when none is given).
    Index(run_commands::IndexArgs),
    /// Inspects recorded runs.
    Runs(run_commands::RunsArgs),
    /// Checks that one SQL statement is a safe, valid, read-only query over a schema.
    ValidateSql(validate_sql::Args),
    /// Validates a PlanModel (JSON) against a schema and policy.
    ValidatePlan(validate_plan::Args),
    /// Prints the SQL of a PlanModel (JSON) in one dialect.
    RenderPlan(render_plan::Args),
    /// Validates a DecomposerResponse progressively and prints its ExecutionDAG.
    PlanDag(plan_dag::Args),
    /// Lists, tests and describes datasources (from --config FILE or --db URL).
    Datasources(datasources::Args),
    /// Checks a setup: configuration, policy and documentation files, datasource
    /// connectivity, schema snapshots and index, and (with --llm-config) the LLM endpoint.
    Doctor(doctor::Args),
    /// Lists the adapters compiled into this binary: URL schemes, dialect, capabilities.
    ListAdapters(list_adapters::Args),
    /// Checks an RBAC policy file against the configuration and the datasources' schemas.
    Policy(policy::Args),
    /// Runs a golden dataset (questions with their expected datasources and SQL) per
    /// planner and prints per-case results and accuracy metrics.
    Benchmark(benchmark::Args),
    /// Serves the REST API (docs/rest-api.md) over the datasources, with API-key
    /// authentication; Ctrl-C stops it.
    Serve(serve::Args),
    /// Serves the Model Context Protocol (docs/mcp.md) on stdin and stdout, for agents
    /// and editors; `serve` mounts the same server at /mcp over HTTP.
    Mcp(mcp::Args),
    /// Serves one embedded datasource over the worker protocol on stdin and stdout (run
    /// by the engine for datasources with isolation = "process").
    Worker(worker::Args),
}

/// The binary's allocator. The guard, the planner and the engine allocate many small,
/// short-lived objects (tokens, syntax trees, plans); mimalloc serves them faster than the
/// system allocator (`docs/benchmarks.md`, `guard_spider/check`). DuckDB's and SQLite's C
/// code keep their own allocation.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match env_file::apply() {
        Ok(None) => {}
        Ok(Some(code)) => return ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            return ExitCode::from(2);
        }
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    if let Err(err) = logging::init().and_then(|()| settings::validate(&settings::process_env)) {
        eprintln!("error: {err:#}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Ask(args) => ask::run(&args),
        Command::Demo(args) => run_commands::demo(&args),
        Command::Index(args) => run_commands::index(&args),
        Command::Runs(args) => run_commands::runs(&args),
        Command::ValidateSql(args) => match &args.batch {
            Some(path) => validate_sql::batch::run(&args, path),
            None => validate_sql::run(&args),
        },
        Command::ValidatePlan(args) => validate_plan::run(&args),
        Command::RenderPlan(args) => render_plan::run(&args),
        Command::PlanDag(args) => plan_dag::run(&args),
        Command::Datasources(args) => datasources::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::ListAdapters(args) => list_adapters::run(&args),
        Command::Policy(args) => policy::run(&args),
        Command::Benchmark(args) if args.spider.is_some() => benchmark_spider::run(&args),
        Command::Benchmark(args) => benchmark::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Worker(args) => worker::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
