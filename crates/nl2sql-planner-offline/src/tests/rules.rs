//! The reading rules, each over small synthetic schemas whose tables and columns are
//! named unlike the manufacturing fixture (a bus fleet, an invoicing shop, a buying desk),
//! so that each rule is shown to be about English and schema structure, not about one
//! dataset. Plans are validated with the logical validator and rendered for SQLite.

use nl2sql_plan::{SubQuery, SubQueryKind};
use nl2sql_sqlgen::SqlGenerator;
use nl2sql_state::{
    ColumnMetadata, Dialect, SchemaContract, SchemaMetadata, SchemaSnapshot, TableMetadata,
    TableRef,
};
use nl2sql_validate::{LogicalContext, validate_plan};

use super::{col, datasource, decompose, links, samples, table};
use crate::OfflinePlanner;
use nl2sql_planner::PlanRequest;

/// Adds column metadata (samples, a description) to a snapshot.
pub(super) fn describe(
    snapshot: &mut SchemaSnapshot,
    table: &str,
    column: &str,
    meta: ColumnMetadata,
) {
    let id = snapshot.contract.datasource_id.clone();
    let metadata = snapshot.metadata.get_or_insert_with(|| SchemaMetadata {
        datasource_id: id,
        ..SchemaMetadata::default()
    });
    metadata
        .tables
        .entry(format!("main.{table}"))
        .or_insert_with(|| TableMetadata {
            table: TableRef {
                schema_name: "main".into(),
                table_name: table.into(),
            },
            ..TableMetadata::default()
        })
        .columns
        .insert(column.into(), meta);
}

pub(super) fn described(text: &str) -> ColumnMetadata {
    ColumnMetadata {
        description: Some(text.into()),
        ..ColumnMetadata::default()
    }
}

/// A bus fleet: depots, their vehicles, drivers, trips, faults, spare parts and fuel.
fn fleet() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("fleet", "sqlite");
    contract.add_table(table(
        "depots",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("city", "TEXT", false),
            col("depot_code", "TEXT", false),
            col("founded_on", "DATE", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "vehicles",
        vec![
            col("id", "INTEGER", true),
            col("depot_id", "INTEGER", false),
            col("plate", "TEXT", false),
            col("model", "TEXT", false),
            col("is_electric", "BOOLEAN", false),
            col("bought_on", "DATE", false),
        ],
        vec![("depot_id", "depots")],
    ));
    contract.add_table(table(
        "drivers",
        vec![
            col("id", "INTEGER", true),
            col("depot_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("is_active", "BOOLEAN", false),
        ],
        vec![("depot_id", "depots")],
    ));
    contract.add_table(table(
        "trips",
        vec![
            col("id", "INTEGER", true),
            col("vehicle_id", "INTEGER", false),
            col("driver_id", "INTEGER", false),
            col("started_at", "DATETIME", false),
            col("distance_km", "REAL", false),
            col("passenger_count", "INTEGER", false),
            col("on_time", "BOOLEAN", false),
            col("status", "TEXT", false),
        ],
        vec![("vehicle_id", "vehicles"), ("driver_id", "drivers")],
    ));
    contract.add_table(table(
        "faults",
        vec![
            col("id", "INTEGER", true),
            col("vehicle_id", "INTEGER", false),
            col("kind", "TEXT", false),
            col("fault_count", "INTEGER", false),
        ],
        vec![("vehicle_id", "vehicles")],
    ));
    contract.add_table(table(
        "spare_parts",
        vec![
            col("id", "INTEGER", true),
            col("depot_id", "INTEGER", false),
            col("part_name", "TEXT", false),
            col("in_stock", "INTEGER", false),
            col("reorder_qty", "INTEGER", false),
            col("units_received", "INTEGER", false),
            col("status", "TEXT", false),
        ],
        vec![("depot_id", "depots")],
    ));
    contract.add_table(table(
        "fuel",
        vec![
            col("id", "INTEGER", true),
            col("depot_id", "INTEGER", false),
            col("litres", "REAL", false),
        ],
        vec![("depot_id", "depots")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "trips",
        "status",
        samples(&["Finished", "Cancelled", "Planned"]),
    );
    describe(
        &mut snapshot,
        "spare_parts",
        "status",
        samples(&["Received", "Ordered"]),
    );
    describe(
        &mut snapshot,
        "vehicles",
        "model",
        described("Bus model: Citaro, Urbino or Solaris Trollino"),
    );
    describe(
        &mut snapshot,
        "faults",
        "kind",
        described("Kind of fault (Brake Wear, Door Jam, ...)"),
    );
    describe(
        &mut snapshot,
        "depots",
        "city",
        described("City the depot is in"),
    );
    snapshot
}

/// An invoicing shop: clients, invoices, invoice lines and articles; money in amounts,
/// list prices and unit costs.
fn shop() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("shop", "sqlite");
    contract.add_table(table(
        "clients",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("segment", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "invoices",
        vec![
            col("id", "INTEGER", true),
            col("client_id", "INTEGER", false),
            col("issued_on", "DATE", false),
            col("status", "TEXT", false),
            col("sent_from", "TEXT", false),
            col("item_quantity", "INTEGER", false),
            col("total_amount", "REAL", false),
        ],
        vec![("client_id", "clients")],
    ));
    contract.add_table(table(
        "articles",
        vec![
            col("id", "INTEGER", true),
            col("title", "TEXT", false),
            col("list_price", "REAL", false),
            col("unit_cost", "REAL", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "invoice_lines",
        vec![
            col("id", "INTEGER", true),
            col("invoice_id", "INTEGER", false),
            col("article_id", "INTEGER", false),
            col("quantity", "INTEGER", false),
            col("line_amount", "REAL", false),
        ],
        vec![("invoice_id", "invoices"), ("article_id", "articles")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "invoices",
        "status",
        samples(&["Sent", "Paid", "Draft"]),
    );
    describe(
        &mut snapshot,
        "invoices",
        "sent_from",
        samples(&["Leeds", "York"]),
    );
    let mut names = samples(&["Acme Corp.", "Globex Corp."]);
    if let Some(stats) = names.statistics.as_mut() {
        stats.distinct_count = 40;
    }
    describe(&mut snapshot, "clients", "name", names);
    describe(
        &mut snapshot,
        "clients",
        "segment",
        described("Market segment of the company"),
    );
    snapshot
}

/// A buying desk: purchases priced per unit, with no amount column.
fn buying() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("buying", "sqlite");
    contract.add_table(table(
        "vendors",
        vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "purchases",
        vec![
            col("id", "INTEGER", true),
            col("vendor_id", "INTEGER", false),
            col("quantity", "INTEGER", false),
            col("unit_price", "REAL", false),
            col("bought_on", "DATE", false),
        ],
        vec![("vendor_id", "vendors")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

/// The plan request of `question` over `snapshot` (today is 2024-05-15).
pub(super) fn request_over(snapshot: &SchemaSnapshot, question: &str) -> PlanRequest {
    PlanRequest {
        question: question.to_owned(),
        sub_query: SubQuery {
            id: "sq1".into(),
            datasource_id: snapshot.contract.datasource_id.clone(),
            intent: question.to_owned(),
            kind: SubQueryKind::Scan,
            metrics: Vec::new(),
            filters: Vec::new(),
            group_by: Vec::new(),
            expected_schema: Vec::new(),
            schema_version: None,
        },
        dialect: Dialect::Sqlite,
        schema: snapshot.clone(),
        feedback: None,
        today: Some("2024-05-15".into()),
    }
}

/// The strict planner's plan of `question` over `snapshot`, whatever its confidence.
pub(super) fn strict_over(
    snapshot: &SchemaSnapshot,
    question: &str,
) -> Result<nl2sql_plan::PlanModel, nl2sql_state::PipelineError> {
    OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&request_over(snapshot, question))
}

/// Plans `question` over `snapshot`, validates the plan and renders SQLite SQL; returns the
/// SQL or the error message.
pub(super) fn sql_over(snapshot: &SchemaSnapshot, question: &str) -> String {
    let request = request_over(snapshot, question);
    // Readings are tested on the lenient planner (see `sql_for`).
    let plan = match OfflinePlanner::lenient().plan_sync(&request) {
        Ok(p) => p,
        Err(e) => return format!("ERROR {}", e.message),
    };
    let mut ctx = LogicalContext::new(&snapshot.contract.datasource_id, &snapshot.contract);
    if let Some(m) = snapshot.metadata.as_ref() {
        ctx = ctx.with_metadata(m);
    }
    let report = validate_plan(Some(&plan), &ctx);
    assert!(report.is_ok(), "{question}: {:#?}", report.findings);
    SqlGenerator::new(Dialect::Sqlite)
        .with_schema(&snapshot.contract)
        .generate(&plan)
        .unwrap()
}

/// The strict planner refuses `question` (`AMBIGUOUS_QUESTION`) with a message that
/// says `text`.
pub(super) fn refused_saying(snapshot: &SchemaSnapshot, question: &str, text: &str) {
    let e = strict_over(snapshot, question).expect_err(question);
    assert_eq!(
        e.code,
        nl2sql_state::ErrorCode::AmbiguousQuestion,
        "{question}"
    );
    assert!(e.message.contains(text), "{question}: {}", e.message);
}

/// Asserts that the strict planner (whatever its confidence) refuses `question` as
/// ambiguous, naming `words` as what it could not place.
pub(super) fn refused_placing(snapshot: &SchemaSnapshot, question: &str, words: &str) {
    let e = strict_over(snapshot, question).expect_err(question);
    assert_eq!(
        e.code,
        nl2sql_state::ErrorCode::AmbiguousQuestion,
        "{question}"
    );
    assert!(
        e.message.contains(&format!("could not place '{words}'")),
        "{question}: {}",
        e.message
    );
}

pub(super) fn check(snapshot: &SchemaSnapshot, question: &str, expect: &str) {
    assert_eq!(sql_over(snapshot, question), expect, "{question}");
}

/// [`check`], and the strict planner (whatever its confidence) answers too: every word
/// of `question` is placed.
pub(super) fn check_placed(snapshot: &SchemaSnapshot, question: &str, expect: &str) {
    check(snapshot, question, expect);
    let plan = strict_over(snapshot, question);
    assert!(
        plan.is_ok(),
        "{question}: {:?}",
        plan.err().map(|e| e.message)
    );
}

#[test]
fn an_average_per_row_of_its_own_table_is_one_average() {
    let f = fleet();
    check(
        &f,
        "What is the average distance per trip?",
        "SELECT AVG(t.distance_km) AS avg_distance_km FROM trips AS t LIMIT 10000",
    );
    // Per another table it still groups.
    check(
        &f,
        "What is the average distance per driver?",
        "SELECT d.name AS driver, AVG(t.distance_km) AS avg_distance_km FROM trips AS t INNER JOIN drivers AS d ON t.driver_id = d.id GROUP BY d.name ORDER BY d.name LIMIT 10000",
    );
}

#[test]
fn the_most_of_something_ranks_by_its_measure_and_direction_words_only_order() {
    check(
        &fleet(),
        "Which 2 trips carried the most passengers? Biggest first.",
        "SELECT t.id AS id, t.passenger_count AS passenger_count FROM trips AS t ORDER BY t.passenger_count DESC LIMIT 2",
    );
}

#[test]
fn a_whole_name_beats_a_word_of_another_name() {
    let f = fleet();
    // "in-stock" is `in_stock` even though "in" is a grammar word; "quantities" is its
    // head noun, not `reorder_qty`.
    assert_eq!(
        links("parts with the highest in-stock quantity", &f),
        ["spare_parts", "spare_parts.in_stock"]
    );
    check(
        &f,
        "Show the depots with the two highest in-stock quantities, highest first.",
        "SELECT d.name AS depot, SUM(sp.in_stock) AS total_in_stock FROM spare_parts AS sp INNER JOIN depots AS d ON sp.depot_id = d.id GROUP BY d.name ORDER BY total_in_stock DESC LIMIT 2",
    );
}

#[test]
fn recency_and_first_or_last_rank_by_the_verbs_date() {
    let f = fleet();
    check(
        &f,
        "List the two most recently founded depots, newest first.",
        "SELECT d.name AS depot, d.founded_on AS founded_on FROM depots AS d ORDER BY d.founded_on DESC LIMIT 2",
    );
    check(
        &f,
        "Which depot was founded first?",
        "SELECT d.name AS depot, d.founded_on AS founded_on FROM depots AS d ORDER BY d.founded_on LIMIT 1",
    );
    check(
        &f,
        "List the 3 oldest vehicles.",
        "SELECT v.id AS id, v.bought_on AS bought_on FROM vehicles AS v ORDER BY v.bought_on LIMIT 3",
    );
}

#[test]
fn break_down_by_is_a_grouping() {
    let f = fleet();
    let by_driver = "SELECT d.name AS driver, SUM(t.distance_km) AS total_distance_km FROM trips AS t INNER JOIN drivers AS d ON t.driver_id = d.id GROUP BY d.name ORDER BY d.name LIMIT 10000";
    check(&f, "Break down total distance by driver.", by_driver);
    check(&f, "Break the total distance down by driver.", by_driver);
}

#[test]
fn a_total_number_of_things_sums_their_count_column() {
    let f = fleet();
    check(
        &f,
        "What is the total number of faults?",
        "SELECT SUM(f.fault_count) AS total_fault_count FROM faults AS f LIMIT 10000",
    );
    check(
        &f,
        "How many faults are there?",
        "SELECT COUNT(*) AS fault_count FROM faults AS f LIMIT 10000",
    );
}

#[test]
fn literal_names_beat_synonyms() {
    let s = shop();
    // The synonym list reads "cost" as "price": the literal word decides.
    check(
        &s,
        "What is the average list price of articles?",
        "SELECT AVG(a.list_price) AS avg_list_price FROM articles AS a LIMIT 10000",
    );
    check(
        &s,
        "What is the average unit cost of articles?",
        "SELECT AVG(a.unit_cost) AS avg_unit_cost FROM articles AS a LIMIT 10000",
    );
    // The synonym list reads "amount" as "quantity": `total_amount` says "amount".
    check(
        &s,
        "What is the total invoice amount per segment?",
        "SELECT c.segment AS segment, SUM(i.total_amount) AS total_total_amount FROM invoices AS i INNER JOIN clients AS c ON i.client_id = c.id GROUP BY c.segment ORDER BY c.segment LIMIT 10000",
    );
}

#[test]
fn money_words_link_money_columns_and_unit_prices_multiply_by_quantity() {
    check(
        &shop(),
        "What is the total revenue per client segment?",
        "SELECT c.segment AS segment, SUM(i.total_amount) AS total_total_amount FROM invoices AS i INNER JOIN clients AS c ON i.client_id = c.id GROUP BY c.segment ORDER BY c.segment LIMIT 10000",
    );
    check(
        &buying(),
        "What is the total spend per vendor?",
        "SELECT v.name AS vendor, SUM(p.quantity * p.unit_price) AS total_quantity_times_unit_price FROM purchases AS p INNER JOIN vendors AS v ON p.vendor_id = v.id GROUP BY v.name ORDER BY v.name LIMIT 10000",
    );
}

#[test]
fn adjectives_of_boolean_columns_filter_and_negations_flip_them() {
    let f = fleet();
    let count = |filter: &str| {
        format!(
            "SELECT COUNT(*) AS vehicle_count FROM vehicles AS v WHERE v.is_electric = {filter} LIMIT 10000"
        )
    };
    check(&f, "How many electric vehicles are there?", &count("true"));
    check(
        &f,
        "How many non-electric vehicles are there?",
        &count("false"),
    );
    let trips = |filter: &str| {
        format!(
            "SELECT COUNT(*) AS trip_count FROM trips AS t WHERE t.on_time = {filter} LIMIT 10000"
        )
    };
    check(&f, "How many trips were on time?", &trips("true"));
    check(&f, "How many trips were late?", &trips("false"));
    check(&f, "How many trips weren't on time?", &trips("false"));
    check(
        &f,
        "How many inactive drivers are there?",
        "SELECT COUNT(*) AS driver_count FROM drivers AS d WHERE d.is_active = false LIMIT 10000",
    );
    check(
        &f,
        "List the drivers who are no longer active.",
        "SELECT d.name AS driver FROM drivers AS d WHERE d.is_active = false LIMIT 10000",
    );
}

#[test]
fn a_negation_of_nothing_known_is_refused() {
    // A negated table is an anti-join (see `analyst.rs`); a negated word the schema does
    // not know is still refused.
    assert_eq!(
        sql_over(&fleet(), "Which vehicles have never been washed?"),
        "ERROR could not understand the question: the negation 'never' negates no known value; rephrase the question with the schema's names: its tables are depots, drivers, faults, fuel, spare_parts, trips, vehicles"
    );
    assert_eq!(
        sql_over(&fleet(), "Which vehicles have never had a fault?"),
        "SELECT v.id AS id FROM vehicles AS v LEFT JOIN faults AS f ON v.id = f.vehicle_id WHERE f.id IS NULL LIMIT 10000"
    );
}

#[test]
fn an_attribute_of_the_ranked_rows_groups_them() {
    let f = fleet();
    check(
        &f,
        "Which status had the most passengers?",
        "SELECT t.status AS status, SUM(t.passenger_count) AS total_passenger_count FROM trips AS t GROUP BY t.status ORDER BY total_passenger_count DESC LIMIT 1",
    );
    check(
        &f,
        "Which city has the most depots?",
        "SELECT d.city AS city, COUNT(*) AS depot_count FROM depots AS d GROUP BY d.city ORDER BY depot_count DESC LIMIT 1",
    );
    // A singular noun is an amount: the most fuel is the most litres.
    check(
        &f,
        "Which depot has the most fuel?",
        "SELECT d.name AS depot, SUM(f.litres) AS total_litres FROM fuel AS f INNER JOIN depots AS d ON f.depot_id = d.id GROUP BY d.name ORDER BY total_litres DESC LIMIT 1",
    );
}

#[test]
fn a_date_phrase_over_an_undated_table_uses_the_nearest_date() {
    check(
        &shop(),
        "What were the total line amounts in 2023?",
        "SELECT SUM(il.line_amount) AS total_line_amount FROM invoice_lines AS il INNER JOIN invoices AS i ON il.invoice_id = i.id WHERE i.issued_on >= '2023-01-01' AND i.issued_on < '2024-01-01' LIMIT 10000",
    );
}

#[test]
fn a_verb_and_preposition_that_spell_a_column_are_not_a_value() {
    let s = shop();
    // "sent from" is `sent_from`, not the status `Sent`.
    assert_eq!(
        links("How many invoices were sent from Leeds?", &s),
        ["invoices", "invoices.sent_from", "sent_from=Leeds"]
    );
    assert_eq!(
        links("How many invoices were sent?", &s),
        ["invoices", "status=Sent"]
    );
}

#[test]
fn capitalised_names_keep_their_final_period() {
    check(
        &shop(),
        "How many invoices did Initech Corp. receive?",
        "SELECT COUNT(*) AS invoice_count FROM invoices AS i INNER JOIN clients AS c ON i.client_id = c.id WHERE c.name = 'Initech Corp.' LIMIT 10000",
    );
}

#[test]
fn a_subject_found_only_in_a_description_is_refused() {
    let e = decompose(
        "What is our company's share price on the exchange?",
        vec![datasource("shop", shop())],
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "could not link: 'company', 'share', 'exchange'; rephrase the question with the schema's names: its tables are articles, clients, invoice_lines, invoices"
    );
}

#[test]
fn a_datasource_name_is_still_a_word_of_the_question() {
    let r = decompose(
        "What were total sales in 2023?",
        vec![datasource("sales", shop())],
    )
    .unwrap();
    assert_eq!(r.sub_queries[0].metrics[0].name, "total_line_amount");
    let r = decompose(
        "How many clients are in the sales database?",
        vec![datasource("sales", shop())],
    )
    .unwrap();
    assert_eq!(r.sub_queries[0].metrics[0].name, "client_count");
}

#[test]
fn a_table_followed_by_count_is_a_count_of_its_rows() {
    check(
        &fleet(),
        "Top 2 depots by vehicle count",
        "SELECT d.name AS depot, COUNT(*) AS vehicle_count FROM vehicles AS v INNER JOIN depots AS d ON v.depot_id = d.id GROUP BY d.name ORDER BY vehicle_count DESC LIMIT 2",
    );
}

#[test]
fn values_listed_in_a_description_are_known_values() {
    check(
        &fleet(),
        "How many Solaris Trollino vehicles are there?",
        "SELECT COUNT(*) AS vehicle_count FROM vehicles AS v WHERE v.model = 'Solaris Trollino' LIMIT 10000",
    );
    check(
        &fleet(),
        "How many Door Jam faults were there?",
        "SELECT COUNT(*) AS fault_count FROM faults AS f WHERE f.kind = 'Door Jam' LIMIT 10000",
    );
    // A description that lists nothing names no value.
    assert_eq!(links("depots in City", &fleet()), ["depots", "depots.city"]);
}

#[test]
fn a_word_that_ends_a_column_name_with_the_word_before_is_not_a_value() {
    // "units received" is `units_received`, not the status `Received`.
    check(
        &fleet(),
        "What is the total of units received per depot?",
        "SELECT d.name AS depot, SUM(sp.units_received) AS total_units_received FROM spare_parts AS sp INNER JOIN depots AS d ON sp.depot_id = d.id GROUP BY d.name ORDER BY d.name LIMIT 10000",
    );
}

#[test]
fn a_generic_measure_noun_in_a_comparison_is_the_subjects_count() {
    check(
        &fleet(),
        "How many faults had a count above 3?",
        "SELECT COUNT(*) AS fault_count FROM faults AS f WHERE f.fault_count > 3 LIMIT 10000",
    );
}

#[test]
fn the_latest_row_for_each_group_is_the_latest_date_per_group() {
    check(
        &fleet(),
        "When was the most recent trip for each driver?",
        "SELECT d.name AS driver, MAX(t.started_at) AS max_started_at FROM trips AS t INNER JOIN drivers AS d ON t.driver_id = d.id GROUP BY d.name ORDER BY d.name LIMIT 10000",
    );
}

#[test]
fn sort_keys_after_the_first_are_sort_keys_each_with_its_direction() {
    let s = shop();
    check(
        &s,
        "What are the titles and list prices of articles, sorted by list price decreasing and title ascending?",
        "SELECT a.title AS article, a.list_price AS list_price FROM articles AS a ORDER BY a.list_price DESC, a.title LIMIT 10000",
    );
    check(
        &s,
        "Show the titles and unit costs of articles ordered by unit cost and title.",
        "SELECT a.title AS article, a.unit_cost AS unit_cost FROM articles AS a ORDER BY a.unit_cost, a.title LIMIT 10000",
    );
}

#[test]
fn opposite_directions_with_one_sort_key_are_refused() {
    let s = shop();
    // The strict planner answers the two-key question…
    let plan = strict_over(
        &s,
        "What are the titles and list prices of articles, sorted by list price decreasing and title ascending?",
    )
    .unwrap();
    assert_eq!(plan.order_by.len(), 2);
    // … and refuses one whose second key it cannot find, naming the direction it could not
    // place (a single key one way would silently drop the other).
    refused_placing(
        &s,
        "What are the titles of articles, sorted by list price decreasing and then ascending?",
        "ascending",
    );
}

#[test]
fn one_direction_phrase_is_one_direction() {
    let s = shop();
    let plan = strict_over(
        &s,
        "List all article titles in descending alphabetical order.",
    )
    .unwrap();
    assert_eq!(plan.order_by.len(), 1);
    assert_eq!(plan.order_by[0].direction, nl2sql_plan::Direction::Desc);
}
