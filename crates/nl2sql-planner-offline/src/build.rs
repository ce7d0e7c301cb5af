//! Assembly: an [`Analysis`] becomes a `PlanModel` (tables with aliases and ordinals, joins
//! along foreign keys, select items, where, group by, having, order by, limit) or the
//! semantic parts of a `SubQuery` (metrics, filters, group-by, expected schema), with the
//! same output names on both sides.

use nl2sql_plan::{
    Aggregation, Dtype, ExpectedColumn, FilterOperator, FilterSpec, FilterValue, GroupBySpec,
    MetricSpec, attribute_violation,
};
use serde_json::Value;

use super::analyze::{Analysis, Filter, Grain, Lit, Measure, Output, Test};
use super::intent::{Agg, CmpOp};
use super::link::{Part, SchemaIndex, TypeClass};
use super::text::{singular, split_ident};

mod plan;
mod terms;

pub(crate) use plan::plan_model;
pub(crate) use terms::BuildError;
use terms::negate;

/// The output names of an analysis, in output order, unique and identifier-like.
pub(crate) fn output_names(a: &Analysis, index: &SchemaIndex) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for o in &a.outputs {
        let base = match o {
            Output::Column(c) => match a.grains.iter().find(|(g, _)| g == c) {
                Some((_, Grain::Year)) => "year".to_owned(),
                Some((_, Grain::Month)) => "month".to_owned(),
                None => column_name(index, *c),
            },
            Output::Measure(m) => measure_name(index, &a.measures[*m]),
        };
        let mut name = identifier(&base);
        let mut k = 2;
        while names.contains(&name) {
            name = format!("{}_{k}", identifier(&base));
            k += 1;
        }
        names.push(name);
    }
    names
}

/// A semantic name of a column: the table's singular for label columns (`factory`),
/// else the column name.
pub(crate) fn column_name(index: &SchemaIndex, c: usize) -> String {
    let col = &index.columns[c];
    let lower = col.name.to_lowercase();
    if ["name", "title", "label"].contains(&lower.as_str()) {
        singular(&index.tables[col.table].name.to_lowercase())
    } else {
        lower
    }
}

fn measure_name(index: &SchemaIndex, m: &Measure) -> String {
    match (m.agg, m.column) {
        // "how many different defect types": `defect_type_count`.
        (Agg::Count, Some(c)) if m.distinct && !index.columns[c].is_pk => {
            format!("{}_count", column_name(index, c))
        }
        (Agg::Count, _) => format!(
            "{}_count",
            split_ident(&index.entity_noun(m.table)).join("_")
        ),
        (agg, Some(c)) => {
            let col = match (m.times, m.minus) {
                (Some(t), _) => format!(
                    "{}_times_{}",
                    index.columns[t].name.to_lowercase(),
                    index.columns[c].name.to_lowercase()
                ),
                (None, Some(t)) => format!(
                    "{}_minus_{}",
                    index.columns[c].name.to_lowercase(),
                    index.columns[t].name.to_lowercase()
                ),
                (None, None) => index.columns[c].name.to_lowercase(),
            };
            let prefix = match agg {
                Agg::Sum => "total",
                Agg::Avg => "avg",
                Agg::Min => "min",
                Agg::Max => "max",
                Agg::Count => "count",
            };
            format!("{prefix}_{col}")
        }
        (_, None) => "value".to_owned(),
    }
}

/// Makes `name` a valid attribute and column name: letters, digits and `_`, starting with
/// a letter, at most 63 characters, no SQL keyword as a word.
pub(crate) fn identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let mut out = out.trim_matches('_').to_owned();
    if out.is_empty() || !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out = format!("c_{out}");
    }
    out.truncate(63);
    if attribute_violation(&out).is_some() {
        out = format!("col_{out}");
        out.truncate(63);
    }
    out
}

/// The dtype of an output.
pub(crate) fn output_dtype(a: &Analysis, index: &SchemaIndex, o: Output) -> Option<Dtype> {
    let col_dtype = |c: usize| {
        let col = &index.columns[c];
        Some(match col.class {
            TypeClass::Numeric => {
                if col.data_type.to_ascii_uppercase().contains("INT") {
                    Dtype::Int
                } else {
                    Dtype::Float
                }
            }
            TypeClass::Date => Dtype::Date,
            TypeClass::DateTime => Dtype::Datetime,
            TypeClass::Boolean => Dtype::Bool,
            TypeClass::Time | TypeClass::Text => Dtype::String,
        })
    };
    match o {
        Output::Column(c) => match a.grains.iter().find(|(g, _)| *g == c) {
            Some((_, Grain::Year)) => Some(Dtype::Int),
            Some((_, Grain::Month)) => Some(Dtype::Date),
            None => col_dtype(c),
        },
        Output::Measure(m) => {
            let m = &a.measures[m];
            match (m.agg, m.column) {
                (Agg::Count, _) => Some(Dtype::Int),
                (Agg::Avg, _) => Some(Dtype::Float),
                (_, Some(c)) if index.columns[c].numbers_as_text => Some(Dtype::Float),
                (_, Some(c)) => col_dtype(c),
                (_, None) => None,
            }
        }
    }
}

/// The semantic metrics, filters, group-by and expected schema of `a`.
pub(crate) fn semantic_parts(
    a: &Analysis,
    index: &SchemaIndex,
) -> (
    Vec<MetricSpec>,
    Vec<FilterSpec>,
    Vec<GroupBySpec>,
    Vec<ExpectedColumn>,
) {
    let names = output_names(a, index);
    let metrics = a
        .outputs
        .iter()
        .zip(&names)
        .filter_map(|(o, name)| match o {
            Output::Measure(m) => {
                let m = &a.measures[*m];
                Some(MetricSpec {
                    name: name.clone(),
                    aggregation: Some(match m.agg {
                        Agg::Count => Aggregation::Count,
                        Agg::Sum => Aggregation::Sum,
                        Agg::Avg => Aggregation::Avg,
                        Agg::Min => Aggregation::Min,
                        Agg::Max => Aggregation::Max,
                    }),
                    description: Some(match (m.column, m.times.or(m.minus)) {
                        (Some(c), Some(t)) if m.times.is_none() => format!(
                            "{} of {} minus {}",
                            agg_word(m.agg),
                            index.columns[c].name,
                            index.columns[t].name
                        ),
                        (Some(c), Some(t)) => format!(
                            "{} of {} times {}",
                            agg_word(m.agg),
                            index.columns[t].name,
                            index.columns[c].name
                        ),
                        (Some(c), None) if m.distinct => format!(
                            "number of distinct {}",
                            if index.columns[c].is_pk {
                                index.entity_noun(m.table)
                            } else {
                                index.columns[c].name.clone()
                            }
                        ),
                        (Some(c), None) => {
                            format!("{} of {}", agg_word(m.agg), index.columns[c].name)
                        }
                        (None, _) => format!("number of {}", index.entity_noun(m.table)),
                    }),
                })
            }
            Output::Column(_) => None,
        })
        .collect();
    // A filter of a group of alternatives is not a condition of its own: the semantic
    // filters (all of which hold) leave it out, and the plan says how it holds.
    let filters = a
        .filters
        .iter()
        .enumerate()
        .filter(|(k, _)| a.or_group(*k).is_none())
        .map(|(k, f)| {
            let attribute = identifier(&column_name(index, f.column));
            // A condition no row of an answer may meet reads as its negation.
            let negated = f.negated || a.per_answer.iter().any(|(g, some)| !some && g.contains(&k));
            let (operator, value) = match &f.test {
                Test::Cmp(op, lit) => {
                    let operator = filter_operator(if negated { negate(*op) } else { *op });
                    let value = match lit {
                        Lit::Number(x) if x.fract() == 0.0 => FilterValue::Int(*x as i64),
                        Lit::Number(x) => FilterValue::Float(*x),
                        Lit::Date(d) => FilterValue::String(d.clone()),
                    };
                    (operator, value)
                }
                Test::In(values) if values.len() == 1 => (
                    if negated {
                        FilterOperator::NotEq
                    } else {
                        FilterOperator::Eq
                    },
                    filter_value(&values[0]),
                ),
                Test::In(values) => (
                    FilterOperator::In,
                    FilterValue::StringList(values.iter().map(value_text).collect()),
                ),
                Test::Contains(word, part) => (
                    match part {
                        Part::Inside => FilterOperator::Contains,
                        Part::Start => FilterOperator::StartsWith,
                        Part::End => FilterOperator::EndsWith,
                    },
                    FilterValue::String(word.clone()),
                ),
                // "price more than the average", "age more than the maximum where job
                // is engineer": words the analysis reads back (or refuses).
                Test::VsComputed(op, agg, within) => (
                    filter_operator(if negated { negate(*op) } else { *op }),
                    FilterValue::String(computed_text(index, *agg, within)),
                ),
            };
            FilterSpec {
                attribute,
                operator,
                value,
            }
        })
        .collect();
    let group_by = a
        .group_by
        .iter()
        .map(|c| {
            let pos = a.outputs.iter().position(|o| *o == Output::Column(*c));
            GroupBySpec {
                attribute: pos
                    .map(|p| names[p].clone())
                    .unwrap_or_else(|| identifier(&column_name(index, *c))),
            }
        })
        .collect();
    let expected = a
        .outputs
        .iter()
        .zip(&names)
        .map(|(o, name)| ExpectedColumn {
            name: name.clone(),
            dtype: output_dtype(a, index, *o),
        })
        .collect();
    (metrics, filters, group_by, expected)
}

/// "the average", "the maximum where job is engineer": a computed value in words.
fn computed_text(index: &SchemaIndex, agg: Agg, within: &[Filter]) -> String {
    let mut text = format!("the {}", agg_word(agg));
    for (i, w) in within.iter().enumerate() {
        text.push_str(if i == 0 { " where " } else { " and " });
        text.push_str(&column_name(index, w.column).replace('_', " "));
        match &w.test {
            Test::In(values) => {
                text.push_str(" is ");
                text.push_str(
                    &values
                        .iter()
                        .map(value_text)
                        .collect::<Vec<_>>()
                        .join(" or "),
                );
            }
            _ => text.push_str(" meets a condition"),
        }
    }
    text
}

fn filter_operator(op: CmpOp) -> FilterOperator {
    match op {
        CmpOp::Eq => FilterOperator::Eq,
        CmpOp::NotEq => FilterOperator::NotEq,
        CmpOp::Gt => FilterOperator::Gt,
        CmpOp::GtEq => FilterOperator::GtEq,
        CmpOp::Lt => FilterOperator::Lt,
        CmpOp::LtEq => FilterOperator::LtEq,
    }
}

pub(crate) fn agg_word(agg: Agg) -> &'static str {
    match agg {
        Agg::Count => "count",
        Agg::Sum => "total",
        Agg::Avg => "average",
        Agg::Min => "minimum",
        Agg::Max => "maximum",
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn filter_value(v: &Value) -> FilterValue {
    match v {
        Value::Bool(b) => FilterValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => FilterValue::Int(i),
            None => FilterValue::Float(n.as_f64().unwrap_or_default()),
        },
        other => FilterValue::String(value_text(other)),
    }
}
