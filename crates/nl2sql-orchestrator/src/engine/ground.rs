//! The value grounder: between logical validation and SQL generation, every string a plan
//! compares a text column with is looked up in that column, through the adapter.
//!
//! Each lookup is a plan of its own (`SELECT DISTINCT c FROM t WHERE c IS NOT NULL LIMIT
//! n + 1`), rendered by the generator, checked by the guard under the caller's policy and
//! run in the datasource's sandbox with its limits, through its circuit breaker: the
//! grounder reads nothing the caller could not ask for. A column with more than `n`
//! distinct values is searched for the plan's literals instead (`LOWER(c) IN (…)`).
//!
//! A literal spelt as stored passes; one that reads like stored values once case, accents,
//! spacing and punctuation are ignored is rewritten to the stored spelling; one that
//! matches nothing stops the attempt with `VALUE_NOT_FOUND`, naming the nearest stored
//! values. A lookup that fails (timeout, an open breaker, a refused statement) leaves the
//! plan as it was, with a warning: grounding may only make a plan more right, never
//! block one the database could still answer.

use arrow::array::Array;
use arrow::util::display::array_value_to_string;
use nl2sql_adapter::{
    CircuitBreaker, DatasourceAdapter, DatasourceBreaker as _, PermitOutcome as _, RequestLimits,
};
use nl2sql_plan::{Expr, LiteralValue, Op, PlanModel, SelectItem, TableRef};
use nl2sql_sqlgen::SqlGenerator;
use nl2sql_state::Node;
use nl2sql_state::{ErrorCode, PipelineError, SchemaContract, SchemaSnapshot, Severity};
use nl2sql_validate::grounding::{
    Grounding, Respelling, ValueProbe, ground_literal, respell, value_probes,
};
use nl2sql_validate::{GuardContext, SqlGuard};
use serde_json::{Value, json};

use super::ctx::RunCtx;

pub(super) const NODE: &str = Node::ValueGrounder.as_str();

/// What grounding did to one plan.
#[derive(Default)]
pub(super) struct Grounded {
    /// Literals that matched nothing (blocking).
    pub(super) errors: Vec<PipelineError>,
    /// Lookups that could not run, and respellings, said to the user.
    pub(super) warnings: Vec<String>,
    /// For the run log: each column looked up, and what changed.
    pub(super) delta: Value,
}

/// The values of one column the grounder read.
struct Read {
    values: Vec<String>,
    /// Every distinct value was read (else only the ones like the literals).
    complete: bool,
}

/// Grounds the literals of `plan` (rewriting it in place) against `adapter`; `None` when
/// the plan compares no text column with a string (nothing to check, nothing logged).
pub(super) async fn ground(
    ctx: &RunCtx,
    adapter: &dyn DatasourceAdapter,
    breaker: &CircuitBreaker,
    snapshot: &SchemaSnapshot,
    limits: &RequestLimits,
    plan: &mut PlanModel,
) -> Option<Grounded> {
    let contract = &snapshot.contract;
    let cap = ctx.shared.options.value_lookup_limit;
    if cap == 0 {
        return None;
    }
    let probes = value_probes(plan, contract);
    if probes.is_empty() {
        return None;
    }
    let mut out = Grounded::default();
    let mut lookups = Vec::new();
    let mut changes: Vec<Respelling> = Vec::new();
    for probe in &probes {
        let read = match read_values(ctx, adapter, breaker, contract, limits, probe, cap).await {
            Ok(read) => read,
            Err(message) => {
                out.warnings.push(format!(
                    "The values of {} could not be checked ({message}); the question's {} used as written.",
                    probe.label(),
                    quoted(&probe.literals)
                ));
                lookups.push(json!({"column": probe.label(), "error": message}));
                continue;
            }
        };
        lookups.push(json!({
            "column": probe.label(),
            "values_read": read.values.len(),
            "complete": read.complete,
        }));
        for literal in &probe.literals {
            match ground_literal(literal, &read.values) {
                Grounding::Exact => {}
                Grounding::Respelled(stored) => changes.push(Respelling {
                    table: probe.table.clone(),
                    column: probe.column.clone(),
                    literal: literal.clone(),
                    stored,
                }),
                Grounding::NotFound { nearest } => {
                    // The values of a PII column are never listed, not even as hints.
                    let pii = is_pii(snapshot, probe);
                    let nearest = if pii { Vec::new() } else { nearest };
                    out.errors
                        .push(not_found(probe, literal, &read, &nearest, pii));
                }
            }
        }
    }
    if out.errors.is_empty() {
        respell(plan, contract, &changes);
        for c in &changes {
            out.warnings.push(format!(
                "'{}' was read as {} of {}.{}, as the data spells it.",
                c.literal,
                quoted(&c.stored),
                c.table.table_name,
                c.column
            ));
        }
    }
    out.delta = json!({
        "lookups": lookups,
        "respelled": changes
            .iter()
            .map(|c| json!({
                "column": format!("{}.{}", c.table.table_name, c.column),
                "from": c.literal,
                "to": c.stored,
            }))
            .collect::<Vec<_>>(),
    });
    Some(out)
}

/// Whether the snapshot's metadata marks the probe's column as personal data.
fn is_pii(snapshot: &SchemaSnapshot, probe: &ValueProbe) -> bool {
    snapshot
        .metadata
        .as_ref()
        .and_then(|m| m.tables.get(&probe.table.full_name()))
        .and_then(|t| t.columns.get(&probe.column))
        .is_some_and(|c| c.pii)
}

/// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
fn quoted(values: &[String]) -> String {
    let q: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
    match q.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn not_found(
    probe: &ValueProbe,
    literal: &str,
    read: &Read,
    nearest: &[String],
    pii: bool,
) -> PipelineError {
    let held = if read.complete {
        format!(
            "{} holds {} distinct value{}",
            probe.label(),
            read.values.len(),
            if read.values.len() == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{} holds more distinct values than are read whole; none equals it, case ignored",
            probe.label()
        )
    };
    let hint = if pii {
        "; the values of a personal-data column are not listed".to_owned()
    } else if nearest.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", quoted(nearest))
    };
    PipelineError::new(
        NODE,
        ErrorCode::ValueNotFound,
        Severity::Error,
        format!(
            "The value '{literal}' is not in {} ({held}){hint}",
            probe.label()
        ),
    )
}

/// The distinct values of the probe's column: all of them when there are at most `cap`,
/// else the ones equal to a literal with case ignored.
async fn read_values(
    ctx: &RunCtx,
    adapter: &dyn DatasourceAdapter,
    breaker: &CircuitBreaker,
    contract: &SchemaContract,
    limits: &RequestLimits,
    probe: &ValueProbe,
    cap: usize,
) -> Result<Read, String> {
    let all = lookup_plan(contract, probe, None, cap + 1);
    let mut values = run_lookup(ctx, adapter, breaker, contract, limits, &all).await?;
    let complete = values.len() <= cap;
    if !complete {
        let like = lookup_plan(contract, probe, Some(&probe.literals), cap);
        values.extend(run_lookup(ctx, adapter, breaker, contract, limits, &like).await?);
    }
    values.sort();
    values.dedup();
    Ok(Read { values, complete })
}

/// `SELECT DISTINCT t.c FROM table t WHERE t.c IS NOT NULL [AND LOWER(t.c) IN (…)]
/// LIMIT rows`.
fn lookup_plan(
    contract: &SchemaContract,
    probe: &ValueProbe,
    literals: Option<&[String]>,
    rows: usize,
) -> PlanModel {
    let column = || Expr::column(Some("t"), &probe.column);
    let mut filter = Expr::binary(Op::IsNot, column(), Expr::null());
    if let Some(literals) = literals {
        let lowered = literals
            .iter()
            .map(|l| Expr::literal(LiteralValue::Str(l.to_lowercase())))
            .collect();
        filter = Expr::binary(
            Op::And,
            filter,
            Expr::binary(
                Op::In,
                Expr::func("LOWER", vec![column()]),
                Expr::func("LIST", lowered),
            ),
        );
    }
    // The schema is named only where the table's name alone is ambiguous.
    let same_name = contract
        .tables
        .values()
        .filter(|t| t.table.table_name == probe.table.table_name)
        .count();
    PlanModel {
        distinct: true,
        tables: vec![TableRef {
            name: probe.table.table_name.clone(),
            schema_name: (same_name > 1).then(|| probe.table.schema_name.clone()),
            database: None,
            alias: "t".to_owned(),
            ordinal: 0,
        }],
        select_items: vec![SelectItem {
            expr: column(),
            alias: None,
            ordinal: 0,
        }],
        where_: Some(filter),
        limit: Some(i64::try_from(rows).unwrap_or(i64::MAX)),
        reasoning: Some(format!("values of {} (value grounding)", probe.label())),
        ..PlanModel::default()
    }
}

/// Renders, guards and runs one lookup; its first column as text.
async fn run_lookup(
    ctx: &RunCtx,
    adapter: &dyn DatasourceAdapter,
    breaker: &CircuitBreaker,
    contract: &SchemaContract,
    limits: &RequestLimits,
    plan: &PlanModel,
) -> Result<Vec<String>, String> {
    let rows = plan.limit.and_then(|l| u64::try_from(l).ok()).unwrap_or(0);
    let sql = SqlGenerator::new(adapter.dialect())
        .with_schema(contract)
        .with_row_limit(rows)
        .generate(plan)
        .map_err(|e| e.message)?;
    let guard = SqlGuard::new(
        GuardContext::new(adapter.id(), adapter.dialect(), contract)
            .with_policy(ctx.access.clone()),
    );
    let guarded = guard.guard(&sql).map_err(|report| {
        report.issues.first().map_or_else(
            || "the guard refused the lookup".to_owned(),
            |i| i.message.clone(),
        )
    })?;
    let permit = breaker.enter().map_err(|e| e.safe_message)?;
    let request = RequestLimits {
        row_limit: Some(rows),
        ..*limits
    };
    let frame = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => return Err("the run was cancelled".to_owned()),
        r = tokio::time::timeout(
            ctx.shared.options.database_timeout,
            adapter.execute_guarded(&guarded, &request),
        ) => r.map_err(|_| "the lookup did not finish in time".to_owned())?,
    };
    permit.settle(frame.error.as_ref());
    if !frame.success {
        return Err(frame
            .error
            .map_or_else(|| "the lookup failed".to_owned(), |e| e.safe_message));
    }
    let mut values = Vec::new();
    for batch in &frame.batches {
        let Some(column) = batch.columns().first() else {
            continue;
        };
        for i in 0..column.len() {
            if column.is_valid(i) {
                values.push(array_value_to_string(column, i).map_err(|e| e.to_string())?);
            }
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use nl2sql_state::{
        ColumnMetadata, SchemaContract, SchemaMetadata, SchemaSnapshot, TableMetadata, TableRef,
    };

    use super::{Read, ValueProbe, is_pii, not_found, quoted};

    fn probe() -> ValueProbe {
        ValueProbe {
            table: TableRef {
                schema_name: "main".into(),
                table_name: "people".into(),
            },
            column: "email".into(),
            literals: vec!["x@y".into()],
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn refusals_name_the_column_its_size_and_the_nearest_values_unless_personal() {
        let p = probe();
        let whole = Read {
            values: strings(&["a@b", "c@d"]),
            complete: true,
        };
        let e = not_found(&p, "x@y", &whole, &strings(&["a@b"]), false);
        assert_eq!(e.code, nl2sql_state::ErrorCode::ValueNotFound);
        assert_eq!(e.node, "value_grounder");
        assert_eq!(
            e.message,
            "The value 'x@y' is not in people.email (people.email holds 2 distinct values); did you mean 'a@b'?"
        );
        let e = not_found(&p, "x@y", &whole, &[], true);
        assert_eq!(
            e.message,
            "The value 'x@y' is not in people.email (people.email holds 2 distinct values); the values of a personal-data column are not listed"
        );
        let one = Read {
            values: strings(&["a@b"]),
            complete: true,
        };
        assert!(
            not_found(&p, "x@y", &one, &[], false)
                .message
                .ends_with("(people.email holds 1 distinct value)")
        );
        assert_eq!(quoted(&strings(&["a", "b", "c"])), "'a', 'b' or 'c'");
        assert_eq!(quoted(&strings(&["a"])), "'a'");
    }

    #[test]
    fn personal_data_is_read_from_the_snapshot_metadata() {
        let p = probe();
        let mut snapshot = SchemaSnapshot {
            contract: SchemaContract::new("people", "sqlite"),
            metadata: None,
        };
        assert!(!is_pii(&snapshot, &p));
        let mut metadata = SchemaMetadata::default();
        let mut table = TableMetadata {
            table: p.table.clone(),
            ..TableMetadata::default()
        };
        table.columns.insert(
            "email".into(),
            ColumnMetadata {
                pii: true,
                ..ColumnMetadata::default()
            },
        );
        metadata.tables.insert(p.table.full_name(), table);
        snapshot.metadata = Some(metadata);
        assert!(is_pii(&snapshot, &p));
    }
}
