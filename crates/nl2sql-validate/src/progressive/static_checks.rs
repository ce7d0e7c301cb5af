//! Level 2 — static checks on the decomposer's document as written (validators.md §1.2):
//! every reference, id, role and parameter, and the semantic-only rule; paths and ids are
//! the model's own, so the hints name what the model wrote.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_plan::{
    CombineOperation, DecomposerResponse, ExpectedColumn, FilterOperator, FilterSpec,
    PostOperation, semantic_violations,
};

use super::DecompositionFinding;

const ID_HINT: &str = "Give every sub-query, combine group and post op its own id.";
const REF_HINT: &str = "Every combine group input must be the id of a sub-query you listed.";
const TARGET_HINT: &str = "Every post op must target the group_id of a combine group you listed.";
const ROLE_HINT: &str = "standalone takes exactly one input; compare and join take exactly two, one with role left/base/primary and one with role right/compare/secondary, and at least one join_keys pair; union takes two or more inputs.";
const SCHEMA_HINT: &str = "List the output columns of every sub-query in expected_schema, each name once, as identifiers (letters, digits, '_').";
const FILTER_HINT: &str = "Use a two-element list for between, a non-empty list for in, and a single value for every other operator.";
const OP_HINT: &str = "Give each post op the parameters of its operation: filters for filter, metrics or group_by for aggregate, expected_schema for project, order_by for sort, a limit >= 0 for limit.";
const SEMANTIC_HINT: &str =
    "Describe what to fetch in plain words and use attribute names, never SQL.";
/// Hint when the DAG cannot be built.
pub(super) const PLANNER_HINT: &str =
    "Make the combine groups and post ops form a tree over the sub-queries you listed.";

/// Every static finding, in document order of the checks.
pub(super) fn check(r: &DecomposerResponse) -> Vec<DecompositionFinding> {
    let mut out = Vec::new();
    let sq_ids = unique_ids(
        &mut out,
        r.sub_queries.iter().map(|s| s.id.as_str()),
        "$.sub_queries",
        "id",
        "sub-query",
    );
    let group_ids = unique_ids(
        &mut out,
        r.combine_groups.iter().map(|g| g.group_id.as_str()),
        "$.combine_groups",
        "group_id",
        "combine group",
    );
    unique_ids(
        &mut out,
        r.post_combine_ops.iter().map(|o| o.op_id.as_str()),
        "$.post_combine_ops",
        "op_id",
        "post op",
    );

    for (i, sq) in r.sub_queries.iter().enumerate() {
        let at = format!("$.sub_queries[{i}]");
        if sq.datasource_id.trim().is_empty() {
            out.push(
                DecompositionFinding::new(
                    format!("sub-query '{}' names no datasource", sq.id),
                    "Set datasource_id to one of the datasources you were given.",
                )
                .node(&sq.id)
                .path(format!("{at}.datasource_id"))
                .key("datasource_id"),
            );
        }
        if sq.expected_schema.is_empty() {
            out.push(
                DecompositionFinding::new(
                    format!("sub-query '{}' has an empty expected_schema", sq.id),
                    SCHEMA_HINT,
                )
                .node(&sq.id)
                .path(format!("{at}.expected_schema"))
                .key("expected_schema"),
            );
        }
        expected_schema(&mut out, &sq.id, &at, &sq.expected_schema, true);
        filters(&mut out, &sq.id, &at, &sq.filters);
    }

    for (i, g) in r.combine_groups.iter().enumerate() {
        let at = format!("$.combine_groups[{i}]");
        let node = format!("combine_{}", g.group_id);
        let mut seen = BTreeSet::new();
        for (j, input) in g.inputs.iter().enumerate() {
            let path = format!("{at}.inputs[{j}].subquery_id");
            if !sq_ids.contains(input.subquery_id.as_str()) {
                out.push(
                    DecompositionFinding::new(
                        format!(
                            "combine group '{}' uses the unknown sub-query '{}'",
                            g.group_id, input.subquery_id
                        ),
                        REF_HINT,
                    )
                    .node(&node)
                    .path(path)
                    .key(&input.subquery_id),
                );
            } else if !seen.insert(input.subquery_id.as_str()) {
                out.push(
                    DecompositionFinding::new(
                        format!(
                            "combine group '{}' uses sub-query '{}' twice",
                            g.group_id, input.subquery_id
                        ),
                        ROLE_HINT,
                    )
                    .node(&node)
                    .path(path)
                    .key(&input.subquery_id),
                );
            }
        }
        for problem in arity_problems(g) {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "combine group '{}' ({}) {problem}",
                        g.group_id,
                        g.operation.as_str()
                    ),
                    ROLE_HINT,
                )
                .node(&node)
                .path(format!("{at}.inputs"))
                .key("inputs"),
            );
        }
        let two_sided = matches!(
            g.operation,
            CombineOperation::Compare | CombineOperation::Join
        );
        if two_sided && g.join_keys.is_empty() {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "combine group '{}' ({}) has no join_keys",
                        g.group_id,
                        g.operation.as_str()
                    ),
                    ROLE_HINT,
                )
                .node(&node)
                .path(format!("{at}.join_keys"))
                .key("join_keys"),
            );
        }
    }

    for (i, op) in r.post_combine_ops.iter().enumerate() {
        let at = format!("$.post_combine_ops[{i}]");
        if !group_ids.contains(op.target_group_id.as_str()) {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "post op '{}' targets the unknown combine group '{}'",
                        op.op_id, op.target_group_id
                    ),
                    TARGET_HINT,
                )
                .node(&op.op_id)
                .path(format!("{at}.target_group_id"))
                .key(&op.target_group_id),
            );
        }
        let missing = match op.operation {
            PostOperation::Filter if op.filters.is_empty() => Some("filters"),
            PostOperation::Aggregate if op.metrics.is_empty() && op.group_by.is_empty() => {
                Some("metrics")
            }
            PostOperation::Project if op.expected_schema.is_empty() => Some("expected_schema"),
            PostOperation::Sort if op.order_by.is_empty() => Some("order_by"),
            PostOperation::Limit if op.limit.is_none() => Some("limit"),
            _ => None,
        };
        if let Some(key) = missing {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "post op '{}' ({}) has no {key}",
                        op.op_id,
                        op.operation.as_str()
                    ),
                    OP_HINT,
                )
                .node(&op.op_id)
                .path(format!("{at}.{key}"))
                .key(key),
            );
        }
        if let Some(limit) = op.limit.filter(|l| *l < 0) {
            out.push(
                DecompositionFinding::new(
                    format!("post op '{}' has the negative limit {limit}", op.op_id),
                    OP_HINT,
                )
                .node(&op.op_id)
                .path(format!("{at}.limit"))
                .key("limit"),
            );
        }
        expected_schema(&mut out, &op.op_id, &at, &op.expected_schema, false);
        filters(&mut out, &op.op_id, &at, &op.filters);
    }

    for v in semantic_violations(r) {
        let node = if v.path.starts_with("$.combine_groups") {
            format!("combine_{}", v.owner_id)
        } else {
            v.owner_id.clone()
        };
        out.push(
            DecompositionFinding::new(v.message, SEMANTIC_HINT)
                .node(node)
                .path(v.path)
                .key(v.element),
        );
    }
    out
}

/// Records duplicate ids; returns the set of ids.
fn unique_ids<'a>(
    out: &mut Vec<DecompositionFinding>,
    ids: impl Iterator<Item = &'a str>,
    list: &str,
    field: &str,
    what: &str,
) -> BTreeSet<&'a str> {
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, id) in ids.enumerate() {
        if let Some(j) = first.get(id) {
            out.push(
                DecompositionFinding::new(
                    format!("{what} id '{id}' is used at {list}[{j}] and {list}[{i}]"),
                    ID_HINT,
                )
                .node(id)
                .path(format!("{list}[{i}].{field}"))
                .key(id),
            );
        } else {
            first.insert(id, i);
        }
    }
    first.into_keys().collect()
}

fn arity_problems(g: &nl2sql_plan::CombineGroup) -> Vec<String> {
    let n = g.inputs.len();
    match g.operation {
        CombineOperation::Standalone if n != 1 => {
            vec![format!("has {n} inputs, not exactly 1")]
        }
        CombineOperation::Union if n < 2 => vec![format!("has {n} inputs, fewer than 2")],
        CombineOperation::Compare | CombineOperation::Join => {
            let mut problems = Vec::new();
            if n != 2 {
                problems.push(format!("has {n} inputs, not exactly 2"));
            }
            let unroled: Vec<&str> = g
                .inputs
                .iter()
                .filter(|i| i.role.is_none())
                .map(|i| i.subquery_id.as_str())
                .collect();
            if !unroled.is_empty() {
                problems.push(format!(
                    "has inputs without a role: [{}]",
                    unroled.join(", ")
                ));
            } else if n == 2 {
                let lefts = g
                    .inputs
                    .iter()
                    .filter(|i| i.role.is_some_and(|r| r.is_left()))
                    .count();
                if lefts != 1 {
                    problems.push("needs one left-side and one right-side role".to_owned());
                }
            }
            problems
        }
        _ => Vec::new(),
    }
}

fn expected_schema(
    out: &mut Vec<DecompositionFinding>,
    owner: &str,
    at: &str,
    cols: &[ExpectedColumn],
    identifiers: bool,
) {
    let mut seen = BTreeSet::new();
    for (j, c) in cols.iter().enumerate() {
        let path = format!("{at}.expected_schema[{j}].name");
        if !seen.insert(c.name.as_str()) {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "'{owner}' lists the column '{}' twice in expected_schema",
                        c.name
                    ),
                    SCHEMA_HINT,
                )
                .node(owner)
                .path(path)
                .key(&c.name),
            );
        } else if identifiers
            && !is_identifier(&c.name)
            && nl2sql_plan::attribute_violation(&c.name).is_none()
        {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "'{owner}' has the column name '{}', which is not an identifier",
                        c.name
                    ),
                    SCHEMA_HINT,
                )
                .node(owner)
                .path(path)
                .key(&c.name),
            );
        }
    }
}

/// `^[A-Za-z_][A-Za-z0-9_]{0,62}$`
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 63
}

fn filters(out: &mut Vec<DecompositionFinding>, owner: &str, at: &str, filters: &[FilterSpec]) {
    for (j, f) in filters.iter().enumerate() {
        let len = f.value.list_len();
        let problem = match f.operator {
            FilterOperator::Between if len != Some(2) => Some("needs a two-element list"),
            FilterOperator::In if len.is_none_or(|n| n == 0) => Some("needs a non-empty list"),
            FilterOperator::Between | FilterOperator::In => None,
            _ if len.is_some() => Some("needs a single value, not a list"),
            _ => None,
        };
        if let Some(problem) = problem {
            out.push(
                DecompositionFinding::new(
                    format!(
                        "'{owner}' filters '{}' with '{}', which {problem}",
                        f.attribute,
                        f.operator.as_str()
                    ),
                    FILTER_HINT,
                )
                .node(owner)
                .path(format!("{at}.filters[{j}].value"))
                .key(&f.attribute),
            );
        }
    }
}
