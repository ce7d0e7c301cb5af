//! Deterministic refiner feedback: one numbered fix per blocking error, naming unknown
//! tables and columns with the closest names of the schema (string similarity), and the
//! known values when a literal is not among them.

use std::fmt::Write as _;

use nl2sql_state::{ErrorCode, PipelineError};

use nl2sql_planner::RefineRequest;

/// Similarity above which a schema name is suggested.
const SUGGEST_THRESHOLD: f64 = 0.75;

/// The feedback text for `request`.
pub(crate) fn feedback(request: &RefineRequest) -> String {
    let schema = &request.plan_request.schema.contract;
    let tables: Vec<String> = schema
        .tables
        .values()
        .map(|t| t.table.table_name.clone())
        .collect();
    let columns: Vec<String> = schema
        .tables
        .values()
        .flat_map(|t| {
            t.columns
                .values()
                .map(move |c| format!("{}.{}", t.table.table_name, c.name))
        })
        .collect();
    let mut lines: Vec<String> = Vec::new();
    if request.failed_plan.is_none() {
        lines.push(format!(
            "No plan was produced; build one over the tables {} that answers: {}",
            tables.join(", "),
            request.plan_request.sub_query.intent
        ));
    }
    for e in request.errors.iter().filter(|e| e.is_blocking()) {
        lines.push(fix(e, &tables, &columns));
    }
    if lines.is_empty() {
        lines
            .push("The previous attempt has no blocking error; keep the plan as it is.".to_owned());
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(out, "{}. {line}", i + 1);
    }
    out.trim_end().to_owned()
}

fn fix(e: &PipelineError, tables: &[String], columns: &[String]) -> String {
    let quoted = quoted_names(&e.message);
    match e.code {
        ErrorCode::TableNotFound => {
            let names: Vec<String> = quoted
                .iter()
                .take(1)
                .map(|q| suggest(q, tables, "table"))
                .collect();
            if names.is_empty() {
                format!(
                    "{} Use only these tables: {}.",
                    e.message,
                    tables.join(", ")
                )
            } else {
                names.join(" ")
            }
        }
        ErrorCode::ColumnNotFound => {
            let bare: Vec<String> = columns
                .iter()
                .map(|c| c.rsplit('.').next().unwrap_or(c).to_owned())
                .collect();
            let names: Vec<String> = quoted
                .iter()
                .take(1)
                .map(|q| {
                    let last = q.rsplit('.').next().unwrap_or(q);
                    let best = closest(last, &bare);
                    match best {
                        Some(i) => {
                            format!("Column '{q}' does not exist; use {} instead.", columns[i])
                        }
                        None => format!(
                            "Column '{q}' does not exist; pick a column of the listed tables."
                        ),
                    }
                })
                .collect();
            if names.is_empty() {
                e.message.clone()
            } else {
                names.join(" ")
            }
        }
        ErrorCode::InvalidAliasUsage => format!(
            "{} Qualify every column with the alias of a table in the plan.",
            e.message
        ),
        ErrorCode::MissingGroupBy => format!(
            "{} Put every non-aggregated select column in group_by.",
            e.message
        ),
        ErrorCode::JoinMissingOnClause | ErrorCode::JoinTableNotInPlan => format!(
            "{} Join only along the listed foreign keys, with an equality on the key columns.",
            e.message
        ),
        ErrorCode::InvalidDateFormat => format!("{} Write dates as 'YYYY-MM-DD'.", e.message),
        ErrorCode::InvalidNumericValue => {
            format!("{} Compare numeric columns with numbers.", e.message)
        }
        ErrorCode::InvalidPlanStructure if e.message.contains("Known values") => format!(
            "{} Use one of the known values exactly, or LIKE with a word of them.",
            e.message
        ),
        ErrorCode::ExecutionFailed | ErrorCode::ExecutionError => format!(
            "The query failed when run ({}); check column types and join keys.",
            e.safe_message()
        ),
        _ => e.safe_message().to_owned(),
    }
}

fn suggest(name: &str, candidates: &[String], what: &str) -> String {
    match closest(name, candidates) {
        Some(i) => format!(
            "{what} '{name}' does not exist; use '{}' instead.",
            candidates[i]
        ),
        None => format!(
            "{what} '{name}' does not exist; use one of: {}.",
            candidates.join(", ")
        ),
    }
}

/// The candidate most similar to `name` (Jaro-Winkler on lower case), ties to the first.
fn closest(name: &str, candidates: &[String]) -> Option<usize> {
    let name = name.to_lowercase();
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in candidates.iter().enumerate() {
        let score = strsim::jaro_winkler(&name, &c.to_lowercase());
        if score >= SUGGEST_THRESHOLD && best.is_none_or(|(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// Names between single quotes in a message.
fn quoted_names(message: &str) -> Vec<String> {
    message
        .split('\'')
        .enumerate()
        .filter(|(i, s)| i % 2 == 1 && !s.is_empty() && !s.contains(' '))
        .map(|(_, s)| s.to_owned())
        .collect()
}
