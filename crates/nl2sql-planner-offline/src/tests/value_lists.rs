//! Values beyond the few sampled ones: the adapters list every value of a text column
//! with few enough of them (`ColumnStatistics::values`), and the planner links the
//! question's words to all of them. With more values linked, readings an equality or an
//! `IN` list would not say are refused or read right: "other than" negates its value, a
//! value after "after"/"before" is a bound, two names side by side are one person's (of
//! one table), and two values joined by "and" are asked for together (not either one).

use nl2sql_state::{ColumnMetadata, ColumnStatistics, SchemaSnapshot};
use serde_json::json;

use super::rules::{check_placed, describe, refused_saying, strict_over};
use super::{col, links, samples, snapshot_of, table};

/// Every value listed, the first five of them sampled (as the adapters fill them).
fn listed(values: &[&str]) -> ColumnMetadata {
    ColumnMetadata {
        statistics: Some(ColumnStatistics {
            distinct_count: values.len() as u64,
            sample_values: values.iter().take(5).map(|v| json!(v)).collect(),
            values: values.iter().map(|v| json!(v)).collect(),
            ..ColumnStatistics::default()
        }),
        ..ColumnMetadata::default()
    }
}

const CITIES: &[&str] = &["BAL", "HKG", "WAS", "PIT", "HOU", "CHI", "LON"];

/// Students with a city code; `all` lists every code, else only the five sampled.
fn students(all: bool) -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "campus",
        vec![table(
            "Student",
            vec![
                col("StuID", "INTEGER", true),
                col("LName", "TEXT", false),
                col("city_code", "TEXT", false),
                col("Age", "INTEGER", false),
            ],
            vec![],
        )],
    );
    let meta = if all {
        listed(CITIES)
    } else {
        let mut m = samples(&CITIES[..5]);
        if let Some(s) = m.statistics.as_mut() {
            s.distinct_count = CITIES.len() as u64;
        }
        m
    };
    describe(&mut snapshot, "Student", "city_code", meta);
    snapshot
}

#[test]
fn a_value_beyond_the_samples_is_linked_when_listed() {
    let q = "How many students live in CHI or LON?";
    check_placed(
        &students(true),
        q,
        "SELECT COUNT(*) AS student_count FROM Student AS s WHERE s.city_code IN ('CHI', 'LON') LIMIT 10000",
    );
    // Only sampled, 'CHI' is a word the plan cannot place.
    assert!(strict_over(&students(false), q).is_err());
}

#[test]
fn other_than_negates_its_value() {
    check_placed(
        &students(true),
        "How many students live in a city other than CHI?",
        "SELECT COUNT(*) AS student_count FROM Student AS s WHERE s.city_code <> 'CHI' LIMIT 10000",
    );
}

#[test]
fn values_of_related_rows_joined_by_and_are_not_either_one() {
    let mut snapshot = snapshot_of(
        "clubs",
        vec![
            table(
                "Student",
                vec![col("id", "INTEGER", true), col("LName", "TEXT", false)],
                vec![],
            ),
            table(
                "Activity",
                vec![
                    col("id", "INTEGER", true),
                    col("activity_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Participates_in",
                vec![
                    col("id", "INTEGER", true),
                    col("student_id", "INTEGER", false),
                    col("activity_id", "INTEGER", false),
                ],
                vec![("student_id", "Student"), ("activity_id", "Activity")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "Activity",
        "activity_name",
        listed(&["Canoeing", "Kayaking", "Chess"]),
    );
    // A student takes part in many activities: "in Canoeing and Kayaking" is no `IN` list.
    refused_saying(
        &snapshot,
        "Which students participate in Canoeing and Kayaking?",
        "could not place 'Kayaking'",
    );
    // Values of the rows asked about: either one.
    check_placed(
        &students(true),
        "How many students live in CHI and LON?",
        "SELECT COUNT(*) AS student_count FROM Student AS s WHERE s.city_code IN ('CHI', 'LON') LIMIT 10000",
    );
}

#[test]
fn a_value_after_a_word_of_order_is_a_bound_not_an_equality() {
    let mut snapshot = snapshot_of(
        "racing",
        vec![table(
            "races",
            vec![
                col("raceId", "INTEGER", true),
                col("name", "TEXT", false),
                col("time", "TEXT", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut snapshot,
        "races",
        "time",
        listed(&["12:00:00", "09:00:00", "14:00:00"]),
    );
    refused_saying(
        &snapshot,
        "What are the names of races held after 12:00:00?",
        "could not place",
    );
}

#[test]
fn two_names_side_by_side_are_one_persons() {
    let mut snapshot = snapshot_of(
        "store",
        vec![
            table(
                "reps",
                vec![
                    col("id", "INTEGER", true),
                    col("rep_first_name", "TEXT", false),
                    col("rep_last_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "customers",
                vec![
                    col("id", "INTEGER", true),
                    col("customer_first_name", "TEXT", false),
                    col("customer_last_name", "TEXT", false),
                    col("rep_id", "INTEGER", false),
                ],
                vec![("rep_id", "reps")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "reps",
        "rep_first_name",
        listed(&["Jane", "Steve"]),
    );
    describe(
        &mut snapshot,
        "reps",
        "rep_last_name",
        listed(&["Peacock", "Johnson"]),
    );
    describe(
        &mut snapshot,
        "customers",
        "customer_first_name",
        listed(&["Steve", "Ann"]),
    );
    describe(
        &mut snapshot,
        "customers",
        "customer_last_name",
        listed(&["Smith", "Wong"]),
    );
    // Steve is a customer's first name too; Johnson is only a rep's last name.
    assert_eq!(
        links("the customers of Steve Johnson", &snapshot),
        ["customers", "rep_first_name=Steve", "rep_last_name=Johnson"]
    );
}

#[test]
fn a_value_of_two_columns_is_of_the_one_named_beside_it() {
    let mut snapshot = snapshot_of(
        "colleges",
        vec![table(
            "Colleges",
            vec![
                col("Id", "INTEGER", true),
                col("College", "TEXT", false),
                col("Location", "TEXT", false),
                col("County", "TEXT", false),
            ],
            vec![],
        )],
    );
    let places = listed(&["Long Beach", "Fresno", "Los Angeles", "San Diego"]);
    describe(&mut snapshot, "Colleges", "Location", places.clone());
    describe(&mut snapshot, "Colleges", "County", places);
    check_placed(
        &snapshot,
        "How many colleges are there in Los Angeles county?",
        "SELECT COUNT(*) AS college_count FROM Colleges AS c WHERE c.County = 'Los Angeles' LIMIT 10000",
    );
}

#[test]
fn a_word_naming_the_schema_is_not_a_listed_value() {
    let mut snapshot = snapshot_of(
        "documents",
        vec![
            table(
                "Documents",
                vec![
                    col("document_id", "INTEGER", true),
                    col("document_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Images",
                vec![
                    col("image_id", "INTEGER", true),
                    col("image_alt_text", "TEXT", false),
                ],
                vec![],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "Documents",
        "document_name",
        listed(&["David CV", "Robin CV", "Marry CV"]),
    );
    // 'Name' is one of the alt texts, not among the five most frequent.
    describe(
        &mut snapshot,
        "Images",
        "image_alt_text",
        listed(&["Photo", "Logo", "Map", "Chart", "Figure", "Name"]),
    );
    check_placed(
        &snapshot,
        "List the name of all documents.",
        "SELECT d.document_name AS document_name FROM Documents AS d LIMIT 10000",
    );
}
