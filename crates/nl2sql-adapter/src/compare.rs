//! Result tables normalised for comparison, and the comparison rule of the accuracy
//! benchmarks (`nl2sql benchmark --spider`, the planner's corpora): results are compared,
//! never SQL text. It is the rule of Spider's own execution accuracy, with extra result
//! columns tolerated.
//!
//! A result matches its gold result when
//! - it has the same number of rows, and
//! - some assignment of each gold column to a distinct result column (column names and
//!   order are ignored; extra result columns are allowed) makes the projected rows equal to
//!   the gold rows as a multiset, or as a sequence when the question is `ordered`;
//! - values are normalised first: integers, floats, booleans and numeric text become one
//!   number rounded to 6 decimals (so `7`, `7.0` and `"7"` are equal), other text is
//!   compared exactly, NULL equals only NULL.

use arrow::array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};
use arrow::datatypes::DataType;
use arrow::util::display::array_value_to_string;
use serde_json::Value;

use crate::types::ResultFrame;

/// A normalised cell value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Val {
    /// SQL NULL: equal only to NULL.
    Null,
    /// A number rounded to 6 decimals, printed.
    Num(String),
    /// Text that is not a plain decimal number.
    Text(String),
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Null => f.write_str("NULL"),
            Val::Num(n) => {
                let t = n.trim_end_matches('0').trim_end_matches('.');
                f.write_str(if t.is_empty() || t == "-" { "0" } else { t })
            }
            Val::Text(t) => write!(f, "{t:?}"),
        }
    }
}

/// A number, rounded to 6 decimals (non-finite numbers are text).
pub fn num(x: f64) -> Val {
    if !x.is_finite() {
        return Val::Text(x.to_string());
    }
    let r = (x * 1e6).round() / 1e6;
    // -0.0 and 0.0 print alike.
    let r = if r == 0.0 { 0.0 } else { r };
    Val::Num(format!("{r:.6}"))
}

/// Text that is a plain decimal number (`12`, `-3.5`) is that number.
pub fn text(s: &str) -> Val {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let mut parts = body.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let numeric = digits(int) && frac.is_none_or(digits);
    match s.parse::<f64>() {
        Ok(x) if numeric => num(x),
        _ => Val::Text(s.to_owned()),
    }
}

/// A result table, normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names (ignored by the comparison).
    pub columns: Vec<String>,
    /// Normalised rows.
    pub rows: Vec<Vec<Val>>,
}

/// The normalised table of an adapter's result frame.
pub fn table_of(frame: &ResultFrame) -> Table {
    let columns = frame.columns();
    let mut rows = Vec::new();
    for batch in &frame.batches {
        for r in 0..batch.num_rows() {
            let row = batch
                .columns()
                .iter()
                .map(|col| cell(col.as_ref(), r))
                .collect();
            rows.push(row);
        }
    }
    Table { columns, rows }
}

/// Row `r` of an Arrow column, normalised.
pub fn cell(col: &dyn Array, r: usize) -> Val {
    if col.is_null(r) {
        return Val::Null;
    }
    let any = col.as_any();
    match col.data_type() {
        DataType::Int64 => any
            .downcast_ref::<Int64Array>()
            .map_or(Val::Null, |a| num(a.value(r) as f64)),
        DataType::Float64 => any
            .downcast_ref::<Float64Array>()
            .map_or(Val::Null, |a| num(a.value(r))),
        DataType::Boolean => any
            .downcast_ref::<BooleanArray>()
            .map_or(Val::Null, |a| num(if a.value(r) { 1.0 } else { 0.0 })),
        DataType::Utf8 => any
            .downcast_ref::<StringArray>()
            .map_or(Val::Null, |a| text(a.value(r))),
        _ => array_value_to_string(col, r).map_or(Val::Null, |s| text(&s)),
    }
}

/// A JSON cell of a `RunResult`, normalised like an Arrow cell.
pub fn json_val(v: &Value) -> Val {
    match v {
        Value::Null => Val::Null,
        Value::Bool(b) => num(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64().map_or(Val::Null, num),
        Value::String(s) => text(s),
        other => Val::Text(other.to_string()),
    }
}

/// The first `max` rows, for messages: `(a, 1) (b, 2) … 3 more`.
pub fn show_rows(rows: &[Vec<Val>], max: usize) -> String {
    let mut out: Vec<String> = rows
        .iter()
        .take(max)
        .map(|r| {
            let cells: Vec<String> = r.iter().map(ToString::to_string).collect();
            format!("({})", cells.join(", "))
        })
        .collect();
    if rows.len() > max {
        out.push(format!("… {} more", rows.len() - max));
    }
    out.join(" ")
}

/// `rows` projected onto `cols`, in the order of `cols`.
fn project(rows: &[Vec<Val>], cols: &[usize]) -> Vec<Vec<Val>> {
    rows.iter()
        .map(|r| cols.iter().map(|&c| r[c].clone()).collect())
        .collect()
}

/// `rows` in ascending order (the multiset view of a table).
pub fn sorted(mut rows: Vec<Vec<Val>>) -> Vec<Vec<Val>> {
    rows.sort();
    rows
}

/// The comparison rule of the crate documentation: `Ok` when `got` answers like `gold`,
/// else why not.
pub fn compare(gold: &Table, got: &Table, ordered: bool) -> Result<(), String> {
    if got.rows.len() != gold.rows.len() {
        return Err(format!(
            "{} rows, expected {}: got {} expected {}",
            got.rows.len(),
            gold.rows.len(),
            show_rows(&got.rows, 5),
            show_rows(&gold.rows, 5)
        ));
    }
    let g = gold.columns.len();
    let n = got.columns.len();
    if n < g {
        return Err(format!(
            "{n} columns [{}], expected at least {g} [{}]",
            got.columns.join(", "),
            gold.columns.join(", ")
        ));
    }
    if gold.rows.is_empty() {
        return Ok(());
    }
    // Candidate result columns per gold column: the same values (as a multiset, or in row
    // order when ordered). A necessary condition that prunes the search below.
    let column = |rows: &[Vec<Val>], c: usize| -> Vec<Val> {
        let v: Vec<Val> = rows.iter().map(|r| r[c].clone()).collect();
        if ordered {
            v
        } else {
            let mut v = v;
            v.sort();
            v
        }
    };
    let candidates: Vec<Vec<usize>> = (0..g)
        .map(|j| {
            let want = column(&gold.rows, j);
            (0..n).filter(|&c| column(&got.rows, c) == want).collect()
        })
        .collect();
    if let Some(j) = candidates.iter().position(Vec::is_empty) {
        return Err(format!(
            "no result column holds the values of expected column {} ({}): got {} expected {}",
            j + 1,
            gold.columns[j],
            show_rows(&got.rows, 5),
            show_rows(&gold.rows, 5)
        ));
    }
    let want = if ordered {
        gold.rows.clone()
    } else {
        sorted(gold.rows.clone())
    };
    let mut chosen = Vec::with_capacity(g);
    if assign(&candidates, &mut chosen, &|cols: &[usize]| {
        let p = project(&got.rows, cols);
        (if ordered { p } else { sorted(p) }) == want
    }) {
        Ok(())
    } else {
        Err(format!(
            "every column matches on its own but the rows do not: got {} expected {}",
            show_rows(&got.rows, 5),
            show_rows(&gold.rows, 5)
        ))
    }
}

/// Depth-first search for an injective choice of one candidate per gold column that
/// satisfies `accept`.
fn assign(
    candidates: &[Vec<usize>],
    chosen: &mut Vec<usize>,
    accept: &dyn Fn(&[usize]) -> bool,
) -> bool {
    let j = chosen.len();
    if j == candidates.len() {
        return accept(chosen);
    }
    for &c in &candidates[j] {
        if chosen.contains(&c) {
            continue;
        }
        chosen.push(c);
        if assign(candidates, chosen, accept) {
            return true;
        }
        chosen.pop();
    }
    false
}
