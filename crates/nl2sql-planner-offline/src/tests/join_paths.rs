//! Which join path a plan takes between the tables it needs, over a synthetic ledger
//! (holders, parcels, payments, the link between payments and parcels) and a school
//! (pupils, tutors, clubs, the link tables of who joins which club): of two paths of as
//! many joins, the one through a link table, not the one through a parent both tables
//! refer to; and a plan that can pair two tables only through such a shared parent no word
//! names is refused.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::{check, describe, refused_saying};
use super::{col, samples, table};

fn ledger() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("ledger", "sqlite");
    contract.add_table(table(
        "Holders",
        vec![col("id", "INTEGER", true), col("details", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "Parcels",
        vec![
            col("id", "INTEGER", true),
            col("holder_id", "INTEGER", false),
            col("parcel_details", "TEXT", false),
        ],
        vec![("holder_id", "Holders")],
    ));
    contract.add_table(table(
        "Payments",
        vec![
            col("id", "INTEGER", true),
            col("holder_id", "INTEGER", false),
            col("amount_of_payment", "REAL", false),
        ],
        vec![("holder_id", "Holders")],
    ));
    contract.add_table(table(
        "Payments_Parcels",
        vec![
            col("payment_id", "INTEGER", false),
            col("parcel_id", "INTEGER", false),
        ],
        vec![("payment_id", "Payments"), ("parcel_id", "Parcels")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

fn school() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("school", "sqlite");
    contract.add_table(table(
        "Pupil",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("Mentor", "INTEGER", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "Tutor",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("Rank", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "Club",
        vec![col("id", "INTEGER", true), col("club_name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "Pupil_in_Club",
        vec![
            col("pupil_id", "INTEGER", false),
            col("club_id", "INTEGER", false),
        ],
        vec![("pupil_id", "Pupil"), ("club_id", "Club")],
    ));
    contract.add_table(table(
        "Tutor_in_Club",
        vec![
            col("tutor_id", "INTEGER", false),
            col("club_id", "INTEGER", false),
        ],
        vec![("tutor_id", "Tutor"), ("club_id", "Club")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "Tutor",
        "Rank",
        samples(&["Professor", "Lecturer"]),
    );
    snapshot
}

#[test]
fn of_two_paths_as_long_the_one_through_a_link_table_wins() {
    // Payments → Holders ← Parcels is as short as Payments ← Payments_Parcels → Parcels
    // (and Holders comes first by name), but it pairs every payment of a holder with
    // every parcel of the same holder.
    check(
        &ledger(),
        "Show the average amount of payments for different parcels.",
        "SELECT p2.id AS id, AVG(p.amount_of_payment) AS avg_amount_of_payment FROM Payments \
         AS p INNER JOIN Payments_Parcels AS pp ON p.id = pp.payment_id INNER JOIN Parcels AS \
         p2 ON pp.parcel_id = p2.id GROUP BY p2.id ORDER BY p2.id LIMIT 10000",
    );
}

#[test]
fn two_tables_met_only_through_a_parent_no_word_names_are_refused() {
    // Pupils meet tutors only through a club both are in (Pupil_in_Club → Club ←
    // Tutor_in_Club): "whose mentors are professors" says nothing of clubs.
    refused_saying(
        &school(),
        "Show the names of pupils whose mentors are professors.",
        "only through Club",
    );
}
