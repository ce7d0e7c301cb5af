//! Irregular plurals: "each person" asks about a `people` table, as "each member" does
//! about `members`; and a text column named as its table (`city.City`) names its rows.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::check;
use super::{col, snapshot_of, table};

fn people() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("poll", "sqlite");
    contract.add_table(table(
        "people",
        vec![
            col("People_ID", "INTEGER", true),
            col("Name", "TEXT", false),
            col("Age", "INTEGER", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn an_irregular_singular_names_its_plural_table() {
    // "person" is a row of `people`, as "member" is of `members`.
    let p = people();
    check(
        &p,
        "How many persons are there?",
        "SELECT COUNT(*) AS person_count FROM people AS p LIMIT 10000",
    );
    check(
        &p,
        "What is the name of the oldest person?",
        "SELECT p.Name AS person, p.Age AS age FROM people AS p ORDER BY p.Age DESC LIMIT 1",
    );
}

#[test]
fn a_text_column_named_as_its_table_is_its_label() {
    // `city.City`, not the key `City_ID`, names a city.
    let s = snapshot_of(
        "cities",
        vec![table(
            "city",
            vec![
                col("City_ID", "INTEGER", true),
                col("City", "TEXT", false),
                col("Regional_Population", "INTEGER", false),
            ],
            vec![],
        )],
    );
    check(
        &s,
        "Which three cities have the largest regional population?",
        "SELECT c.City AS city, c.Regional_Population AS regional_population FROM city AS c ORDER BY c.Regional_Population DESC LIMIT 3",
    );
}
