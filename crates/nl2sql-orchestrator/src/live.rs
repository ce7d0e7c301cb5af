//! SQL validation against a live datasource: the guard over the datasource's current
//! schema, then the physical validator (EXPLAIN dry run and cost) through its breaker.

use nl2sql_adapter::{PhysicalReport, PhysicalSettings, ResultError, validate_physical};
use nl2sql_state::{AccessPolicy, SchemaSnapshot};
use nl2sql_validate::{GuardContext, GuardReport, SqlGuard};
use serde_json::{Value, json};

use crate::datasources::DatasourceRegistry;

/// What live validation found.
#[derive(Debug, Clone)]
pub struct LiveReport {
    /// The guard's report over the live schema.
    pub guard: GuardReport,
    /// The physical validator's report, when the guard passed.
    pub physical: Option<PhysicalReport>,
}

impl LiveReport {
    /// Whether anything blocks: a guard finding or a blocking physical finding.
    pub fn is_blocking(&self) -> bool {
        !self.guard.is_ok()
            || self
                .physical
                .as_ref()
                .is_some_and(PhysicalReport::is_blocking)
    }

    /// The status: the guard's, else `rejected` for a security finding of the engine,
    /// `rewrite` for another blocking physical finding, `ok` otherwise.
    pub fn status(&self) -> &'static str {
        if !self.guard.is_ok() {
            return self.guard.status.as_str();
        }
        match &self.physical {
            Some(p) if p.is_blocking() => {
                let security = p.errors.iter().any(|e| {
                    e.is_blocking() && e.code == nl2sql_state::ErrorCode::SecurityViolation
                });
                if security { "rejected" } else { "rewrite" }
            }
            _ => "ok",
        }
    }

    /// The JSON envelope of `validate-sql`, with the overall status and a `physical`
    /// object (`dry_run`, `cost`, `issues`) when the physical validator ran.
    pub fn to_json(&self) -> Value {
        let mut out = self.guard.to_json();
        if let Value::Object(map) = &mut out {
            map.insert("status".to_owned(), json!(self.status()));
            if let Some(p) = &self.physical {
                map.insert("physical".to_owned(), physical_json(p));
            }
        }
        out
    }

    /// The text report: the guard's, then one line for the dry run, one for the cost and
    /// one per physical finding.
    pub fn to_text(&self) -> String {
        let mut out = self.guard.to_text();
        if let Some(p) = &self.physical {
            if !self.guard.is_ok() {
                return out;
            }
            out = out.replacen(
                &format!("status: {}", self.guard.status.as_str()),
                &format!("status: {}", self.status()),
                1,
            );
            if let Some(dry) = &p.dry_run {
                out.push_str(&format!(
                    "dry run: {}\n",
                    if dry.is_valid { "ok" } else { "failed" }
                ));
            }
            if let Some(cost) = &p.cost {
                let rows = cost
                    .estimated_rows
                    .map_or_else(|| "unknown".to_owned(), |r| r.to_string());
                let units = cost
                    .estimated_cost
                    .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}"));
                out.push_str(&format!("cost: estimated rows {rows}, cost {units}\n"));
            }
            for e in &p.errors {
                out.push_str(&format!("{} [{}] {}\n", e.severity, e.code, e.message));
            }
        }
        out
    }
}

fn physical_json(p: &PhysicalReport) -> Value {
    json!({
        "dry_run": p.dry_run.as_ref().map(|d| json!({
            "is_valid": d.is_valid,
            "error_message": d.error_message,
        })),
        "cost": p.cost,
        "issues": p.errors.iter().map(|e| json!({
            "code": e.code,
            "severity": e.severity,
            "message": e.message,
        })).collect::<Vec<_>>(),
    })
}

/// Validates `sql` against datasource `id` of `registry`: reads the live schema, runs the
/// guard over it (with `policy`), and when the guard passes, the physical validator.
/// `Err` when the datasource cannot be reached or described.
pub async fn validate_sql_live(
    registry: &DatasourceRegistry,
    id: &str,
    sql: &str,
    policy: Option<AccessPolicy>,
    max_cost: Option<f64>,
) -> Result<(LiveReport, SchemaSnapshot), ResultError> {
    let adapter = registry.adapter(id).await?;
    let snapshot = adapter.schema_snapshot().await?;
    let mut ctx = GuardContext::new(id, adapter.dialect(), &snapshot.contract);
    if let Some(p) = &policy {
        ctx = ctx.with_policy(p.clone());
    }
    let guard = SqlGuard::new(ctx).check(sql);
    let physical = if guard.is_ok() {
        let breaker = registry.breaker(id).map_err(|e| {
            ResultError::new(
                nl2sql_adapter::ResultErrorCode::ServiceUnavailable,
                e.to_string(),
            )
        })?;
        let settings = PhysicalSettings {
            max_cost,
            policy,
            generated: false,
        };
        Some(
            validate_physical(
                adapter.as_ref(),
                &breaker,
                &snapshot.contract,
                sql,
                &settings,
            )
            .await,
        )
    } else {
        None
    };
    Ok((LiveReport { guard, physical }, snapshot))
}
