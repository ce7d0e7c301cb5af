//! `nl2sql datasources list|test|describe`: the configured datasources, whether they can
//! be reached, and what they hold.

use std::fmt::Write as _;
use std::time::Instant;

use clap::Subcommand;
use nl2sql_state::{SchemaSnapshot, Severity};
use serde_json::{Value, json};

use crate::source::{SourceArgs, runtime};
use crate::validate_sql::Format;

/// Arguments of `datasources`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Lists the datasources: id, engine, URL (credentials hidden), limits, description.
    List {
        #[command(flatten)]
        source: SourceArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Connects to each datasource (or the ones named) and runs a trivial query.
    Test {
        #[command(flatten)]
        source: SourceArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Datasource ids (default: all).
        #[arg(value_name = "ID")]
        ids: Vec<String>,
    },
    /// Prints a datasource's schema snapshot: tables, columns, keys, row counts and
    /// column statistics.
    Describe {
        #[command(flatten)]
        source: SourceArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// The datasource id (optional when there is only one).
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    match &args.command {
        Sub::List { source, format } => list(source, *format),
        Sub::Test {
            source,
            format,
            ids,
        } => test(source, *format, ids),
        Sub::Describe { source, format, id } => describe(source, *format, id.as_deref()),
    }
}

fn list(source: &SourceArgs, format: Format) -> anyhow::Result<u8> {
    let source = source.load()?;
    let mut rows = Vec::new();
    for id in source.registry.ids() {
        let config = source.registry.config(id)?;
        let limits = source.registry.limits(id)?;
        rows.push(json!({
            "id": id,
            "engine": config.engine.as_str(),
            "url": config.redacted_url(),
            "description": config.description,
            "row_limit": limits.row_limit,
            "statement_timeout_ms": limits.statement_timeout_ms,
            "max_bytes": limits.max_bytes,
            "tags": config.tags,
        }));
    }
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "datasources": rows }))?
        ),
        Format::Text => {
            for row in &rows {
                println!(
                    "{}\t{}\t{}\t{}",
                    str_of(&row["id"]),
                    str_of(&row["engine"]),
                    str_of(&row["url"]),
                    row["description"].as_str().unwrap_or("-")
                );
            }
        }
    }
    Ok(0)
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn test(source: &SourceArgs, format: Format, ids: &[String]) -> anyhow::Result<u8> {
    let source = source.load()?;
    let ids: Vec<String> = if ids.is_empty() {
        source
            .registry
            .ids()
            .into_iter()
            .map(str::to_owned)
            .collect()
    } else {
        for id in ids {
            source.registry.config(id)?;
        }
        ids.to_vec()
    };
    let rt = runtime()?;
    let mut results = Vec::new();
    let mut failed = false;
    for id in &ids {
        let started = Instant::now();
        let outcome = rt.block_on(async {
            let adapter = source.registry.adapter(id).await?;
            adapter.test_connection().await
        });
        let ms = started.elapsed().as_millis();
        failed |= outcome.is_err();
        results.push(match outcome {
            Ok(()) => json!({ "id": id, "ok": true, "elapsed_ms": ms }),
            Err(e) => json!({
                "id": id,
                "ok": false,
                "elapsed_ms": ms,
                "error": { "code": e.error_code.as_str(), "message": e.safe_message },
            }),
        });
    }
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "results": results }))?
        ),
        Format::Text => {
            for r in &results {
                if r["ok"] == true {
                    println!("{}\tok\t{} ms", str_of(&r["id"]), r["elapsed_ms"]);
                } else {
                    println!(
                        "{}\tFAILED\t{} ms\t[{}] {}",
                        str_of(&r["id"]),
                        r["elapsed_ms"],
                        str_of(&r["error"]["code"]),
                        str_of(&r["error"]["message"])
                    );
                }
            }
        }
    }
    Ok(u8::from(failed))
}

fn describe(source: &SourceArgs, format: Format, id: Option<&str>) -> anyhow::Result<u8> {
    let source = source.load()?;
    let id = source.pick(id)?;
    let rt = runtime()?;
    let snapshot = rt.block_on(async {
        let adapter = source.registry.adapter(&id).await?;
        adapter.schema_snapshot().await
    });
    let snapshot = match snapshot {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: {} [{}] {}",
                Severity::Critical,
                e.error_code.as_str(),
                e.safe_message
            );
            return Ok(3);
        }
    };
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&snapshot)?),
        Format::Text => print!("{}", describe_text(&snapshot)),
    }
    Ok(0)
}

/// The snapshot as text: one block per table.
fn describe_text(snapshot: &SchemaSnapshot) -> String {
    let mut out = String::new();
    let contract = &snapshot.contract;
    let _ = writeln!(
        out,
        "datasource {} ({}), {} tables",
        contract.datasource_id,
        contract.engine_type,
        contract.tables.len()
    );
    for (key, table) in &contract.tables {
        let meta = snapshot.metadata.as_ref().and_then(|m| m.tables.get(key));
        let rows = meta
            .and_then(|m| m.row_count)
            .map_or_else(|| "? rows".to_owned(), |r| format!("{r} rows"));
        let _ = writeln!(out, "\n{key} ({rows})");
        for (name, col) in &table.columns {
            let mut flags = Vec::new();
            if col.is_primary_key {
                flags.push("primary key".to_owned());
            }
            if !col.is_nullable {
                flags.push("not null".to_owned());
            }
            let stats = meta
                .and_then(|m| m.columns.get(name))
                .and_then(|c| c.statistics.as_ref());
            if let Some(s) = stats {
                flags.push(format!("{} distinct", s.distinct_count));
                if let (Some(lo), Some(hi)) = (&s.min_value, &s.max_value) {
                    flags.push(format!("{lo}..{hi}"));
                }
                if !s.sample_values.is_empty() {
                    let samples: Vec<String> =
                        s.sample_values.iter().map(Value::to_string).collect();
                    flags.push(format!("e.g. {}", samples.join(", ")));
                }
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("  ({})", flags.join("; "))
            };
            let _ = writeln!(out, "  {name} {}{flags}", col.data_type);
        }
        for fk in &table.foreign_keys {
            let _ = writeln!(
                out,
                "  foreign key ({}) -> {} ({})",
                fk.constrained_columns.join(", "),
                fk.referred_table.full_name(),
                fk.referred_columns.join(", ")
            );
        }
    }
    out
}
