//! Reading rules for common analyst questions, over a synthetic brewery (taverns, casks,
//! flaws, tastings, orders, malts, cellar stock) named unlike every fixture: quarter and
//! half-year periods, "on or after", "from X on", counts of things a count column counts
//! (and of rows when the rows are named), "who" and "when" answered by a person or a date,
//! measures computed from two columns, grouping by month or year, capitalised values
//! before a column name, rates that are not groupings, listings that join the rows they
//! require, "biggest X first" as an order, "how much of it", and weak word links settled
//! by context; the plural of a one-word value; "typical" as an average; anti-joins.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::{check, describe, described};
use super::{col, samples, table};

/// A brewery: taverns order beer; casks are filled, tasted and checked for flaws.
fn brewery() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("brewery", "sqlite");
    contract.add_table(table(
        "taverns",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("region", "TEXT", false),
            col("venue", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "cask_types",
        vec![col("id", "INTEGER", true), col("label", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "casks",
        vec![
            col("id", "INTEGER", true),
            col("cask_type_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("filled_at", "DATETIME", false),
            col("finished_at", "DATETIME", false),
            col("litres", "INTEGER", false),
        ],
        vec![("cask_type_id", "cask_types")],
    ));
    contract.add_table(table(
        "flaws",
        vec![
            col("id", "INTEGER", true),
            col("cask_id", "INTEGER", false),
            col("flaw_type", "TEXT", false),
            col("flaw_count", "INTEGER", false),
        ],
        vec![("cask_id", "casks")],
    ));
    contract.add_table(table(
        "tastings",
        vec![
            col("id", "INTEGER", true),
            col("cask_id", "INTEGER", false),
            col("tasted_at", "DATETIME", false),
            col("tasted_by", "TEXT", false),
            col("tasting_type", "TEXT", false),
        ],
        vec![("cask_id", "casks")],
    ));
    contract.add_table(table(
        "orders",
        vec![
            col("id", "INTEGER", true),
            col("tavern_id", "INTEGER", false),
            col("ordered_on", "DATE", false),
            col("quantity", "INTEGER", false),
            col("unit_price", "REAL", false),
            col("status", "TEXT", false),
        ],
        vec![("tavern_id", "taverns")],
    ));
    contract.add_table(table(
        "malts",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("unit", "TEXT", false),
            col("standard_cost", "REAL", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "stock",
        vec![
            col("id", "INTEGER", true),
            col("cask_id", "INTEGER", false),
            col("cellar", "TEXT", false),
            col("on_hand", "INTEGER", false),
        ],
        vec![("cask_id", "casks")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "orders",
        "status",
        samples(&["Open", "Closed"]),
    );
    describe(
        &mut snapshot,
        "casks",
        "name",
        samples(&["Dark Stout", "Pale Ale"]),
    );
    describe(&mut snapshot, "malts", "unit", samples(&["kg", "sack"]));
    describe(&mut snapshot, "taverns", "venue", samples(&["Pub", "Inn"]));
    let mut regions = samples(&["Uplands", "Harbour"]);
    if let Some(stats) = regions.statistics.as_mut() {
        stats.distinct_count = 9;
    }
    describe(&mut snapshot, "taverns", "region", regions);
    describe(
        &mut snapshot,
        "flaws",
        "flaw_type",
        described("Sour, Cloudy or Flat"),
    );
    snapshot
}

#[test]
fn quarters_halves_and_inclusive_bounds() {
    let b = brewery();
    check(
        &b,
        "How many orders were placed in the first quarter of 2024?",
        "SELECT COUNT(*) AS order_count FROM orders AS o WHERE o.ordered_on >= '2024-01-01' AND o.ordered_on < '2024-04-01' LIMIT 10000",
    );
    check(
        &b,
        "How many orders were placed in the second half of 2023?",
        "SELECT COUNT(*) AS order_count FROM orders AS o WHERE o.ordered_on >= '2023-07-01' AND o.ordered_on < '2024-01-01' LIMIT 10000",
    );
    check(
        &b,
        "How many orders were placed in H1 2024?",
        "SELECT COUNT(*) AS order_count FROM orders AS o WHERE o.ordered_on >= '2024-01-01' AND o.ordered_on < '2024-07-01' LIMIT 10000",
    );
    let since = "SELECT COUNT(*) AS order_count FROM orders AS o WHERE o.ordered_on >= '2024-03-10' LIMIT 10000";
    check(
        &b,
        "How many orders were placed on or after March 10, 2024?",
        since,
    );
    check(
        &b,
        "How many orders were placed from March 10, 2024 on?",
        since,
    );
    check(
        &b,
        "How many orders were placed on or before March 10, 2024?",
        "SELECT COUNT(*) AS order_count FROM orders AS o WHERE o.ordered_on < '2024-03-11' LIMIT 10000",
    );
}

#[test]
fn counting_things_a_count_column_counts() {
    let b = brewery();
    check(
        &b,
        "How many flaws were found in Dark Stout?",
        "SELECT SUM(f.flaw_count) AS total_flaw_count FROM flaws AS f INNER JOIN casks AS c ON f.cask_id = c.id WHERE c.name = 'Dark Stout' LIMIT 10000",
    );
    // The rows, when the question names them.
    check(
        &b,
        "How many flaw records were logged for Dark Stout?",
        "SELECT COUNT(*) AS flaw_count FROM flaws AS f INNER JOIN casks AS c ON f.cask_id = c.id WHERE c.name = 'Dark Stout' LIMIT 10000",
    );
    check(
        &b,
        "Which flaw types add up to more than 7 flaws in total?",
        "SELECT f.flaw_type AS flaw_type, SUM(f.flaw_count) AS total_flaw_count FROM flaws AS f GROUP BY f.flaw_type HAVING SUM(f.flaw_count) > 7 ORDER BY f.flaw_type LIMIT 10000",
    );
    check(
        &b,
        "Show the flaw records with 6 or more flaws: their type and count.",
        "SELECT f.id AS id, f.flaw_type AS flaw_type, f.flaw_count AS flaw_count FROM flaws AS f WHERE f.flaw_count >= 6 LIMIT 10000",
    );
}

#[test]
fn who_and_when_are_answered_by_a_person_and_a_date() {
    let b = brewery();
    check(
        &b,
        "Who did the tastings yesterday, and what kind was it?",
        "SELECT t.tasted_by AS tasted_by, t.tasting_type AS tasting_type FROM tastings AS t WHERE t.tasted_at >= '2024-05-14' AND t.tasted_at < '2024-05-15' LIMIT 10000",
    );
    check(
        &b,
        "When was the first tasting carried out?",
        "SELECT MIN(t.tasted_at) AS min_tasted_at FROM tastings AS t LIMIT 10000",
    );
    check(
        &b,
        "When did the most recent cask finish?",
        "SELECT MAX(c.finished_at) AS max_finished_at FROM casks AS c LIMIT 10000",
    );
}

#[test]
fn measures_computed_from_two_columns() {
    let b = brewery();
    check(
        &b,
        "What is the combined value of the open orders (quantity times unit price)?",
        "SELECT SUM(o.unit_price * o.quantity) AS total_unit_price_times_quantity FROM orders AS o WHERE o.status = 'Open' LIMIT 10000",
    );
    check(
        &b,
        "What is the total of quantity minus unit price over closed orders?",
        "SELECT SUM(o.quantity - o.unit_price) AS total_quantity_minus_unit_price FROM orders AS o WHERE o.status = 'Closed' LIMIT 10000",
    );
}

#[test]
fn grouping_by_month_or_year() {
    let b = brewery();
    check(
        &b,
        "What is the total quantity ordered per month?",
        "SELECT DATE(o.ordered_on, 'start of month') AS month, SUM(o.quantity) AS total_quantity FROM orders AS o GROUP BY DATE(o.ordered_on, 'start of month') ORDER BY DATE(o.ordered_on, 'start of month') LIMIT 10000",
    );
    check(
        &b,
        "How many orders were placed by year?",
        "SELECT CAST(STRFTIME('%Y', o.ordered_on) AS INTEGER) AS year, COUNT(*) AS order_count FROM orders AS o GROUP BY CAST(STRFTIME('%Y', o.ordered_on) AS INTEGER) ORDER BY CAST(STRFTIME('%Y', o.ordered_on) AS INTEGER) LIMIT 10000",
    );
}

#[test]
fn a_capitalised_word_before_a_column_name_is_its_value() {
    check(
        &brewery(),
        "How many taverns are in the Lowland region?",
        "SELECT COUNT(*) AS tavern_count FROM taverns AS t WHERE t.region = 'Lowland' LIMIT 10000",
    );
}

#[test]
fn a_rate_is_not_a_grouping() {
    check(
        &brewery(),
        "Which malts have a standard cost above $5 per kg?",
        "SELECT m.name AS malt FROM malts AS m WHERE m.standard_cost > 5 LIMIT 10000",
    );
}

#[test]
fn a_listing_joins_the_rows_it_requires() {
    check(
        &brewery(),
        "Which tavern regions have actually placed orders?",
        "SELECT DISTINCT t.region AS region FROM taverns AS t INNER JOIN orders AS o ON t.id = o.tavern_id ORDER BY t.region LIMIT 10000",
    );
}

#[test]
fn a_superlative_noun_and_first_only_orders() {
    check(
        &brewery(),
        "Rank the taverns by total quantity ordered, biggest buyer first.",
        "SELECT t.name AS tavern, SUM(o.quantity) AS total_quantity FROM orders AS o INNER JOIN taverns AS t ON o.tavern_id = t.id GROUP BY t.name ORDER BY total_quantity DESC LIMIT 10000",
    );
}

#[test]
fn how_much_of_it_is_the_amount_of_the_thing_named_before() {
    check(
        &brewery(),
        "Which cellar holds our Dark Stout stock, and how much of it?",
        "SELECT s.cellar AS cellar, SUM(s.on_hand) AS total_on_hand FROM stock AS s INNER JOIN casks AS c ON s.cask_id = c.id WHERE c.name = 'Dark Stout' GROUP BY s.cellar ORDER BY s.cellar LIMIT 10000",
    );
}

#[test]
fn a_negated_table_is_an_anti_join() {
    let b = brewery();
    check(
        &b,
        "Which taverns have never placed orders?",
        "SELECT t.name AS tavern FROM taverns AS t LEFT JOIN orders AS o ON t.id = o.tavern_id WHERE o.id IS NULL LIMIT 10000",
    );
    check(
        &b,
        "How many casks have no flaws?",
        "SELECT COUNT(*) AS cask_count FROM casks AS c LEFT JOIN flaws AS f ON c.id = f.cask_id WHERE f.id IS NULL LIMIT 10000",
    );
}

#[test]
fn a_plural_of_a_value_and_a_typical_amount() {
    let b = brewery();
    check(
        &b,
        "How many pubs are in the Uplands region?",
        "SELECT COUNT(*) AS tavern_count FROM taverns AS t WHERE t.venue = 'Pub' AND t.region = 'Uplands' LIMIT 10000",
    );
    check(
        &b,
        "What is the typical quantity of the open orders?",
        "SELECT AVG(o.quantity) AS avg_quantity FROM orders AS o WHERE o.status = 'Open' LIMIT 10000",
    );
}
