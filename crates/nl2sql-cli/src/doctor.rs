//! `nl2sql doctor`: checks that a setup can answer questions (spec: interfaces.md §3.1):
//! the configuration, its policy and documentation files load; each datasource answers;
//! the data directory holds a schema snapshot and index documents for each datasource;
//! and, with `--llm-config`, that the LLM endpoint answers. Each check is `ok`, `warn` or
//! `fail` with a detail line. Exit codes: 0 = no check failed, 1 = a check failed, 2 =
//! usage error.
//!
//! Without `--config`, `--db` or `$NL2SQL_CONFIG` (`$DATASOURCE_CONFIG`), the demo under
//! the data directory is checked when it exists (nothing is created). The settings apply
//! as for `ask`: `$POLICIES_CONFIG`, `$SAMPLE_QUESTIONS` and `$LLM_CONFIG` name the files
//! checked, and the schema store and index are looked for where the settings place them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nl2sql_index::schema_version_of;
use nl2sql_orchestrator::{DatasourceRegistry, load_docs};
use nl2sql_planner::Step;
use nl2sql_planner_llm::LlmConfig;
use nl2sql_planner_llm::{AgentSettings, ProbeStatus, probe_endpoint};
use nl2sql_state::{EngineSection, EnvSecrets, Secret, redact_url, resolve_secret};
use serde::Serialize;
use serde_json::json;
use tokio::runtime::Runtime;

use crate::ask::{data_dir, engine_dir};
use crate::settings::{self, Storage, process_env};
use crate::source::{Source, SourceArgs, read_config, read_policy, registry_of, runtime};
use crate::validate_sql::Format;

/// The longest the LLM check waits for an answer.
const LLM_TIMEOUT: Duration = Duration::from_secs(5);

/// Arguments of `doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    source: SourceArgs,
    /// The data directory (default: `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// An LLM configuration file (TOML, or JSON by extension) whose endpoints to check
    /// (default: `$LLM_CONFIG`).
    #[arg(long, value_name = "FILE")]
    llm_config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One check: what was checked (and on which datasource or endpoint), the outcome, why.
#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_ms: Option<u128>,
}

#[derive(Debug, Default)]
struct Report {
    checks: Vec<Check>,
}

impl Report {
    fn add(&mut self, check: &'static str, target: Option<&str>, status: Status, detail: String) {
        self.checks.push(Check {
            check,
            target: target.map(str::to_owned),
            status,
            detail,
            elapsed_ms: None,
        });
    }

    fn timed(&mut self, started: Instant) {
        if let Some(last) = self.checks.last_mut() {
            last.elapsed_ms = Some(started.elapsed().as_millis());
        }
    }

    fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }
}

/// Runs every check and prints the report; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let data_dir = data_dir(args.data_dir.as_ref());
    let rt = runtime()?;
    let mut report = Report::default();
    if let Some(source) = check_config(&args.source, &data_dir, &mut report) {
        let reachable = check_datasources(&source, &rt, &mut report);
        check_index(&source, &data_dir, &reachable, &rt, &mut report);
    }
    if let Some((path, _)) = settings::llm_config_path(args.llm_config.as_ref(), &process_env) {
        check_llm(&path, &rt, &mut report);
    }
    rt.shutdown_background();
    let (ok, warn, fail) = (
        report.count(Status::Ok),
        report.count(Status::Warn),
        report.count(Status::Fail),
    );
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "ok": fail == 0,
                "checks": report.checks,
                "summary": { "ok": ok, "warn": warn, "fail": fail },
            }))?
        ),
        Format::Text => {
            for c in &report.checks {
                let name = match &c.target {
                    Some(t) => format!("{} {t}", c.check),
                    None => c.check.to_owned(),
                };
                println!("{:<4}  {name}: {}", c.status.as_str(), c.detail);
            }
            println!("\n{ok} ok, {warn} warning(s), {fail} failure(s)");
        }
    }
    Ok(u8::from(fail > 0))
}

/// The configuration check (and its policy and documentation files); the source when
/// its datasources could be read.
fn check_config(args: &SourceArgs, data_dir: &Path, report: &mut Report) -> Option<Source> {
    if let Some(url) = &args.db {
        let registry = DatasourceRegistry::ad_hoc(url, nl2sql_drivers::compiled())
            .map_err(anyhow::Error::from)
            .and_then(|r| Ok(r.with_env(process_env)?));
        return match registry {
            Ok(registry) => {
                let ids = registry.ids().join(", ");
                report.add(
                    "config",
                    None,
                    Status::Ok,
                    format!("--db: ad-hoc datasource {ids}"),
                );
                Some(Source {
                    registry,
                    policy: None,
                    docs: BTreeMap::new(),
                    engine: EngineSection::default(),
                    artifacts: None,
                })
            }
            Err(e) => {
                report.add("config", None, Status::Fail, format!("--db: {e}"));
                None
            }
        };
    }
    let configured = match args.config_path() {
        Ok(path) => path,
        Err(e) => {
            report.add("config", None, Status::Fail, format!("{e:#}"));
            return None;
        }
    };
    let (path, what) = match configured {
        Some(path) => (path, "configuration"),
        None => {
            let demo = data_dir.join("demo");
            let config = demo.join("nl2sql.toml");
            if !config.is_file() {
                report.add(
                    "config",
                    None,
                    Status::Warn,
                    format!(
                        "no configuration (--config, --db or $NL2SQL_CONFIG) and no demo in {} (`nl2sql demo` creates it)",
                        demo.display()
                    ),
                );
                return None;
            }
            (config, "demo configuration")
        }
    };
    let loaded = read_config(&path).and_then(|(file, base)| {
        let registry = registry_of(&file, &base, &path)?;
        Ok((file, base, registry))
    });
    let (file, base, registry) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            report.add("config", None, Status::Fail, format!("{e:#}"));
            return None;
        }
    };
    let ids = registry.ids();
    report.add(
        "config",
        None,
        Status::Ok,
        format!(
            "{what} {}: {} datasource(s): {}",
            path.display(),
            ids.len(),
            ids.join(", ")
        ),
    );
    let policy_path = settings::policy_path(&process_env)
        .or_else(|| file.policy.as_ref().map(|rel| base.join(rel)));
    let policy = match policy_path {
        None => {
            report.add(
                "policy",
                None,
                Status::Warn,
                "no policy file: every caller may read every datasource".to_owned(),
            );
            None
        }
        Some(policy_path) => match read_policy(&policy_path) {
            Ok(policy) => {
                let roles: Vec<&str> = policy.roles.keys().map(String::as_str).collect();
                report.add(
                    "policy",
                    None,
                    Status::Ok,
                    format!(
                        "{}: {} role(s): {}",
                        policy_path.display(),
                        roles.len(),
                        roles.join(", ")
                    ),
                );
                Some(policy)
            }
            Err(e) => {
                report.add("policy", None, Status::Fail, format!("{e:#}"));
                None
            }
        },
    };
    let mut file = file;
    if let Some(questions) = settings::questions_path(&process_env) {
        let questions =
            std::env::current_dir().map_or(questions.clone(), |cwd| cwd.join(questions));
        file.questions = Some(questions.to_string_lossy().into_owned());
    }
    let files: Vec<String> = [&file.schema_docs, &file.questions]
        .into_iter()
        .flatten()
        .map(|rel| base.join(rel).display().to_string())
        .collect();
    let docs = match load_docs(&file, &base) {
        Ok(docs) => {
            let detail = if files.is_empty() {
                "no documentation files configured".to_owned()
            } else {
                format!("loaded {}", files.join(", "))
            };
            report.add("docs", None, Status::Ok, detail);
            docs
        }
        Err(e) => {
            report.add("docs", None, Status::Fail, e.to_string());
            BTreeMap::new()
        }
    };
    Some(Source {
        registry,
        policy,
        docs,
        artifacts: file.artifacts.clone().map(|a| (a, base.clone())),
        engine: file.engine,
    })
}

/// Connects to each datasource and runs its trivial query; returns the ids that answered.
fn check_datasources(source: &Source, rt: &Runtime, report: &mut Report) -> BTreeSet<String> {
    let mut reachable = BTreeSet::new();
    for id in source.registry.ids() {
        let engine = source
            .registry
            .config(id)
            .map(|c| c.engine.as_str())
            .unwrap_or_default();
        let started = Instant::now();
        let outcome = rt.block_on(async {
            let adapter = source.registry.adapter(id).await?;
            adapter.test_connection().await
        });
        match outcome {
            Ok(()) => {
                reachable.insert(id.to_owned());
                report.add(
                    "datasource",
                    Some(id),
                    Status::Ok,
                    format!("reachable ({engine})"),
                );
            }
            Err(e) => report.add(
                "datasource",
                Some(id),
                Status::Fail,
                format!("[{}] {}", e.error_code.as_str(), e.safe_message),
            ),
        }
        report.timed(started);
    }
    reachable
}

/// Whether the data directory holds a schema snapshot and index documents of each
/// datasource, and (for those that answered) whether the schema changed since.
fn check_index(
    source: &Source,
    data_dir: &Path,
    reachable: &BTreeSet<String>,
    rt: &Runtime,
    report: &mut Report,
) {
    let dir = engine_dir(data_dir, source);
    let ids = source.registry.ids();
    let storage = match Storage::of(&process_env, &dir) {
        Ok(storage) => storage,
        Err(e) => {
            report.add("index", None, Status::Fail, format!("{e:#}"));
            return;
        }
    };
    if !storage.exists() {
        for id in ids {
            report.add(
                "index",
                Some(id),
                Status::Warn,
                format!(
                    "not indexed: nothing in {} yet (`nl2sql index` or the first `ask` indexes it)",
                    storage.index_file.display()
                ),
            );
        }
        return;
    }
    let opened = storage
        .open_store()
        .and_then(|s| Ok((s, storage.open_index()?)));
    let (store, index) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            report.add(
                "index",
                None,
                Status::Fail,
                format!("cannot read {}: {}", dir.display(), e.safe_message()),
            );
            return;
        }
    };
    let chunks = index.chunks();
    for id in ids {
        let Some(version) = store.latest_version(id) else {
            report.add(
                "index",
                Some(id),
                Status::Warn,
                "no schema snapshot yet (`nl2sql index` or the first `ask` indexes it)".to_owned(),
            );
            continue;
        };
        let of_id: Vec<_> = chunks.iter().filter(|c| c.datasource_id == id).collect();
        let current = of_id.iter().filter(|c| c.schema_version == version).count();
        if of_id.is_empty() {
            report.add(
                "index",
                Some(id),
                Status::Fail,
                format!(
                    "schema snapshot {version} is stored but the index has no documents for it (run `nl2sql index`)"
                ),
            );
            continue;
        }
        if current == 0 {
            report.add(
                "index",
                Some(id),
                Status::Warn,
                format!(
                    "the index holds documents of another schema version than the latest snapshot {version} (run `nl2sql index`)"
                ),
            );
            continue;
        }
        if reachable.contains(id) {
            let live = rt.block_on(async {
                let adapter = source.registry.adapter(id).await?;
                adapter.schema_contract().await
            });
            if let Ok(mut contract) = live {
                // Stored contracts carry the configured id, as in indexing.
                id.clone_into(&mut contract.datasource_id);
                if schema_version_of(&contract) != version {
                    report.add(
                        "index",
                        Some(id),
                        Status::Warn,
                        format!(
                            "the schema changed since snapshot {version} (the next `ask` or `nl2sql index` indexes it again)"
                        ),
                    );
                    continue;
                }
            }
        }
        let tables = store
            .latest_snapshot(id)
            .map_or(0, |s| s.contract.tables.len());
        report.add(
            "index",
            Some(id),
            Status::Ok,
            format!("schema snapshot {version}: {tables} table(s), {current} index document(s)"),
        );
    }
}

/// Loads the LLM file, then asks each distinct endpoint for its model list (a cheap
/// request that needs no tokens) under a short timeout. The API key is sent, never shown.
fn check_llm(path: &Path, rt: &Runtime, report: &mut Report) {
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            let config = if path.extension().is_some_and(|e| e == "json") {
                LlmConfig::from_json_str(&text)
            } else {
                LlmConfig::from_toml_str(&text)
            };
            config.map_err(|e| e.to_string())
        });
    let config = match parsed {
        Ok(c) => c,
        Err(e) => {
            report.add(
                "llm-config",
                None,
                Status::Fail,
                format!("{}: {e}", path.display()),
            );
            return;
        }
    };
    // One probe per endpoint (base URL and key), with the models its steps use.
    let mut endpoints: BTreeMap<(String, Option<String>), (AgentSettings, BTreeSet<String>)> =
        BTreeMap::new();
    for step in [
        Step::Decomposer,
        Step::AstPlanner,
        Step::Refiner,
        Step::AnswerSynthesizer,
    ] {
        // `from_*_str` checked every step's settings already.
        let Ok(settings) = config.settings(step) else {
            continue;
        };
        let key = (settings.base_url.clone(), settings.api_key_ref.clone());
        let model = settings.model.clone();
        endpoints
            .entry(key)
            .or_insert_with(|| (settings, BTreeSet::new()))
            .1
            .insert(model);
    }
    report.add(
        "llm-config",
        None,
        Status::Ok,
        format!("{}: {} endpoint(s)", path.display(), endpoints.len()),
    );
    for (settings, models) in endpoints.values() {
        let target = redact_url(&settings.base_url);
        let key = match &settings.api_key_ref {
            None => None,
            Some(reference) => match resolve_secret(reference, "api_key", &EnvSecrets) {
                Ok(k) => Some(k),
                Err(e) => {
                    report.add("llm", Some(&target), Status::Fail, e.to_string());
                    continue;
                }
            },
        };
        let started = Instant::now();
        let timeout = settings.timeout.min(LLM_TIMEOUT);
        let (status, detail) = rt.block_on(probe_endpoint(
            &settings.base_url,
            key.as_ref().map(Secret::expose),
            timeout,
            models,
        ));
        let status = match status {
            ProbeStatus::Ok => Status::Ok,
            ProbeStatus::Warn => Status::Warn,
            ProbeStatus::Fail => Status::Fail,
        };
        report.add("llm", Some(&target), status, detail);
        report.timed(started);
    }
}
