//! `nl2sql policy validate`: parses an RBAC policy file and prints its integrity report
//! (spec: interfaces.md §1, config-and-security.md §5): for every role, each allowed
//! datasource, table rule and denied column, with its status and details. Datasources
//! come from the configuration; table and column names are checked against each
//! datasource's live schema, else its latest stored snapshot, when either can be read.
//! Exit codes: 0 = no error (warnings allowed), 1 = an error (MISSING, INVALID_DS), 2 =
//! usage error or a file that cannot be read or parsed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Subcommand;
use nl2sql_index::SchemaStore;
use nl2sql_orchestrator::DatasourceRegistry;
use nl2sql_state::{EngineSection, IntegrityReport, PolicyFile, SchemaContract, norm_parts};
use serde_json::json;

use crate::ask::{data_dir, engine_dir};
use crate::settings::{self, Storage, process_env};
use crate::source::{Source, SourceArgs, read_config, read_policy, registry_of, runtime};
use crate::validate_sql::Format;

/// Arguments of `policy`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Parses a policy file and checks every role's datasources, tables and denied
    /// columns against the configuration and the datasources' schemas.
    Validate(ValidateArgs),
}

/// Arguments of `policy validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// The policy file (JSON; default: `$POLICIES_CONFIG`, else the one the configuration
    /// names).
    #[arg(long, alias = "policies", value_name = "FILE")]
    policy: Option<PathBuf>,
    #[command(flatten)]
    source: SourceArgs,
    /// The data directory holding stored schema snapshots (default: `$NL2SQL_DATA_DIR`,
    /// else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    match &args.command {
        Sub::Validate(args) => validate(args),
    }
}

fn validate(args: &ValidateArgs) -> anyhow::Result<u8> {
    let (source, configured_policy) = load_source(&args.source)?;
    let policy_path = match (
        &args.policy,
        settings::policy_path(&process_env),
        configured_policy,
    ) {
        (Some(p), _, _) => p.clone(),
        (None, Some(p), _) | (None, None, Some(p)) => p,
        (None, None, None) => {
            bail!(
                "no policy file: pass --policy FILE (or set POLICIES_CONFIG, or use a configuration that names one)"
            )
        }
    };
    let policy = read_policy(&policy_path)?;
    let (schemas, sources) = match &source {
        Some(source) => schemas_of(&policy, source, &data_dir(args.data_dir.as_ref()))?,
        None => (BTreeMap::new(), BTreeMap::new()),
    };
    let ids: Option<Vec<String>> = source
        .as_ref()
        .map(|s| s.registry.ids().into_iter().map(str::to_owned).collect());
    let report = policy.integrity_report(ids.as_deref(), &schemas);
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "policy": policy_path.display().to_string(),
                "ok": report.is_ok(),
                "errors": report.errors(),
                "warnings": report.warnings(),
                "rows": report.rows,
                "schemas": sources,
            }))?
        ),
        Format::Text => print!("{}", text(&report, &sources, source.is_some())),
    }
    Ok(u8::from(!report.is_ok()))
}

/// The datasources of `--db`, `--config` or `$NL2SQL_CONFIG` (none without them), and
/// the policy file the configuration names.
fn load_source(source: &SourceArgs) -> anyhow::Result<(Option<Source>, Option<PathBuf>)> {
    let of = |registry| Source {
        registry,
        policy: None,
        docs: BTreeMap::new(),
        engine: EngineSection::default(),
        artifacts: None,
    };
    if let Some(url) = &source.db {
        return Ok((
            Some(of(DatasourceRegistry::ad_hoc(
                url,
                nl2sql_drivers::compiled(),
            )?)),
            None,
        ));
    }
    let Some(path) = source.config_path()? else {
        return Ok((None, None));
    };
    let (file, base) = read_config(&path)?;
    let registry = registry_of(&file, &base, &path)?;
    Ok((
        Some(of(registry)),
        file.policy.as_ref().map(|p| base.join(p)),
    ))
}

/// Schemas by datasource id, and where each came from (or why there is none).
type Schemas = (BTreeMap<String, SchemaContract>, BTreeMap<String, String>);

/// The schemas of the configured datasources that table or column rules name: live when
/// the datasource answers, else its latest snapshot under the data directory.
fn schemas_of(policy: &PolicyFile, source: &Source, data_dir: &Path) -> anyhow::Result<Schemas> {
    let named: BTreeSet<String> = policy
        .roles
        .values()
        .flat_map(|r| r.allowed_tables.iter().chain(&r.denied_columns))
        .filter_map(|rule| {
            let parts = norm_parts(rule);
            (parts.len() > 1).then(|| parts.into_iter().next().unwrap_or_default())
        })
        .collect();
    let ids: Vec<&str> = source
        .registry
        .ids()
        .into_iter()
        .filter(|id| named.contains(&id.trim().to_lowercase()))
        .collect();
    let mut schemas = BTreeMap::new();
    let mut sources = BTreeMap::new();
    if ids.is_empty() {
        return Ok((schemas, sources));
    }
    let rt = runtime()?;
    // Opened on first need only; nothing is created when the data directory has none.
    let mut store: Option<Option<SchemaStore>> = None;
    for id in ids {
        let live = rt.block_on(async {
            let adapter = source.registry.adapter(id).await?;
            adapter.schema_contract().await
        });
        let why = match live {
            Ok(contract) => {
                schemas.insert(id.to_owned(), contract);
                sources.insert(id.to_owned(), "live".to_owned());
                continue;
            }
            Err(e) => format!("[{}] {}", e.error_code.as_str(), e.safe_message),
        };
        let store = store.get_or_insert_with(|| {
            let storage = Storage::of(&process_env, &engine_dir(data_dir, source)).ok()?;
            storage
                .exists()
                .then(|| storage.open_store().ok())
                .flatten()
        });
        let stored = store
            .as_ref()
            .and_then(|s| Some((s.latest_version(id)?, s.latest_snapshot(id)?)));
        match stored {
            Some((version, snapshot)) => {
                sources.insert(
                    id.to_owned(),
                    format!("stored snapshot {version} (the datasource did not answer: {why})"),
                );
                schemas.insert(id.to_owned(), snapshot.contract);
            }
            None => {
                sources.insert(
                    id.to_owned(),
                    format!(
                        "none: the datasource did not answer ({why}) and no snapshot is stored"
                    ),
                );
            }
        }
    }
    rt.shutdown_background();
    Ok((schemas, sources))
}

/// The report as a table (role, rule, target, status, details), then where the schemas came
/// from and a summary line.
fn text(report: &IntegrityReport, sources: &BTreeMap<String, String>, configured: bool) -> String {
    let mut rows = vec![[
        "ROLE".to_owned(),
        "RULE".to_owned(),
        "TARGET".to_owned(),
        "STATUS".to_owned(),
        "DETAILS".to_owned(),
    ]];
    for r in &report.rows {
        rows.push([
            r.role.clone(),
            r.rule.as_str().to_owned(),
            r.target.clone(),
            r.status.as_str().to_owned(),
            r.details.clone(),
        ]);
    }
    let mut out = crate::columns::aligned(&rows);
    out.push('\n');
    if !configured {
        out.push_str(
            "no configuration (--config, --db or $NL2SQL_CONFIG): datasources not checked\n",
        );
    }
    for (id, from) in sources {
        let _ = writeln!(out, "schema of {id}: {from}");
    }
    let _ = writeln!(
        out,
        "{}: {} error(s), {} warning(s)",
        if report.is_ok() { "OK" } else { "INVALID" },
        report.errors(),
        report.warnings()
    );
    out
}
