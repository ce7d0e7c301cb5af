//! `nl2sql render-plan`: the SQL of one PlanModel in one dialect.

use nl2sql_sqlgen::{DEFAULT_ROW_LIMIT, SqlGenerator};
use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, SqlGuard};

use crate::validate_plan::{PlanOptions, check};

/// Arguments of `render-plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    options: PlanOptions,
    /// Target dialect: duckdb, postgres, mysql or sqlite.
    #[arg(long, value_name = "D")]
    dialect: String,
    /// The datasource's row limit; the LIMIT is min(plan limit, row limit).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ROW_LIMIT)]
    row_limit: u64,
}

/// Runs the command; returns the exit code. The SQL goes alone to standard output; the
/// findings of an invalid plan go to standard error.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let dialect: Dialect = args.dialect.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    let checked = check(&args.options, Some(dialect), &[])?;
    let plan = match (&checked.plan, checked.status()) {
        (Some(plan), "ok") => plan,
        _ => {
            eprint!("{}", checked.to_text());
            return Ok(1);
        }
    };
    let generator = SqlGenerator::new(dialect).with_row_limit(args.row_limit);
    let generated = match &checked.contract {
        Some(contract) => generator.with_schema(contract).generate(plan),
        None => generator.generate(plan),
    };
    let sql = match generated {
        Ok(sql) => sql,
        Err(e) => {
            eprintln!(
                "{} [{}]: {}",
                e.severity.as_str(),
                e.code.as_str(),
                e.message
            );
            return Ok(1);
        }
    };
    // Defence in depth: the generated statement must pass the guard.
    let ds = args.options.datasource_id.as_deref().unwrap_or("default");
    let report = SqlGuard::new(GuardContext::without_schema(ds, dialect)).check(&sql);
    if !report.is_ok() {
        eprintln!("error [SQL_GEN_FAILED]: the generated SQL did not pass the guard: {sql}");
        eprint!("{}", report.to_text());
        return Ok(1);
    }
    println!("{sql}");
    Ok(0)
}
