//! Foreign keys a schema spells in its column names but does not declare.
//!
//! Many real databases declare no foreign keys (or a wrong one: SQLite accepts a key to a
//! column of the wrong table). Every consumer of a contract (the planners' join search,
//! the logical validator's join check, the LLM's schema context) must agree on which joins
//! exist, so the inference runs once, where a contract is assembled, and each key it adds
//! says so (`ForeignKeyContract::inferred`).

use crate::schema::{
    Cardinality, ColumnContract, ForeignKeyContract, SchemaContract, TableRef, TypeClass,
};

impl SchemaContract {
    /// Adds the undeclared foreign keys the names spell, and returns how many:
    ///
    /// * a column named exactly as the one-column primary key of exactly one other table,
    ///   when the words of that name (without a trailing `id`, `code`, `no`, `num`,
    ///   `number` or `key`) name that table: `Accounts.customer_id` → `Customers.customer_id`,
    ///   `Claims_Processing.Claim_Stage_ID` → `Claims_Processing_Stages.Claim_Stage_ID`,
    ///   but never `wine.No` → `appellations.No` nor `Physician.SSN` → `Patient.SSN`;
    /// * a column named `…<table>_id` when that table's one-column key is `id`:
    ///   `trip.end_station_id` → `station.id`;
    /// * an integer column named as exactly one other table whose one-column key is an
    ///   integer of another name: `flights.Airline` → `airlines.uid`, as the keys
    ///   databases do declare are named (`Appointment.Physician` → `Physician.EmployeeID`,
    ///   `Products.Manufacturer` → `Manufacturers.Code`: 23 of the 27 declared keys of
    ///   Spider's training databases named as their table are integers), but never a text
    ///   column (`team.park`, a park's name, beside `park.park_id`).
    ///
    /// Never from a table's own whole key (a one-to-one pair reads both ways), never from
    /// a column a declared key already leads from to another table, never to a table the
    /// declared keys already join it to, and only between columns of one type class.
    pub fn infer_foreign_keys(&mut self) -> usize {
        // Each table's one-column key and the words of its name, worked out once.
        let tables: Vec<Keyed> = self
            .tables
            .values()
            .map(|t| {
                let mut pk = t.columns.values().filter(|c| c.is_primary_key);
                let (key, key_is_integer) = match (pk.next(), pk.next()) {
                    (Some(c), None) => (
                        Some((c.name.clone(), TypeClass::of(&c.data_type))),
                        is_integer(&c.data_type),
                    ),
                    _ => (None, false),
                };
                Keyed {
                    table: t.table.clone(),
                    key,
                    key_is_integer,
                    words: singular_words(&t.table.table_name),
                }
            })
            .collect();
        let mut added = Vec::new();
        for ((key, table), own) in self.tables.iter().zip(&tables) {
            // The declared keys to other tables (a key to the table itself, such as
            // `actor.Musical_ID` declared as a key to `actor`, hides nothing).
            let declared = table
                .foreign_keys
                .iter()
                .filter(|f| f.referred_table != table.table);
            let declared_from = |column: &str| {
                declared.clone().any(|f| {
                    f.constrained_columns
                        .iter()
                        .any(|c| c.eq_ignore_ascii_case(column))
                })
            };
            let declared_to = |to: &TableRef| declared.clone().any(|f| f.referred_table == *to);
            for column in table.columns.values() {
                if own
                    .key
                    .as_ref()
                    .is_some_and(|(k, _)| k.eq_ignore_ascii_case(&column.name))
                    || declared_from(&column.name)
                {
                    continue;
                }
                let Some(to) = referred_by_name(&tables, &table.table, &column.name)
                    .or_else(|| named_as_table(&tables, &table.table, column))
                else {
                    continue;
                };
                let Some((to_column, to_class)) = &to.key else {
                    continue;
                };
                if *to_class != TypeClass::of(&column.data_type) || declared_to(&to.table) {
                    continue;
                }
                added.push((
                    key.clone(),
                    ForeignKeyContract {
                        constrained_columns: vec![column.name.clone()],
                        referred_table: to.table.clone(),
                        referred_columns: vec![to_column.clone()],
                        cardinality: Cardinality::ManyToOne,
                        business_meaning: None,
                        inferred: true,
                    },
                ));
            }
        }
        let n = added.len();
        for (key, fk) in added {
            if let Some(t) = self.tables.get_mut(&key) {
                t.foreign_keys.push(fk);
            }
        }
        n
    }
}

/// A table as the inference reads it: its one-column key (name and type class), if it
/// has one, and the singular words of its name.
struct Keyed {
    table: TableRef,
    key: Option<(String, TypeClass)>,
    /// Whether that key is an integer.
    key_is_integer: bool,
    words: Vec<String>,
}

/// The table with a one-column key that `column` of `from` names, by the two rules of
/// [`SchemaContract::infer_foreign_keys`].
fn referred_by_name<'a>(tables: &'a [Keyed], from: &TableRef, column: &str) -> Option<&'a Keyed> {
    let words = ident_words(column);
    let others = || {
        tables
            .iter()
            .filter(move |t| t.table != *from)
            .filter_map(|t| t.key.as_ref().map(|(name, _)| (t, name)))
    };
    let same: Vec<&Keyed> = others()
        .filter(|(_, k)| k.eq_ignore_ascii_case(column))
        .map(|(t, _)| t)
        .collect();
    if let [t] = same.as_slice() {
        let stem: Vec<String> = words
            .iter()
            .take(words.len() - trailing_key_words(&words))
            .map(|w| singular(w))
            .collect();
        let within = |a: &[String], b: &[String]| {
            a.iter().all(|w| {
                b.iter()
                    .any(|x| x == w || (w.len() >= 3 && x.starts_with(w.as_str())))
            })
        };
        return (!stem.is_empty() && (within(&stem, &t.words) || within(&t.words, &stem)))
            .then_some(*t);
    }
    if !same.is_empty() || words.len() < 2 || words.last().map(String::as_str) != Some("id") {
        return None;
    }
    let stem: Vec<String> = words[..words.len() - 1]
        .iter()
        .map(|w| singular(w))
        .collect();
    let mut named = others()
        .filter(|(t, k)| {
            k.eq_ignore_ascii_case("id") && !t.words.is_empty() && stem.ends_with(&t.words)
        })
        .map(|(t, _)| t);
    match (named.next(), named.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

/// The one other table `column` of `from` is named as, word for word (`Airline` →
/// `airlines`), when both the column and that table's one-column key are integers.
fn named_as_table<'a>(
    tables: &'a [Keyed],
    from: &TableRef,
    column: &ColumnContract,
) -> Option<&'a Keyed> {
    if !is_integer(&column.data_type) {
        return None;
    }
    let words = singular_words(&column.name);
    let mut named = tables.iter().filter(|t| {
        t.table != *from
            && t.words == words
            && t.key
                .as_ref()
                .is_some_and(|(name, _)| !name.eq_ignore_ascii_case(&column.name))
            && t.key_is_integer
    });
    match (named.next(), named.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

/// Whether a declared type is an integer's (`INTEGER`, `INT`, `BIGINT`, `smallint(6)`).
fn is_integer(data_type: &str) -> bool {
    data_type.to_ascii_lowercase().contains("int")
}

/// The singular words of a name (`Claims_Processing_Stages` → `claim processing stage`).
fn singular_words(name: &str) -> Vec<String> {
    ident_words(name).iter().map(|w| singular(w)).collect()
}

/// How many of the last words of a key column's name only say it is a key (`id`,
/// `code`, `no`, `num`, `number`, `key`): at most one.
fn trailing_key_words(words: &[String]) -> usize {
    usize::from(
        words
            .last()
            .is_some_and(|w| matches!(w.as_str(), "id" | "code" | "no" | "num" | "number" | "key")),
    )
}

/// A plural's singular, as far as names need it (`Customers` → `customer`, `Policies` →
/// `policy`, `Addresses` → `address`).
fn singular(word: &str) -> String {
    let w = word.to_lowercase();
    if let Some(s) = w.strip_suffix("ies")
        && !s.is_empty()
    {
        return format!("{s}y");
    }
    if let Some(s) = w.strip_suffix("sses") {
        return format!("{s}ss");
    }
    if let Some(s) = w.strip_suffix("xes") {
        return format!("{s}x");
    }
    if let Some(s) = w.strip_suffix('s')
        && s.len() >= 2
        && !s.ends_with('s')
        && !s.ends_with('u')
    {
        return s.to_owned();
    }
    w
}

/// Splits an identifier into lower-case words: `production_runs` → `production runs`,
/// `unitPrice` → `unit price`, `HTTPCode` → `http code`.
pub fn ident_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let boundary = c.is_uppercase()
            && !current.is_empty()
            && (chars[i - 1].is_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars.get(i + 1).is_some_and(|n| n.is_lowercase()));
        if boundary {
            words.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use indexmap::IndexMap;

    use crate::schema::{ColumnContract, SchemaContract, TableContract, TableRef};

    use super::*;

    /// A table of `columns` (name, type); the first one listed with `true` is its key.
    fn table(name: &str, columns: &[(&str, &str, bool)]) -> TableContract {
        let columns: IndexMap<String, ColumnContract> = columns
            .iter()
            .map(|(c, ty, pk)| {
                (
                    (*c).to_owned(),
                    ColumnContract {
                        name: (*c).to_owned(),
                        data_type: (*ty).to_owned(),
                        is_nullable: !pk,
                        is_primary_key: *pk,
                    },
                )
            })
            .collect();
        TableContract {
            table: TableRef {
                schema_name: "main".into(),
                table_name: name.into(),
            },
            columns,
            foreign_keys: Vec::new(),
        }
    }

    fn contract(tables: Vec<TableContract>) -> SchemaContract {
        let mut c = SchemaContract::new("db", "sqlite");
        for t in tables {
            c.add_table(t);
        }
        c
    }

    /// The inferred keys, as `table.column -> table.column`, sorted.
    fn inferred(c: &SchemaContract) -> Vec<String> {
        let mut out: Vec<String> = c
            .tables
            .values()
            .flat_map(|t| {
                t.foreign_keys.iter().filter(|f| f.inferred).map(|f| {
                    format!(
                        "{}.{} -> {}.{}",
                        t.table.table_name,
                        f.constrained_columns.join(","),
                        f.referred_table.table_name,
                        f.referred_columns.join(",")
                    )
                })
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_column_named_as_another_tables_key_refers_to_it() {
        let mut c = contract(vec![
            table(
                "Customers",
                &[("customer_id", "INTEGER", true), ("name", "TEXT", false)],
            ),
            table(
                "Accounts",
                &[
                    ("account_id", "INTEGER", true),
                    ("customer_id", "INTEGER", false),
                ],
            ),
            table(
                "Claims_Processing_Stages",
                &[("Claim_Stage_ID", "INTEGER", true)],
            ),
            table(
                "Claims_Processing",
                &[
                    ("Claim_Processing_ID", "INTEGER", true),
                    ("Claim_Stage_ID", "INTEGER", false),
                ],
            ),
        ]);
        assert_eq!(c.infer_foreign_keys(), 2);
        assert_eq!(
            inferred(&c),
            vec![
                "Accounts.customer_id -> Customers.customer_id",
                "Claims_Processing.Claim_Stage_ID -> Claims_Processing_Stages.Claim_Stage_ID",
            ]
        );
        // Serialised only where true: a declared key's JSON is as before.
        let declared = serde_json::to_value(&c.tables["main.Customers"]).unwrap_or_default();
        assert!(!declared.to_string().contains("inferred"));
        let accounts = serde_json::to_value(&c.tables["main.Accounts"]).unwrap_or_default();
        assert_eq!(accounts["foreign_keys"][0]["inferred"], true);
    }

    #[test]
    fn a_table_id_suffix_refers_to_the_table_keyed_by_id() {
        let mut c = contract(vec![
            table(
                "station",
                &[("id", "INTEGER", true), ("name", "TEXT", false)],
            ),
            table(
                "trip",
                &[
                    ("id", "INTEGER", true),
                    ("start_station_id", "INTEGER", false),
                    ("end_station_id", "INTEGER", false),
                    ("bike_id", "INTEGER", false),
                ],
            ),
        ]);
        c.infer_foreign_keys();
        assert_eq!(
            inferred(&c),
            vec![
                "trip.end_station_id -> station.id",
                "trip.start_station_id -> station.id",
            ]
        );
    }

    #[test]
    fn names_that_do_not_name_the_table_are_no_keys() {
        let mut c = contract(vec![
            // `No` is any table's number; `SSN` names no table; `id` is everyone's.
            table(
                "appellations",
                &[("No", "INTEGER", true), ("Area", "TEXT", false)],
            ),
            table("wine", &[("id", "INTEGER", true), ("No", "INTEGER", false)]),
            table("Patient", &[("SSN", "INTEGER", true)]),
            table(
                "Physician",
                &[("EmployeeID", "INTEGER", true), ("SSN", "INTEGER", false)],
            ),
            // Two tables keyed by the same name: no way to tell which.
            table("a_items", &[("item_id", "INTEGER", true)]),
            table("b_items", &[("item_id", "INTEGER", true)]),
            table(
                "orders",
                &[("order_id", "INTEGER", true), ("item_id", "INTEGER", false)],
            ),
            // A type mismatch is no key.
            table("Customer", &[("customer_id", "INTEGER", true)]),
            table(
                "Notes",
                &[("note_id", "INTEGER", true), ("customer_id", "TEXT", false)],
            ),
        ]);
        assert_eq!(c.infer_foreign_keys(), 0, "{:?}", inferred(&c));
    }

    #[test]
    fn declared_keys_and_one_to_one_keys_are_left_alone() {
        let key = |col: &str, to: &str, to_col: &str| ForeignKeyContract {
            constrained_columns: vec![col.into()],
            referred_table: TableRef {
                schema_name: "main".into(),
                table_name: to.into(),
            },
            referred_columns: vec![to_col.into()],
            cardinality: Cardinality::ManyToOne,
            business_meaning: None,
            inferred: false,
        };
        let mut orders = table(
            "orders",
            &[
                ("order_id", "INTEGER", true),
                ("customer_id", "INTEGER", false),
            ],
        );
        orders
            .foreign_keys
            .push(key("customer_id", "customers", "customer_id"));
        // A key declared to the wrong table (its own) does not hide the one the name
        // spells.
        let mut actor = table(
            "actor",
            &[
                ("Actor_ID", "INTEGER", true),
                ("Musical_ID", "INTEGER", false),
            ],
        );
        actor
            .foreign_keys
            .push(key("Musical_ID", "actor", "Actor_ID"));
        let mut c = contract(vec![
            table("customers", &[("customer_id", "INTEGER", true)]),
            orders,
            // Each table's whole key: a one-to-one pair, which reads both ways.
            table("customer_details", &[("customer_id", "INTEGER", true)]),
            table("musical", &[("Musical_ID", "INTEGER", true)]),
            actor,
        ]);
        c.infer_foreign_keys();
        assert_eq!(inferred(&c), vec!["actor.Musical_ID -> musical.Musical_ID"]);
    }

    #[test]
    fn an_integer_column_named_as_a_table_refers_to_its_integer_key() {
        let mut c = contract(vec![
            table(
                "airlines",
                &[("uid", "INTEGER", true), ("Airline", "TEXT", false)],
            ),
            table(
                "flights",
                &[
                    // Part of a two-column key, as in Spider's `flight_2`.
                    ("Airline", "INTEGER", true),
                    ("FlightNo", "INTEGER", true),
                    ("Park", "TEXT", false),
                    ("Country", "INTEGER", false),
                ],
            ),
            // A text column named as a table is a name, not its key.
            table("park", &[("park_id", "INTEGER", true)]),
            // A text key is not an integer column's.
            table("country", &[("code", "TEXT", true)]),
        ]);
        assert_eq!(c.infer_foreign_keys(), 1, "{:?}", inferred(&c));
        assert_eq!(inferred(&c), vec!["flights.Airline -> airlines.uid"]);
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(ident_words("production_runs"), vec!["production", "runs"]);
        assert_eq!(ident_words("unitPrice"), vec!["unit", "price"]);
        assert_eq!(ident_words("HTTPCode"), vec!["http", "code"]);
        assert_eq!(singular("Policies"), "policy");
        assert_eq!(singular("Addresses"), "address");
        assert_eq!(singular("status"), "status");
    }
}
