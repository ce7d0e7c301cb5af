//! Unit tests of the snapshot's statistics budget (GAP-41): the time budget cuts
//! statistics off, big tables are sampled, and sample values whose counts tie come out
//! in value order.

use std::sync::atomic::AtomicU32;

use nl2sql_state::ColumnMetadata;

use super::*;

/// A fresh database file with `sql` run in it (removed on drop).
struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str, sql: &str) -> TempDb {
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "nl2sql-sqlite-{name}-{}-{}.db",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        TempDb(path)
    }

    fn snapshot(&self, budget: StatsBudget) -> SchemaSnapshot {
        let adapter = SqliteAdapter::open("t", &self.0, Limits::default()).unwrap();
        let conn = adapter.take_conn().unwrap();
        snapshot_on(&conn, "t", Detail::Full, budget).unwrap()
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `items(id, colour)`: 50 rows with ids 1…50 in id order; the colour counts are
/// blue 10, green 10, amber 10, red 10 (ties, inserted out of order), violet 6, cyan 4.
fn items_sql() -> String {
    let colours = ["red", "green", "blue", "amber"];
    let mut sql = String::from(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, colour TEXT NOT NULL);\n\
         CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);\n\
         INSERT INTO notes VALUES (1, 'x');\n",
    );
    for id in 1..=50 {
        let colour = match id {
            1..=40 => colours[(id - 1) % 4],
            41..=46 => "violet",
            _ => "cyan",
        };
        sql.push_str(&format!("INSERT INTO items VALUES ({id}, '{colour}');\n"));
    }
    sql
}

fn stats<'a>(snapshot: &'a SchemaSnapshot, table: &str, column: &str) -> &'a ColumnMetadata {
    let metadata = snapshot.metadata.as_ref().unwrap();
    let t = metadata
        .tables
        .values()
        .find(|t| t.table.table_name == table)
        .unwrap();
    &t.columns[column]
}

#[test]
fn sample_values_are_ordered_by_count_then_value() {
    let db = TempDb::new("ties", &items_sql());
    let snapshot = db.snapshot(StatsBudget::of(&AdapterOptions::default()));
    let colour = stats(&snapshot, "items", "colour")
        .statistics
        .clone()
        .unwrap();
    assert_eq!(colour.distinct_count, 6);
    // Four colours tie at 10 rows: they come in value order, whatever the insert order.
    assert_eq!(
        colour.sample_values,
        ["amber", "blue", "green", "red", "violet"].map(serde_json::Value::from)
    );
    // The same again (and on a second connection).
    assert_eq!(
        db.snapshot(StatsBudget::of(&AdapterOptions::default())),
        snapshot
    );
}

#[test]
fn a_spent_time_budget_leaves_statistics_out_but_keeps_the_schema() {
    let db = TempDb::new("budget", &items_sql());
    let full = db.snapshot(StatsBudget::of(&AdapterOptions::default()));
    let none = db.snapshot(StatsBudget {
        time: Duration::ZERO,
        ..StatsBudget::of(&AdapterOptions::default())
    });
    assert_eq!(none.contract, full.contract, "the contract is complete");
    let metadata = none.metadata.as_ref().unwrap();
    assert_eq!(metadata.tables.len(), 2);
    for table in metadata.tables.values() {
        assert!(table.row_count.is_some(), "{}", table.table.table_name);
        for (name, column) in &table.columns {
            assert_eq!(column.statistics, None, "{name}");
        }
    }
    let full_stats = full.metadata.as_ref().unwrap();
    assert!(
        full_stats
            .tables
            .values()
            .flat_map(|t| t.columns.values())
            .all(|c| c.statistics.is_some())
    );
}

#[test]
fn a_table_over_the_sample_size_gets_statistics_from_its_first_rows() {
    let db = TempDb::new("sample", &items_sql());
    let snapshot = db.snapshot(StatsBudget {
        sample_rows: 20,
        ..StatsBudget::of(&AdapterOptions::default())
    });
    let metadata = snapshot.metadata.as_ref().unwrap();
    let items = metadata
        .tables
        .values()
        .find(|t| t.table.table_name == "items")
        .unwrap();
    assert_eq!(items.row_count, Some(50), "the row count is exact");
    let id = stats(&snapshot, "items", "id").statistics.clone().unwrap();
    assert_eq!(id.distinct_count, 20);
    assert_eq!(id.min_value, Some(serde_json::json!(1)));
    assert_eq!(id.max_value, Some(serde_json::json!(20)));
    // The first 20 rows hold five of each of the four tied colours, nothing else.
    let colour = stats(&snapshot, "items", "colour")
        .statistics
        .clone()
        .unwrap();
    assert_eq!(colour.distinct_count, 4);
    assert_eq!(
        colour.sample_values,
        ["amber", "blue", "green", "red"].map(serde_json::Value::from)
    );
    // A table within the sample size is read whole.
    let notes = stats(&snapshot, "notes", "id").statistics.clone().unwrap();
    assert_eq!(notes.distinct_count, 1);
}

/// The options given to the constructor reach the snapshot: the sample size and the
/// time budget, where the defaults read everything.
#[tokio::test]
async fn adapter_options_set_the_snapshot_budget() {
    let db = TempDb::new("options", &items_sql());
    let open = |options: AdapterOptions| {
        SqliteAdapter::open_with_options("t", &db.0, Limits::default(), options).unwrap()
    };
    let sampled = open(AdapterOptions {
        schema_stats_sample_rows: 20,
        ..AdapterOptions::default()
    });
    assert_eq!(sampled.options().schema_stats_sample_rows, 20);
    let snapshot = sampled.schema_snapshot().await.unwrap();
    let id = stats(&snapshot, "items", "id").statistics.clone().unwrap();
    assert_eq!(
        (id.distinct_count, id.max_value),
        (20, Some(serde_json::json!(20)))
    );

    let whole = open(AdapterOptions::default())
        .schema_snapshot()
        .await
        .unwrap();
    let id = stats(&whole, "items", "id").statistics.clone().unwrap();
    assert_eq!(
        (id.distinct_count, id.max_value),
        (50, Some(serde_json::json!(50)))
    );

    let spent = open(AdapterOptions {
        schema_stats_timeout_ms: 0,
        ..AdapterOptions::default()
    })
    .schema_snapshot()
    .await
    .unwrap();
    assert_eq!(spent.contract, whole.contract);
    assert_eq!(stats(&spent, "items", "id").statistics, None);
}
