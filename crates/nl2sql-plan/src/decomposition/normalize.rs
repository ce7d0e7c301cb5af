//! Decomposer normalisation (spec: plan-model.md §3.6, GAP-18): map sub-queries to
//! datasources, give sub-queries and ops content-hashed ids, de-duplicate, drop what can no
//! longer run (with warnings) and sort, so the same answer always yields the same document.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_state::{ErrorCode, Node, PipelineError, Severity, canonical_json, sha256_hex};
use serde_json::json;

use super::{
    CombineGroup, CombineOperation, DecomposerResponse, PostCombineOp, SubQuery, UnmappedReason,
    UnmappedSubQuery,
};

/// The node name on warnings.
const NODE: &str = Node::Decomposer.as_str();

/// What the datasource resolver knows for one caller. `None` sets accept every id (the
/// CLI, which has no resolver).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasourceResolution {
    /// Ids the resolver resolved; `None` = any.
    pub resolved: Option<BTreeSet<String>>,
    /// Ids the caller may use; `None` = any.
    pub allowed: Option<BTreeSet<String>>,
    /// Ids whose engine is unsupported.
    pub unsupported: BTreeSet<String>,
    /// Schema version per datasource id.
    pub schema_versions: BTreeMap<String, String>,
}

impl DatasourceResolution {
    /// Accepts every datasource id and sets no schema version.
    pub fn permissive() -> Self {
        DatasourceResolution::default()
    }

    fn unmapped_reason(&self, ds: &str) -> Option<(UnmappedReason, String)> {
        if ds.is_empty() || self.resolved.as_ref().is_some_and(|r| !r.contains(ds)) {
            return Some((
                UnmappedReason::NoDatasource,
                format!("datasource '{ds}' is not known"),
            ));
        }
        if self.allowed.as_ref().is_some_and(|a| !a.contains(ds)) {
            return Some((
                UnmappedReason::RestrictedDatasource,
                format!("datasource '{ds}' is not allowed for this caller"),
            ));
        }
        if self.unsupported.contains(ds) {
            return Some((
                UnmappedReason::UnsupportedDatasource,
                format!("datasource '{ds}' has an unsupported engine"),
            ));
        }
        None
    }
}

/// A normalised response with what normalisation did.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The deterministic response: stable ids, sorted lists.
    pub response: DecomposerResponse,
    /// Model sub-query id → stable `sq_` id (merged duplicates map to the same id).
    pub subquery_ids: BTreeMap<String, String>,
    /// Model op id → stable `op_` id, for the ops kept.
    pub op_ids: BTreeMap<String, String>,
    /// What was dropped and why (`INVALID_PLAN_STRUCTURE`, severity WARNING).
    pub warnings: Vec<PipelineError>,
}

/// `"sq_"` + the first 12 hex of the SHA-256 of the canonical JSON of the sub-query's
/// content (`datasource_id`, `intent`, `metrics`, `filters`, `group_by`,
/// `expected_schema`).
pub fn stable_subquery_id(sq: &SubQuery) -> String {
    let payload = json!({
        "datasource_id": sq.datasource_id.trim(),
        "intent": sq.intent,
        "metrics": sq.metrics,
        "filters": sq.filters,
        "group_by": sq.group_by,
        "expected_schema": sq.expected_schema,
    });
    format!("sq_{}", &hash(&payload)[..12])
}

/// `"op_"` + the first 12 hex of the SHA-256 of the canonical JSON of the op's content,
/// including its `seq` (null when unset).
pub fn stable_op_id(op: &PostCombineOp) -> String {
    let payload = json!({
        "target_group_id": op.target_group_id,
        "operation": op.operation,
        "filters": op.filters,
        "metrics": op.metrics,
        "group_by": op.group_by,
        "order_by": op.order_by,
        "limit": op.limit,
        "expected_schema": op.expected_schema,
        "metadata": op.metadata,
        "seq": op.seq,
    });
    format!("op_{}", &hash(&payload)[..12])
}

/// Normalises a (statically valid) response: the steps of plan-model.md §3.6 in order.
/// Never fails: what cannot be kept is moved to `unmapped_subqueries` or dropped with a
/// warning.
pub fn normalize(response: &DecomposerResponse, resolution: &DatasourceResolution) -> Normalized {
    let mut warnings = Vec::new();
    let mut unmapped = response.unmapped_subqueries.clone();
    let mut subquery_ids = BTreeMap::new();
    let mut kept: BTreeMap<String, SubQuery> = BTreeMap::new();

    // Steps 1 and 2: map, give stable ids, merge duplicates (first wins).
    for sq in &response.sub_queries {
        let ds = sq.datasource_id.trim();
        if let Some((reason, detail)) = resolution.unmapped_reason(ds) {
            unmapped.push(UnmappedSubQuery {
                intent: sq.intent.clone(),
                reason,
                datasource_id: (!ds.is_empty()).then(|| ds.to_owned()),
                detail: Some(detail),
            });
            continue;
        }
        let id = stable_subquery_id(sq);
        subquery_ids.insert(sq.id.clone(), id.clone());
        kept.entry(id.clone()).or_insert_with(|| {
            let mut sq = sq.clone();
            sq.id = id;
            sq.datasource_id = ds.to_owned();
            if let Some(version) = resolution.schema_versions.get(ds) {
                sq.schema_version = Some(version.clone());
            }
            sq
        });
    }

    // Step 3: rewrite the groups' inputs, drop degenerate groups.
    let mut groups = Vec::new();
    for g in &response.combine_groups {
        let mut seen = BTreeSet::new();
        let mut inputs = Vec::new();
        for input in &g.inputs {
            let id = subquery_ids
                .get(&input.subquery_id)
                .cloned()
                .unwrap_or_else(|| input.subquery_id.clone());
            if kept.contains_key(&id) && seen.insert(id.clone()) {
                let mut input = input.clone();
                input.subquery_id = id;
                inputs.push(input);
            }
        }
        let two_sided = matches!(
            g.operation,
            CombineOperation::Compare | CombineOperation::Join
        );
        let reason = if inputs.is_empty() {
            Some("it has no input left")
        } else if two_sided && inputs.len() < g.inputs.len() {
            Some("it lost an input")
        } else {
            None
        };
        if let Some(reason) = reason {
            warnings.push(warning(
                format!(
                    "combine group '{}' ({}) was dropped: {reason}",
                    g.group_id,
                    g.operation.as_str()
                ),
                json!({"group_id": g.group_id}),
            ));
            continue;
        }
        groups.push(CombineGroup {
            inputs,
            ..g.clone()
        });
    }
    let group_ids: BTreeSet<&str> = groups.iter().map(|g| g.group_id.as_str()).collect();

    // Step 4: seq per target group in model order, stable op ids, drop orphans.
    let mut next_seq: BTreeMap<&str, u32> = BTreeMap::new();
    let mut ops = Vec::new();
    let mut op_ids = BTreeMap::new();
    for op in &response.post_combine_ops {
        let seq = next_seq.entry(op.target_group_id.as_str()).or_insert(0);
        let this_seq = *seq;
        *seq += 1;
        if !group_ids.contains(op.target_group_id.as_str()) {
            warnings.push(warning(
                format!(
                    "post op '{}' was dropped: its combine group '{}' does not exist or was dropped",
                    op.op_id, op.target_group_id
                ),
                json!({"op_id": op.op_id, "group_id": op.target_group_id}),
            ));
            continue;
        }
        let mut op = op.clone();
        op.seq = Some(this_seq);
        let id = stable_op_id(&op);
        op_ids.insert(op.op_id.clone(), id.clone());
        op.op_id = id;
        ops.push(op);
    }

    // Step 5: sort.
    groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    ops.sort_by(|a, b| a.op_id.cmp(&b.op_id));
    Normalized {
        response: DecomposerResponse {
            sub_queries: kept.into_values().collect(),
            combine_groups: groups,
            post_combine_ops: ops,
            unmapped_subqueries: unmapped,
        },
        subquery_ids,
        op_ids,
        warnings,
    }
}

fn hash(payload: &serde_json::Value) -> String {
    sha256_hex(canonical_json(payload).as_bytes())
}

fn warning(message: String, details: serde_json::Value) -> PipelineError {
    PipelineError::new(
        NODE,
        ErrorCode::InvalidPlanStructure,
        Severity::Warning,
        message,
    )
    .with_details(details)
}
