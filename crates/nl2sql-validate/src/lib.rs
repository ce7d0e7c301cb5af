//! Validators of nl2sql, all pure functions over typed input (the crate does no IO):
//!
//! - the SQL guard, [`SqlGuard::check`]: given one SQL text and a datasource's schema
//!   ([`GuardContext`]), it parses the text with sqlparser in the datasource's dialect and
//!   decides on the AST — never on substrings — whether the statement is a safe, valid,
//!   read-only query, returning a [`GuardReport`] whose issues a model can act on;
//! - the logical plan validator, [`validate_plan`]: checks a `PlanModel` against the
//!   schema, the policy and the question's intent before any SQL exists ([`LogicalReport`]);
//! - progressive validation of a decomposition, [`validate_decomposition`]: syntactic,
//!   static, then data-flow checks of a `DecomposerResponse`, failing fast at the first
//!   level with findings ([`DecompositionReport`]).
//!
//! - value grounding, [`grounding`]: the string literals a plan compares text columns
//!   with, matched against the values the engine read from the column.
//!
//! `schema_from_ddl` and `schema_from_json` build the schemas they check against.

mod ddl;
pub mod grounding;
mod guard;
mod logical;
mod progressive;

pub use ddl::{SchemaLoadError, schema_from_ddl, schema_from_json};
pub use guard::{
    ColumnResolution, GuardContext, GuardIssue, GuardLimits, GuardReport, GuardStatus, GuardedSql,
    Position, SqlGuard, SqlSpan, TableRead, parser_dialect,
};
pub use logical::{LogicalContext, LogicalReport, validate_plan};
pub use progressive::{
    DecompositionFinding, DecompositionReport, DecompositionStatus, ValidationLevel,
    validate_decomposition,
};
