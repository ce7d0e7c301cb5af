//! Typed plans of nl2sql: the `PlanModel` a planner writes for one scan (a SQL-free query
//! AST as JSON), the `DecomposerResponse` that splits a question into scans, and the
//! `ExecutionDag` built from it. No IO.

mod dag;
mod decomposition;
mod model;

pub use dag::{
    ColumnSpec, DAG_VERSION, ExecutionDag, FlowIssue, LogicalEdge, LogicalNode, NodeKind,
    PlannedDag, RelationSchema, layered_topological_sort,
};
pub use decomposition::{
    Aggregation, CombineGroup, CombineInput, CombineOperation, DatasourceResolution,
    DecomposerResponse, DecompositionParseError, Dtype, ExpectedColumn, FilterOperator, FilterSpec,
    FilterValue, GroupBySpec, JoinKeyPair, MetricSpec, Normalized, OrderBySpec, PostCombineOp,
    PostOperation, Role, SemanticViolation, SortDirection, SubQuery, SubQueryKind, UnmappedReason,
    UnmappedSubQuery, attribute_violation, decomposition_json_schema, intent_violation, normalize,
    parse_decomposition, semantic_violations, stable_op_id, stable_subquery_id,
};
pub use model::{
    AGGREGATE_FUNCTIONS, CaseWhen, CastType, Direction, Expr, ExprKind, GroupByItem,
    Interpretation, InterpretedSpan, JoinSpec, JoinType, LiteralValue, MAX_DEPTH,
    MAX_DOCUMENT_BYTES, MAX_IDENT_LEN, MAX_LIST_LEN, Op, OrderItem, PlanModel, PlanParseError,
    QueryType, SelectItem, Signal, TableRef, parse_plan, plan_json_schema,
};
