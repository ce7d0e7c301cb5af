//! `nl2sql validate-sql`: the SQL guard on one statement, or on a batch of JSON lines
//! (`--batch`, in [`batch`]).

pub(crate) mod batch;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::ValueEnum;
use nl2sql_state::{AccessPolicy, Dialect, PolicyFile, SchemaContract};
use nl2sql_validate::{GuardContext, GuardStatus, SqlGuard, schema_from_ddl, schema_from_json};

use crate::source::{SourceArgs, runtime};

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Status line, then one line per issue, then the feedback.
    Text,
    /// One JSON object: status, issues, feedback, sql.
    Json,
}

/// Arguments of `validate-sql`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Schema of the datasource: CREATE TABLE statements (.sql) or a JSON schema
    /// snapshot (.json). Without it, tables and columns are not verified.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["config", "db", "datasource"])]
    schema: Option<PathBuf>,
    /// A live datasource instead of --schema: its schema is read from the database,
    /// then the statement is dry-run (EXPLAIN) and its cost estimated.
    #[command(flatten)]
    source: SourceArgs,
    /// The datasource of --config to validate against (optional when there is one).
    #[arg(long, value_name = "ID", conflicts_with = "db")]
    datasource: Option<String>,
    /// With a live datasource: an estimated cost above this blocks (PERFORMANCE_WARNING).
    #[arg(long, value_name = "COST")]
    max_cost: Option<f64>,
    /// Datasource id used by the policy (default: the schema file's stem).
    #[arg(long, value_name = "ID")]
    datasource_id: Option<String>,
    /// SQL dialect: duckdb, postgres, mysql, sqlite or generic (default: the JSON
    /// schema's engine type, else generic).
    #[arg(long, value_name = "D")]
    dialect: Option<String>,
    /// RBAC policy file (JSON); requires at least one --role. With --config, the
    /// configuration's policy file is the default.
    #[arg(long, value_name = "FILE", requires = "role")]
    policy: Option<PathBuf>,
    /// Role of the caller (repeatable); requires a policy (--policy, or --config with one).
    #[arg(long = "role", value_name = "R")]
    role: Vec<String>,
    /// Output format (default: text). `--batch` always writes JSON lines.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Check many statements: a file of JSON lines `{"id", "sql", "datasource"?,
    /// "dialect"?}`, or '-' for standard input. Writes one JSON report per line, in input
    /// order, and a summary on standard error. Not with a live datasource.
    #[arg(long, value_name = "FILE", conflicts_with = "sql")]
    pub(crate) batch: Option<PathBuf>,
    /// The SQL statement, or '-' (the default) to read it from standard input.
    #[arg(value_name = "SQL")]
    sql: Option<String>,
}

fn read_file(path: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {what} file '{}'", path.display()))
}

fn parse_dialect(name: &str) -> anyhow::Result<Dialect> {
    name.parse::<Dialect>().map_err(|e| anyhow::anyhow!("{e}"))
}

/// Parses the text of the `--schema` file, as JSON or DDL by extension (or content).
fn parse_schema(
    path: &Path,
    text: &str,
    dialect: Option<Dialect>,
    datasource_id: &str,
) -> anyhow::Result<SchemaContract> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || text.trim_start().starts_with('{');
    let contract = if is_json {
        schema_from_json(text)
    } else {
        schema_from_ddl(text, dialect.unwrap_or(Dialect::Generic), datasource_id)
    };
    contract.with_context(|| format!("invalid schema file '{}'", path.display()))
}

fn read_sql(arg: Option<&str>) -> anyhow::Result<String> {
    match arg {
        None | Some("-") => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read SQL from standard input")?;
            String::from_utf8(bytes).context("SQL on standard input is not valid UTF-8")
        }
        Some(sql) => Ok(sql.to_owned()),
    }
}

fn read_policy(path: &Path) -> anyhow::Result<PolicyFile> {
    let text = read_file(path, "policy")?;
    PolicyFile::from_json_str(&text)
        .with_context(|| format!("invalid policy file '{}'", path.display()))
}

/// What the guard checks against, loaded once from the arguments: the datasource id, the
/// schema file's text and the policy's access for the roles.
struct Setup {
    datasource_id: String,
    /// The `--schema` file and its text.
    schema: Option<(PathBuf, String)>,
    access: Option<AccessPolicy>,
}

impl Setup {
    /// Loads what `--schema`, `--datasource-id`, `--dialect`, `--policy` and `--role` name;
    /// returns it with the guard for `--dialect`.
    fn load(args: &Args) -> anyhow::Result<(Setup, SqlGuard)> {
        if !args.role.is_empty() && args.policy.is_none() {
            bail!("--role needs a policy: pass --policy FILE (or --config with a policy file)");
        }
        let dialect = args.dialect.as_deref().map(parse_dialect).transpose()?;
        let datasource_id = crate::source::datasource_id(
            args.datasource_id.as_ref(),
            args.schema.as_ref(),
            args.policy.is_some(),
        )?;
        let schema = args
            .schema
            .as_ref()
            .map(|path| read_file(path, "schema").map(|text| (path.clone(), text)))
            .transpose()?;
        let mut setup = Setup {
            datasource_id,
            schema,
            access: None,
        };
        let contract = setup.contract(dialect)?;
        if let Some(path) = &args.policy {
            setup.access = Some(read_policy(path)?.access_for(&args.role));
        }
        let guard = setup.guard_with(dialect, contract.as_ref());
        Ok((setup, guard))
    }

    /// The schema, read in `dialect` (DDL) or as written (JSON), or `None` without one.
    fn contract(&self, dialect: Option<Dialect>) -> anyhow::Result<Option<SchemaContract>> {
        self.schema
            .as_ref()
            .map(|(path, text)| parse_schema(path, text, dialect, &self.datasource_id))
            .transpose()
    }

    /// The guard for `dialect` (`None`: the JSON schema's engine type, else generic).
    fn guard(&self, dialect: Option<Dialect>) -> anyhow::Result<SqlGuard> {
        let contract = self.contract(dialect)?;
        Ok(self.guard_with(dialect, contract.as_ref()))
    }

    fn guard_with(&self, dialect: Option<Dialect>, contract: Option<&SchemaContract>) -> SqlGuard {
        let dialect = dialect
            .or_else(|| contract.and_then(|c| c.engine_type.parse::<Dialect>().ok()))
            .unwrap_or(Dialect::Generic);
        let mut ctx = match contract {
            Some(contract) => GuardContext::new(&self.datasource_id, dialect, contract),
            None => GuardContext::without_schema(&self.datasource_id, dialect),
        };
        if let Some(access) = &self.access {
            ctx = ctx.with_policy(access.clone());
        }
        SqlGuard::new(ctx)
    }
}

/// Runs the command on one statement (`--batch` runs [`batch::run`]); returns the exit
/// code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    if args.source.is_given() || args.datasource.is_some() {
        return run_live(args);
    }
    let (_, guard) = Setup::load(args)?;
    let sql = read_sql(args.sql.as_deref())?;
    let report = guard.check(&sql);
    match args.format.unwrap_or(Format::Text) {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json())?),
        Format::Text => {
            print!("{}", report.to_text());
            if let Some(feedback) = &report.feedback {
                println!("\n{feedback}");
            }
        }
    }
    Ok(if report.status == GuardStatus::Ok {
        0
    } else {
        1
    })
}

/// `--config`/`--db`: the guard over the live schema, then dry run and cost.
fn run_live(args: &Args) -> anyhow::Result<u8> {
    if args.dialect.is_some() || args.datasource_id.is_some() {
        bail!("--dialect and --datasource-id apply to --schema; a live datasource has its own");
    }
    let source = args.source.load()?;
    let id = source.pick(args.datasource.as_deref())?;
    let policy = match (&args.policy, &source.policy) {
        (Some(path), _) => Some(read_policy(path)?),
        (None, Some(p)) => Some(p.clone()),
        (None, None) => None,
    };
    let access = match (&policy, args.role.is_empty()) {
        (Some(p), false) => Some(p.access_for(&args.role)),
        (Some(_), true) => bail!("the policy needs the caller's roles: pass --role R"),
        (None, false) => bail!("--role needs a policy: pass --policy FILE or configure one"),
        (None, true) => None,
    };
    let sql = read_sql(args.sql.as_deref())?;
    let rt = runtime()?;
    let outcome = rt.block_on(nl2sql_orchestrator::validate_sql_live(
        &source.registry,
        &id,
        &sql,
        access,
        args.max_cost,
    ));
    let format = args.format.unwrap_or(Format::Text);
    let report = match outcome {
        Ok((report, _)) => report,
        Err(e) => {
            match format {
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "status": "unavailable",
                        "error": { "code": e.error_code.as_str(), "message": e.safe_message },
                        "sql": sql,
                    }))?
                ),
                Format::Text => eprintln!(
                    "error: datasource '{id}': [{}] {}",
                    e.error_code.as_str(),
                    e.safe_message
                ),
            }
            return Ok(3);
        }
    };
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report.to_json())?),
        Format::Text => {
            print!("{}", report.to_text());
            if let Some(feedback) = &report.guard.feedback {
                println!("\n{feedback}");
            }
        }
    }
    Ok(u8::from(report.is_blocking()))
}
