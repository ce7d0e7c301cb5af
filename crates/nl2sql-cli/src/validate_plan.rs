//! `nl2sql validate-plan`: the logical validator on one PlanModel (JSON).

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use nl2sql_plan::{PlanModel, parse_plan};
use nl2sql_state::{Dialect, ErrorCode, Node, PipelineError, PolicyFile, SchemaContract, Severity};
use nl2sql_validate::{LogicalContext, schema_from_ddl, schema_from_json, validate_plan};
use serde_json::{Value, json};

use crate::validate_sql::Format;

/// The options `validate-plan` and `render-plan` share with `validate-sql`.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanOptions {
    /// Schema of the datasource: CREATE TABLE statements (.sql) or a JSON schema
    /// snapshot (.json). Without it, tables and columns are not verified.
    #[arg(long, value_name = "FILE")]
    pub(crate) schema: Option<PathBuf>,
    /// Datasource id used by the policy (default: the schema file's stem).
    #[arg(long, value_name = "ID")]
    pub(crate) datasource_id: Option<String>,
    /// RBAC policy file (JSON); requires at least one --role.
    #[arg(long, value_name = "FILE", requires = "role")]
    pub(crate) policy: Option<PathBuf>,
    /// Role of the caller (repeatable); requires --policy.
    #[arg(long = "role", value_name = "R", requires = "policy")]
    pub(crate) role: Vec<String>,
    /// The PlanModel JSON file, or '-' (the default) to read it from standard input.
    #[arg(value_name = "FILE")]
    pub(crate) plan: Option<String>,
}

/// Arguments of `validate-plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) options: PlanOptions,
    /// SQL dialect used to read a DDL schema: duckdb, postgres, mysql, sqlite or generic.
    #[arg(long, value_name = "D")]
    pub(crate) dialect: Option<String>,
    /// Expected output column (repeatable, in order): the sub-query's contract.
    #[arg(long = "expected-column", value_name = "NAME")]
    pub(crate) expected_column: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
}

/// The outcome of reading and validating a plan.
pub(crate) struct Checked {
    /// The plan, when it parsed.
    pub(crate) plan: Option<PlanModel>,
    /// Every finding.
    pub(crate) findings: Vec<PipelineError>,
    /// The schema, when one was given.
    pub(crate) contract: Option<SchemaContract>,
}

impl Checked {
    /// `ok`, `rewrite` or `rejected`, with the SQL guard's rules.
    pub(crate) fn status(&self) -> &'static str {
        if self.findings.iter().any(|f| {
            f.code == ErrorCode::SecurityViolation
                || f.severity == Severity::Critical
                || f.code.is_fatal()
        }) {
            "rejected"
        } else if self.findings.iter().any(PipelineError::is_blocking) {
            "rewrite"
        } else {
            "ok"
        }
    }

    fn feedback(&self) -> Option<String> {
        let status = self.status();
        (status != "ok").then(|| {
            let mut text = String::from("Plan validation failed:");
            for f in self.findings.iter().filter(|f| f.is_blocking()) {
                let _ = write!(text, "\n- {}", f.message);
            }
            if status == "rejected" {
                text.push_str("\nThe plan was rejected for security or policy reasons; do not retry it with the same intent.");
            }
            text
        })
    }

    /// The JSON envelope of `validate-sql`: status, issues, feedback (and the plan).
    pub(crate) fn to_json(&self) -> Value {
        let issues: Vec<Value> = self
            .findings
            .iter()
            .map(|f| {
                let mut issue = json!({
                    "code": f.code,
                    "severity": f.severity,
                    "message": f.message,
                });
                if let Some(path) = f.details.as_ref().and_then(|d| d.get("path")) {
                    issue["path"] = path.clone();
                }
                if let Some(known) = f.details.as_ref().and_then(|d| d.get("known_values")) {
                    issue["known_values"] = known.clone();
                }
                issue
            })
            .collect();
        json!({
            "status": self.status(),
            "issues": issues,
            "feedback": self.feedback(),
            "plan": self.plan,
        })
    }

    /// The report for people: status line, then one line per finding.
    pub(crate) fn to_text(&self) -> String {
        let mut out = format!("status: {}\n", self.status());
        for f in &self.findings {
            let at = f
                .details
                .as_ref()
                .and_then(|d| d.get("path"))
                .and_then(Value::as_str)
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{} [{}]{at}: {}",
                f.severity.as_str(),
                f.code.as_str(),
                f.message
            );
        }
        out
    }
}

fn read_file(path: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {what} file '{}'", path.display()))
}

/// Reads the plan text from the file or standard input.
fn read_plan(source: Option<&str>) -> anyhow::Result<String> {
    match source {
        None | Some("-") => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read the plan from standard input")?;
            String::from_utf8(bytes).context("the plan on standard input is not valid UTF-8")
        }
        Some(path) => read_file(Path::new(path), "plan"),
    }
}

/// Parses the plan and, when a schema is given, runs the logical validator. A plan that
/// does not parse is a finding, not an error; `Err` means a usage or configuration error.
pub(crate) fn check(
    options: &PlanOptions,
    dialect: Option<Dialect>,
    expected: &[String],
) -> anyhow::Result<Checked> {
    let datasource_id = crate::source::datasource_id(
        options.datasource_id.as_ref(),
        options.schema.as_ref(),
        options.policy.is_some(),
    )?;
    let contract = match &options.schema {
        Some(path) => {
            let text = read_file(path, "schema")?;
            let is_json = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
                || text.trim_start().starts_with('{');
            let contract = if is_json {
                schema_from_json(&text)
            } else {
                schema_from_ddl(&text, dialect.unwrap_or(Dialect::Generic), &datasource_id)
            };
            Some(contract.with_context(|| format!("invalid schema file '{}'", path.display()))?)
        }
        None => None,
    };
    let policy = match &options.policy {
        Some(path) => {
            let text = read_file(path, "policy")?;
            let file = PolicyFile::from_json_str(&text)
                .with_context(|| format!("invalid policy file '{}'", path.display()))?;
            Some(file.access_for(&options.role))
        }
        None => None,
    };
    let text = read_plan(options.plan.as_deref())?;
    let plan = match parse_plan(&text) {
        Ok(plan) => plan,
        Err(e) => {
            return Ok(Checked {
                contract,
                plan: None,
                findings: vec![e.to_pipeline_error(
                    Node::LogicalValidator.as_str(),
                    ErrorCode::InvalidPlanStructure,
                )],
            });
        }
    };
    let findings = match &contract {
        Some(contract) => {
            let mut ctx = LogicalContext::new(&datasource_id, contract)
                .with_expected_schema(expected.to_vec());
            if let Some(p) = policy {
                ctx = ctx.with_policy(p);
            }
            validate_plan(Some(&plan), &ctx).findings
        }
        None => structural_only(&plan, &datasource_id, policy),
    };
    Ok(Checked {
        plan: Some(plan),
        findings,
        contract,
    })
}

/// Without a schema, the checks that need none: everything but tables, joins' foreign keys
/// and columns (the validator runs on an empty schema and its T, J and C findings are
/// dropped).
fn structural_only(
    plan: &PlanModel,
    datasource_id: &str,
    policy: Option<nl2sql_state::AccessPolicy>,
) -> Vec<PipelineError> {
    let empty = SchemaContract::new(datasource_id, "generic");
    let mut ctx = LogicalContext::new(datasource_id, &empty);
    if let Some(p) = policy {
        ctx = ctx.with_policy(p);
    }
    validate_plan(Some(plan), &ctx)
        .findings
        .into_iter()
        .filter(|f| {
            !matches!(f.code, ErrorCode::TableNotFound | ErrorCode::ColumnNotFound)
                && f.message != "Join does not match any allowed relationship."
        })
        .collect()
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let dialect = args
        .dialect
        .as_deref()
        .map(|d| d.parse::<Dialect>().map_err(|e| anyhow::anyhow!("{e}")))
        .transpose()?;
    let checked = check(&args.options, dialect, &args.expected_column)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&checked.to_json())?),
        Format::Text => {
            print!("{}", checked.to_text());
            if let Some(feedback) = checked.feedback() {
                println!("\n{feedback}");
            }
        }
    }
    Ok(if checked.status() == "ok" { 0 } else { 1 })
}
