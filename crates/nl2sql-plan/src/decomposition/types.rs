//! The DecomposerResponse data types (spec: plan-model.md §3.1–§3.5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An aggregation a metric asks for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    /// Number of rows.
    Count,
    /// Sum of values.
    Sum,
    /// Arithmetic mean.
    Avg,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
}

/// A measure to compute, named by a semantic attribute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Semantic name of the metric (also its output column).
    pub name: String,
    /// How to aggregate it, if at all.
    #[serde(default)]
    pub aggregation: Option<Aggregation>,
    /// Free text for people.
    #[serde(default)]
    pub description: Option<String>,
}

/// A comparison operator of a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum FilterOperator {
    /// `=`
    #[serde(rename = "=")]
    Eq,
    /// `!=`
    #[serde(rename = "!=")]
    NotEq,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    GtEq,
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    LtEq,
    /// Inclusive range: a two-element list.
    #[serde(rename = "between")]
    Between,
    /// Membership: a non-empty list.
    #[serde(rename = "in")]
    In,
    /// Substring match on text.
    #[serde(rename = "contains")]
    Contains,
    /// Prefix match on text.
    #[serde(rename = "starts_with")]
    StartsWith,
    /// Suffix match on text.
    #[serde(rename = "ends_with")]
    EndsWith,
}

impl FilterOperator {
    /// The operator as written in JSON (`=`, `between`…).
    pub fn as_str(self) -> &'static str {
        match self {
            FilterOperator::Eq => "=",
            FilterOperator::NotEq => "!=",
            FilterOperator::Gt => ">",
            FilterOperator::GtEq => ">=",
            FilterOperator::Lt => "<",
            FilterOperator::LtEq => "<=",
            FilterOperator::Between => "between",
            FilterOperator::In => "in",
            FilterOperator::Contains => "contains",
            FilterOperator::StartsWith => "starts_with",
            FilterOperator::EndsWith => "ends_with",
        }
    }
}

/// A filter value: a scalar or a homogeneous list (plan-model.md §3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FilterValue {
    /// A boolean.
    Bool(bool),
    /// An integer (fits in i64).
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string.
    String(String),
    /// A list of strings.
    StringList(Vec<String>),
    /// A list of integers.
    IntList(Vec<i64>),
    /// A list of floats.
    FloatList(Vec<f64>),
}

impl FilterValue {
    /// The number of elements when the value is a list.
    pub fn list_len(&self) -> Option<usize> {
        match self {
            FilterValue::StringList(v) => Some(v.len()),
            FilterValue::IntList(v) => Some(v.len()),
            FilterValue::FloatList(v) => Some(v.len()),
            FilterValue::Bool(_)
            | FilterValue::Int(_)
            | FilterValue::Float(_)
            | FilterValue::String(_) => None,
        }
    }
}

/// A row filter on a semantic attribute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterSpec {
    /// The attribute filtered on.
    pub attribute: String,
    /// The comparison.
    pub operator: FilterOperator,
    /// The value compared with.
    pub value: FilterValue,
}

/// A grouping attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupBySpec {
    /// The attribute grouped by.
    pub attribute: String,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortDirection {
    /// Ascending (the default).
    #[default]
    Asc,
    /// Descending.
    Desc,
}

/// A sort key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBySpec {
    /// The attribute sorted by.
    pub attribute: String,
    /// The direction.
    #[serde(default)]
    pub direction: SortDirection,
}

/// The data type vocabulary of expected columns.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// Text.
    String,
    /// Integer.
    Int,
    /// Floating point.
    Float,
    /// Boolean.
    Bool,
    /// Calendar date.
    Date,
    /// Timestamp.
    Datetime,
}

impl Dtype {
    /// True for `int` and `float`.
    pub fn is_numeric(self) -> bool {
        matches!(self, Dtype::Int | Dtype::Float)
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::String => "string",
            Dtype::Int => "int",
            Dtype::Float => "float",
            Dtype::Bool => "bool",
            Dtype::Date => "date",
            Dtype::Datetime => "datetime",
        }
    }
}

/// One output column a scan or op promises.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedColumn {
    /// Column name (identifier-like).
    pub name: String,
    /// Data type, when known.
    #[serde(default)]
    pub dtype: Option<Dtype>,
}

/// The role of a combine input.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Left side.
    Left,
    /// Right side.
    Right,
    /// Left side (the baseline of a comparison).
    Base,
    /// Right side (compared with the base).
    Compare,
    /// Left side.
    Primary,
    /// Right side.
    Secondary,
}

impl Role {
    /// True for the left-side roles `left`, `base` and `primary`.
    pub fn is_left(self) -> bool {
        matches!(self, Role::Left | Role::Base | Role::Primary)
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Left => "left",
            Role::Right => "right",
            Role::Base => "base",
            Role::Compare => "compare",
            Role::Primary => "primary",
            Role::Secondary => "secondary",
        }
    }
}

/// One input of a combine group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CombineInput {
    /// The sub-query feeding the group.
    pub subquery_id: String,
    /// Its role, required for compare and join.
    #[serde(default)]
    pub role: Option<Role>,
}

/// A pair of semantic attributes joined on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinKeyPair {
    /// Attribute on the left input.
    pub left: String,
    /// Attribute on the right input.
    pub right: String,
}

/// How a combine group merges its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CombineOperation {
    /// One input, passed through.
    Standalone,
    /// Two inputs joined on keys, metrics side by side with differences.
    Compare,
    /// Two inputs joined on keys.
    Join,
    /// Two or more inputs with the same columns, stacked.
    Union,
}

impl CombineOperation {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CombineOperation::Standalone => "standalone",
            CombineOperation::Compare => "compare",
            CombineOperation::Join => "join",
            CombineOperation::Union => "union",
        }
    }
}

/// A group of sub-queries combined into one relation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CombineGroup {
    /// Unique group id (kept as the model wrote it).
    pub group_id: String,
    /// How to combine.
    pub operation: CombineOperation,
    /// The inputs, in order.
    pub inputs: Vec<CombineInput>,
    /// Keys for compare and join.
    #[serde(default)]
    pub join_keys: Vec<JoinKeyPair>,
}

/// An operation applied after combining.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PostOperation {
    /// Keep rows matching `filters`.
    Filter,
    /// Group by `group_by` and compute `metrics`.
    Aggregate,
    /// Keep the `expected_schema` columns.
    Project,
    /// Sort by `order_by`.
    Sort,
    /// Keep the first `limit` rows.
    Limit,
}

impl PostOperation {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PostOperation::Filter => "filter",
            PostOperation::Aggregate => "aggregate",
            PostOperation::Project => "project",
            PostOperation::Sort => "sort",
            PostOperation::Limit => "limit",
        }
    }
}

/// A post-combine operation on one group's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostCombineOp {
    /// Op id (replaced by a stable `op_` id on normalisation).
    pub op_id: String,
    /// The group whose result it transforms.
    pub target_group_id: String,
    /// What it does.
    pub operation: PostOperation,
    /// Used by filter.
    #[serde(default)]
    pub filters: Vec<FilterSpec>,
    /// Used by aggregate.
    #[serde(default)]
    pub metrics: Vec<MetricSpec>,
    /// Used by aggregate.
    #[serde(default)]
    pub group_by: Vec<GroupBySpec>,
    /// Used by sort.
    #[serde(default)]
    pub order_by: Vec<OrderBySpec>,
    /// Used by limit (≥ 0).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Used by project; an optional contract otherwise.
    #[serde(default)]
    pub expected_schema: Vec<ExpectedColumn>,
    /// Free-form, carried into the DAG, not interpreted.
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Rust: position among the ops of the same group in the model's output (set by
    /// normalisation; the chain order).
    #[serde(default)]
    pub seq: Option<u32>,
}

/// The kind of a sub-query; `scan` is the only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SubQueryKind {
    /// Reads one datasource.
    #[default]
    Scan,
}

/// One per-datasource sub-query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubQuery {
    /// Id (replaced by a stable `sq_` id on normalisation).
    pub id: String,
    /// The datasource it reads.
    pub datasource_id: String,
    /// What to fetch, in plain language.
    pub intent: String,
    /// Always `scan`.
    #[serde(default)]
    pub kind: SubQueryKind,
    /// Measures.
    #[serde(default)]
    pub metrics: Vec<MetricSpec>,
    /// Row filters.
    #[serde(default)]
    pub filters: Vec<FilterSpec>,
    /// Grouping attributes.
    #[serde(default)]
    pub group_by: Vec<GroupBySpec>,
    /// The output columns, in order: the contract with everything downstream.
    #[serde(default)]
    pub expected_schema: Vec<ExpectedColumn>,
    /// Set from the resolver on normalisation.
    #[serde(default)]
    pub schema_version: Option<String>,
}

/// Why a sub-query could not be mapped to a datasource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnmappedReason {
    /// No such datasource, or none named.
    NoDatasource,
    /// The caller may not use it.
    RestrictedDatasource,
    /// Its engine is not supported.
    UnsupportedDatasource,
}

/// A part of the question that no datasource answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnmappedSubQuery {
    /// What was asked.
    pub intent: String,
    /// Why it is unmapped.
    pub reason: UnmappedReason,
    /// The datasource named, if any.
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// A short explanation.
    #[serde(default)]
    pub detail: Option<String>,
}

/// The decomposer's answer: sub-queries and how to combine their results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecomposerResponse {
    /// One sub-query per datasource question.
    pub sub_queries: Vec<SubQuery>,
    /// How results are combined.
    pub combine_groups: Vec<CombineGroup>,
    /// Operations after combining, chained per group.
    #[serde(default)]
    pub post_combine_ops: Vec<PostCombineOp>,
    /// Parts that no datasource answers.
    #[serde(default)]
    pub unmapped_subqueries: Vec<UnmappedSubQuery>,
}
