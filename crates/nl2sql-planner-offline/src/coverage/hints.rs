//! Suggestions for a refusal: the nearest schema names, a number's likely column, how to
//! rephrase.

use crate::analyze::Analysis;
use crate::link::{SchemaIndex, Target, TypeClass};
use crate::text::Token;
use nl2sql_plan::{ExprKind, PlanModel};

use super::used::{format_number, span_text};

/// Whether the plan selects, unaggregated, a number column mentioned right after
/// `at` ("how many seats does the stadium have": `capacity`, not a count).
pub(super) fn selects_amount_after(
    at: usize,
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
) -> bool {
    analysis
        .mentions
        .iter()
        .filter(|m| m.start >= at && m.start <= at + 2)
        .filter_map(|m| m.column())
        .filter(|c| index.columns[*c].class == TypeClass::Numeric)
        .any(|c| {
            let name = &index.columns[c].name;
            plan.select_items.iter().any(|s| {
                s.expr.kind == ExprKind::Column
                    && s.expr
                        .column_name
                        .as_deref()
                        .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
        })
}

/// "did you mean `Pets.weight > 10`?": the numeric column mentioned nearest before an
/// unplaced number.
pub(super) fn number_suggestion(
    tokens: &[Token],
    at: usize,
    analysis: &Analysis,
    index: &SchemaIndex,
    x: f64,
) -> Option<String> {
    let m = analysis
        .mentions
        .iter()
        .filter(|m| m.end <= at)
        .filter_map(|m| match m.target {
            Target::Column(c) if index.columns[c].class == TypeClass::Numeric => Some((m.end, c)),
            _ => None,
        })
        .max_by_key(|(end, _)| *end)?;
    let col = &index.columns[m.1];
    let between = span_text(tokens, m.0, at).to_lowercase();
    let op = if [
        "less", "fewer", "under", "below", "younger", "lighter", "cheaper", "smaller", "lower",
    ]
    .iter()
    .any(|w| between.contains(w))
    {
        "<"
    } else if [
        "more", "greater", "over", "above", "heavier", "older", "larger", "higher", "bigger",
        "exceed",
    ]
    .iter()
    .any(|w| between.contains(w))
    {
        ">"
    } else {
        "="
    };
    Some(format!(
        "did you mean `{}.{} {op} {}`?",
        index.tables[col.table].name,
        col.name,
        format_number(x)
    ))
}

/// A hint naming the columns of the plan's tables, when nothing better is known.
pub(super) fn rephrase_hint(index: &SchemaIndex, plan: &PlanModel) -> String {
    let tables: Vec<&str> = plan.tables.iter().map(|t| t.name.as_str()).collect();
    let columns: Vec<String> = index
        .columns
        .iter()
        .filter(|c| tables.contains(&index.tables[c.table].name.as_str()))
        .take(8)
        .map(|c| format!("{}.{}", index.tables[c.table].name, c.name))
        .collect();
    if columns.is_empty() {
        "rephrase the question with the names of tables and columns".to_owned()
    } else {
        format!(
            "rephrase the question with the schema's names, e.g. {}",
            columns.join(", ")
        )
    }
}

/// Suggestions for words that link to nothing: the table or column names of `indexes`
/// closest to each (Jaro-Winkler over the lower-case name and its parts, at least 0.85),
/// else a hint with some of the schema's names. Never empty.
pub(crate) fn closest_names(
    words: &[String],
    indexes: &[std::sync::Arc<SchemaIndex>],
) -> Vec<String> {
    let mut out = Vec::new();
    for word in words {
        let w = word.to_lowercase();
        let mut best: Option<(f64, String)> = None;
        for index in indexes {
            let names = index
                .tables
                .iter()
                .map(|t| (t.name.clone(), format!("table `{}`", t.name)))
                .chain(index.columns.iter().map(|c| {
                    (
                        c.name.clone(),
                        format!("column `{}.{}`", index.tables[c.table].name, c.name),
                    )
                }));
            for (name, shown) in names {
                let lower = name.to_lowercase();
                let score = std::iter::once(lower.as_str())
                    .chain(lower.split('_'))
                    .map(|part| strsim::jaro_winkler(&w, part))
                    .fold(0.0, f64::max);
                if score >= 0.85 && best.as_ref().is_none_or(|(b, _)| score > *b) {
                    best = Some((score, shown));
                }
            }
        }
        if let Some((_, shown)) = best {
            out.push(format!("for '{word}', did you mean {shown}?"));
        }
    }
    if out.is_empty() {
        let names: Vec<String> = indexes
            .iter()
            .flat_map(|i| i.tables.iter().map(|t| t.name.clone()))
            .take(8)
            .collect();
        out.push(if names.is_empty() {
            "rephrase the question with the names of tables and columns".to_owned()
        } else {
            format!(
                "rephrase the question with the schema's names: its tables are {}",
                names.join(", ")
            )
        });
    }
    out
}
