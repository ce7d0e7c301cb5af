//! PlanModel → SQL per dialect, through sqlparser's AST (never string concatenation).
//!
//! The entry point is [`SqlGenerator::generate`]: it builds a sqlparser `Query` from a
//! validated [`nl2sql_plan::PlanModel`] (tables by ordinal, joins by ordinal, select items,
//! where, group by, having, order by, `LIMIT min(plan limit, row limit)` and offset) and
//! prints it on one line. Identifiers are quoted only when needed (case, characters,
//! reserved words), string literals are escaped for the dialect, operator precedence is made
//! explicit with parentheses, and the dialect differences of the plan function allow-list
//! are mapped (spec: sql-generation.md). Same plan, dialect and row limit give the same SQL,
//! byte for byte. Failures are `SQL_GEN_FAILED` values. The crate does no IO.

mod error;
mod expr;
mod ident;
mod query;
mod spelling;

use nl2sql_plan::PlanModel;
use nl2sql_state::{Dialect, PipelineError, SchemaContract};

pub use nl2sql_state::DEFAULT_ROW_LIMIT;

/// Renders PlanModels as SQL in one dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlGenerator<'a> {
    /// Target dialect.
    pub dialect: Dialect,
    /// The datasource's row limit; the rendered LIMIT never exceeds it.
    pub row_limit: u64,
    /// The datasource's schema: table and column names are written in its spelling.
    pub schema: Option<&'a SchemaContract>,
}

impl SqlGenerator<'static> {
    /// A generator for `dialect` with [`DEFAULT_ROW_LIMIT`] and names as the plan writes
    /// them.
    pub fn new(dialect: Dialect) -> Self {
        SqlGenerator {
            dialect,
            row_limit: DEFAULT_ROW_LIMIT,
            schema: None,
        }
    }
}

impl<'a> SqlGenerator<'a> {
    /// The same generator writing table and column names in the spelling of `schema`.
    #[must_use]
    pub fn with_schema<'b>(self, schema: &'b SchemaContract) -> SqlGenerator<'b> {
        SqlGenerator {
            dialect: self.dialect,
            row_limit: self.row_limit,
            schema: Some(schema),
        }
    }

    /// The same generator with the datasource's row limit (at least 1).
    #[must_use]
    pub fn with_row_limit(mut self, row_limit: u64) -> Self {
        self.row_limit = row_limit.max(1);
        self
    }

    /// Renders `plan` as one SQL statement on one line, without a trailing semicolon.
    pub fn generate(&self, plan: &PlanModel) -> Result<String, PipelineError> {
        Ok(self.build(plan)?.to_string())
    }

    /// Renders `plan` pretty-printed over several lines (sqlparser's alternate display),
    /// for people to read.
    pub fn generate_pretty(&self, plan: &PlanModel) -> Result<String, PipelineError> {
        Ok(format!("{:#}", self.build(plan)?))
    }

    fn build(&self, plan: &PlanModel) -> Result<sqlparser::ast::Query, PipelineError> {
        match self.schema {
            Some(schema) => query::build_query(
                &spelling::respell(plan, schema),
                self.dialect,
                Some(self.row_limit),
            ),
            None => query::build_query(plan, self.dialect, Some(self.row_limit)),
        }
    }
}

#[cfg(test)]
mod tests;
