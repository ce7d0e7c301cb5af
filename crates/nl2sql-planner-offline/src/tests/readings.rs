//! More reading rules, over a synthetic bakery (ovens, crews, batches, breads, refunds,
//! shops), named unlike every fixture: sums written as "add up", conditions on a group's
//! total (HAVING), bounds written after their number ("500 units or fewer"), open date
//! ranges ("2015 or later"), agent nouns that meet their verbs ("inspected" is
//! `inspector`), phrasal verbs ("turned out"), "at least some", values listed in a
//! description with lower-case words, and place names missing from the samples.

use nl2sql_state::{ErrorCode, SchemaContract, SchemaSnapshot};

use super::rules::{check, check_placed, describe, described, refused_saying, strict_over};
use super::{col, samples, table};

/// A bakery: ovens in shops, crews at ovens, batches baked by crews, breads, refunds.
fn bakery() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("bakery", "sqlite");
    contract.add_table(table(
        "shops",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("city", "TEXT", false),
            col("country", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "ovens",
        vec![
            col("id", "INTEGER", true),
            col("shop_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("installed_on", "DATE", false),
        ],
        vec![("shop_id", "shops")],
    ));
    contract.add_table(table(
        "crews",
        vec![
            col("id", "INTEGER", true),
            col("oven_id", "INTEGER", false),
            col("crew_label", "TEXT", false),
            col("crew_size", "INTEGER", false),
        ],
        vec![("oven_id", "ovens")],
    ));
    contract.add_table(table(
        "breads",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("plu", "TEXT", false),
            col("is_active", "BOOLEAN", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "batches",
        vec![
            col("id", "INTEGER", true),
            col("crew_id", "INTEGER", false),
            col("bread_id", "INTEGER", false),
            col("baked_on", "DATE", false),
            col("baker", "TEXT", false),
            col("inspector", "TEXT", false),
            col("units_planned", "INTEGER", false),
            col("units_produced", "INTEGER", false),
            col("quantity_burnt", "INTEGER", false),
        ],
        vec![("crew_id", "crews"), ("bread_id", "breads")],
    ));
    contract.add_table(table(
        "refunds",
        vec![
            col("id", "INTEGER", true),
            col("batch_id", "INTEGER", false),
            col("quantity", "INTEGER", false),
            col("reason", "TEXT", false),
        ],
        vec![("batch_id", "batches")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "crews",
        "crew_label",
        described("Early, Late or Night"),
    );
    describe(
        &mut snapshot,
        "crews",
        "crew_size",
        described("Cooks on the crew"),
    );
    describe(
        &mut snapshot,
        "refunds",
        "reason",
        described("Arrived stale, Mouldy, Wrong order or No longer wanted"),
    );
    describe(&mut snapshot, "batches", "baker", samples(&["Ann", "Bo"]));
    describe(
        &mut snapshot,
        "batches",
        "inspector",
        samples(&["Cy", "Di"]),
    );
    let mut countries = samples(&["France", "Italy"]);
    if let Some(stats) = countries.statistics.as_mut() {
        stats.distinct_count = 12;
    }
    describe(&mut snapshot, "shops", "country", countries);
    let mut cities = samples(&["Lyon", "Turin"]);
    if let Some(stats) = cities.statistics.as_mut() {
        stats.distinct_count = 30;
    }
    describe(&mut snapshot, "shops", "city", cities);
    snapshot
}

#[test]
fn add_up_is_a_sum() {
    check(
        &bakery(),
        "Add up the quantity burnt of all batches.",
        "SELECT SUM(b.quantity_burnt) AS total_quantity_burnt FROM batches AS b LIMIT 10000",
    );
}

#[test]
fn a_comparison_on_a_groups_total_is_a_having() {
    check(
        &bakery(),
        "Which bakers produced more than 1000 units in total?",
        "SELECT b.baker AS baker, SUM(b.units_produced) AS total_units_produced FROM batches AS b GROUP BY b.baker HAVING SUM(b.units_produced) > 1000 ORDER BY b.baker LIMIT 10000",
    );
}

#[test]
fn a_bound_written_before_its_operator_and_a_phrasal_verb() {
    let b = bakery();
    check(
        &b,
        "Which batches produced 500 units or fewer?",
        "SELECT b.id AS id FROM batches AS b WHERE b.units_produced <= 500 LIMIT 10000",
    );
    check(
        &b,
        "How many batches turned out more than 580 units?",
        "SELECT COUNT(*) AS batch_count FROM batches AS b WHERE b.units_produced > 580 LIMIT 10000",
    );
}

#[test]
fn open_date_ranges() {
    let b = bakery();
    let since = "SELECT o.name AS oven, o.installed_on AS installed_on FROM ovens AS o WHERE o.installed_on >= '2015-01-01' LIMIT 10000";
    check(&b, "List the ovens installed in 2015 or later.", since);
    check(&b, "List the ovens installed from 2015 onwards.", since);
    check(
        &b,
        "List the ovens installed in 2015 or earlier.",
        "SELECT o.name AS oven, o.installed_on AS installed_on FROM ovens AS o WHERE o.installed_on < '2016-01-01' LIMIT 10000",
    );
}

#[test]
fn an_agent_noun_meets_its_verb() {
    check(
        &bakery(),
        "Who inspected batch 3?",
        "SELECT b.inspector AS inspector FROM batches AS b WHERE b.id = 3 LIMIT 10000",
    );
}

#[test]
fn at_least_some_is_above_zero() {
    check(
        &bakery(),
        "How many batches had at least some quantity burnt?",
        "SELECT COUNT(*) AS batch_count FROM batches AS b WHERE b.quantity_burnt > 0 LIMIT 10000",
    );
}

#[test]
fn a_described_list_with_lower_case_words_lists_values() {
    check(
        &bakery(),
        "How many units in total were refunded as Mouldy?",
        "SELECT SUM(r.quantity) AS total_quantity FROM refunds AS r WHERE r.reason = 'Mouldy' LIMIT 10000",
    );
}

#[test]
fn a_place_name_missing_from_the_samples_is_a_place_value() {
    check(
        &bakery(),
        "How many of our shops are based in Japan?",
        "SELECT COUNT(*) AS shop_count FROM shops AS s WHERE s.country = 'Japan' LIMIT 10000",
    );
}

#[test]
fn a_number_column_described_by_the_counted_noun_is_that_amount() {
    let b = bakery();
    check(
        &b,
        "On average, how many cooks staff a Night crew?",
        "SELECT AVG(c.crew_size) AS avg_crew_size FROM crews AS c WHERE c.crew_label = 'Night' LIMIT 10000",
    );
}

#[test]
fn a_negated_boolean_lists_the_asked_column() {
    let b = bakery();
    check(
        &b,
        "Which breads are no longer active? Give me their PLUs.",
        "SELECT b.name AS bread, b.plu AS plu FROM breads AS b WHERE b.is_active = false LIMIT 10000",
    );
}

#[test]
fn a_name_completed_by_a_later_word_is_the_longer_name() {
    // `refunds.quantity` is a whole name, but "burnt" a few words on completes
    // `batches.quantity_burnt`.
    check(
        &bakery(),
        "What is the total quantity of dough burnt?",
        "SELECT SUM(b.quantity_burnt) AS total_quantity_burnt FROM batches AS b LIMIT 10000",
    );
}

/// A licensing board: offices (each with a count of its clerks), the clerks, and per
/// office and year a row with the number of licences issued.
fn board() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("board", "sqlite");
    contract.add_table(table(
        "offices",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("no_of_clerks", "INTEGER", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "clerks",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("office_id", "INTEGER", false),
        ],
        vec![("office_id", "offices")],
    ));
    contract.add_table(table(
        "licences",
        vec![
            col("id", "INTEGER", true),
            col("office_id", "INTEGER", false),
            col("year", "INTEGER", false),
            col("licences", "INTEGER", false),
        ],
        vec![("office_id", "offices")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn a_counted_noun_that_also_names_a_count_column_is_refused_naming_both() {
    let b = board();
    for (question, word, sum) in [
        (
            "How many licences were there in 2010?",
            "licences",
            "licences.licences",
        ),
        (
            "What is the number of clerks in the office named 'Leeds'?",
            "clerks",
            "offices.no_of_clerks",
        ),
    ] {
        let e = strict_over(&b, question).expect_err(question);
        assert_eq!(e.code, ErrorCode::AmbiguousQuestion, "{question}");
        assert!(
            e.message.contains(&format!(
                "'{word}' reads as a count of the rows of table {word} or as the total of {sum}"
            )),
            "{question}: {}",
            e.message
        );
    }
    // Where the plan reads no table with such a column, the rows are counted.
    check_placed(
        &b,
        "How many clerks are there?",
        "SELECT COUNT(*) AS clerk_count FROM clerks AS c LIMIT 10000",
    );
}

/// Games in stadiums, and matches won by aircraft.
fn fixtures() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("fixtures", "sqlite");
    contract.add_table(table(
        "stadium",
        vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "game",
        vec![
            col("id", "INTEGER", true),
            col("stadium_id", "INTEGER", false),
            col("Date", "TEXT", false),
            col("Home_team", "TEXT", false),
        ],
        vec![("stadium_id", "stadium")],
    ));
    contract.add_table(table(
        "aircraft",
        vec![col("id", "INTEGER", true), col("Aircraft", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "contest",
        vec![
            col("id", "INTEGER", true),
            col("Location", "TEXT", false),
            col("Winning_Aircraft", "INTEGER", false),
        ],
        vec![("Winning_Aircraft", "aircraft")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn a_compound_noun_is_one_thing_not_two_tables_columns() {
    let f = fixtures();
    // "the home team name" is the home team (one thing, sorted by); "name" read as the
    // stadium's name would join stadiums for a word.
    check_placed(
        &f,
        "List the dates of games by the home team name in descending order.",
        "SELECT g.Date AS date, g.Home_team AS home_team FROM game AS g ORDER BY g.Home_team DESC LIMIT 10000",
    );
    // The first word names the second's table ("aircraft"): that row's name.
    check_placed(
        &f,
        "Please list the location and the winning aircraft name.",
        "SELECT c.Location AS location, c.Winning_Aircraft AS winning_aircraft, a.Aircraft AS aircraft FROM contest AS c INNER JOIN aircraft AS a ON c.Winning_Aircraft = a.id LIMIT 10000",
    );
}

/// Reviewers rate movies.
fn ratings() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("ratings", "sqlite");
    contract.add_table(table(
        "Reviewer",
        vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "Movie",
        vec![
            col("id", "INTEGER", true),
            col("title", "TEXT", false),
            col("director", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "Rating",
        vec![
            col("id", "INTEGER", true),
            col("reviewer_id", "INTEGER", false),
            col("movie_id", "INTEGER", false),
            col("stars", "INTEGER", false),
        ],
        vec![("reviewer_id", "Reviewer"), ("movie_id", "Movie")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn acts_are_not_the_agents_who_do_them() {
    let r = ratings();
    // "reviews" meets `Reviewer` only through the stemmer: counting reviewers would
    // answer another question.
    refused_saying(
        &r,
        "For each director, how many reviews have they received?",
        "could not place 'reviews'",
    );
    refused_saying(
        &r,
        "For each director, how many reviews have they received?",
        "'reviews' reads as table Reviewer (reviewers",
    );
    // The agents named as such are counted.
    check_placed(
        &r,
        "How many reviewers are there?",
        "SELECT COUNT(*) AS reviewer_count FROM Reviewer AS r LIMIT 10000",
    );
}

#[test]
fn two_lists_paired_through_a_table_no_word_names_are_refused() {
    let r = ratings();
    // Nothing says which reviewer goes with which movie: pairing them through ratings is
    // a guess (the question wants one list of both).
    refused_saying(
        &r,
        "Return all reviewer names and movie titles together in a single list.",
        "nothing in the question pairs Reviewer with Movie: the plan pairs them through Rating",
    );
    // A word that refers back pairs them: each reviewer with the movies they rated.
    check_placed(
        &r,
        "Show the names of reviewers and the titles of the movies they rated.",
        "SELECT DISTINCT r.name AS reviewer, m.title AS movie FROM Reviewer AS r INNER JOIN Rating AS r2 ON r.id = r2.reviewer_id INNER JOIN Movie AS m ON r2.movie_id = m.id ORDER BY r.name LIMIT 10000",
    );
}

#[test]
fn a_relation_taken_twice_is_refused() {
    let mut contract = SchemaContract::new("social", "sqlite");
    contract.add_table(table(
        "PersonFriend",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("friend", "TEXT", false),
            col("year", "INTEGER", false),
        ],
        vec![],
    ));
    let mut s = SchemaSnapshot {
        contract,
        metadata: None,
    };
    for column in ["name", "friend"] {
        describe(
            &mut s,
            "PersonFriend",
            column,
            samples(&["Alice", "Bob", "Zach"]),
        );
    }
    // Friends of friends are a chain of two rows; one row's friend is not the answer.
    refused_saying(
        &s,
        "Find Bob's friends of friends.",
        "'friends of friends' takes one relation twice",
    );
    // One step is one row.
    check_placed(
        &s,
        "Find the friends of Bob.",
        "SELECT pf.friend AS friend FROM PersonFriend AS pf WHERE pf.name = 'Bob' LIMIT 10000",
    );
}

#[test]
fn two_counts_asked_for_need_two_counts_or_a_grouping() {
    let mut contract = SchemaContract::new("music", "sqlite");
    contract.add_table(table(
        "artist",
        vec![
            col("id", "INTEGER", true),
            col("artist_name", "TEXT", false),
            col("gender", "TEXT", false),
        ],
        vec![],
    ));
    let mut s = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(&mut s, "artist", "gender", samples(&["Male", "Female"]));
    // One count of both genders is not two counts.
    refused_saying(
        &s,
        "How many artists are male and how many are female?",
        "'how many' asks for a second count, which the plan does not have",
    );
    check_placed(
        &s,
        "How many artists are male?",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.gender = 'Male' LIMIT 10000",
    );
}
