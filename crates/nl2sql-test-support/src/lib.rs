//! Test helpers shared by the accuracy corpora (the planner's, over the manufacturing
//! fixture, and the orchestrator's, over the demo): the comparison rule of
//! `nl2sql_adapter::compare` (re-exported here), literal expected cells of corpus files,
//! per-question expectations ([`check_expectations`]), and the files every integration
//! test needs: [`TempDir`] ([`temp_dir`]), [`manufacturing_db`], [`files_with_extension`]
//! and [`files_where`].

mod expect;
mod fs;

pub use expect::{Outcome, check_expectations, read_expectations};

pub use fs::{TempDir, files_where, files_with_extension, manufacturing_db, temp_dir};
pub use nl2sql_adapter::compare::{
    Table, Val, cell, compare, json_val, num, show_rows, sorted, table_of, text,
};

/// A literal expected cell from a corpus file, normalised.
pub fn toml_val(v: &toml::Value) -> Val {
    match v {
        toml::Value::Integer(i) => num(*i as f64),
        toml::Value::Float(f) => num(*f),
        toml::Value::String(s) => text(s),
        toml::Value::Boolean(b) => num(if *b { 1.0 } else { 0.0 }),
        other => Val::Text(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests;
