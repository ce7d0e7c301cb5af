//! Listings of distinct values that list nothing beside them: "the distinct wards for
//! councils" lists ward numbers (a number column right after "distinct" is what is
//! listed, not the councils' label beside it), and "the distinct names of peaks climbed
//! by hikers from Norway" lists peak names ("by" after a past participle names who
//! acted, not a grouping that would list the hikers too). Each extra column would make
//! rows distinct that the question asks to list once; a column of another table named
//! as a condition ("the hikers who are leading") is not listed either, and with no rule
//! to read it the question is refused. Learned on Spider train
//! (`election`, `hospital_1`, `climbing`), over a schema named like none of them.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, describe, refused_placing};
use super::{col, samples, snapshot_of, table};

fn outdoors() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "outdoors",
        vec![
            table(
                "council",
                vec![
                    col("Council_ID", "INTEGER", true),
                    col("Ward", "INTEGER", false),
                    col("Mayor", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "peak",
                vec![col("id", "INTEGER", true), col("Title", "TEXT", false)],
                vec![],
            ),
            table(
                "hiker",
                vec![
                    col("id", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("Country", "TEXT", false),
                    col("Peak_ID", "INTEGER", false),
                ],
                vec![("Peak_ID", "peak")],
            ),
            table(
                "rope_team",
                vec![
                    col("id", "INTEGER", true),
                    col("Hiker_ID", "INTEGER", false),
                    col("Temporary_Leading", "TEXT", false),
                ],
                vec![("Hiker_ID", "hiker")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "hiker",
        "Country",
        samples(&["Norway", "Chile", "Nepal"]),
    );
    snapshot
}

#[test]
fn a_number_column_after_distinct_is_what_is_listed() {
    check(
        &outdoors(),
        "Show all the distinct wards for councils.",
        "SELECT DISTINCT c.Ward AS ward FROM council AS c ORDER BY c.Ward LIMIT 10000",
    );
}

#[test]
fn by_after_a_past_participle_names_who_acted() {
    check(
        &outdoors(),
        "Show the distinct titles of peaks climbed by hikers from country \"Norway\".",
        "SELECT DISTINCT p.Title AS peak FROM peak AS p INNER JOIN hiker AS h ON p.id = h.Peak_ID WHERE h.Country = 'Norway' ORDER BY p.Title LIMIT 10000",
    );
}

#[test]
fn a_condition_named_by_a_column_is_not_listed_beside_distinct_values() {
    refused_placing(
        &outdoors(),
        "What are the distinct countries of the hikers who are leading?",
        "leading",
    );
}
