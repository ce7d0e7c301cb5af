//! `nl2sql plan-dag`: progressive validation of a DecomposerResponse, then its
//! ExecutionDag as JSON, Graphviz DOT or Mermaid.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::ValueEnum;
use nl2sql_validate::validate_decomposition;

/// Output format of the DAG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// The ExecutionDAG object; findings in the validators' JSON envelope.
    Json,
    /// A Graphviz digraph.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// Arguments of `plan-dag`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format. Findings are printed as JSON with `json`, as text on standard error
    /// otherwise.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// The DecomposerResponse JSON file, or '-' (the default) for standard input.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
}

/// Runs the command; returns the exit code (0 = DAG printed, 1 = findings).
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let text = match args.file.as_deref() {
        None => read_stdin()?,
        Some(path) if path.as_os_str() == "-" => read_stdin()?,
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read decomposition file '{}'", path.display()))?,
    };
    // No resolver on the command line: every datasource id is accepted.
    let report = validate_decomposition(&text, &Default::default());
    for w in &report.warnings {
        eprintln!("{} [{}]: {}", w.severity, w.code, w.message);
    }
    let Some(dag) = report.dag.as_ref().filter(|_| report.is_ok()) else {
        match args.format {
            Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json())?),
            Format::Dot | Format::Mermaid => {
                if let Some(feedback) = report.feedback() {
                    eprintln!("{feedback}");
                }
            }
        }
        return Ok(1);
    };
    match args.format {
        Format::Json => println!("{}", dag.to_json_pretty()),
        Format::Dot => print!("{}", dag.to_dot()),
        Format::Mermaid => print!("{}", dag.to_mermaid()),
    }
    Ok(0)
}

fn read_stdin() -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("cannot read the decomposition from standard input")?;
    String::from_utf8(bytes).context("the decomposition on standard input is not valid UTF-8")
}
