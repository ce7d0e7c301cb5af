//! Validators of nl2sql: the SQL guard today; the logical plan validator and the
//! progressive decomposition validator join it in later issues.
//!
//! The entry point is [`SqlGuard::check`]: given one SQL text and a datasource's schema
//! ([`GuardContext`]), it parses the text with sqlparser in the datasource's dialect and
//! decides on the AST — never on substrings — whether the statement is a safe, valid,
//! read-only query, returning a [`GuardReport`] whose issues a model can act on.
//! The crate does no IO.

mod ddl;
mod guard;
mod logical;
mod progressive;

pub use ddl::{SchemaLoadError, schema_from_ddl, schema_from_json};
pub use guard::{
    ColumnResolution, GuardContext, GuardIssue, GuardLimits, GuardReport, GuardStatus, Position,
    SqlGuard, SqlSpan,
};
pub use logical::{LogicalContext, LogicalReport, validate_plan};
pub use progressive::{
    DecompositionFinding, DecompositionReport, DecompositionStatus, ValidationLevel,
    validate_decomposition,
};
