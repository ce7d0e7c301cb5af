//! Assembly: an [`Analysis`] becomes a `PlanModel` (tables with aliases and ordinals, joins
//! along foreign keys, select items, where, group by, having, order by, limit) or the
//! semantic parts of a `SubQuery` (metrics, filters, group-by, expected schema), with the
//! same output names on both sides.

use std::collections::BTreeSet;

use nl2sql_plan::{
    Aggregation, Direction, Dtype, ExpectedColumn, Expr, FilterOperator, FilterSpec, FilterValue,
    GroupByItem, GroupBySpec, JoinSpec, JoinType, LiteralValue, MetricSpec, Op, OrderItem,
    PlanModel, SelectItem, TableRef, attribute_violation,
};
use serde_json::Value;

use super::analyze::{Analysis, Filter, Grain, Lit, Measure, Output, Test};
use super::intent::{Agg, CmpOp};
use super::joins::join_tree;
use super::link::{SchemaIndex, TypeClass};
use super::text::{singular, split_ident};

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuildError(pub(crate) String);

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
                (_, Some(c)) => col_dtype(c),
                (_, None) => None,
            }
        }
    }
}

/// Table aliases: the initials of the table's words (`production_runs` → `pr`), made
/// unique with a digit and kept away from SQL keywords.
fn aliases(index: &SchemaIndex, tables: &[usize]) -> Vec<String> {
    const KEYWORDS: [&str; 30] = [
        "as", "at", "by", "do", "go", "if", "in", "is", "no", "of", "on", "or", "to", "all", "and",
        "any", "asc", "end", "for", "key", "not", "set", "top", "use", "desc", "from", "case",
        "when", "then", "else",
    ];
    let mut out: Vec<String> = Vec::new();
    for &t in tables {
        let initials: String = split_ident(&index.tables[t].name)
            .iter()
            .filter_map(|w| w.chars().find(char::is_ascii_alphabetic))
            .collect();
        let base = if initials.is_empty() {
            "t".to_owned()
        } else {
            initials
        };
        let mut alias = if KEYWORDS.contains(&base.as_str()) {
            format!("{base}_t")
        } else {
            base.clone()
        };
        let mut k = 2;
        while out.contains(&alias) {
            alias = format!("{base}{k}");
            k += 1;
        }
        out.push(alias);
    }
    out
}

fn literal(v: &Value) -> LiteralValue {
    match v {
        Value::Bool(b) => LiteralValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => LiteralValue::Int(i),
            None => LiteralValue::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => LiteralValue::Str(s.clone()),
        other => LiteralValue::Str(other.to_string()),
    }
}

fn number_literal(x: f64) -> LiteralValue {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        LiteralValue::Int(x as i64)
    } else {
        LiteralValue::Float(x)
    }
}

fn op_of(op: CmpOp) -> Op {
    match op {
        CmpOp::Eq => Op::Eq,
        CmpOp::NotEq => Op::NotEq,
        CmpOp::Gt => Op::Gt,
        CmpOp::GtEq => Op::GtEq,
        CmpOp::Lt => Op::Lt,
        CmpOp::LtEq => Op::LtEq,
    }
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        CmpOp::Gt => CmpOp::LtEq,
        CmpOp::GtEq => CmpOp::Lt,
        CmpOp::Lt => CmpOp::GtEq,
        CmpOp::LtEq => CmpOp::Gt,
    }
}

fn and(exprs: Vec<Expr>) -> Option<Expr> {
    exprs.into_iter().reduce(|l, r| Expr::binary(Op::And, l, r))
}

/// Builds the `PlanModel` of `a`, with the select aliases `names`.
pub(crate) fn plan_model(
    a: &Analysis,
    index: &SchemaIndex,
    names: &[String],
) -> Result<PlanModel, BuildError> {
    let mut required: BTreeSet<usize> = BTreeSet::new();
    for o in &a.outputs {
        if let Output::Column(c) = o {
            required.insert(index.columns[*c].table);
        }
    }
    for m in &a.measures {
        required.insert(m.table);
    }
    for f in &a.filters {
        required.insert(index.columns[f.column].table);
    }
    for c in &a.group_by {
        required.insert(index.columns[*c].table);
    }
    required.extend(a.joined.iter().copied());
    let inner: BTreeSet<usize> = match join_tree(index, a.base, &required) {
        Ok(steps) => steps.iter().map(|s| s.table).collect(),
        Err(_) => BTreeSet::new(),
    };
    let with_absent: BTreeSet<usize> = required.iter().chain(&a.absent).copied().collect();
    let steps = join_tree(index, a.base, &with_absent).map_err(|missing| {
        BuildError(format!(
            "no foreign-key path joins {} to {}",
            index.tables[a.base].name,
            missing
                .iter()
                .map(|t| index.tables[*t].name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let order: Vec<usize> = std::iter::once(a.base)
        .chain(steps.iter().map(|s| s.table))
        .collect();
    let alias_list = aliases(index, &order);
    let alias_of = |t: usize| -> String {
        order
            .iter()
            .position(|x| *x == t)
            .map(|i| alias_list[i].clone())
            .unwrap_or_default()
    };
    let col = |c: usize| -> Expr {
        let info = &index.columns[c];
        Expr::column(Some(&alias_of(info.table)), &info.name)
    };
    // A grouped date column, by its calendar period.
    let grouped = |c: usize| -> Expr {
        match a
            .grains
            .iter()
            .find(|(g, _)| *g == c)
            .map(|(_, grain)| grain)
        {
            Some(Grain::Year) => Expr::func("YEAR", vec![col(c)]),
            Some(Grain::Month) => Expr::func(
                "DATE_TRUNC",
                vec![Expr::literal(LiteralValue::Str("month".into())), col(c)],
            ),
            None => col(c),
        }
    };
    let tables: Vec<TableRef> = order
        .iter()
        .enumerate()
        .map(|(i, t)| TableRef {
            name: index.tables[*t].name.clone(),
            schema_name: None,
            database: None,
            alias: alias_list[i].clone(),
            ordinal: i64::try_from(i).unwrap_or_default(),
        })
        .collect();
    let joins: Vec<JoinSpec> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let fk = &index.foreign_keys[s.fk];
            let (parent_cols, child_cols) = if fk.from == s.parent {
                (&fk.from_columns, &fk.to_columns)
            } else {
                (&fk.to_columns, &fk.from_columns)
            };
            let (pa, ca) = (alias_of(s.parent), alias_of(s.table));
            let eqs = parent_cols
                .iter()
                .zip(child_cols)
                .map(|(p, c)| {
                    Expr::binary(
                        Op::Eq,
                        Expr::column(Some(&pa), p),
                        Expr::column(Some(&ca), c),
                    )
                })
                .collect();
            JoinSpec {
                left_alias: pa.clone(),
                right_alias: ca,
                // Tables joined only to find absent rows keep the rows without matches.
                join_type: if a.absent.is_empty() || inner.contains(&s.table) {
                    JoinType::Inner
                } else {
                    JoinType::Left
                },
                condition: and(eqs).unwrap_or_else(Expr::null),
                ordinal: i64::try_from(i).unwrap_or_default(),
            }
        })
        .collect();
    // A join to a table that refers to a table already joined repeats that table's rows:
    // a count of the FROM table's rows then counts its key once per row ("how many
    // machines produced Widget Alpha" is the machines, not their runs).
    let fans_out = steps.iter().any(|s| {
        let fk = &index.foreign_keys[s.fk];
        fk.from == s.table
            && fk.to == s.parent
            && fk.from != fk.to
            && (a.absent.is_empty() || inner.contains(&s.table))
    });
    let base_key = index.tables[a.base]
        .columns
        .iter()
        .copied()
        .find(|c| index.columns[*c].is_pk)
        .filter(|_| {
            index.tables[a.base]
                .columns
                .iter()
                .filter(|c| index.columns[**c].is_pk)
                .count()
                == 1
        });
    let measure_expr = |m: &Measure| -> Expr {
        if fans_out
            && m.agg == Agg::Count
            && m.column.is_none()
            && m.table == a.base
            && let Some(key) = base_key
        {
            return Expr::distinct_aggregate("COUNT", col(key));
        }
        let arg = |c: usize| match (m.times, m.minus) {
            (Some(t), _) => Expr::binary(Op::Multiply, col(t), col(c)),
            (None, Some(t)) => Expr::binary(Op::Minus, col(c), col(t)),
            (None, None) => col(c),
        };
        if let (true, Some(c)) = (m.distinct, m.column) {
            let name = match m.agg {
                Agg::Count => "COUNT",
                Agg::Sum => "SUM",
                Agg::Avg => "AVG",
                Agg::Min => "MIN",
                Agg::Max => "MAX",
            };
            return Expr::distinct_aggregate(name, arg(c));
        }
        let (name, arg) = match (m.agg, m.column) {
            (Agg::Count, _) | (_, None) => ("COUNT", Expr::column(None, "*")),
            (Agg::Sum, Some(c)) => ("SUM", arg(c)),
            (Agg::Avg, Some(c)) => ("AVG", arg(c)),
            (Agg::Min, Some(c)) => ("MIN", arg(c)),
            (Agg::Max, Some(c)) => ("MAX", arg(c)),
        };
        let mut e = Expr::func(name, vec![arg]);
        e.is_aggregate = true;
        e
    };
    let select_items: Vec<SelectItem> = a
        .outputs
        .iter()
        .enumerate()
        .map(|(i, o)| SelectItem {
            expr: match o {
                Output::Column(c) => grouped(*c),
                Output::Measure(m) => measure_expr(&a.measures[*m]),
            },
            alias: names.get(i).cloned(),
            ordinal: i64::try_from(i).unwrap_or_default(),
        })
        .collect();
    let filter_expr = |f: &Filter| -> Expr {
        let c = col(f.column);
        match &f.test {
            Test::Cmp(op, lit) => {
                let op = if f.negated { negate(*op) } else { *op };
                let value = match lit {
                    Lit::Number(x) => number_literal(*x),
                    Lit::Date(d) => LiteralValue::Str(d.clone()),
                };
                Expr::binary(op_of(op), c, Expr::literal(value))
            }
            Test::In(values) if values.len() == 1 => Expr::binary(
                if f.negated { Op::NotEq } else { Op::Eq },
                c,
                Expr::literal(literal(&values[0])),
            ),
            Test::In(values) => {
                let e = Expr::binary(
                    Op::In,
                    c,
                    Expr::func(
                        "LIST",
                        values.iter().map(|v| Expr::literal(literal(v))).collect(),
                    ),
                );
                if f.negated {
                    Expr::unary(Op::Not, e)
                } else {
                    e
                }
            }
            Test::Contains(word) => {
                let e = Expr::binary(
                    Op::Like,
                    c,
                    Expr::literal(LiteralValue::Str(format!("%{word}%"))),
                );
                if f.negated {
                    Expr::unary(Op::Not, e)
                } else {
                    e
                }
            }
        }
    };
    let absent = a.absent.iter().filter_map(|t| {
        let pk = index.tables[*t]
            .columns
            .iter()
            .copied()
            .find(|c| index.columns[*c].is_pk)?;
        Some(Expr::binary(Op::Is, col(pk), Expr::null()))
    });
    let where_ = and(a.filters.iter().map(filter_expr).chain(absent).collect());
    let having = and(a
        .having
        .iter()
        .map(|h| {
            Expr::binary(
                op_of(h.op),
                measure_expr(&a.measures[h.measure]),
                Expr::literal(if h.value.fract() == 0.0 {
                    LiteralValue::Int(h.value as i64)
                } else {
                    LiteralValue::Float(h.value)
                }),
            )
        })
        .collect());
    let group_by: Vec<GroupByItem> = a
        .group_by
        .iter()
        .enumerate()
        .map(|(i, c)| GroupByItem {
            expr: grouped(*c),
            ordinal: i64::try_from(i).unwrap_or_default(),
        })
        .collect();
    let order_by: Vec<OrderItem> = a
        .order
        .iter()
        .enumerate()
        .map(|(i, (o, desc))| {
            let expr = match o {
                Output::Column(c) => grouped(*c),
                Output::Measure(m) => match a.outputs.iter().position(|x| x == o) {
                    Some(p) => Expr::column(None, &names[p]),
                    None => measure_expr(&a.measures[*m]),
                },
            };
            OrderItem {
                expr,
                direction: if *desc {
                    Direction::Desc
                } else {
                    Direction::Asc
                },
                ordinal: i64::try_from(i).unwrap_or_default(),
            }
        })
        .collect();
    let mut reasoning = vec![format!(
        "tables: {}",
        order
            .iter()
            .map(|t| index.tables[*t].name.clone())
            .collect::<Vec<_>>()
            .join(" -> ")
    )];
    reasoning.extend(a.notes.iter().cloned());
    Ok(PlanModel {
        distinct: a.distinct,
        tables,
        joins,
        select_items,
        where_,
        group_by,
        having,
        order_by,
        limit: a.limit,
        reasoning: Some(reasoning.join("; ")),
        ..PlanModel::default()
    })
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
    let filters = a
        .filters
        .iter()
        .map(|f| {
            let attribute = identifier(&column_name(index, f.column));
            let (operator, value) = match &f.test {
                Test::Cmp(op, lit) => {
                    let op = if f.negated { negate(*op) } else { *op };
                    let operator = match op {
                        CmpOp::Eq => FilterOperator::Eq,
                        CmpOp::NotEq => FilterOperator::NotEq,
                        CmpOp::Gt => FilterOperator::Gt,
                        CmpOp::GtEq => FilterOperator::GtEq,
                        CmpOp::Lt => FilterOperator::Lt,
                        CmpOp::LtEq => FilterOperator::LtEq,
                    };
                    let value = match lit {
                        Lit::Number(x) if x.fract() == 0.0 => FilterValue::Int(*x as i64),
                        Lit::Number(x) => FilterValue::Float(*x),
                        Lit::Date(d) => FilterValue::String(d.clone()),
                    };
                    (operator, value)
                }
                Test::In(values) if values.len() == 1 => (
                    if f.negated {
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
                Test::Contains(word) => {
                    (FilterOperator::Contains, FilterValue::String(word.clone()))
                }
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

fn agg_word(agg: Agg) -> &'static str {
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
