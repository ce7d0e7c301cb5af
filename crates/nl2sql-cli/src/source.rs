//! `--config FILE [--datasource ID]` or `--db URL`: where a command finds its datasources,
//! with what the settings add to them: the default limits and adapter options
//! (`DEFAULT_*`, `CONNECT_TIMEOUT_MS`, `SCHEMA_STATS_*`), the policy file
//! (`POLICIES_CONFIG`) and the example questions (`SAMPLE_QUESTIONS`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use nl2sql_orchestrator::{DatasourceDocs, DatasourceRegistry, load_docs};
use nl2sql_state::{ArtifactsSection, ConfigFile, EngineSection, EnvSecrets, PolicyFile};

use crate::settings::{self, process_env};

/// The datasource arguments shared by every command that talks to a database.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SourceArgs {
    /// Configuration file (`nl2sql.toml`; default: `$NL2SQL_CONFIG`, else
    /// `$DATASOURCE_CONFIG`).
    #[arg(long, value_name = "FILE", conflicts_with = "db")]
    pub(crate) config: Option<PathBuf>,
    /// An ad-hoc datasource, with default limits: `duckdb:///path`, `sqlite:///path`,
    /// `postgres://user@host:port/db` or `mysql://user@host:port/db`. Its id is the
    /// database name or the file stem.
    #[arg(long, value_name = "URL")]
    pub(crate) db: Option<String>,
}

/// A loaded source: the registry, and what the configuration names besides (policy,
/// documentation, engine settings, artifact store); `--db` sets none of those.
pub(crate) struct Source {
    pub(crate) registry: DatasourceRegistry,
    pub(crate) policy: Option<PolicyFile>,
    /// Descriptions and example questions by datasource id.
    pub(crate) docs: BTreeMap<String, DatasourceDocs>,
    /// The `[engine]` section.
    pub(crate) engine: EngineSection,
    /// The `[artifacts]` section, with the directory relative paths start from.
    pub(crate) artifacts: Option<(ArtifactsSection, PathBuf)>,
}

impl SourceArgs {
    /// Whether `--config` or `--db` was given.
    pub(crate) fn is_given(&self) -> bool {
        self.config.is_some() || self.db.is_some()
    }

    /// Loads the registry from `--db`, `--config`, `$NL2SQL_CONFIG` or
    /// `$DATASOURCE_CONFIG`. `$POLICIES_CONFIG` wins over the configuration's `policy`
    /// and `$SAMPLE_QUESTIONS` over its `questions` (both relative to the working
    /// directory, and both apply to `--db` too).
    pub(crate) fn load(&self) -> anyhow::Result<Source> {
        let policy_override = settings::policy_path(&process_env);
        let questions_override = settings::questions_path(&process_env)
            .map(|p| std::env::current_dir().map(|cwd| cwd.join(p)))
            .transpose()
            .context("cannot read the working directory")?;
        let policy_of = |configured: Option<PathBuf>| -> anyhow::Result<Option<PolicyFile>> {
            match (&policy_override, configured) {
                (Some(p), _) => read_policy(p)
                    .map(Some)
                    .with_context(|| format!("POLICIES_CONFIG '{}'", p.display())),
                (None, Some(p)) => read_policy(&p).map(Some),
                (None, None) => Ok(None),
            }
        };
        if let Some(url) = &self.db {
            let registry = DatasourceRegistry::ad_hoc(url, nl2sql_drivers::compiled())?
                .with_env(process_env)?;
            let docs = match &questions_override {
                Some(path) => {
                    let mut file = ConfigFile::from_toml_str("version = 1")?;
                    file.questions = Some(path.to_string_lossy().into_owned());
                    load_docs(&file, Path::new(".")).context("SAMPLE_QUESTIONS")?
                }
                None => BTreeMap::new(),
            };
            return Ok(Source {
                registry,
                policy: policy_of(None)?,
                docs,
                engine: EngineSection::default(),
                artifacts: None,
            });
        }
        let Some(path) = self.config_path()? else {
            bail!("no datasource: pass --config FILE or --db URL");
        };
        let (mut file, base) = read_config(&path)?;
        let registry = registry_of(&file, &base, &path)?;
        let policy = policy_of(file.policy.as_ref().map(|p| base.join(p)))?;
        let docs = match &questions_override {
            Some(questions) => {
                file.questions = Some(questions.to_string_lossy().into_owned());
                load_docs(&file, &base).context("SAMPLE_QUESTIONS")?
            }
            None => load_docs(&file, &base)
                .with_context(|| format!("invalid configuration file '{}'", path.display()))?,
        };
        Ok(Source {
            registry,
            policy,
            docs,
            artifacts: file.artifacts.clone().map(|a| (a, base.clone())),
            engine: file.engine,
        })
    }

    /// `--config`, else `$NL2SQL_CONFIG`, else `$DATASOURCE_CONFIG` (the two variables
    /// naming different files is an error).
    pub(crate) fn config_path(&self) -> anyhow::Result<Option<PathBuf>> {
        settings::config_path(self.config.as_ref(), &process_env)
    }
}

/// Reads and parses a configuration file; returns it with the directory its relative
/// paths start from.
pub(crate) fn read_config(path: &Path) -> anyhow::Result<(ConfigFile, PathBuf)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read configuration file '{}'", path.display()))?;
    let file = ConfigFile::from_toml_str(&text)
        .with_context(|| format!("invalid configuration file '{}'", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    Ok((file, base.to_path_buf()))
}

/// The registry of a parsed configuration file (secrets resolved from the environment),
/// with the registry settings of the environment (default limits, adapter options).
pub(crate) fn registry_of(
    file: &ConfigFile,
    base: &Path,
    path: &Path,
) -> anyhow::Result<DatasourceRegistry> {
    Ok(
        DatasourceRegistry::from_config(file, base, &EnvSecrets, nl2sql_drivers::compiled())
            .with_context(|| format!("invalid configuration file '{}'", path.display()))?
            .with_env(process_env)?,
    )
}

/// Reads and parses a policy file.
pub(crate) fn read_policy(path: &Path) -> anyhow::Result<PolicyFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read policy file '{}'", path.display()))?;
    PolicyFile::from_json_str(&text)
        .with_context(|| format!("invalid policy file '{}'", path.display()))
}

impl Source {
    /// The datasource a command works on: `--datasource ID`, or the only one there is.
    pub(crate) fn pick(&self, id: Option<&str>) -> anyhow::Result<String> {
        match id {
            Some(id) => {
                self.registry.config(id)?;
                Ok(id.to_owned())
            }
            None => match self.registry.ids().as_slice() {
                [only] => Ok((*only).to_owned()),
                ids => bail!(
                    "the configuration has {} datasources ({}): pass --datasource ID",
                    ids.len(),
                    ids.join(", ")
                ),
            },
        }
    }
}

/// A current-thread tokio runtime for one command.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The datasource id of `--datasource-id`, else the schema file's stem, else `default`
/// (an error when a policy needs one and neither is given). Shared by `validate-plan`
/// and `validate-sql`.
pub(crate) fn datasource_id(
    given: Option<&String>,
    schema: Option<&PathBuf>,
    has_policy: bool,
) -> anyhow::Result<String> {
    Ok(match (given, schema) {
        (Some(id), _) => id.clone(),
        (None, Some(path)) => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .context(
                "cannot derive a datasource id from the schema file name; pass --datasource-id",
            )?,
        (None, None) if has_policy => {
            bail!("a policy needs a datasource id: pass --datasource-id or --schema")
        }
        (None, None) => "default".to_owned(),
    })
}
