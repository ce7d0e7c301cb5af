//! The LLM configuration file (spec: config-and-security.md §3.2): a `default` agent and
//! per-step `agents`, resolved into one [`AgentSettings`] per step with built-in defaults.
//!
//! An agent entry inherits every key it does not set from `default`, then from the
//! built-in defaults. Unknown keys, an unknown step name, an unsupported provider and
//! out-of-range numbers are errors naming the key (`agents.refiner.timeout_sec`).

use std::collections::BTreeMap;
use std::time::Duration;

use nl2sql_state::ConfigError;
use serde::{Deserialize, Serialize};

use nl2sql_planner::Step;

/// The base URL used when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable holding the API key when none is configured.
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The per-call timeout when none is configured (`LLM_TIMEOUT_SEC`).
pub const DEFAULT_TIMEOUT_SEC: f64 = 60.0;
/// Transport retries after the first attempt when none are configured.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// Whether requests ask for structured output (`response_format` with a JSON Schema).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StructuredOutput {
    /// Ask for it, and fall back to JSON in text once if the server rejects it.
    #[default]
    Auto,
    /// Always ask for it; a server that rejects it fails the call.
    On,
    /// Never ask for it: the JSON Schema goes into the prompt instead.
    Off,
}

/// One agent entry as written in the file; every key is optional (inherited).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `openai` or `openai-compatible` (the same protocol).
    #[serde(default)]
    pub provider: Option<String>,
    /// The model name sent to the server.
    #[serde(default)]
    pub model: Option<String>,
    /// Sampling temperature (default 0.0).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The server's base URL, up to and excluding `/chat/completions`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// A secret reference (`${env:NAME}`) for the API key; wins over `api_key_env`.
    #[serde(default)]
    pub api_key: Option<String>,
    /// The environment variable holding the API key (default `OPENAI_API_KEY`); an empty
    /// name means the server needs no key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Per-call timeout in seconds (default 60).
    #[serde(default)]
    pub timeout_sec: Option<f64>,
    /// Transport retries after the first attempt (default 3).
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Structured-output mode (default `auto`).
    #[serde(default)]
    pub structured_output: Option<StructuredOutput>,
    /// First backoff delay in milliseconds (default 500); doubles per retry.
    #[serde(default)]
    pub backoff_base_ms: Option<u64>,
    /// Longest backoff delay in milliseconds before jitter (default 8000).
    #[serde(default)]
    pub backoff_max_ms: Option<u64>,
    /// Upper bound of the random jitter added to each backoff, in milliseconds (default 250).
    #[serde(default)]
    pub jitter_ms: Option<u64>,
    /// The longest `Retry-After` honoured, in seconds (default 30).
    #[serde(default)]
    pub max_retry_after_sec: Option<f64>,
    /// A label kept for compatibility with the reference file (unused: the map key names
    /// the step).
    #[serde(default)]
    pub name: Option<String>,
}

/// Circuit-breaker settings of every endpoint (spec: errors-and-recovery.md §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive counted failures that open the breaker (default 5).
    #[serde(default = "default_fail_max")]
    pub fail_max: u32,
    /// How long the breaker stays open before a trial call, in milliseconds (default 60000).
    #[serde(default = "default_reset_ms")]
    pub reset_timeout_ms: u64,
}

fn default_fail_max() -> u32 {
    5
}

fn default_reset_ms() -> u64 {
    60_000
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            fail_max: default_fail_max(),
            reset_timeout_ms: default_reset_ms(),
        }
    }
}

/// The LLM file: `default` plus per-step `agents` keyed by step name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// File format version (1).
    #[serde(default = "default_version")]
    pub version: u32,
    /// The agent every step falls back to.
    pub default: AgentConfig,
    /// Per-step agents: `decomposer`, `ast_planner` (alias `astplanner`), `refiner`,
    /// `answer_synthesizer` (alias `answersynthesizer`), `indexing_enrichment`.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Circuit-breaker settings.
    #[serde(default)]
    pub breaker: BreakerConfig,
}

fn default_version() -> u32 {
    1
}

/// One step's settings after inheritance and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// The provider as written (`openai` or `openai-compatible`).
    pub provider: String,
    /// The model name.
    pub model: String,
    /// Sampling temperature.
    pub temperature: f64,
    /// The base URL without a trailing slash.
    pub base_url: String,
    /// Where the key comes from: a secret reference, or `${env:NAME}` built from
    /// `api_key_env`; `None` when the server needs no key.
    pub api_key_ref: Option<String>,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Transport retries after the first attempt.
    pub max_retries: u32,
    /// Structured-output mode.
    pub structured_output: StructuredOutput,
    /// First backoff delay.
    pub backoff_base: Duration,
    /// Longest backoff delay before jitter.
    pub backoff_max: Duration,
    /// Upper bound of the jitter.
    pub jitter: Duration,
    /// The longest `Retry-After` honoured.
    pub max_retry_after: Duration,
}

/// The agent keys the file accepts besides the four planner steps.
const OTHER_AGENTS: &[&str] = &["indexing_enrichment"];

impl LlmConfig {
    /// Parses and checks a TOML document.
    pub fn from_toml_str(text: &str) -> Result<LlmConfig, ConfigError> {
        let config: LlmConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Parse(e.to_string().trim().to_owned()))?;
        config.check()?;
        Ok(config)
    }

    /// Parses and checks a JSON document.
    pub fn from_json_str(text: &str) -> Result<LlmConfig, ConfigError> {
        let config: LlmConfig =
            serde_json::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        config.check()?;
        Ok(config)
    }

    /// A configuration with one model for every step, talking to `base_url`.
    pub fn single(model: impl Into<String>, base_url: impl Into<String>) -> LlmConfig {
        LlmConfig {
            version: 1,
            default: AgentConfig {
                model: Some(model.into()),
                base_url: Some(base_url.into()),
                ..AgentConfig::default()
            },
            agents: BTreeMap::new(),
            breaker: BreakerConfig::default(),
        }
    }

    /// Checks every key and resolves every step; the first problem is the error.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.version != 1 {
            return Err(invalid(
                "version",
                format!(
                    "unsupported version {} (this build reads version 1)",
                    self.version
                ),
            ));
        }
        for key in self.agents.keys() {
            if step_of(key).is_none() && !OTHER_AGENTS.contains(&key.as_str()) {
                return Err(invalid(
                    format!("agents.{key}"),
                    "unknown step (expected decomposer, ast_planner, refiner, answer_synthesizer or indexing_enrichment)",
                ));
            }
        }
        if self.breaker.fail_max == 0 {
            return Err(invalid("breaker.fail_max", "must be at least 1"));
        }
        let mut any = false;
        for step in ALL_STEPS {
            if self.has_model(step) {
                self.settings(step)?;
                any = true;
            }
        }
        if !any {
            return Err(invalid(
                "default.model",
                "no step has a model (set default.model, or use the offline planner)",
            ));
        }
        Ok(())
    }

    /// True when `step` has a model, its own or `default`'s. A step without one runs on
    /// the offline planner (spec: SPEC.md §9 GAP-59).
    pub fn has_model(&self, step: Step) -> bool {
        self.agent(step)
            .and_then(|(_, a)| a.model.as_ref())
            .or(self.default.model.as_ref())
            .is_some()
    }

    /// The agent entry of `step` as written (under its name or its alias), if any.
    pub fn agent(&self, step: Step) -> Option<(&str, &AgentConfig)> {
        self.agents
            .iter()
            .find(|(key, _)| step_of(key) == Some(step))
            .map(|(key, agent)| (key.as_str(), agent))
    }

    /// The settings of `step`: its agent entry, then `default`, then built-in defaults.
    pub fn settings(&self, step: Step) -> Result<AgentSettings, ConfigError> {
        let own = self.agent(step);
        let prefix = own.map_or_else(|| "default".to_owned(), |(key, _)| format!("agents.{key}"));
        let d = &self.default;
        let pick = |f: fn(&AgentConfig) -> Option<&String>| {
            own.and_then(|(_, a)| f(a)).or_else(|| f(d)).cloned()
        };
        let key_of = |name: &str, set_by_own: bool| {
            if set_by_own {
                format!("{prefix}.{name}")
            } else {
                format!("default.{name}")
            }
        };
        let own_agent = own.map(|(_, a)| a);

        let provider = pick(|a| a.provider.as_ref()).unwrap_or_else(|| "openai".to_owned());
        if !matches!(provider.as_str(), "openai" | "openai-compatible") {
            let set_by_own = own_agent.is_some_and(|a| a.provider.is_some());
            return Err(invalid(
                key_of("provider", set_by_own),
                format!(
                    "unsupported LLM provider '{provider}' (supported: openai, openai-compatible)"
                ),
            ));
        }
        let model = pick(|a| a.model.as_ref()).ok_or_else(|| {
            invalid(
                format!("{prefix}.model"),
                format!("no model for step {} and none in default", step.as_str()),
            )
        })?;
        if model.trim().is_empty() {
            return Err(invalid(format!("{prefix}.model"), "must not be empty"));
        }
        let temperature = own_agent
            .and_then(|a| a.temperature)
            .or(d.temperature)
            .unwrap_or(0.0);
        if !(0.0..=2.0).contains(&temperature) {
            return Err(invalid(
                key_of(
                    "temperature",
                    own_agent.is_some_and(|a| a.temperature.is_some()),
                ),
                format!("{temperature} is outside 0.0..=2.0"),
            ));
        }
        let base_url = pick(|a| a.base_url.as_ref()).unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(invalid(
                key_of("base_url", own_agent.is_some_and(|a| a.base_url.is_some())),
                "must start with http:// or https://",
            ));
        }
        let base_url = base_url.trim_end_matches('/').to_owned();
        let api_key_ref = match pick(|a| a.api_key.as_ref()) {
            Some(reference) => {
                if !(reference.starts_with("${") && reference.ends_with('}')) {
                    return Err(invalid(
                        key_of("api_key", own_agent.is_some_and(|a| a.api_key.is_some())),
                        "must be a secret reference such as ${env:NAME}, never the key itself",
                    ));
                }
                Some(reference)
            }
            None => {
                let env = pick(|a| a.api_key_env.as_ref())
                    .unwrap_or_else(|| DEFAULT_API_KEY_ENV.to_owned());
                (!env.is_empty()).then(|| format!("${{env:{env}}}"))
            }
        };
        let timeout_sec = own_agent
            .and_then(|a| a.timeout_sec)
            .or(d.timeout_sec)
            .unwrap_or(DEFAULT_TIMEOUT_SEC);
        if !timeout_sec.is_finite() || timeout_sec <= 0.0 || timeout_sec > 3600.0 {
            return Err(invalid(
                key_of(
                    "timeout_sec",
                    own_agent.is_some_and(|a| a.timeout_sec.is_some()),
                ),
                format!("{timeout_sec} is outside (0, 3600]"),
            ));
        }
        let max_retries = own_agent
            .and_then(|a| a.max_retries)
            .or(d.max_retries)
            .unwrap_or(DEFAULT_MAX_RETRIES);
        if max_retries > 10 {
            return Err(invalid(
                key_of(
                    "max_retries",
                    own_agent.is_some_and(|a| a.max_retries.is_some()),
                ),
                format!("{max_retries} is more than 10"),
            ));
        }
        let ms = |f: fn(&AgentConfig) -> Option<u64>, default: u64| {
            Duration::from_millis(own_agent.and_then(f).or(f(d)).unwrap_or(default))
        };
        let max_retry_after_sec = own_agent
            .and_then(|a| a.max_retry_after_sec)
            .or(d.max_retry_after_sec)
            .unwrap_or(30.0);
        if !max_retry_after_sec.is_finite() || max_retry_after_sec < 0.0 {
            return Err(invalid(
                key_of(
                    "max_retry_after_sec",
                    own_agent.is_some_and(|a| a.max_retry_after_sec.is_some()),
                ),
                "must be a non-negative number",
            ));
        }
        Ok(AgentSettings {
            provider,
            model,
            temperature,
            base_url,
            api_key_ref,
            timeout: Duration::from_secs_f64(timeout_sec),
            max_retries,
            structured_output: own_agent
                .and_then(|a| a.structured_output)
                .or(d.structured_output)
                .unwrap_or_default(),
            backoff_base: ms(|a| a.backoff_base_ms, 500),
            backoff_max: ms(|a| a.backoff_max_ms, 8_000),
            jitter: ms(|a| a.jitter_ms, 250),
            max_retry_after: Duration::from_secs_f64(max_retry_after_sec),
        })
    }
}

/// The four planner steps, in pipeline order.
pub(crate) const ALL_STEPS: [Step; 4] = [
    Step::Decomposer,
    Step::AstPlanner,
    Step::Refiner,
    Step::AnswerSynthesizer,
];

/// The step an agent key names, accepting the reference spellings.
fn step_of(key: &str) -> Option<Step> {
    match key {
        "decomposer" => Some(Step::Decomposer),
        "ast_planner" | "astplanner" => Some(Step::AstPlanner),
        "refiner" => Some(Step::Refiner),
        "answer_synthesizer" | "answersynthesizer" => Some(Step::AnswerSynthesizer),
        _ => None,
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}
