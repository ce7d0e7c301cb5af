//! Phrasings a reader understands at once, over a synthetic port (harbours, cranes,
//! vendors) named unlike every fixture: a rate adjective names a "per unit" column
//! ("hourly throughput" is `throughput_per_hour`), a country's demonym or name is a
//! value of a country column ("Dutch harbours", "harbours from Spain"), and a boolean
//! column described in a word or two is named by it ("spares we still sell" for a column
//! described "Still sold": irregular past forms meet their verbs); "percent" is `pct`;
//! a verb and its particle spell a one-word value ("breaks down" is `Breakdown`); "came
//! from", "through" are filler; a description's head before a colon ("Trip segments: …")
//! names its table; "for different investors" groups like "for each investor".

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::{check, describe, described, sql_over};
use super::{col, samples, table};

/// A port: harbours in countries, their cranes, and the vendors that service them.
fn port() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("port", "sqlite");
    contract.add_table(table(
        "harbours",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("country", "TEXT", false),
            col("city", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "cranes",
        vec![
            col("id", "INTEGER", true),
            col("harbour_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("throughput_per_hour", "INTEGER", false),
            col("output_per_day", "INTEGER", false),
            col("status", "TEXT", false),
        ],
        vec![("harbour_id", "harbours")],
    ));
    contract.add_table(table(
        "vendors",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("home_nation", "TEXT", false),
            col("is_certified", "BOOLEAN", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "spares",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("price", "REAL", false),
            col("markup_pct", "REAL", false),
            col("is_current", "BOOLEAN", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "stoppages",
        vec![
            col("id", "INTEGER", true),
            col("crane_id", "INTEGER", false),
            col("reason", "TEXT", false),
            col("minutes", "INTEGER", false),
        ],
        vec![("crane_id", "cranes")],
    ));
    contract.add_table(table(
        "charters",
        vec![
            col("id", "INTEGER", true),
            col("channel", "TEXT", false),
            col("status", "TEXT", false),
            col("total_amount", "REAL", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "legs",
        vec![
            col("id", "INTEGER", true),
            col("charter_id", "INTEGER", false),
            col("segment_fee", "REAL", false),
        ],
        vec![("charter_id", "charters")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "stoppages",
        "reason",
        samples(&["Breakdown", "Changeover", "Storm"]),
    );
    describe(
        &mut snapshot,
        "charters",
        "channel",
        samples(&["Broker", "Direct"]),
    );
    describe(
        &mut snapshot,
        "charters",
        "status",
        samples(&["Paid", "Open"]),
    );
    let legs = snapshot
        .metadata
        .as_mut()
        .map(|m| {
            m.tables
                .entry("main.legs".into())
                .or_insert_with(|| nl2sql_state::TableMetadata {
                    table: nl2sql_state::TableRef {
                        schema_name: "main".into(),
                        table_name: "legs".into(),
                    },
                    ..Default::default()
                })
        })
        .unwrap();
    legs.description = Some("Trip segments: one harbour-to-harbour hop of a charter.".into());
    describe(
        &mut snapshot,
        "spares",
        "is_current",
        described("Still sold"),
    );
    let mut countries = samples(&["Netherlands", "Belgium"]);
    if let Some(stats) = countries.statistics.as_mut() {
        stats.distinct_count = 12;
    }
    describe(&mut snapshot, "harbours", "country", countries);
    describe(
        &mut snapshot,
        "vendors",
        "home_nation",
        samples(&["USA", "Japan", "Norway"]),
    );
    describe(
        &mut snapshot,
        "cranes",
        "status",
        samples(&["Working", "Idle"]),
    );
    snapshot
}

#[test]
fn a_rate_adjective_names_a_per_unit_column() {
    let p = port();
    check(
        &p,
        "What's the highest hourly throughput of any crane?",
        "SELECT c.name AS crane, c.throughput_per_hour AS throughput_per_hour FROM cranes AS c ORDER BY c.throughput_per_hour DESC LIMIT 1",
    );
    check(
        &p,
        "What is the average daily output of the Idle cranes?",
        "SELECT AVG(c.output_per_day) AS avg_output_per_day FROM cranes AS c WHERE c.status = 'Idle' LIMIT 10000",
    );
}

#[test]
fn a_demonym_or_a_country_name_is_a_country_value() {
    let p = port();
    // A sampled country, by its demonym.
    check(
        &p,
        "How many Dutch harbours are there?",
        "SELECT COUNT(*) AS harbour_count FROM harbours AS h WHERE h.country = 'Netherlands' LIMIT 10000",
    );
    // Not sampled: the country's usual name.
    check(
        &p,
        "How many cranes do the German harbours have?",
        "SELECT COUNT(*) AS crane_count FROM cranes AS c INNER JOIN harbours AS h ON c.harbour_id = h.id WHERE h.country = 'Germany' LIMIT 10000",
    );
    // The spelling the known values use, and a name after "from".
    check(
        &p,
        "How many certified American vendors are there?",
        "SELECT COUNT(*) AS vendor_count FROM vendors AS v WHERE v.is_certified = true AND v.home_nation = 'USA' LIMIT 10000",
    );
    check(
        &p,
        "List the harbours from Spain.",
        "SELECT h.name AS harbour FROM harbours AS h WHERE h.country = 'Spain' LIMIT 10000",
    );
    // A column whose known values are all its values and lack the country: refused, not
    // answered without the filter.
    let mut nations = port();
    describe(
        &mut nations,
        "harbours",
        "country",
        samples(&["Netherlands", "Belgium"]),
    );
    assert_eq!(
        sql_over(&nations, "How many Swiss vendors are there?"),
        "ERROR could not link: 'Swiss'; rephrase the question with the schema's names: its tables are charters, cranes, harbours, legs, spares, stoppages, vendors"
    );
}

#[test]
fn a_boolean_column_is_named_by_its_short_description() {
    check(
        &port(),
        "What is the lowest price among the spares we still sell?",
        "SELECT s.name AS spare, s.price AS price FROM spares AS s WHERE s.is_current = true ORDER BY s.price LIMIT 1",
    );
}

#[test]
fn percent_names_a_pct_column() {
    check(
        &port(),
        "How many spares have a markup above 20 percent?",
        "SELECT COUNT(*) AS spare_count FROM spares AS s WHERE s.markup_pct > 20 LIMIT 10000",
    );
    check(
        &port(),
        "What is the average markup percentage of the spares?",
        "SELECT AVG(s.markup_pct) AS avg_markup_pct FROM spares AS s LIMIT 10000",
    );
}

#[test]
fn a_verb_and_its_particle_spell_a_one_word_value() {
    check(
        &port(),
        "What is the average number of minutes a crane is out when it breaks down?",
        "SELECT AVG(s.minutes) AS avg_minutes FROM stoppages AS s WHERE s.reason = 'Breakdown' LIMIT 10000",
    );
}

#[test]
fn verbs_of_coming_and_going_are_filler() {
    check(
        &port(),
        "How much revenue came from Paid charters sold through brokers?",
        "SELECT SUM(c.total_amount) AS total_total_amount FROM charters AS c WHERE c.status = 'Paid' AND c.channel = 'Broker' LIMIT 10000",
    );
}

#[test]
fn a_description_head_names_its_table_and_a_phrase_names_a_column_by_its_head() {
    check(
        &port(),
        "How many trip segments had a segment fee above 100?",
        "SELECT COUNT(*) AS leg_count FROM legs AS l WHERE l.segment_fee > 100 LIMIT 10000",
    );
}

#[test]
fn several_groups_ranked_by_the_most_of_a_measure_rank_by_its_total() {
    check(
        &port(),
        "List the three cranes, by name, that lost the most minutes to storms, worst first.",
        "SELECT c.name AS crane, SUM(s.minutes) AS total_minutes FROM stoppages AS s INNER JOIN cranes AS c ON s.crane_id = c.id WHERE s.reason = 'Storm' GROUP BY c.name ORDER BY total_minutes DESC LIMIT 3",
    );
    // Each group's longest stoppage when no count of groups is asked.
    check(
        &port(),
        "What is the longest stoppage in minutes for each reason?",
        "SELECT s.reason AS reason, MAX(s.minutes) AS max_minutes FROM stoppages AS s GROUP BY s.reason ORDER BY s.reason LIMIT 10000",
    );
}

#[test]
fn for_different_groups_like_for_each() {
    // "for different investors" asks for one answer per investor, as "for each" does.
    let trades = super::snapshot_of(
        "trades",
        vec![table(
            "trade",
            vec![
                col("trade_id", "INTEGER", true),
                col("investor_code", "TEXT", false),
                col("amount", "REAL", false),
            ],
            vec![],
        )],
    );
    check(
        &trades,
        "Show the average amount of trades for different investor codes.",
        "SELECT t.investor_code AS investor_code, AVG(t.amount) AS avg_amount FROM trade AS t GROUP BY t.investor_code ORDER BY t.investor_code LIMIT 10000",
    );
}
