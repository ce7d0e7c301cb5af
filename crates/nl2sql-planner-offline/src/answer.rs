//! Deterministic answer templates: one value ("There are 12 machines.", "The total
//! quantity produced is 1,950."), a ranked or enumerated list, or a table summary ("N rows;
//! first: …"), with a warning per unmapped part and per error.

use std::fmt::Write as _;

use nl2sql_plan::UnmappedReason;
use nl2sql_state::ErrorCode;
use serde_json::Value;

use nl2sql_planner::{AnswerFormat, AnswerRequest, FinalAnswer, TerminalResult};

use super::text::{plural, split_ident};

/// Rows shown in list and table content.
const SHOWN_ROWS: usize = 20;

/// Phrases the final answer of `request`.
pub(crate) fn answer(request: &AnswerRequest) -> FinalAnswer {
    let mut warnings: Vec<String> = request
        .unmapped
        .iter()
        .map(|u| {
            let why = match u.reason {
                UnmappedReason::NoDatasource => "no datasource holds it",
                UnmappedReason::RestrictedDatasource => "you may not use its datasource",
                UnmappedReason::UnsupportedDatasource => "its datasource engine is not supported",
            };
            match &u.detail {
                Some(d) => format!("Skipped \"{}\": {why} ({d}).", u.intent),
                None => format!("Skipped \"{}\": {why}.", u.intent),
            }
        })
        .collect();
    warnings.extend(
        request
            .errors
            .iter()
            .map(|e| format!("{}: {}", e.code, e.safe_message())),
    );
    let results: Vec<&TerminalResult> = request.results.iter().collect();
    if results.is_empty() {
        let summary = if request.errors.is_empty() {
            "No result was produced for this question.".to_owned()
        } else {
            // The cause first: an aggregation that failed only because its input scan
            // did is an echo of that scan's error.
            let causes: Vec<_> = request
                .errors
                .iter()
                .filter(|e| e.code != ErrorCode::AggregatorFailed)
                .collect();
            let shown = if causes.is_empty() {
                request.errors.iter().collect()
            } else {
                causes
            };
            format!(
                "The question could not be answered: {}",
                shown
                    .iter()
                    .map(|e| e.safe_message().trim_end_matches('.').to_owned())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        return FinalAnswer {
            content: summary.clone(),
            summary,
            format_type: AnswerFormat::Text,
            warnings,
        };
    }
    let parts: Vec<(String, AnswerFormat, String)> = results.iter().map(|r| one(r)).collect();
    if parts.len() == 1 {
        let (summary, format_type, content) = parts
            .into_iter()
            .next()
            .unwrap_or_else(|| (String::new(), AnswerFormat::Text, String::new()));
        return FinalAnswer {
            summary,
            format_type,
            content,
            warnings,
        };
    }
    let summary = parts
        .iter()
        .map(|(s, _, _)| s.clone())
        .collect::<Vec<_>>()
        .join(" ");
    let mut content = String::new();
    for (r, (_, _, c)) in results.iter().zip(&parts) {
        let _ = write!(content, "{}:\n{c}\n\n", r.node_id);
    }
    FinalAnswer {
        summary,
        format_type: AnswerFormat::Table,
        content: content.trim_end().to_owned(),
        warnings,
    }
}

/// Summary, format and content of one result.
fn one(r: &TerminalResult) -> (String, AnswerFormat, String) {
    if r.total_rows == 0 || r.rows.is_empty() {
        let s = "No rows match the question.".to_owned();
        return (s.clone(), AnswerFormat::Text, s);
    }
    if r.total_rows == 1 && r.columns.len() == 1 {
        let v = r.rows[0].first().cloned().unwrap_or(Value::Null);
        let s = single_value(&r.columns[0], &v);
        return (s.clone(), AnswerFormat::Text, s);
    }
    if r.columns.len() <= 2
        && r.rows.len() <= SHOWN_ROWS
        && usize::try_from(r.total_rows).is_ok_and(|n| n == r.rows.len())
    {
        let lines: Vec<String> = r
            .rows
            .iter()
            .map(|row| match row.as_slice() {
                [a] => format!("- {}", show(a)),
                [a, b] => format!("- {}: {}", show(a), show(b)),
                other => format!(
                    "- {}",
                    other.iter().map(show).collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        let summary = if r.rows.len() == 1 {
            format!("{}.", describe_row(&r.columns, &r.rows[0]))
        } else {
            format!(
                "{} {}; first: {}.",
                r.total_rows,
                if r.columns.len() == 1 {
                    "values"
                } else {
                    "rows"
                },
                describe_row(&r.columns, &r.rows[0])
            )
        };
        return (summary, AnswerFormat::List, lines.join("\n"));
    }
    let mut content = format!("| {} |\n|", r.columns.join(" | "));
    for _ in &r.columns {
        content.push_str("---|");
    }
    for row in r.rows.iter().take(SHOWN_ROWS) {
        let _ = write!(
            content,
            "\n| {} |",
            row.iter().map(show).collect::<Vec<_>>().join(" | ")
        );
    }
    if r.total_rows > SHOWN_ROWS as u64 {
        let _ = write!(
            content,
            "\n… {} more rows",
            r.total_rows - SHOWN_ROWS as u64
        );
    }
    let summary = format!(
        "{} row{}; first: {}.",
        r.total_rows,
        if r.total_rows == 1 { "" } else { "s" },
        describe_row(&r.columns, &r.rows[0])
    );
    (summary, AnswerFormat::Table, content)
}

/// `There are 12 machines.` for counts, `The total quantity produced is 1,950.` otherwise.
fn single_value(column: &str, v: &Value) -> String {
    let words = split_ident(column);
    if words.last().is_some_and(|w| w == "count") && words.len() > 1 {
        let noun = words[..words.len() - 1].join(" ");
        let n = v.as_f64().unwrap_or_default();
        return if n == 1.0 {
            format!("There is 1 {noun}.")
        } else {
            let mut noun_words: Vec<String> = noun.split(' ').map(str::to_owned).collect();
            if let Some(last) = noun_words.last_mut() {
                *last = plural(last);
            }
            format!("There are {} {}.", show(v), noun_words.join(" "))
        };
    }
    let phrase = match words.first().map(String::as_str) {
        Some("total") => format!("total {}", words[1..].join(" ")),
        Some("avg") => format!("average {}", words[1..].join(" ")),
        Some("min") => format!("minimum {}", words[1..].join(" ")),
        Some("max") => format!("maximum {}", words[1..].join(" ")),
        _ => words.join(" "),
    };
    format!("The {phrase} is {}.", show(v))
}

fn describe_row(columns: &[String], row: &[Value]) -> String {
    columns
        .iter()
        .zip(row)
        .map(|(c, v)| format!("{c} = {}", show(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value for people: integers with thousands separators, floats with at most two
/// decimals, strings bare, NULL as `null`.
fn show(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                group_thousands(i)
            } else {
                let x = n.as_f64().unwrap_or_default();
                if x.fract() == 0.0 && x.abs() < 1e15 {
                    group_thousands(x as i64)
                } else {
                    format!("{:.2}", x)
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_owned()
                }
            }
        }
        other => other.to_string(),
    }
}

fn group_thousands(i: i64) -> String {
    let digits = i.unsigned_abs().to_string();
    let mut out = String::new();
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if i < 0 { format!("-{out}") } else { out }
}
