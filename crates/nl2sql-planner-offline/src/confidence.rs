//! How likely a reading is right: a logistic model over schema-free traits of the
//! question and its plan, learned from the Spider train split by `cargo xtask
//! learn-confidence` (see that task for how) and shipped as `data/confidence.txt`.
//!
//! Every word of a question the planner answers is placed, yet a fifth of those answers
//! were wrong on train: the words were placed, but some shapes of question are read
//! wrongly far more often than others ("not", "any", "than" between two columns, a
//! three-table join, an average over a grouping). The model gives each reading a
//! probability of being right; below the learned threshold the strict planner refuses,
//! naming the traits that lowered it.
//!
//! The traits ([`signals`]) never name the schema: the words of the question that did not
//! link to it (grammar and intent words, which are the same English on every database),
//! what the linked spans linked to (a table, a column, a value; never which), and the
//! shape of the plan (tables, aggregates, grouping, ordering, filters). So what is learned
//! on train's databases carries over to any other.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use nl2sql_plan::{Expr, ExprKind, JoinType, PlanModel, Signal};

use super::analyze::Analysis;
use super::link::{SchemaIndex, Target};
use super::text::{Token, TokenKind};

/// The learned model: `bias`, `threshold`, then one `signal weight` a line; `#` starts a
/// comment line.
const MODEL_TEXT: &str = include_str!("data/confidence.txt");

/// The parsed model.
#[derive(Debug, Default)]
pub(crate) struct Model {
    /// Log-odds of a right answer with no trait.
    pub(crate) bias: f64,
    /// The strict planner refuses a reading less likely right than this.
    pub(crate) threshold: f64,
    /// Each learned trait's weight.
    weights: HashMap<String, f64>,
}

impl Model {
    /// Parses the model file's text: unknown lines are skipped, never fatal (the file is
    /// generated, and a test checks it parses whole).
    pub(crate) fn parse(text: &str) -> Model {
        let mut model = Model::default();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let Ok(value) = value.parse::<f64>() else {
                continue;
            };
            match name {
                "bias" => model.bias = value,
                "threshold" => model.threshold = value,
                _ => {
                    model.weights.insert(name.to_owned(), value);
                }
            }
        }
        model
    }

    /// The probability that a reading with these traits is right, and each trait with its
    /// weight (0 for traits the model has not learned).
    pub(crate) fn score(&self, signals: &[String]) -> (f64, Vec<Signal>) {
        let weighted: Vec<Signal> = signals
            .iter()
            .map(|name| Signal {
                name: name.clone(),
                weight: self.weights.get(name).copied().unwrap_or(0.0),
            })
            .collect();
        let z = self.bias + weighted.iter().map(|s| s.weight).sum::<f64>();
        (1.0 / (1.0 + (-z).exp()), weighted)
    }

    /// How many traits have a weight.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.weights.len()
    }
}

/// The shipped model.
pub(crate) static MODEL: LazyLock<Model> = LazyLock::new(|| Model::parse(MODEL_TEXT));

/// The traits of a reading: each once, sorted.
pub(crate) fn signals(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
) -> Vec<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    question_signals(tokens, analysis, &mut out);
    let identity = identity_keys(analysis, index);
    plan_signals(plan, identity.len(), &mut out);
    provenance_signals(analysis, index, &identity, plan, &mut out);
    out.into_iter().collect()
}

/// How strongly a span linked: its whole name (or a qualified one), a synonym, several
/// words of a longer name, or one word of it.
fn strength(score: u32) -> &'static str {
    match score {
        20.. => "whole",
        18..=19 => "synonym",
        9..=17 => "words",
        _ => "partial",
    }
}

/// Whether each column the plan filters, groups, sorts or outputs by was named in the
/// question (a column or value mention of a column of that name), or was inferred (a
/// label, a key, the column a comparison word chose). The `identity` keys (see
/// [`identity_keys`]) are neither.
fn provenance_signals(
    analysis: &Analysis,
    index: &SchemaIndex,
    identity: &[usize],
    plan: &PlanModel,
    out: &mut BTreeSet<String>,
) {
    let named: BTreeSet<String> = analysis
        .mentions
        .iter()
        .filter_map(|m| m.column())
        .map(|c| index.columns[c].name.to_lowercase())
        .collect();
    // A key grouped beside its own rows' column is how rows are told apart, not a column
    // the planner guessed the question wants: (table, column), lower case.
    let identity: BTreeSet<(String, String)> = identity
        .iter()
        .map(|c| &index.columns[*c])
        .filter(|col| !named.contains(&col.name.to_lowercase()))
        .map(|col| {
            (
                index.tables[col.table].name.to_lowercase(),
                col.name.to_lowercase(),
            )
        })
        .collect();
    let table_of_alias = |alias: Option<&str>| -> Option<String> {
        let alias = alias?;
        plan.tables
            .iter()
            .find(|t| t.alias.eq_ignore_ascii_case(alias))
            .map(|t| t.name.to_lowercase())
    };
    let mut mark = |part: &str, e: &Expr| {
        e.walk(&mut |x: &Expr| {
            if x.kind == ExprKind::Column
                && let Some(name) = x.column_name.as_deref()
            {
                let lower = name.to_lowercase();
                if matches!(part, "output" | "group")
                    && table_of_alias(x.alias.as_deref())
                        .is_some_and(|t| identity.contains(&(t, lower.clone())))
                {
                    return;
                }
                let how = if named.contains(&lower) {
                    "named"
                } else if ["name", "title", "label"].contains(&lower.as_str())
                    || lower.ends_with("_name")
                {
                    // A label the planner chose for rows the question names.
                    "inferred-label"
                } else if lower == "id" || lower.ends_with("_id") {
                    "inferred-key"
                } else {
                    "inferred"
                };
                out.insert(format!("column:{part}-{how}"));
            }
        });
    };
    for item in &plan.select_items {
        mark("output", &item.expr);
    }
    if let Some(w) = &plan.where_ {
        mark("filter", w);
    }
    if let Some(h) = &plan.having {
        mark("having", h);
    }
    for g in &plan.group_by {
        mark("group", &g.expr);
    }
    for o in &plan.order_by {
        mark("order", &o.expr);
    }
}

/// The question's traits: its length, its unlinked words and word pairs, and what its
/// linked spans linked to.
fn question_signals(tokens: &[Token], analysis: &Analysis, out: &mut BTreeSet<String>) {
    let words = tokens.len();
    out.insert(
        match words {
            0..=6 => "question:words<=6",
            7..=10 => "question:words<=10",
            11..=15 => "question:words<=15",
            16..=20 => "question:words<=20",
            _ => "question:words>20",
        }
        .to_owned(),
    );
    let mut linked = vec![false; words];
    for m in &analysis.mentions {
        linked[m.start.min(words)..m.end.min(words)]
            .iter_mut()
            .for_each(|l| *l = true);
        out.insert(
            match &m.target {
                Target::Table(_) => "link:table",
                Target::Column(_) => "link:column",
                Target::Value { exact: true, .. } => "link:value",
                Target::Value { exact: false, .. } => "link:value-word",
            }
            .to_owned(),
        );
        match &m.target {
            Target::Table(_) => {
                out.insert(format!("link:table-{}", strength(m.score)));
            }
            Target::Column(_) => {
                out.insert(format!("link:column-{}", strength(m.score)));
            }
            Target::Value { .. } => {}
        }
        if !m.alternatives.is_empty() {
            out.insert("link:tie".to_owned());
        }
    }
    let columns = analysis
        .mentions
        .iter()
        .filter(|m| matches!(m.target, Target::Column(_)))
        .count();
    out.insert(format!("link:columns={}", columns.min(3)));
    // A linked span reads as one placeholder, so that pairs stay schema-free.
    let unit = |i: usize| -> String {
        let t = &tokens[i];
        if linked[i] {
            return "<schema>".to_owned();
        }
        // "he or she" is one person: its "or" is not the one the model learned.
        if crate::text::pronoun_or(tokens, i) {
            return "<pronoun-or>".to_owned();
        }
        match t.kind {
            TokenKind::Word => t.lower.clone(),
            TokenKind::Number => "<number>".to_owned(),
            TokenKind::Date => "<date>".to_owned(),
            TokenKind::Quoted => "<quoted>".to_owned(),
        }
    };
    let units: Vec<String> = (0..words).map(unit).collect();
    for (i, u) in units.iter().enumerate() {
        if u != "<schema>" {
            out.insert(format!("word:{u}"));
        }
        if let Some(next) = units.get(i + 1)
            && !(u == "<schema>" && next == "<schema>")
        {
            out.insert(format!("pair:{u}_{next}"));
        }
    }
    if let Some(first) = units.first() {
        out.insert(format!("first:{first}"));
    }
}

/// Grouped keys that only make each row of their table its own group beside another
/// grouped column of that table ("the country of the artist with the fewest songs" groups
/// by the artist's key and its country): one grouping as the question says it, not two.
fn identity_keys(analysis: &Analysis, index: &SchemaIndex) -> Vec<usize> {
    let grouped = &analysis.group_by;
    grouped
        .iter()
        .copied()
        .filter(|&c| {
            let table = index.columns[c].table;
            index.single_key(table) == Some(c)
                && grouped
                    .iter()
                    .any(|&o| o != c && index.columns[o].table == table)
        })
        .collect()
}

/// The plan's shape; `keys_beside` grouped keys are not counted as groupings of their own
/// (see [`identity_keys`]).
fn plan_signals(plan: &PlanModel, keys_beside: usize, out: &mut BTreeSet<String>) {
    let tables = plan.tables.len();
    out.insert(format!("plan:tables={}", tables.min(4)));
    if plan
        .joins
        .iter()
        .any(|j| !matches!(j.join_type, JoinType::Inner))
    {
        out.insert("plan:outer-join".to_owned());
    }
    out.insert(format!("plan:outputs={}", plan.select_items.len().min(4)));
    let mut aggregates = 0;
    for item in &plan.select_items {
        item.expr.walk(&mut |e: &Expr| {
            if e.kind == ExprKind::Func && e.is_aggregate_call() {
                aggregates += 1;
                let name = e.func_name.as_deref().unwrap_or("").to_uppercase();
                out.insert(format!("plan:aggregate={name}"));
                if e.distinct {
                    out.insert("plan:aggregate-distinct".to_owned());
                }
            }
        });
    }
    let grouped = !plan.group_by.is_empty();
    if grouped {
        let groupings = plan.group_by.len().saturating_sub(keys_beside).max(1);
        out.insert(format!("plan:group-by={}", groupings.min(2)));
    }
    if plan.having.is_some() {
        out.insert("plan:having".to_owned());
    }
    if plan.distinct {
        out.insert("plan:distinct".to_owned());
    }
    let ordered = !plan.order_by.is_empty();
    if ordered {
        let ordered_by_aggregate = plan.order_by.iter().any(|o| {
            let mut agg = false;
            o.expr.walk(&mut |e: &Expr| agg |= e.is_aggregate_call());
            agg
        });
        out.insert(
            if ordered_by_aggregate {
                "plan:order-by-aggregate"
            } else {
                "plan:order-by-column"
            }
            .to_owned(),
        );
    }
    match plan.limit {
        Some(1) => {
            out.insert("plan:limit=1".to_owned());
        }
        Some(_) => {
            out.insert("plan:limit=n".to_owned());
        }
        None => {}
    }
    let mut filters = 0;
    if let Some(w) = &plan.where_ {
        w.walk(&mut |e: &Expr| {
            if let Some(op) = e.op
                && !matches!(op, nl2sql_plan::Op::And | nl2sql_plan::Op::Or)
            {
                filters += 1;
                out.insert(format!("plan:filter={op:?}"));
            }
            if e.op == Some(nl2sql_plan::Op::Or) {
                out.insert("plan:filter-or".to_owned());
            }
        });
    }
    out.insert(format!("plan:filters={}", filters.min(3)));
    // The coarse shape, so that a combination can weigh more than its parts.
    out.insert(format!(
        "shape:{}{}{}{}",
        match tables {
            0 | 1 => "one-table",
            2 => "two-tables",
            _ => "more-tables",
        },
        if aggregates > 0 { "+aggregate" } else { "" },
        if grouped { "+group" } else { "" },
        if ordered { "+order" } else { "" },
    ));
}

/// A trait in words, for a refusal.
pub(crate) fn describe(signal: &str) -> String {
    let Some((kind, what)) = signal.split_once(':') else {
        return signal.to_owned();
    };
    let spell = |w: &str| w.replace('_', " ").replace("<schema>", "…");
    match kind {
        "word" => format!("'{}'", spell(what)),
        "pair" => format!("'{}'", spell(what)),
        "first" => format!("'{}' first", spell(what)),
        _ => match what.split_once('=') {
            Some(("tables", n)) => format!("a join of {n} tables"),
            Some(("aggregate", f)) => match f {
                "COUNT" => "a count".to_owned(),
                "SUM" => "a sum".to_owned(),
                "AVG" => "an average".to_owned(),
                "MIN" => "a minimum".to_owned(),
                "MAX" => "a maximum".to_owned(),
                _ => format!("a {f}"),
            },
            Some(("filters", n)) => format!("{n} conditions"),
            Some(("outputs", n)) => format!("{n} outputs"),
            Some(("group-by", _)) => "a grouping".to_owned(),
            Some(("filter", op)) => format!("a {op} condition"),
            Some(("columns", n)) => format!("{n} columns named"),
            Some(("limit", "1")) => "a single top row".to_owned(),
            Some(("limit", _)) => "a top-N".to_owned(),
            _ => what.replace(['-', '+'], " "),
        },
    }
}

/// The question's words a trait stands for, if it is made of words.
pub(crate) fn words_of(signal: &str) -> Option<String> {
    let (kind, what) = signal.split_once(':')?;
    matches!(kind, "word" | "pair" | "first").then(|| {
        what.split('_')
            .filter(|w| !w.starts_with('<'))
            .collect::<Vec<_>>()
            .join(" ")
    })
}
