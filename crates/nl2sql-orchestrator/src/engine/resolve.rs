//! `intent_guard` and `datasource_resolver` (pipeline.md §2.1): refuse a question that
//! asks to change data, then choose the datasources the caller may use.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_index::{DATASOURCE_K, route_datasources};
use nl2sql_plan::DatasourceResolution;
use nl2sql_planner::DatasourceInfo;
use nl2sql_state::{ErrorCode, GraphStateDelta, MismatchPolicy, Node, PipelineError, Severity};
use serde_json::{Value, json};

use super::ctx::RunCtx;
use super::options::AskOptions;
use super::runlog::millis;
use super::state::warnings_of;

/// The resolver's output.
pub(super) struct Resolved {
    pub(super) resolution: DatasourceResolution,
    pub(super) datasources: Vec<DatasourceInfo>,
}

/// `intent_guard`: an `INTENT_VIOLATION` when the question asks to change data; nothing
/// else runs then.
pub(super) fn intent_guard(ctx: &RunCtx) -> Option<PipelineError> {
    let t = ctx.start(Node::IntentGuard.as_str(), None, None);
    let verb = super::intent::write_intent(&ctx.question)?;
    let e = PipelineError::new(
        Node::IntentGuard,
        ErrorCode::IntentViolation,
        Severity::Critical,
        format!("The question asks to change data ('{verb}'); nl2sql only reads data."),
    );
    ctx.log_node(
        Node::IntentGuard.as_str(),
        t,
        json!({"verb": verb}),
        std::slice::from_ref(&e),
    );
    Some(e)
}

/// A datasource the resolver considers, with what the decomposer is told of it.
pub(super) struct Candidate {
    pub(super) id: String,
    pub(super) description: Option<String>,
    /// Business domains from the matching index document (empty when none matched).
    pub(super) domains: Vec<String>,
    /// The schema version of the matching index document, when one matched.
    pub(super) chunk_version: Option<String>,
}

impl Candidate {
    /// A datasource named explicitly or considered without a matching document.
    fn configured(id: String, description: Option<String>) -> Self {
        Candidate {
            id,
            description,
            domains: Vec::new(),
            chunk_version: None,
        }
    }
}

/// `datasource_resolver` (pipeline.md §2.1): its state delta (response, warnings, timing,
/// error) and the datasources, when it resolved some.
pub(super) fn resolver(ctx: &RunCtx, opts: &AskOptions) -> (GraphStateDelta, Option<Resolved>) {
    const NODE: &str = Node::DatasourceResolver.as_str();
    let t = ctx.start(NODE, None, None);
    let mut warnings = Vec::new();
    let out = resolve(ctx, opts, &mut warnings);
    let (response, errors) = match &out {
        Ok(r) => (
            json!({
                "resolved": r.datasources.iter().map(|d| &d.id).collect::<Vec<_>>(),
                "allowed": r.resolution.allowed,
                "unsupported": r.resolution.unsupported,
                "schema_versions": r.resolution.schema_versions,
            }),
            Vec::new(),
        ),
        Err(e) => (Value::Null, vec![e.clone()]),
    };
    ctx.log_node(NODE, t, response.clone(), &errors);
    let mut delta = GraphStateDelta::timing(NODE, millis(t.1.elapsed()));
    delta.warnings = warnings_of(NODE, warnings);
    delta.errors = errors;
    delta.datasource_resolver_response = (!response.is_null()).then_some(response);
    (delta, out.ok())
}

/// The resolution; warnings go to `warnings`.
pub(super) fn resolve(
    ctx: &RunCtx,
    opts: &AskOptions,
    warnings: &mut Vec<String>,
) -> Result<Resolved, PipelineError> {
    const NODE: &str = Node::DatasourceResolver.as_str();
    let registry = &ctx.shared.registry;
    let store = &ctx.shared.store;
    let registered: BTreeSet<String> = registry.ids().into_iter().map(str::to_owned).collect();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut unsupported = BTreeSet::new();
    if let Some(id) = &opts.datasource {
        if !registered.contains(id) {
            return Err(PipelineError::new(
                NODE,
                ErrorCode::InvalidState,
                Severity::Error,
                format!("Datasource not found: {id}"),
            ));
        }
        if !ctx.access.datasource_allowed(id) {
            return Err(PipelineError::new(
                NODE,
                ErrorCode::SecurityViolation,
                Severity::Critical,
                "Datasource not allowed.",
            ));
        }
        let description = registry.config(id).ok().and_then(|c| c.description.clone());
        candidates.push(Candidate::configured(id.clone(), description));
    } else {
        let routing =
            route_datasources(ctx.shared.index.as_ref(), &ctx.question, None, DATASOURCE_K)
                .map_err(|e| {
                    PipelineError::new(
                        NODE,
                        ErrorCode::SchemaRetrievalFailed,
                        Severity::Error,
                        format!("Datasource resolution failed: {}", e.message),
                    )
                })?;
        // The router's warning (no candidate within its thresholds) reaches the answer.
        warnings.extend(routing.warnings);
        for c in routing.candidates {
            if !registered.contains(&c.datasource_id) {
                unsupported.insert(c.datasource_id);
                continue;
            }
            let description = (!c.metadata.description.is_empty())
                .then(|| c.metadata.description.clone())
                .or_else(|| {
                    registry
                        .config(&c.datasource_id)
                        .ok()
                        .and_then(|cfg| cfg.description.clone())
                });
            candidates.push(Candidate {
                id: c.datasource_id,
                description,
                domains: c.metadata.domains,
                chunk_version: Some(c.schema_version),
            });
        }
        if candidates.is_empty() {
            // Few datasources and no word of the question in their documents: every
            // indexed, registered datasource is a candidate (the planner links words).
            for id in store.datasource_ids() {
                if registered.contains(&id) {
                    let description = registry
                        .config(&id)
                        .ok()
                        .and_then(|c| c.description.clone());
                    candidates.push(Candidate::configured(id, description));
                }
            }
            if !candidates.is_empty() {
                warnings.push(
                    "No datasource document matched the question; every indexed datasource was considered."
                        .to_owned(),
                );
            }
        }
        if candidates.is_empty() {
            let message = if store.datasource_ids().is_empty() {
                "schema index unavailable: no datasource has been indexed"
            } else {
                "No datasource candidates resolved."
            };
            return Err(PipelineError::new(
                NODE,
                ErrorCode::SchemaRetrievalFailed,
                Severity::Error,
                message,
            ));
        }
    }
    let allowed: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| ctx.access.datasource_allowed(&c.id))
        .collect();
    if allowed.is_empty() {
        return Err(PipelineError::new(
            NODE,
            ErrorCode::SecurityViolation,
            Severity::Critical,
            "No allowed datasources.",
        ));
    }
    let mut schema_versions = BTreeMap::new();
    let mut datasources = Vec::new();
    let mut mismatched = Vec::new();
    for candidate in &allowed {
        let Candidate {
            id,
            description,
            domains,
            chunk_version,
        } = candidate;
        let latest = store.latest_version(id);
        if let (Some(l), Some(c)) = (&latest, chunk_version)
            && l != c
        {
            mismatched.push(id.clone());
        }
        if let Some(v) = &latest {
            schema_versions.insert(id.clone(), v.clone());
        }
        let examples = ctx
            .shared
            .docs
            .get(id)
            .map(|d| d.examples.clone())
            .unwrap_or_default();
        let snapshot = store.latest_snapshot(id);
        // The matching document's domains, else those of the stored snapshot (an
        // explicit datasource, or one considered without a matching document).
        let domains = if domains.is_empty() {
            snapshot
                .as_ref()
                .and_then(|s| s.metadata.as_ref())
                .and_then(|m| m.domains.clone())
                .unwrap_or_default()
        } else {
            domains.clone()
        };
        datasources.push(DatasourceInfo {
            id: id.clone(),
            description: description.clone(),
            domains,
            examples,
            schema_version: latest.clone(),
            snapshot,
        });
    }
    if !mismatched.is_empty() {
        mismatched.sort();
        let message = format!(
            "Schema version mismatch for datasources: {}",
            mismatched.join(", ")
        );
        match ctx.shared.options.schema_version_mismatch {
            MismatchPolicy::Fail => {
                return Err(PipelineError::new(
                    NODE,
                    ErrorCode::InvalidState,
                    Severity::Error,
                    message,
                ));
            }
            MismatchPolicy::Warn => warnings.push(message),
            MismatchPolicy::Ignore => {}
        }
    }
    Ok(Resolved {
        resolution: DatasourceResolution {
            resolved: Some(candidates.iter().map(|c| c.id.clone()).collect()),
            allowed: Some(allowed.iter().map(|c| c.id.clone()).collect()),
            unsupported,
            schema_versions,
        },
        datasources,
    })
}
