//! Years kept as numbers or text (`Year`, `Open_Year`, `season_year`), not dates: "in
//! 2004", "after the year 2004", "between 2000 and 2005", "in 2008 or 2010" compare the
//! year column with the years the question wrote; and aggregates listed together ("the
//! average and minimum capacity", "minimum, average, and maximum age") each aggregate
//! the column named after the last of them. Over small schemas named unlike every fixture.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::super::OfflinePlanner;
use super::rules::{check, request_over};
use super::{col, snapshot_of, table};

/// Concerts with a numeric year and no date; seasons with a year kept as text and part of
/// the key; venues with a real date beside a year column.
pub(super) fn shows() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("shows", "sqlite");
    contract.add_table(table(
        "venue",
        vec![
            col("id", "INTEGER", true),
            col("venue_name", "TEXT", false),
            col("capacity", "INTEGER", false),
            col("opened_on", "DATE", false),
            col("Renovation_Year", "INTEGER", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "concert",
        vec![
            col("concert_id", "INTEGER", true),
            col("title", "TEXT", false),
            col("Year", "INTEGER", false),
            col("attendance", "INTEGER", false),
            col("Years_Touring", "INTEGER", false),
            col("venue_id", "INTEGER", false),
        ],
        vec![("venue_id", "venue")],
    ));
    contract.add_table(table(
        "season",
        vec![
            col("team", "TEXT", true),
            col("season_year", "TEXT", true),
            col("wins", "INTEGER", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

/// The strict planner (every word placed) answers, whatever its confidence.
fn placed(s: &SchemaSnapshot, question: &str) {
    let plan = OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&request_over(s, question));
    assert!(
        plan.is_ok(),
        "{question}: {:?}",
        plan.err().map(|e| e.message)
    );
}

#[test]
fn a_year_without_a_date_column_compares_the_year_column() {
    let s = shows();
    for (question, sql) in [
        (
            "What is the total attendance of concerts in 2004?",
            "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c WHERE c.Year = 2004 LIMIT 10000",
        ),
        (
            "What is the total attendance of concerts held in the year of 2004?",
            "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c WHERE c.Year = 2004 LIMIT 10000",
        ),
        (
            "How many concerts were there after the year 2004?",
            "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year > 2004 LIMIT 10000",
        ),
        (
            "How many concerts were there later than 2004?",
            "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year > 2004 LIMIT 10000",
        ),
        (
            "How many concerts were there before 2010?",
            "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year < 2010 LIMIT 10000",
        ),
        (
            "How many concerts were there in 2004 or earlier?",
            "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year <= 2004 LIMIT 10000",
        ),
        (
            "How many concerts were there between 2000 and 2005?",
            "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year >= 2000 AND c.Year <= 2005 LIMIT 10000",
        ),
    ] {
        check(&s, question, sql);
        placed(&s, question);
    }
}

#[test]
fn years_joined_by_or_are_one_list() {
    let s = shows();
    let question = "What is the total attendance of concerts in 2008 or 2010?";
    check(
        &s,
        question,
        "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c WHERE c.Year IN (2008, 2010) LIMIT 10000",
    );
    placed(&s, question);
}

#[test]
fn a_year_kept_as_text_is_compared_as_text() {
    let s = shows();
    let question = "What is the total number of wins in season year 2018?";
    check(
        &s,
        question,
        "SELECT SUM(s.wins) AS total_wins FROM season AS s WHERE s.season_year = '2018' LIMIT 10000",
    );
    placed(&s, question);
}

#[test]
fn a_table_with_a_date_keeps_its_date_and_a_duration_is_no_year() {
    let s = shows();
    // The venue keeps a date: the year is a range of it.
    check(
        &s,
        "How many venues opened in 2004?",
        "SELECT COUNT(*) AS venue_count FROM venue AS v WHERE v.opened_on >= '2004-01-01' AND v.opened_on < '2005-01-01' LIMIT 10000",
    );
    // Unless the question names the year column.
    check(
        &s,
        "How many venues had a renovation year of 2004?",
        "SELECT COUNT(*) AS venue_count FROM venue AS v WHERE v.Renovation_Year = 2004 LIMIT 10000",
    );
}

#[test]
fn aggregates_listed_together_share_their_column() {
    let s = shows();
    for (question, sql) in [
        (
            "What are the average and minimum capacity of venues?",
            "SELECT AVG(v.capacity) AS avg_capacity, MIN(v.capacity) AS min_capacity FROM venue AS v LIMIT 10000",
        ),
        (
            "Show the minimum, average, and maximum attendance of all concerts.",
            "SELECT MIN(c.attendance) AS min_attendance, AVG(c.attendance) AS avg_attendance, MAX(c.attendance) AS max_attendance FROM concert AS c LIMIT 10000",
        ),
    ] {
        check(&s, question, sql);
        placed(&s, question);
    }
    // One aggregate is still one.
    check(
        &s,
        "What is the average capacity of venues?",
        "SELECT AVG(v.capacity) AS avg_capacity FROM venue AS v LIMIT 10000",
    );
}

#[test]
fn a_verb_between_two_joined_tables_is_their_join() {
    let s = shows();
    let question =
        "What is the total attendance of concerts hosted at venues with capacity above 5000?";
    check(
        &s,
        question,
        "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c INNER JOIN venue AS v ON c.venue_id = v.id WHERE v.capacity > 5000 LIMIT 10000",
    );
    placed(&s, question);
    let unplaced = |question: &str| {
        let e = OfflinePlanner::new()
            .with_min_confidence(0.0)
            .plan_sync(&request_over(&s, question))
            .unwrap_err();
        e.details.unwrap()["unplaced"].clone()
    };
    // Over one table, and dated by nothing, the verb relates nothing the plan has:
    // refused by name.
    assert_eq!(
        unplaced("What is the total attendance of concerts hosted?"),
        serde_json::json!(["hosted"])
    );
    // "hosted by venues": with no grouping in the plan, "by" and the table after it
    // relate the concerts to the venues the plan joins (`coverage/verbs.rs::used_by`).
    check(
        &s,
        "What is the total attendance of concerts hosted by venues with capacity above 5000?",
        "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c INNER JOIN venue AS v ON c.venue_id = v.id WHERE v.capacity > 5000 LIMIT 10000",
    );
}

/// "concerts hosted in 2004", "films made before 2000": a verb dated by a year the plan
/// compares says when the rows came to be, and is placed by that condition; a year no
/// condition reads leaves it unplaced.
#[test]
fn a_verb_dated_by_a_compared_year_is_that_condition() {
    let s = shows();
    for (question, sql) in [
        (
            "What is the total attendance of concerts hosted in 2004?",
            "SELECT SUM(c.attendance) AS total_attendance FROM concert AS c WHERE c.Year = 2004 LIMIT 10000",
        ),
        (
            "List the titles of concerts held before the year of 2010.",
            "SELECT c.title AS concert FROM concert AS c WHERE c.Year < 2010 LIMIT 10000",
        ),
    ] {
        check(&s, question, sql);
        placed(&s, question);
    }
}

#[test]
fn either_before_alternatives_adds_nothing() {
    let s = shows();
    let question = "How many concerts were there in either 2004 or 2006?";
    check(
        &s,
        question,
        "SELECT COUNT(*) AS concert_count FROM concert AS c WHERE c.Year IN (2004, 2006) LIMIT 10000",
    );
    placed(&s, question);
}

#[test]
fn a_number_after_a_comparison_is_compared_not_a_year() {
    // Venues have a date column: read as a year, 2000 would also have become a date range.
    let s = shows();
    for (question, sql) in [
        (
            "Show the names of venues with more than 2000 capacity.",
            "SELECT v.venue_name AS venue_name FROM venue AS v WHERE v.capacity > 2000 LIMIT 10000",
        ),
        (
            "Show the names of venues with a capacity of at least 1990.",
            "SELECT v.venue_name AS venue_name FROM venue AS v WHERE v.capacity >= 1990 LIMIT 10000",
        ),
    ] {
        check(&s, question, sql);
    }
    // A year after a date word is still a year.
    check(
        &s,
        "Show the names of venues opened in 2000.",
        "SELECT v.venue_name AS venue_name, v.opened_on AS opened_on FROM venue AS v WHERE v.opened_on >= '2000-01-01' AND v.opened_on < '2001-01-01' LIMIT 10000",
    );
}

#[test]
fn a_date_phrase_the_plan_does_not_bound_is_refused() {
    // Trips keep their start as text in another format than ISO ("8/21/2015 17:03"): no
    // date range can be read on it, and "in August" must not silently drop out.
    let mut s = snapshot_of(
        "rides",
        vec![table(
            "trip",
            vec![
                col("id", "INTEGER", true),
                col("start_station_name", "TEXT", false),
                col("start_date", "TEXT", false),
                col("duration", "INTEGER", false),
            ],
            vec![],
        )],
    );
    super::rules::describe(
        &mut s,
        "trip",
        "start_date",
        super::samples(&["8/21/2015 17:03", "8/22/2015 9:10"]),
    );
    super::rules::refused_placing(
        &s,
        "What is the total duration of trips in August?",
        "in August",
    );
}

/// A year column named for another event than the verb's does not date it: "opened
/// after 2015" is `Open_year > 2015`, "registered after 2015" is not, grouped and
/// counted or not.
#[test]
fn a_verb_is_not_dated_by_a_column_of_another_event() {
    let s = snapshot_of(
        "branches",
        vec![table(
            "branch",
            vec![
                col("id", "INTEGER", true),
                col("name", "TEXT", false),
                col("Open_year", "INTEGER", false),
                col("city", "TEXT", false),
            ],
            vec![],
        )],
    );
    let question = "Which branches were opened after 2015?";
    check(
        &s,
        question,
        "SELECT b.name AS branch, b.Open_year AS open_year FROM branch AS b WHERE b.Open_year > 2015 LIMIT 10000",
    );
    placed(&s, question);
    for question in [
        "Which branches were registered after 2015?",
        // A date after the verb is no count of the grouping's rows either.
        "Show the number of branches registered after 2015 in each city.",
    ] {
        super::rules::refused_placing(&s, question, "registered");
    }
}
