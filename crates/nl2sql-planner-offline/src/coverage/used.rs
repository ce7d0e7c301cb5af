//! What a plan uses (tables, columns, literals), read back to account for the question's
//! words, and the text of a span.

use std::collections::BTreeSet;

use nl2sql_plan::{Expr, ExprKind, LiteralValue, PlanModel};

use crate::link::{Mention, Part, SchemaIndex, Target};
use crate::text::Token;

/// What the plan uses: tables, `table.column` references and literals (lower case).
#[derive(Default)]
pub(super) struct Used {
    pub(super) tables: BTreeSet<String>,
    pub(super) columns: BTreeSet<(String, String)>,
    pub(super) numbers: Vec<f64>,
    pub(super) strings: Vec<String>,
    /// `table.column` references of the join conditions.
    pub(super) join_columns: BTreeSet<(String, String)>,
}

impl Used {
    pub(super) fn of(plan: &PlanModel) -> Used {
        let mut used = Used::default();
        let alias_table: Vec<(String, String)> = plan
            .tables
            .iter()
            .map(|t| (t.alias.to_lowercase(), t.name.to_lowercase()))
            .collect();
        used.tables = alias_table.iter().map(|(_, t)| t.clone()).collect();
        let only_table = (alias_table.len() == 1).then(|| alias_table[0].1.clone());
        let mut visit = |e: &Expr, columns: &mut BTreeSet<(String, String)>| match e.kind {
            ExprKind::Column => {
                let Some(name) = e.column_name.as_deref() else {
                    return;
                };
                let table = e
                    .alias
                    .as_deref()
                    .and_then(|a| {
                        alias_table
                            .iter()
                            .find(|(alias, _)| alias.eq_ignore_ascii_case(a))
                            .map(|(_, t)| t.clone())
                    })
                    .or_else(|| only_table.clone());
                if let Some(table) = table {
                    columns.insert((table, name.to_lowercase()));
                }
            }
            ExprKind::Literal => match &e.value {
                Some(LiteralValue::Int(i)) => used.numbers.push(*i as f64),
                Some(LiteralValue::Float(x)) => used.numbers.push(*x),
                Some(LiteralValue::Str(s)) => used.strings.push(s.to_lowercase()),
                _ => {}
            },
            _ => {}
        };
        let mut exprs: Vec<&Expr> = Vec::new();
        exprs.extend(plan.select_items.iter().map(|s| &s.expr));
        exprs.extend(plan.where_.iter());
        exprs.extend(plan.group_by.iter().map(|g| &g.expr));
        exprs.extend(plan.having.iter());
        exprs.extend(plan.order_by.iter().map(|o| &o.expr));
        let mut columns = BTreeSet::new();
        for e in exprs {
            e.walk(&mut |e| visit(e, &mut columns));
        }
        let mut join_columns = BTreeSet::new();
        for j in &plan.joins {
            j.condition.walk(&mut |e| visit(e, &mut join_columns));
        }
        used.columns = columns;
        used.join_columns = join_columns;
        if let Some(limit) = plan.limit {
            used.numbers.push(limit as f64);
        }
        // What a sub-query uses is used ("older than every engineer": the value
        // 'engineer' is read inside it).
        for q in plan.subqueries() {
            let inner = Used::of(q);
            used.tables.extend(inner.tables);
            used.columns.extend(inner.columns);
            used.numbers.extend(inner.numbers);
            used.strings.extend(inner.strings);
        }
        used
    }

    /// Whether the plan reads table `t` of `index`.
    pub(super) fn reads_table(&self, index: &SchemaIndex, t: usize) -> bool {
        self.tables.contains(&index.tables[t].name.to_lowercase())
    }

    /// Whether the plan reads column `c` of `index` (anywhere: output, filter, grouping,
    /// ordering).
    pub(super) fn reads_column(&self, index: &SchemaIndex, c: usize) -> bool {
        let col = &index.columns[c];
        self.columns.contains(&(
            index.tables[col.table].name.to_lowercase(),
            col.name.to_lowercase(),
        ))
    }

    /// Whether the plan joins by column `c` of `index` where the name chose the key: one
    /// of two or more foreign keys between the same two tables ("students who have
    /// president votes" joins by `President_Vote`, not by another vote column).
    pub(super) fn joins_by_named_key(&self, index: &SchemaIndex, c: usize) -> bool {
        let col = &index.columns[c];
        let leads = |f: &crate::link::ForeignKey| f.leads_from(col);
        let Some(key) = index.foreign_keys.iter().find(|f| leads(f)) else {
            return false;
        };
        let parallel = index
            .foreign_keys
            .iter()
            .filter(|f| f.from == key.from && f.to == key.to)
            .count();
        parallel >= 2
            && self.join_columns.contains(&(
                index.tables[col.table].name.to_lowercase(),
                col.name.to_lowercase(),
            ))
    }

    pub(super) fn has_number(&self, x: f64) -> bool {
        self.numbers.iter().any(|n| (n - x).abs() < 1e-9)
            || self.strings.iter().any(|s| s.contains(&format_number(x)))
    }

    pub(super) fn has_text(&self, text: &str) -> bool {
        let text = text.to_lowercase();
        self.strings.iter().any(|s| s.contains(&text))
    }
}

pub(super) fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        x.to_string()
    }
}

/// The question's words from `start` to `end`, as written.
pub(super) fn span_text(tokens: &[Token], start: usize, end: usize) -> String {
    tokens[start..end]
        .iter()
        .map(|t| t.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a mention names, and whether the plan uses it.
pub(super) fn element_of(m: &Mention, index: &SchemaIndex, used: &Used) -> (String, bool) {
    match &m.target {
        Target::Table(t) => {
            let name = &index.tables[*t].name;
            (format!("table {name}"), used.reads_table(index, *t))
        }
        Target::Column(c) => {
            let col = &index.columns[*c];
            let table = &index.tables[col.table].name;
            (
                format!("column {table}.{}", col.name),
                used.reads_column(index, *c) || used.joins_by_named_key(index, *c),
            )
        }
        Target::Value {
            column,
            values,
            word,
            part,
            ..
        } => {
            let col = &index.columns[*column];
            let table = &index.tables[col.table].name;
            let mut shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            if values.is_empty() {
                shown.push(match part {
                    Part::Inside => format!("containing '{word}'"),
                    Part::Start => format!("starting with '{word}'"),
                    Part::End => format!("ending with '{word}'"),
                });
            }
            let on_column = used.reads_column(index, *column);
            let literal = values.iter().any(|v| match v {
                serde_json::Value::String(s) => used.has_text(s),
                serde_json::Value::Number(n) => n.as_f64().is_some_and(|x| used.has_number(x)),
                serde_json::Value::Bool(_) => true,
                _ => false,
            }) || (values.is_empty() && !word.is_empty() && used.has_text(word));
            let in_plan = on_column && literal;
            (
                format!("the value {} of {table}.{}", shown.join(" or "), col.name),
                in_plan,
            )
        }
    }
}
