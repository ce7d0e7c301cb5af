//! Value grounding, the pure half: which string literals of a plan name values of a text
//! column, how a literal matches the values the column holds, and the plan rewritten to
//! the stored spelling. The engine reads the values through the adapter (a bounded,
//! guarded lookup) and calls these functions; nothing here does IO.
//!
//! A literal matches a stored value when both read the same after folding: case,
//! accents (`José` ~ `Jose`), spacing and punctuation (`north-america` ~ `North America`)
//! are ignored, nothing else is. A literal with no match is not grounded: the caller
//! refuses the plan and names the nearest stored values.

use std::collections::BTreeSet;

use nl2sql_plan::{Expr, ExprKind, LiteralValue, Op, PlanModel};
use nl2sql_state::{SchemaContract, TableContract, TableRef};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::logical::context::LogicalContext;
use crate::logical::resolve::{Resolver, TypeClass};

/// A text column that a plan compares with string literals (`=`, `!=`, `IN`), and those
/// literals, in plan order without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProbe {
    /// The column's table, as the schema names it.
    pub table: TableRef,
    /// The column, as the schema names it.
    pub column: String,
    /// The literals compared with it.
    pub literals: Vec<String>,
}

impl ValueProbe {
    /// `table.column`, for messages.
    pub fn label(&self) -> String {
        format!("{}.{}", self.table.table_name, self.column)
    }
}

/// How one literal matched the values of its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grounding {
    /// A stored value is spelt exactly like the literal.
    Exact,
    /// Stored values read like the literal once folded: these spellings (one or more, in
    /// stored order) replace it.
    Respelled(Vec<String>),
    /// No stored value reads like the literal: the nearest ones (at most three).
    NotFound {
        /// Closest stored values first.
        nearest: Vec<String>,
    },
}

/// The literal `literal` of a column replaced by `stored` (the plan's rewrite).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Respelling {
    /// The column's table.
    pub table: TableRef,
    /// The column.
    pub column: String,
    /// As the plan wrote it.
    pub literal: String,
    /// As the column holds it.
    pub stored: Vec<String>,
}

/// The literal `text` folded for comparison: accents dropped, lower case, every run of
/// characters that are not letters or digits one space, trimmed.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.nfd().filter(|c| !is_combining_mark(*c)) {
        if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    out
}

/// Matches `literal` against `stored` (the distinct values of its column).
pub fn ground_literal(literal: &str, stored: &[String]) -> Grounding {
    if stored.iter().any(|s| s == literal) {
        return Grounding::Exact;
    }
    let folded = fold(literal);
    let same: Vec<String> = stored
        .iter()
        .filter(|s| !folded.is_empty() && fold(s) == folded)
        .cloned()
        .collect();
    if !same.is_empty() {
        return Grounding::Respelled(same);
    }
    Grounding::NotFound {
        nearest: nearest(&folded, stored, 3),
    }
}

/// The `n` stored values closest to the folded literal: by normalised edit distance,
/// a shared word counting as a strong hint; ties keep stored order.
fn nearest(folded: &str, stored: &[String], n: usize) -> Vec<String> {
    let words: BTreeSet<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    let mut scored: Vec<(f64, usize)> = stored
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let f = fold(s);
            let shared = f.split(' ').filter(|w| words.contains(w)).count();
            let contains = !folded.is_empty() && (f.contains(folded) || folded.contains(&f));
            let score = strsim::normalized_levenshtein(folded, &f)
                + 0.5 * f64::from(u8::from(contains))
                + 0.25 * shared as f64;
            (score, i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(n)
        .map(|(_, i)| stored[i].clone())
        .collect()
}

/// True for a literal grounding leaves alone: empty, or shaped like a date or a time
/// (`2010-10-23`, `12:30`), which text columns often hold in other spellings.
fn skipped(literal: &str) -> bool {
    let t = literal.trim();
    if t.is_empty() {
        return true;
    }
    let b = t.as_bytes();
    let date = b.len() >= 7
        && b[..4].iter().all(u8::is_ascii_digit)
        && matches!(b[4], b'-' | b'/')
        && b[5].is_ascii_digit();
    let time = b.len() >= 4 && b[0].is_ascii_digit() && t.contains(':');
    date || time
}

/// The plan's tables by alias, resolved as the logical validator resolves them (its
/// findings are not repeated here: grounding runs on plans that passed it).
fn resolver<'a>(plan: &PlanModel, contract: &'a SchemaContract) -> Resolver<'a> {
    let ctx = LogicalContext::new(&contract.datasource_id, contract);
    Resolver::new(plan, &ctx, &mut Vec::new())
}

/// The text column `e` names, when it is a column reference of a resolved table.
fn text_column<'a>(e: &Expr, tables: &Resolver<'a>) -> Option<(&'a TableContract, String)> {
    if e.kind != ExprKind::Column {
        return None;
    }
    let found = tables.column(e.alias.as_deref(), e.column_name.as_deref()?)?;
    (TypeClass::of(&found.column.data_type) == TypeClass::Text)
        .then(|| (found.table, found.column.name.clone()))
}

fn string_literal(e: &Expr) -> Option<&str> {
    match (&e.kind, &e.value) {
        (ExprKind::Literal, Some(LiteralValue::Str(s))) if !e.is_null => Some(s),
        _ => None,
    }
}

/// A comparison grounding looks at: the column side, the operator and the literal side.
fn site(e: &Expr) -> Option<(&Expr, Op, &Expr)> {
    let op = e.op?;
    if e.kind != ExprKind::Binary || !matches!(op, Op::Eq | Op::NotEq | Op::In) {
        return None;
    }
    let (l, r) = (e.left.as_deref()?, e.right.as_deref()?);
    if l.kind == ExprKind::Column {
        Some((l, op, r))
    } else if r.kind == ExprKind::Column && op != Op::In {
        Some((r, op, l))
    } else {
        None
    }
}

/// The string literals of one site's literal side (an `IN` list holds several).
fn site_literals(op: Op, side: &Expr) -> Vec<&str> {
    if op == Op::In && side.is_list() {
        side.args.iter().filter_map(string_literal).collect()
    } else {
        string_literal(side).into_iter().collect()
    }
}

/// Every text column of `plan` (in `WHERE` and `HAVING`, its sub-queries' included)
/// compared with string literals, with those literals; dates, times and empty strings are
/// left out.
pub fn value_probes(plan: &PlanModel, contract: &SchemaContract) -> Vec<ValueProbe> {
    let tables = resolver(plan, contract);
    let mut out: Vec<ValueProbe> = Vec::new();
    let mut inner: Vec<&PlanModel> = Vec::new();
    for root in [plan.where_.as_ref(), plan.having.as_ref()]
        .into_iter()
        .flatten()
    {
        root.walk(&mut |e| {
            inner.extend(e.query.as_deref());
            let Some((col, op, side)) = site(e) else {
                return;
            };
            let Some((table, column)) = text_column(col, &tables) else {
                return;
            };
            for lit in site_literals(op, side) {
                if !skipped(lit) {
                    add_probe(&mut out, &table.table, &column, lit);
                }
            }
        });
    }
    for q in inner {
        for p in value_probes(q, contract) {
            for lit in &p.literals {
                add_probe(&mut out, &p.table, &p.column, lit);
            }
        }
    }
    out
}

/// Adds `lit` to the probe of `table.column`, once.
fn add_probe(out: &mut Vec<ValueProbe>, table: &TableRef, column: &str, lit: &str) {
    let probe = match out
        .iter_mut()
        .position(|p| p.table == *table && p.column == column)
    {
        Some(i) => &mut out[i],
        None => {
            out.push(ValueProbe {
                table: table.clone(),
                column: column.to_owned(),
                literals: Vec::new(),
            });
            let last = out.len() - 1;
            &mut out[last]
        }
    };
    if !probe.literals.iter().any(|l| l == lit) {
        probe.literals.push(lit.to_owned());
    }
}

/// Rewrites `plan` so each respelt literal is written as stored: `c = 'x'` becomes
/// `c = 'X'`, or `c IN ('X', 'x ')` when several stored values read like it (`!=` then
/// becomes `NOT (c IN (…))`); `IN` lists are respelt member by member. Returns how many
/// literals changed.
pub fn respell(plan: &mut PlanModel, contract: &SchemaContract, changes: &[Respelling]) -> usize {
    if changes.is_empty() {
        return 0;
    }
    let tables = resolver(plan, contract);
    let find = |table: &TableContract, column: &str, lit: &str| {
        changes
            .iter()
            .find(|c| c.table == table.table && c.column == column && c.literal == lit)
            .map(|c| c.stored.clone())
    };
    let mut changed = 0;
    let mut visit = |e: &mut Expr| {
        let Some((col, op, side)) = site(e) else {
            return;
        };
        let Some((table, column)) = text_column(col, &tables) else {
            return;
        };
        let col = col.clone();
        let column_left = e.left.as_deref().is_some_and(|l| *l == col);
        if op == Op::In && side.is_list() {
            let mut members: Vec<Expr> = Vec::new();
            let mut any = false;
            for m in &side.args {
                match string_literal(m).and_then(|l| find(table, &column, l)) {
                    Some(stored) => {
                        any = true;
                        changed += 1;
                        members.extend(stored.into_iter().map(text));
                    }
                    None => members.push(m.clone()),
                }
            }
            if any {
                dedupe(&mut members);
                if let Some(r) = e.right.as_deref_mut() {
                    r.args = members;
                }
            }
            return;
        }
        let Some(stored) = string_literal(side).and_then(|l| find(table, &column, l)) else {
            return;
        };
        changed += 1;
        *e = match (op, stored.as_slice()) {
            (Op::In, _) => Expr::binary(Op::In, col, list(stored)),
            (_, [one]) if column_left => Expr::binary(op, col, text(one.clone())),
            (_, [one]) => Expr::binary(op, text(one.clone()), col),
            (Op::NotEq, _) => Expr::unary(Op::Not, Expr::binary(Op::In, col, list(stored))),
            _ => Expr::binary(Op::In, col, list(stored)),
        };
    };
    if let Some(w) = plan.where_.as_mut() {
        w.walk_mut(&mut visit);
    }
    if let Some(h) = plan.having.as_mut() {
        h.walk_mut(&mut visit);
    }
    for root in [plan.where_.as_mut(), plan.having.as_mut()]
        .into_iter()
        .flatten()
    {
        root.walk_mut(&mut |e| {
            if let Some(q) = e.query.as_deref_mut() {
                changed += respell(q, contract, changes);
            }
        });
    }
    changed
}

fn text(value: String) -> Expr {
    Expr::literal(LiteralValue::Str(value))
}

fn list(values: Vec<String>) -> Expr {
    Expr::func("LIST", values.into_iter().map(text).collect())
}

fn dedupe(members: &mut Vec<Expr>) {
    let mut seen: Vec<Expr> = Vec::new();
    members.retain(|m| {
        if seen.contains(m) {
            false
        } else {
            seen.push(m.clone());
            true
        }
    });
}

#[cfg(test)]
mod tests;
