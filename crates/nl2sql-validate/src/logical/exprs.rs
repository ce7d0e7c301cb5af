//! Expression checks: L (literals against statistics), C (columns), A1-A4 (aggregates),
//! F1-F4 (functions, operands and `DISTINCT` aggregates), N1 and D1 (value formats) (spec: validators.md §2.4-2.6).

use std::collections::BTreeSet;

use nl2sql_plan::{AGGREGATE_FUNCTIONS, Expr, ExprKind, LiteralValue, Op, PlanModel};
use nl2sql_state::{ErrorCode, PipelineError, Severity, norm};
use serde_json::{Value, json};

use super::context::{LogicalContext, NODE, finding};
use super::resolve::{Resolver, TypeClass};
use crate::grounding::fold;

/// Visits `e` and its descendants in pre-order with their JSON paths.
pub(crate) fn walk<'a>(path: &str, e: &'a Expr, f: &mut dyn FnMut(&'a Expr, &str)) {
    f(e, path);
    if let Some(l) = e.left.as_deref() {
        walk(&format!("{path}.left"), l, f);
    }
    if let Some(r) = e.right.as_deref() {
        walk(&format!("{path}.right"), r, f);
    }
    for (i, a) in e.args.iter().enumerate() {
        walk(&format!("{path}.args[{i}]"), a, f);
    }
    if let Some(x) = e.expr.as_deref() {
        walk(&format!("{path}.expr"), x, f);
    }
    for (i, w) in e.whens.iter().enumerate() {
        walk(&format!("{path}.whens[{i}].condition"), &w.condition, f);
        walk(&format!("{path}.whens[{i}].result"), &w.result, f);
    }
    if let Some(x) = e.else_expr.as_deref() {
        walk(&format!("{path}.else_expr"), x, f);
    }
}

fn structure(message: impl Into<String>, path: &str) -> PipelineError {
    finding(
        ErrorCode::InvalidPlanStructure,
        Severity::Error,
        message,
        path,
    )
}

fn is_column(e: &Expr) -> bool {
    e.kind == ExprKind::Column && e.column_name.as_deref().is_some_and(|c| c != "*")
}

fn is_value_literal(e: &Expr) -> bool {
    e.kind == ExprKind::Literal && !e.is_null && e.value.is_some()
}

/// The literal members compared to the column of a binary node, with the column:
/// `col op lit`, `lit op col`, `col IN (lit, …)`.
fn column_and_literals(e: &Expr) -> Option<(&Expr, Vec<&LiteralValue>)> {
    let (l, r) = (e.left.as_deref()?, e.right.as_deref()?);
    if is_column(l) {
        if e.op == Some(Op::In) && r.is_list() {
            let members = r.args.iter().filter_map(|a| a.value.as_ref()).collect();
            return Some((l, members));
        }
        if is_value_literal(r) {
            return Some((l, r.value.iter().collect()));
        }
    } else if is_column(r) && is_value_literal(l) && e.op != Some(Op::In) {
        return Some((r, l.value.iter().collect()));
    }
    None
}

fn json_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn literal_matches(lit: &LiteralValue, sample: &Value) -> bool {
    match (lit, sample) {
        // As the value grounder compares: case, accents, spacing and punctuation aside.
        (LiteralValue::Str(s), v) => fold(s) == fold(&json_string(v)),
        (LiteralValue::Int(i), Value::Number(n)) => {
            n.as_i64() == Some(*i) || n.as_f64() == Some(*i as f64)
        }
        (LiteralValue::Float(x), Value::Number(n)) => n.as_f64() == Some(*x),
        (LiteralValue::Bool(b), Value::Bool(s)) => b == s,
        _ => false,
    }
}

/// L: literals compared with `=`, `IN` or `LIKE` to a column with statistics.
pub(crate) fn literals(
    plan: &PlanModel,
    _ctx: &LogicalContext<'_>,
    resolver: &Resolver<'_>,
    out: &mut Vec<PipelineError>,
) {
    let roots = [
        ("$.where", plan.where_.as_ref()),
        ("$.having", plan.having.as_ref()),
    ];
    for (root, e) in roots {
        let Some(e) = e else { continue };
        walk(root, e, &mut |x, path| {
            if x.kind != ExprKind::Binary || !matches!(x.op, Some(Op::Eq | Op::In | Op::Like)) {
                return;
            }
            let Some((col, lits)) = column_and_literals(x) else {
                return;
            };
            let name = col.column_name.as_deref().unwrap_or_default();
            let Some(c) = resolver.column(col.alias.as_deref(), name) else {
                return;
            };
            let Some(meta) = resolver.column_metadata(&c) else {
                return;
            };
            let Some(stats) = &meta.statistics else {
                return;
            };
            let samples = &stats.sample_values;
            let exhaustive = stats.distinct_count > 0
                && usize::try_from(stats.distinct_count).is_ok_and(|d| d <= samples.len());
            let severity = if exhaustive {
                Severity::Error
            } else {
                Severity::Warning
            };
            let known: Vec<String> = samples.iter().take(10).map(json_string).collect();
            let target = format!("{}.{}", c.table.table.table_name, c.column.name);
            let details = |p: &str| json!({ "path": p, "known_values": known });
            for lit in lits {
                if x.op == Some(Op::Like) {
                    let LiteralValue::Str(pattern) = lit else {
                        out.push(
                            PipelineError::new(
                                NODE,
                                ErrorCode::InvalidPlanStructure,
                                severity,
                                format!("LIKE pattern '{lit}' for {target} is not a string."),
                            )
                            .with_details(details(path)),
                        );
                        continue;
                    };
                    let mut candidates: Vec<String> = samples
                        .iter()
                        .map(|v| json_string(v).to_lowercase())
                        .collect();
                    candidates.extend(meta.synonyms.iter().flatten().map(|s| s.to_lowercase()));
                    if candidates.is_empty() {
                        continue;
                    }
                    let core: String = pattern
                        .to_lowercase()
                        .chars()
                        .filter(|ch| *ch != '%' && *ch != '_')
                        .collect();
                    let ok = candidates
                        .iter()
                        .any(|cand| core.contains(cand.as_str()) || cand.contains(core.as_str()));
                    if !ok {
                        out.push(
                            PipelineError::new(
                                NODE,
                                ErrorCode::InvalidPlanStructure,
                                severity,
                                format!(
                                    "LIKE pattern '{pattern}' is not derived from stats for {target}. Known values: {}.",
                                    known.join(", ")
                                ),
                            )
                            .with_details(details(path)),
                        );
                    }
                } else if !samples.is_empty() && !samples.iter().any(|s| literal_matches(lit, s)) {
                    out.push(
                        PipelineError::new(
                            NODE,
                            ErrorCode::InvalidPlanStructure,
                            severity,
                            format!(
                                "Literal value '{lit}' not found in stats for {target}. Known values: {}.",
                                known.join(", ")
                            ),
                        )
                        .with_details(details(path)),
                    );
                }
            }
        });
    }
}

fn suggestions<'a>(name: &str, candidates: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = candidates
        .filter(|c| strsim::levenshtein(name, c) <= 2)
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

fn did_you_mean(s: &[String]) -> String {
    match s {
        [] => String::new(),
        [one] => format!(" Did you mean '{one}'?"),
        many => format!(" Did you mean one of: {}?", many.join(", ")),
    }
}

/// C: every column reference exists (through its alias, or in exactly one table).
pub(crate) fn columns(
    plan: &PlanModel,
    ctx: &LogicalContext<'_>,
    resolver: &Resolver<'_>,
    out: &mut Vec<PipelineError>,
) {
    let severity = if ctx.strict_columns {
        Severity::Error
    } else {
        Severity::Warning
    };
    let select_aliases: BTreeSet<String> = plan
        .select_items
        .iter()
        .filter_map(|s| s.alias.as_deref().map(str::to_lowercase))
        .collect();
    let mut roots: Vec<(String, &Expr, bool)> = Vec::new();
    if let Some(w) = &plan.where_ {
        roots.push(("$.where".into(), w, false));
    }
    if let Some(h) = &plan.having {
        roots.push(("$.having".into(), h, true));
    }
    for (i, s) in plan.select_items.iter().enumerate() {
        roots.push((format!("$.select_items[{i}].expr"), &s.expr, false));
    }
    for (i, g) in plan.group_by.iter().enumerate() {
        roots.push((format!("$.group_by[{i}].expr"), &g.expr, false));
    }
    for (i, o) in plan.order_by.iter().enumerate() {
        roots.push((format!("$.order_by[{i}].expr"), &o.expr, true));
    }
    for (i, j) in plan.joins.iter().enumerate() {
        roots.push((format!("$.joins[{i}].condition"), &j.condition, false));
    }
    for (root, e, output_names_visible) in roots {
        walk(&root, e, &mut |x, path| {
            if x.kind != ExprKind::Column {
                return;
            }
            let raw = x.column_name.as_deref().unwrap_or_default();
            let name = raw.to_lowercase();
            match &x.alias {
                Some(a) => {
                    if !resolver.is_plan_alias(a) {
                        out.push(finding(
                            ErrorCode::InvalidAliasUsage,
                            Severity::Error,
                            format!("Column '{raw}' uses undeclared alias '{a}'."),
                            path,
                        ));
                        return;
                    }
                    let Some(r) = resolver.resolved.get(a) else {
                        return; // Its table failed resolution: reported by T.
                    };
                    if name == "*" || r.columns.contains_key(&norm(&name)) {
                        return;
                    }
                    let hint = did_you_mean(&suggestions(&name, r.columns.keys()));
                    out.push(
                        PipelineError::new(
                            NODE,
                            ErrorCode::ColumnNotFound,
                            severity,
                            format!(
                                "Column '{raw}' does not exist in table alias '{a}' ({}).{hint}",
                                r.table.table.table_name
                            ),
                        )
                        .with_details(json!({ "path": path })),
                    );
                }
                None => {
                    if name == "*" || (output_names_visible && select_aliases.contains(&name)) {
                        return;
                    }
                    let n = resolver
                        .resolved
                        .values()
                        .filter(|r| r.columns.contains_key(&norm(&name)))
                        .count();
                    let message = match n {
                        1 => return,
                        0 => {
                            let all = resolver.resolved.values().flat_map(|r| r.columns.keys());
                            format!(
                                "Column '{raw}' not found in any relevant table.{}",
                                did_you_mean(&suggestions(&name, all))
                            )
                        }
                        _ => format!("Ambiguous column '{raw}' referenced without alias."),
                    };
                    out.push(
                        PipelineError::new(NODE, ErrorCode::ColumnNotFound, severity, message)
                            .with_details(json!({ "path": path })),
                    );
                }
            }
        });
    }
}

fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= x.is_aggregate_call());
    found
}

fn same_column(a: &Expr, b: &Expr) -> bool {
    let (Some(an), Some(bn)) = (&a.column_name, &b.column_name) else {
        return false;
    };
    norm(an) == norm(bn)
        && match (&a.alias, &b.alias) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
}

/// A1-A4: aggregates are placed where SQL allows them.
pub(crate) fn aggregates(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    // A1: not in join conditions, `where` or group-by items.
    let forbidden = plan.expressions().into_iter().filter(|(path, _)| {
        path.starts_with("$.joins") || path == "$.where" || path.starts_with("$.group_by")
    });
    for (path, e) in forbidden {
        if contains_aggregate(e) {
            out.push(structure(
                format!("Aggregate functions are not allowed in {path}; use HAVING for conditions on aggregates."),
                &path,
            ));
        }
    }
    // A2.
    for (root, e) in plan.expressions() {
        walk(&root, e, &mut |x, path| {
            if x.is_aggregate_call() && x.args.iter().any(contains_aggregate) {
                out.push(structure(
                    format!(
                        "Aggregate {} contains another aggregate; aggregates cannot be nested.",
                        x.func_name.as_deref().unwrap_or_default()
                    ),
                    path,
                ));
            }
        });
    }
    // A3.
    let aggregating = !plan.group_by.is_empty()
        || plan
            .select_items
            .iter()
            .any(|s| contains_aggregate(&s.expr))
        || plan.having.as_ref().is_some_and(contains_aggregate)
        || plan.order_by.iter().any(|o| contains_aggregate(&o.expr));
    if aggregating {
        let select_aliases: BTreeSet<String> = plan
            .select_items
            .iter()
            .filter_map(|s| s.alias.as_deref().map(str::to_lowercase))
            .collect();
        let keys: Vec<&Expr> = plan.group_by.iter().map(|g| &g.expr).collect();
        let grouped_cols: Vec<&Expr> = keys.iter().copied().filter(|k| is_column(k)).collect();
        fn grouped(
            e: &Expr,
            keys: &[&Expr],
            cols: &[&Expr],
            aliases: Option<&BTreeSet<String>>,
        ) -> bool {
            if keys.contains(&e) || e.is_aggregate_call() {
                return true;
            }
            match e.kind {
                ExprKind::Literal => true,
                ExprKind::Column => {
                    let name = e.column_name.as_deref().unwrap_or_default();
                    if name == "*" {
                        return false;
                    }
                    cols.iter().any(|c| same_column(c, e))
                        || (e.alias.is_none()
                            && aliases.is_some_and(|a| a.contains(&name.to_lowercase())))
                }
                _ => e.children().iter().all(|c| grouped(c, keys, cols, aliases)),
            }
        }
        for (i, s) in plan.select_items.iter().enumerate() {
            if !grouped(&s.expr, &keys, &grouped_cols, None) {
                out.push(finding(
                    ErrorCode::MissingGroupBy,
                    Severity::Error,
                    format!("Select item {i} is neither an aggregate nor built from GROUP BY columns; add it to group_by or aggregate it."),
                    &format!("$.select_items[{i}].expr"),
                ));
            }
        }
        for (i, o) in plan.order_by.iter().enumerate() {
            if !grouped(&o.expr, &keys, &grouped_cols, Some(&select_aliases)) {
                out.push(finding(
                    ErrorCode::MissingGroupBy,
                    Severity::Error,
                    format!(
                        "Order-by item {i} is neither an aggregate nor built from GROUP BY columns."
                    ),
                    &format!("$.order_by[{i}].expr"),
                ));
            }
        }
    } else if plan.having.is_some() {
        // A4.
        out.push(structure(
            "HAVING needs an aggregating plan (group_by or an aggregate); use where instead.",
            "$.having",
        ));
    }
}

/// Functions a plan may call (spec: validators.md §2.6).
const ALLOWED: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "ABS",
    "ROUND",
    "CEIL",
    "CEILING",
    "FLOOR",
    "LOWER",
    "UPPER",
    "LENGTH",
    "TRIM",
    "LTRIM",
    "RTRIM",
    "SUBSTR",
    "SUBSTRING",
    "REPLACE",
    "CONCAT",
    "COALESCE",
    "NULLIF",
    "DATE",
    "YEAR",
    "MONTH",
    "DAY",
    "DATE_TRUNC",
    "STRFTIME",
];

/// Known-dangerous names: the SQL guard's deny list (validators.md §3.3 G5).
const DENIED: &[&str] = &[
    "read_csv",
    "read_csv_auto",
    "read_parquet",
    "read_json",
    "read_json_auto",
    "read_text",
    "read_blob",
    "parquet_scan",
    "glob",
    "query",
    "query_table",
    "sniff_csv",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_sleep",
    "set_config",
    "current_setting",
    "nextval",
    "setval",
    "lo_import",
    "lo_export",
    "dblink",
    "dblink_exec",
    "query_to_xml",
    "load_extension",
    "readfile",
    "writefile",
    "fts3_tokenizer",
    "load_file",
    "sleep",
    "benchmark",
    "sys_exec",
    "xp_cmdshell",
    "getenv",
];

fn is_denied(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    DENIED.contains(&n.as_str())
        || ["pg_", "duckdb_", "sqlite_", "lo_"]
            .iter()
            .any(|p| n.starts_with(p))
}

/// F1-F4: functions on the allow-list; IN and IS operands; `DISTINCT` only inside an
/// aggregate of one column or expression.
pub(crate) fn functions(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    for (root, e) in plan.expressions() {
        let mut in_lists: BTreeSet<String> = BTreeSet::new();
        walk(&root, e, &mut |x, path| match x.kind {
            ExprKind::Func => {
                let name = x.func_name.as_deref().unwrap_or_default().trim();
                let upper = name.to_ascii_uppercase();
                if x.is_list() {
                    if !in_lists.contains(path) {
                        out.push(structure(
                            format!("{upper} is only allowed as the right side of IN."),
                            path,
                        ));
                    }
                } else if is_denied(name) {
                    out.push(finding(
                        ErrorCode::SecurityViolation,
                        Severity::Critical,
                        format!("Function '{name}' is not allowed."),
                        path,
                    ));
                } else if !ALLOWED.contains(&upper.as_str()) {
                    out.push(structure(
                        format!(
                            "Function '{name}' is not on the allow-list ({}).",
                            ALLOWED.join(", ")
                        ),
                        path,
                    ));
                } else if x.distinct {
                    distinct_aggregate(x, &upper, path, out);
                }
            }
            ExprKind::Binary if x.op == Some(Op::In) => {
                let rpath = format!("{path}.right");
                match x.right.as_deref() {
                    Some(r) if r.is_list() => {
                        in_lists.insert(rpath.clone());
                        if r.args.is_empty() {
                            out.push(structure("IN list is empty.", &rpath));
                        } else if !r.args.iter().all(|a| a.kind == ExprKind::Literal) {
                            out.push(structure("IN list members must be literals.", &rpath));
                        }
                    }
                    Some(r) if matches!(r.kind, ExprKind::Literal | ExprKind::Subquery) => {}
                    _ => out.push(structure(
                        "The right side of IN must be a literal, a TUPLE/LIST of literals or a sub-query.",
                        &rpath,
                    )),
                }
            }
            ExprKind::Binary if matches!(x.op, Some(Op::Is | Op::IsNot)) => {
                let ok = x.right.as_deref().is_some_and(|r| {
                    r.is_null_literal()
                        || (r.kind == ExprKind::Literal
                            && matches!(r.value, Some(LiteralValue::Bool(_))))
                });
                if !ok {
                    out.push(structure(
                        "The right side of IS / IS NOT must be a null or boolean literal.",
                        &format!("{path}.right"),
                    ));
                }
            }
            _ => {}
        });
    }
}

/// F4: `distinct` (`COUNT(DISTINCT x)`) only on an aggregate function, with exactly one
/// argument that is not the column `*`.
fn distinct_aggregate(x: &Expr, upper: &str, path: &str, out: &mut Vec<PipelineError>) {
    let message = if !AGGREGATE_FUNCTIONS.contains(&upper) {
        format!(
            "DISTINCT applies only to an aggregate ({}); {upper} is not one.",
            AGGREGATE_FUNCTIONS.join(", ")
        )
    } else if x.args.len() != 1 {
        format!(
            "{upper}(DISTINCT …) takes exactly one argument, got {}.",
            x.args.len()
        )
    } else if x.args[0].kind == ExprKind::Column && x.args[0].column_name.as_deref() == Some("*") {
        format!("{upper}(DISTINCT *) is not valid; name the column whose distinct values count.")
    } else {
        return;
    };
    out.push(structure(message, &format!("{path}.distinct")));
}

fn two_digits(s: &str) -> Option<u32> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// True for `YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]][Z|±HH:MM]` naming a real date and time.
pub(crate) fn is_iso_datetime(s: &str) -> bool {
    let s = s.trim();
    let (date, rest) = match (s.get(..10), s.get(10..)) {
        (Some(d), Some(r)) => (d, r),
        _ => (s, ""),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || !y.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let (Ok(year), Some(month), Some(day)) = (y.parse::<u32>(), two_digits(m), two_digits(d))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    let Some(time) = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' ')) else {
        return false;
    };
    let (clock, zone) = match time.find(['Z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => (time, ""),
    };
    let zone_ok = match zone {
        "" | "Z" => true,
        z => {
            let z = &z[1..];
            let hm: Vec<&str> = z.split(':').collect();
            matches!(hm.as_slice(), [h, m] if two_digits(h).is_some_and(|h| h < 24) && two_digits(m).is_some_and(|m| m < 60))
        }
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (clock, None),
    };
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    let fields: Vec<&str> = hms.split(':').collect();
    let hms_ok = match fields.as_slice() {
        [h, m] => {
            frac.is_none()
                && two_digits(h).is_some_and(|h| h < 24)
                && two_digits(m).is_some_and(|m| m < 60)
        }
        [h, m, sec] => {
            two_digits(h).is_some_and(|h| h < 24)
                && two_digits(m).is_some_and(|m| m < 60)
                && two_digits(sec).is_some_and(|sec| sec < 61)
        }
        _ => false,
    };
    zone_ok && frac_ok && hms_ok
}

/// N1, D1: literals compared to numeric and date columns have the column's format.
pub(crate) fn value_formats(
    plan: &PlanModel,
    resolver: &Resolver<'_>,
    out: &mut Vec<PipelineError>,
) {
    for (root, e) in plan.expressions() {
        walk(&root, e, &mut |x, path| {
            let Some(op) = x.op else { return };
            if x.kind != ExprKind::Binary || !(op.is_comparison() || op == Op::In) {
                return;
            }
            let Some((col, lits)) = column_and_literals(x) else {
                return;
            };
            let name = col.column_name.as_deref().unwrap_or_default();
            let Some(c) = resolver.column(col.alias.as_deref(), name) else {
                return;
            };
            let target = format!("{}.{}", c.table.table.table_name, c.column.name);
            match TypeClass::of(&c.column.data_type) {
                TypeClass::Numeric => {
                    for lit in lits {
                        let bad = match lit {
                            LiteralValue::Str(s) => s.trim().parse::<f64>().is_err(),
                            LiteralValue::Bool(_) => true,
                            _ => false,
                        };
                        if bad {
                            out.push(finding(
                                ErrorCode::InvalidNumericValue,
                                Severity::Error,
                                format!("Numeric column {target} is compared with '{lit}', which is not a number."),
                                path,
                            ));
                        }
                    }
                }
                TypeClass::Date | TypeClass::DateTime => {
                    for lit in lits {
                        let bad = match lit {
                            LiteralValue::Str(s) => !is_iso_datetime(s),
                            LiteralValue::Int(_) | LiteralValue::Float(_) => true,
                            LiteralValue::Bool(_) => false,
                        };
                        if bad {
                            out.push(finding(
                                ErrorCode::InvalidDateFormat,
                                Severity::Error,
                                format!("Date column {target} is compared with '{lit}'; use an ISO-8601 date such as '2024-04-01' or '2024-04-01T08:00:00'."),
                                path,
                            ));
                        }
                    }
                }
                _ => {}
            }
        });
    }
}
