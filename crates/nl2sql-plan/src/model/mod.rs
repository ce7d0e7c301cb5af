//! The `PlanModel`: a typed, SQL-free query AST for one scan, and its JSON form
//! (spec: plan-model.md §1-2).
//!
//! [`parse_plan`] reads the JSON: unknown keys are rejected at every level, the per-kind
//! rules of `Expr` and the resource limits (R4) are enforced, and a failure names the JSON
//! path of the offending element. [`plan_json_schema`] is the JSON Schema given to an LLM's
//! structured-output mode.

mod parse;
mod types;

pub use parse::{
    MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_IDENT_LEN, MAX_LIST_LEN, PlanParseError, parse_plan,
};
pub use types::{
    AGGREGATE_FUNCTIONS, CaseWhen, CastType, Direction, Expr, ExprKind, GroupByItem,
    Interpretation, InterpretedSpan, JoinSpec, JoinType, LiteralValue, Op, OrderItem, PlanModel,
    QueryType, SelectItem, Signal, TableRef,
};

/// The JSON Schema (draft 2020-12) of [`PlanModel`], generated from the types.
pub fn plan_json_schema() -> serde_json::Value {
    schemars::schema_for!(PlanModel).to_value()
}

#[cfg(test)]
mod tests;
