//! `cargo xtask learn-fillers --from RESULTS.json`: learns the offline planner's filler
//! words from a lenient benchmark run over the Spider train split.
//!
//! A filler is a word that links to nothing in a schema and whose absence from a plan
//! costs nothing: "located", "listed", "registered". The strict planner refuses a
//! question with an unplaced word unless the word is a filler, so the list decides how
//! often it answers. It is learned, never written by hand, and never from the dev set:
//!
//! 1. run `nl2sql benchmark --spider train_spider.json --db-dir DB --lenient --format
//!    json > RESULTS.json` (the lenient planner answers anyway and lists the words it
//!    left unplaced);
//! 2. for each word, look at the answered questions where it was the only unplaced word
//!    (counting the words the current list let through, reported as `fillers`, as
//!    unplaced: each run relearns the list from scratch);
//! 3. keep the words seen that way at least [`MIN_SUPPORT`] times, over at least
//!    [`MIN_DATABASES`] databases, whose answers were right at least [`MIN_PRECISION`] of
//!    the time (the words whose absence did not make answers wrong).
//!
//! It writes `crates/nl2sql-planner-offline/src/data/fillers.txt`, one word a line, with a
//! header saying how it was made.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

/// A word must be the only unplaced word of at least this many answered questions.
pub(crate) const MIN_SUPPORT: usize = 5;
/// … over at least this many databases (so that no one schema's habit decides).
pub(crate) const MIN_DATABASES: usize = 3;
/// … and those answers must be right at least this often.
pub(crate) const MIN_PRECISION: f64 = 0.75;

/// Where the list lives.
const OUT: &str = "crates/nl2sql-planner-offline/src/data/fillers.txt";

/// Per word: answered questions where it was the only unplaced word, how many were
/// right, and their databases.
#[derive(Default)]
struct Seen {
    answered: usize,
    correct: usize,
    databases: BTreeSet<String>,
}

pub(crate) fn run(root: &Path, from: &Path) -> anyhow::Result<()> {
    let results = spider_results(from)?;
    let results = results.as_slice();
    let mut words: BTreeMap<String, Seen> = BTreeMap::new();
    let mut questions = 0;
    for r in results {
        let outcome = r.get("outcome").and_then(serde_json::Value::as_str);
        let answered = matches!(outcome, Some("correct" | "wrong"));
        // The words a plan left out, and those it placed only because the current list
        // calls them fillers: the list is relearned from scratch on every run.
        let unplaced: BTreeSet<String> = ["unplaced", "fillers"]
            .iter()
            .filter_map(|k| r.get(*k).and_then(serde_json::Value::as_array))
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_lowercase)
            .collect();
        questions += 1;
        if !answered || unplaced.len() != 1 {
            continue;
        }
        let Some(word) = unplaced.into_iter().next() else {
            continue;
        };
        // Only single words made of letters: numbers, dates and multi-word spans are
        // never fillers.
        if word.contains(' ') || !word.chars().all(char::is_alphabetic) {
            continue;
        }
        let seen = words.entry(word).or_default();
        seen.answered += 1;
        seen.correct += usize::from(outcome == Some("correct"));
        if let Some(db) = r.get("db_id").and_then(serde_json::Value::as_str) {
            seen.databases.insert(db.to_owned());
        }
    }
    let fillers: Vec<(&String, &Seen)> = words
        .iter()
        .filter(|(_, s)| {
            s.answered >= MIN_SUPPORT
                && s.databases.len() >= MIN_DATABASES
                && s.correct as f64 >= MIN_PRECISION * s.answered as f64
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Filler words of the offline planner: learned by `cargo xtask learn-fillers` from a\n\
         # lenient benchmark run over the Spider train split ({questions} questions). A word is\n\
         # here when it was the only unplaced word of >= {MIN_SUPPORT} answered questions over\n\
         # >= {MIN_DATABASES} databases, right >= {:.0} % of the time. Regenerate, do not edit.\n\
         # word answered correct databases",
        MIN_PRECISION * 100.0
    );
    for (word, s) in &fillers {
        let _ = writeln!(
            out,
            "{word} {} {} {}",
            s.answered,
            s.correct,
            s.databases.len()
        );
    }
    let path = root.join(OUT);
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "learn-fillers: {} of {} candidate words kept, written to {OUT}",
        fillers.len(),
        words.len()
    );
    Ok(())
}

/// The `results` of a `nl2sql benchmark --spider … --format json` report (what the
/// offline planner's learners read).
pub(crate) fn spider_results(from: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    let text =
        std::fs::read_to_string(from).with_context(|| format!("reading {}", from.display()))?;
    let mut report: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", from.display()))?;
    match report.get_mut("results").map(serde_json::Value::take) {
        Some(serde_json::Value::Array(results)) => Ok(results),
        _ => bail!(
            "{} has no `results` array: is it `nl2sql benchmark --spider … --format json`?",
            from.display()
        ),
    }
}
