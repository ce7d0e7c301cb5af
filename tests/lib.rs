//! Loaders for the end-to-end tests of nl2sql: the peers' suites copied under `tests/data/`.
//!
//! The data we test against is checked in, so the tests never read outside this package:
//! - `data/spider/`: the Spider 1.0 dev gold queries (`dev_gold.sql`, one `SQL<TAB>db_id` a
//!   line) and the SQLite DDL of the 20 databases they use (`schemas/<db_id>.sql`);
//!   CC BY-SA 4.0, see `data/spider/README.md`.
//! - `data/sqlglot/`: sqlglot's qualification fixtures (`qualify_columns.sql`,
//!   `qualify_columns__invalid.sql`, `tpc-h_tpc-h.sql`) and the two schemas they run against,
//!   which we converted to DDL we own (`schema.sql`, `tpch_schema.sql`); MIT, see
//!   `data/sqlglot/README.md`.
//!
//! Each loader panics with a message naming the file when the data is missing or malformed:
//! a broken fixture is a broken test, not a case to skip.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use nl2sql_state::{AccessPolicy, Dialect, PolicyFile, SchemaContract};
use nl2sql_validate::schema_from_ddl;

/// The folder holding the test data (`tests/data`).
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Reads a file of `tests/data` by its path relative to that folder.
///
/// # Panics
/// When the file cannot be read.
pub fn read_data(relative: &str) -> String {
    let path = data_dir().join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read test data {}: {e}", path.display()))
}

/// Parses `ddl` into a schema contract for `datasource_id`.
///
/// # Panics
/// When the DDL does not load: `what` names it in the message.
pub fn contract_from_ddl(
    ddl: &str,
    dialect: Dialect,
    datasource_id: &str,
    what: &str,
) -> SchemaContract {
    schema_from_ddl(ddl, dialect, datasource_id)
        .unwrap_or_else(|e| panic!("schema {what} does not load as {dialect:?}: {e}"))
}

// ---------------------------------------------------------------------------------------
// Spider
// ---------------------------------------------------------------------------------------

/// One gold query of the Spider dev set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpiderQuery {
    /// Line of `dev_gold.sql` (1-based), which identifies the query.
    pub line: usize,
    /// The gold SQL.
    pub sql: String,
    /// The database it runs against (a file `schemas/<db_id>.sql`).
    pub db_id: String,
}

/// The 1,034 gold queries of `data/spider/dev_gold.sql`, in file order.
///
/// # Panics
/// When the file is missing or a line is not `SQL<TAB>db_id`.
pub fn spider_gold() -> Vec<SpiderQuery> {
    read_data("spider/dev_gold.sql")
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let (sql, db_id) = line
                .rsplit_once('\t')
                .unwrap_or_else(|| panic!("dev_gold.sql:{}: expected `SQL<TAB>db_id`", i + 1));
            SpiderQuery {
                line: i + 1,
                sql: sql.trim().to_owned(),
                db_id: db_id.trim().to_owned(),
            }
        })
        .collect()
}

/// The SQLite DDL of one Spider database (`data/spider/schemas/<db_id>.sql`).
///
/// # Panics
/// When the schema file is missing.
pub fn spider_schema_ddl(db_id: &str) -> String {
    read_data(&format!("spider/schemas/{db_id}.sql"))
}

/// The schema contract of one Spider database, loaded as SQLite DDL with `db_id` as the
/// datasource id.
///
/// # Panics
/// When the schema file is missing or does not load.
pub fn spider_contract(db_id: &str) -> SchemaContract {
    contract_from_ddl(&spider_schema_ddl(db_id), Dialect::Sqlite, db_id, db_id)
}

// ---------------------------------------------------------------------------------------
// sqlglot fixtures
// ---------------------------------------------------------------------------------------

/// One case of a sqlglot optimizer fixture file: an input query and its expected
/// (qualified) form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixturePair {
    /// File name under `data/sqlglot/`.
    pub file: &'static str,
    /// Line (1-based) of the first line of the input query.
    pub line: usize,
    /// The `# key: value` options above the input; keys in lower case, values trimmed.
    pub meta: BTreeMap<String, String>,
    /// The input query, without its final `;`.
    pub input: String,
    /// The expected output, without its final `;`.
    pub expected: String,
}

impl FixturePair {
    /// The stable key of the case in `known_failures.txt`: `<file>:<line>`.
    pub fn key(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The case's `title` option, if any.
    pub fn title(&self) -> Option<&str> {
        self.meta.get("title").map(String::as_str)
    }

    /// The title, or else the input on one line, cut to `max` characters: for reports.
    pub fn label(&self, max: usize) -> String {
        let text = self
            .title()
            .map_or_else(|| one_line(&self.input), str::to_owned);
        truncate(&text, max)
    }
}

/// `text` with every run of whitespace replaced by one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Splits a sqlglot fixture file into (input, expected) pairs the way sqlglot's own test
/// helper (`load_sql_fixture_pairs` in `tests/helpers.py`) does, keeping line numbers.
///
/// Lines that are empty or start with `--` are dropped; the rest is split at every `;`
/// into statements, which pair up in order (input, expected, input, expected, …); leading
/// `# key: value` lines of an input are its options. A trailing unpaired statement is
/// ignored, as sqlglot ignores it.
pub fn parse_fixture_pairs(file: &'static str, text: &str) -> Vec<FixturePair> {
    // Each statement: its kept lines, with their line numbers.
    let mut statements: Vec<Vec<(usize, String)>> = Vec::new();
    let mut current: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with("--") {
            continue;
        }
        let mut pieces = line.split(';').peekable();
        while let Some(piece) = pieces.next() {
            current.push((i + 1, piece.to_owned()));
            if pieces.peek().is_some() {
                statements.push(std::mem::take(&mut current));
            }
        }
    }
    statements.push(current);

    let mut pairs = Vec::new();
    let mut iter = statements.into_iter();
    while let (Some(input), Some(expected)) = (iter.next(), iter.next()) {
        let mut meta = BTreeMap::new();
        let mut body = input.as_slice();
        // sqlglot strips the statement, then `_extract_meta` reads options from its first
        // lines.
        while let Some(((_, first), rest)) = body.split_first() {
            let trimmed = first.trim_start();
            if trimmed.is_empty() {
                body = rest;
                continue;
            }
            if !trimmed.starts_with('#') {
                break;
            }
            if let Some((key, value)) = trimmed.trim_start_matches('#').split_once(':') {
                meta.insert(key.trim().to_lowercase(), value.trim().to_owned());
            }
            body = rest;
        }
        let line = body
            .iter()
            .find(|(_, text)| !text.trim().is_empty())
            .map_or(0, |(line, _)| *line);
        pairs.push(FixturePair {
            file,
            line,
            meta,
            input: join_lines(body),
            expected: join_lines(&expected),
        });
    }
    pairs
}

fn join_lines(lines: &[(usize, String)]) -> String {
    lines
        .iter()
        .map(|(_, text)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// The cases of `data/sqlglot/qualify_columns.sql`.
pub fn qualify_columns_pairs() -> Vec<FixturePair> {
    parse_fixture_pairs(
        "qualify_columns.sql",
        &read_data("sqlglot/qualify_columns.sql"),
    )
}

/// The 22 TPC-H cases of `data/sqlglot/tpc-h_tpc-h.sql` (query, qualified query).
pub fn tpch_pairs() -> Vec<FixturePair> {
    parse_fixture_pairs("tpc-h_tpc-h.sql", &read_data("sqlglot/tpc-h_tpc-h.sql"))
}

/// One query of `data/sqlglot/qualify_columns__invalid.sql`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidQuery {
    /// Line (1-based).
    pub line: usize,
    /// The query, without a final `;`.
    pub sql: String,
}

/// The 20 queries of `qualify_columns__invalid.sql` (one a line), whose columns sqlglot
/// cannot resolve: each must be refused.
pub fn qualify_columns_invalid() -> Vec<InvalidQuery> {
    read_data("sqlglot/qualify_columns__invalid.sql")
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with("--"))
        .map(|(i, line)| InvalidQuery {
            line: i + 1,
            sql: line.trim().trim_end_matches(';').trim_end().to_owned(),
        })
        .collect()
}

/// The schema of sqlglot's `test_optimizer.py` (tables `x`, `y`, `z`, `w`, `temporal`,
/// `structs`, `t_bool`, `unpivotable`, `pivotable`), from `data/sqlglot/schema.sql`.
///
/// The DDL is written for the generic dialect (it uses `STRUCT<…>` types) and loaded as
/// such, whatever dialect a case is checked in: every name in it is lower case, so the
/// contract is the same in every dialect.
pub fn sqlglot_contract() -> SchemaContract {
    contract_from_ddl(
        &read_data("sqlglot/schema.sql"),
        Dialect::Generic,
        "sqlglot",
        "schema.sql",
    )
}

/// The TPC-H schema of sqlglot's `tests/helpers.py` (`TPCH_SCHEMA`), from
/// `data/sqlglot/tpch_schema.sql`, loaded in `dialect`.
pub fn tpch_contract(dialect: Dialect) -> SchemaContract {
    contract_from_ddl(
        &read_data("sqlglot/tpch_schema.sql"),
        dialect,
        "tpch",
        "tpch_schema.sql",
    )
}

/// An access policy that allows every datasource and table and, unlike having no policy,
/// `WITH RECURSIVE` (rule G7): for the fixture cases that use recursive CTEs.
///
/// # Panics
/// When the policy file format rejects it (a test bug).
pub fn recursive_cte_policy() -> AccessPolicy {
    let json = r#"{"version": 1, "roles": {"tests": {
        "description": "fixture cases with recursive CTEs", "role": "tests",
        "allowed_datasources": ["*"], "allowed_tables": ["*"], "allow_recursive_cte": true}}}"#;
    PolicyFile::from_json_str(json)
        .unwrap_or_else(|e| panic!("test policy does not load: {e}"))
        .access_for(&["tests".to_owned()])
}

// ---------------------------------------------------------------------------------------
// Known failures
// ---------------------------------------------------------------------------------------

/// The checked-in list of cases known to fail, each with its reason.
///
/// Format of the file: one case a line, `<key> <reason>` (the key is a
/// [`FixturePair::key`], e.g. `qualify_columns.sql:57`; the reason is the rest of the
/// line and may not be empty); `#` starts a comment line; blank lines are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownFailures {
    /// Reason by case key.
    pub reasons: BTreeMap<String, String>,
}

/// A line of a known-failures file that does not follow the format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFailuresError {
    /// Line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for KnownFailuresError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl KnownFailures {
    /// Parses the text of a known-failures file.
    ///
    /// # Errors
    /// On a line without a reason, or a key listed twice.
    pub fn parse(text: &str) -> Result<Self, KnownFailuresError> {
        let mut reasons = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(KnownFailuresError {
                    line: i + 1,
                    message: format!("`{key}` has no reason (write `<key> <one-line reason>`)"),
                });
            }
            if reasons.insert(key.to_owned(), reason.to_owned()).is_some() {
                return Err(KnownFailuresError {
                    line: i + 1,
                    message: format!("`{key}` is listed twice"),
                });
            }
        }
        Ok(KnownFailures { reasons })
    }

    /// Loads `data/<relative>`.
    ///
    /// # Panics
    /// When the file is missing or malformed.
    pub fn load(relative: &str) -> Self {
        KnownFailures::parse(&read_data(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    /// True when `key` is listed.
    pub fn contains(&self, key: &str) -> bool {
        self.reasons.contains_key(key)
    }

    /// The reason given for `key`, if listed.
    pub fn reason(&self, key: &str) -> Option<&str> {
        self.reasons.get(key).map(String::as_str)
    }

    /// Compares a run with the list, for the keys starting with `prefix` (one fixture
    /// file): `evaluated` are the cases the run checked, `failing` those that failed.
    pub fn check(
        &self,
        prefix: &str,
        evaluated: &BTreeSet<String>,
        failing: &BTreeSet<String>,
    ) -> KnownFailuresCheck {
        let listed: BTreeSet<&String> = self
            .reasons
            .keys()
            .filter(|k| k.starts_with(prefix))
            .collect();
        let mut check = KnownFailuresCheck {
            new_failures: failing
                .iter()
                .filter(|k| !listed.contains(k))
                .cloned()
                .collect(),
            now_passing: listed
                .iter()
                .filter(|k| evaluated.contains(**k) && !failing.contains(**k))
                .map(|k| (*k).clone())
                .collect(),
            not_evaluated: listed
                .iter()
                .filter(|k| !evaluated.contains(**k))
                .map(|k| (*k).clone())
                .collect(),
        };
        for keys in [
            &mut check.new_failures,
            &mut check.now_passing,
            &mut check.not_evaluated,
        ] {
            keys.sort_by(|a, b| case_order(a).cmp(&case_order(b)));
        }
        check
    }
}

/// The sort key of a case key `<file>:<line>`: by file, then by line number (so that
/// `f.sql:9` comes before `f.sql:10`).
pub fn case_order(key: &str) -> (&str, usize) {
    match key.rsplit_once(':') {
        Some((file, line)) => (file, line.parse().unwrap_or(usize::MAX)),
        None => (key, 0),
    }
}

/// How a run differs from its list of known failures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownFailuresCheck {
    /// Cases that failed and are not listed: regressions (or new cases) to fix or list.
    pub new_failures: Vec<String>,
    /// Listed cases that passed: remove them from the list.
    pub now_passing: Vec<String>,
    /// Listed cases that the run did not check (skipped or gone): remove them.
    pub not_evaluated: Vec<String>,
}

impl KnownFailuresCheck {
    /// True when the run matches the list exactly.
    pub fn is_clean(&self) -> bool {
        self.new_failures.is_empty() && self.now_passing.is_empty() && self.not_evaluated.is_empty()
    }
}

impl fmt::Display for KnownFailuresCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.new_failures.is_empty() {
            writeln!(
                f,
                "{} new failure(s), not in the known-failures list:",
                self.new_failures.len()
            )?;
            for key in &self.new_failures {
                writeln!(f, "  {key}")?;
            }
        }
        if !self.now_passing.is_empty() {
            writeln!(
                f,
                "{} known failure(s) now pass: remove them from the list:",
                self.now_passing.len()
            )?;
            for key in &self.now_passing {
                writeln!(f, "  {key}")?;
            }
        }
        if !self.not_evaluated.is_empty() {
            writeln!(
                f,
                "{} listed case(s) were not checked (skipped or no such case): remove them:",
                self.not_evaluated.len()
            )?;
            for key in &self.not_evaluated {
                writeln!(f, "  {key}")?;
            }
        }
        Ok(())
    }
}
