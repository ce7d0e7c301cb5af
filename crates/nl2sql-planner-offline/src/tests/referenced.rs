//! A foreign key column holds the values of the key it refers to: a word that names it,
//! where the question is about the referenced table, is read as that key, and the rows of
//! the referencing table are not joined in (they would repeat the answer once per row).

use nl2sql_state::SchemaSnapshot;

use super::rules::check;
use super::{col, snapshot_of, table};

fn payments() -> SchemaSnapshot {
    let kinds = table(
        "ref_payment_kinds",
        vec![
            col("payment_kind_code", "TEXT", true),
            col("payment_kind_description", "TEXT", false),
        ],
        vec![],
    );
    let mut payments = table(
        "payments",
        vec![
            col("payment_id", "INTEGER", true),
            col("payment_kind_code", "TEXT", false),
            col("amount", "REAL", false),
        ],
        vec![("payment_kind_code", "ref_payment_kinds")],
    );
    // The key refers to the code, not to an `id`.
    payments.foreign_keys[0].referred_columns = vec!["payment_kind_code".into()];
    snapshot_of("ledger", vec![kinds, payments])
}

#[test]
fn a_code_said_of_the_referenced_table_reads_its_key() {
    check(
        &payments(),
        "Show the description of the payment kind with code \"REF\".",
        "SELECT rpk.payment_kind_description AS payment_kind_description, rpk.payment_kind_code AS payment_kind_code FROM ref_payment_kinds AS rpk WHERE rpk.payment_kind_code = 'REF' LIMIT 10000",
    );
}

#[test]
fn the_referencing_rows_stay_when_the_question_names_them() {
    check(
        &payments(),
        "Show the amounts of payments with payment kind code \"REF\".",
        "SELECT p.payment_id AS payment_id, p.amount AS amount FROM payments AS p WHERE p.payment_kind_code = 'REF' LIMIT 10000",
    );
    check(
        &payments(),
        "Show the descriptions of payment kinds that have payments.",
        "SELECT DISTINCT rpk.payment_kind_description AS payment_kind_description FROM ref_payment_kinds AS rpk INNER JOIN payments AS p ON rpk.payment_kind_code = p.payment_kind_code ORDER BY rpk.payment_kind_description LIMIT 10000",
    );
}
