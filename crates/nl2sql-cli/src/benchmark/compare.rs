//! Comparing a run's result with the expected one: result sets (rows in any order unless
//! asked, columns by name, numbers to 6 decimals) and, for SQL, the normalised parse tree.

use super::*;

/// Numbers closer than this (relative to the larger magnitude above 1) are equal.
pub(crate) const TOLERANCE: f64 = 1e-5;

/// One value, normalised for comparison: text that reads as a number is a number.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Num(f64),
    Text(String),
}

impl Cell {
    /// A value written as text (a database's display of it).
    pub(crate) fn from_text(s: &str) -> Cell {
        match s.trim().parse::<f64>() {
            Ok(n) if n.is_finite() => Cell::Num(n),
            _ => Cell::Text(s.to_owned()),
        }
    }

    /// A value of a run's JSON rows.
    pub(crate) fn from_json(v: &Value) -> Cell {
        match v {
            Value::Null => Cell::Null,
            Value::Number(n) => n
                .as_f64()
                .map_or_else(|| Cell::Text(n.to_string()), Cell::Num),
            Value::String(s) => Cell::from_text(s),
            Value::Bool(b) => Cell::Text(b.to_string()),
            other => Cell::Text(other.to_string()),
        }
    }

    pub(super) fn rank(&self) -> u8 {
        match self {
            Cell::Null => 0,
            Cell::Num(_) => 1,
            Cell::Text(_) => 2,
        }
    }

    /// A total order (null, then numbers, then text), for sorting rows.
    pub(super) fn order(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => a.total_cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }

    /// Equal, numbers within [`TOLERANCE`].
    pub(super) fn matches(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => {
                (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1.0)
            }
            _ => self == other,
        }
    }
}

/// A result: column names and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResultSet {
    pub(crate) columns: Vec<String>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

impl ResultSet {
    /// A run's columns and JSON rows.
    pub(crate) fn from_json(columns: &[String], rows: &[Vec<Value>]) -> ResultSet {
        ResultSet {
            columns: columns.to_vec(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(Cell::from_json).collect())
                .collect(),
        }
    }

    /// The lower-cased column names, sorted, and every row's cells in that order.
    pub(super) fn canonical(&self) -> (Vec<String>, Vec<Vec<Cell>>) {
        let mut order: Vec<usize> = (0..self.columns.len()).collect();
        let names: Vec<String> = self.columns.iter().map(|c| c.to_lowercase()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let sorted_names = order.iter().map(|&i| names[i].clone()).collect();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                order
                    .iter()
                    .map(|&i| r.get(i).cloned().unwrap_or(Cell::Null))
                    .collect()
            })
            .collect();
        (sorted_names, rows)
    }
}

pub(super) fn row_order(a: &[Cell], b: &[Cell]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = x.order(y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

pub(super) fn rows_match(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches(y))
}

/// Whether two results are the same result set (`interfaces.md` §1): same row count,
/// the same column names compared case-insensitively and sorted, rows compared
/// order-insensitively, numbers within [`TOLERANCE`]. The error says how they differ.
pub(crate) fn same_result(got: &ResultSet, want: &ResultSet) -> Result<(), String> {
    if got.rows.len() != want.rows.len() {
        return Err(format!(
            "{} row{} instead of {}",
            got.rows.len(),
            plural(got.rows.len()),
            want.rows.len()
        ));
    }
    let (got_names, mut got_rows) = got.canonical();
    let (want_names, mut want_rows) = want.canonical();
    if got_names != want_names {
        return Err(format!(
            "columns [{}] instead of [{}]",
            got_names.join(", "),
            want_names.join(", ")
        ));
    }
    got_rows.sort_by(|a, b| row_order(a, b));
    want_rows.sort_by(|a, b| row_order(a, b));
    if got_rows
        .iter()
        .zip(&want_rows)
        .all(|(a, b)| rows_match(a, b))
    {
        return Ok(());
    }
    // Values within the tolerance may sort differently: match the rows one by one.
    let mut unused: Vec<bool> = vec![true; want_rows.len()];
    for (n, row) in got_rows.iter().enumerate() {
        let found = want_rows
            .iter()
            .enumerate()
            .position(|(i, w)| unused[i] && rows_match(row, w));
        match found {
            Some(i) => unused[i] = false,
            None => {
                return Err(format!(
                    "row {} of the result is not in the expected result: [{}]",
                    n + 1,
                    row.iter().map(cell_text).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".to_owned(),
        Cell::Num(n) => n.to_string(),
        Cell::Text(s) => s.clone(),
    }
}

// ---------------------------------------------------------------------------------------
// Semantic SQL comparison.

/// The normalised parse tree of `sql`: keywords and identifiers lower-cased, identifier
/// quotes dropped, and a top-level `LIMIT` equal to `row_limit` (the generator's safety
/// cap) removed.
pub(crate) fn normalized_sql(
    sql: &str,
    dialect: Dialect,
    row_limit: Option<u64>,
) -> Result<Vec<Statement>, String> {
    let d = parser_dialect(dialect);
    let tokens = Tokenizer::new(d.as_ref(), sql)
        .tokenize()
        .map_err(|e| e.to_string())?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .map(|t| match t {
            Token::Word(mut w) => {
                w.value = w.value.to_lowercase();
                if w.quote_style.is_some() {
                    // A quoted identifier is an identifier, never a keyword.
                    w.quote_style = None;
                    w.keyword = Keyword::NoKeyword;
                }
                Token::Word(w)
            }
            other => other,
        })
        .collect();
    let mut statements = Parser::new(d.as_ref())
        .with_tokens(tokens)
        .parse_statements()
        .map_err(|e| e.to_string())?;
    if let Some(limit) = row_limit {
        for s in &mut statements {
            if let Statement::Query(q) = s
                && let Some(LimitClause::LimitOffset {
                    limit: Some(l),
                    offset: None,
                    limit_by,
                }) = &q.limit_clause
                && limit_by.is_empty()
                && l.to_string() == limit.to_string()
            {
                q.limit_clause = None;
            }
        }
    }
    Ok(statements)
}

/// Whether two statements have the same normalised parse tree (false when either does not
/// parse).
pub(crate) fn same_sql(a: &str, b: &str, dialect: Dialect, row_limit: Option<u64>) -> bool {
    match (
        normalized_sql(a, dialect, row_limit),
        normalized_sql(b, dialect, row_limit),
    ) {
        (Ok(x), Ok(y)) => !x.is_empty() && x == y,
        _ => false,
    }
}
