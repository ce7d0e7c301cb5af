//! The shared vocabulary of nl2sql, used by every other crate: SQL dialects, the stable
//! error codes and [`PipelineError`], schema snapshot shapes, the RBAC policy file, its
//! per-caller evaluation ([`AccessPolicy`]) and its integrity check ([`IntegrityReport`]),
//! the configuration file `nl2sql.toml` ([`ConfigFile`], with [`Secret`]s that never
//! print), caller identity and trace ids, canonical JSON and hashing, and the pipeline
//! state with its reducers.
//!
//! The crate does no IO and does not depend on an async runtime.

mod breaker;
mod canonical;
mod config;
mod context;
mod dialect;
mod error;
mod inferred_keys;
mod integrity;
mod names;
mod node;
mod policy;
mod retry;
mod schema;
mod state;

#[cfg(test)]
mod tests;

pub use breaker::{Breaker, BreakerConfig, BreakerState, Permit, Rejected};
pub use canonical::{canonical_json, sha256_hex};
pub use config::{
    ArtifactDurability, ArtifactsSection, CONFIG_VERSION, ConfigError, ConfigFile,
    DEFAULT_ROW_LIMIT, DatasourceConfig, DatasourceEntry, Engine, EngineSection, EnvSecrets,
    Isolation, MismatchPolicy, Secret, SecretSource, redact_url, resolve_secret,
};
pub use context::{InvalidTraceId, TraceId, UserContext};
pub use dialect::{Dialect, UnknownDialect};
pub use error::{
    ErrorCode, PipelineError, Result, Severity, UnknownErrorCode, sanitize_engine_message,
};
pub use inferred_keys::ident_words;
pub use integrity::{IntegrityReport, IntegrityRow, IntegrityStatus, RuleKind};
pub use names::{norm, norm_parts};
pub use node::Node;
pub use policy::{AccessPolicy, PolicyError, PolicyFile, RolePolicy, TenantPolicy};
pub use retry::{Backoff, SplitMix64};
pub use schema::{
    Cardinality, ColumnContract, ColumnMetadata, ColumnStatistics, ForeignKeyContract,
    SchemaContract, SchemaMetadata, SchemaSnapshot, TableContract, TableMetadata, TableRef,
    TypeClass,
};
pub use state::{
    ArtifactRef, Attempt, GraphState, GraphStateDelta, ReasoningContent, ReasoningEntry,
    ReasoningKind, RunStatus, ScanStatus, SubgraphExecutionState, SubgraphOutput,
    SubgraphStateDelta, WarningEntry,
};
