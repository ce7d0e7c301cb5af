//! `write_database`, the admin bulk-write path: types, keys and rows land as described,
//! and a failing spec leaves neither a final file nor a temporary one.

use std::path::{Path, PathBuf};

use nl2sql_adapter::{
    DatasetColumn, DatasetForeignKey, DatasetSpec, DatasetTable, DatasetType, DatasetValue,
    DatasourceAdapter, Limits,
};
use nl2sql_adapter_duckdb::{DuckDbAdapter, write_database};
use nl2sql_state::ErrorCode;

fn dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("nl2sql-duckdb-write-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Plants and the machines in them: every type, a nullable column, a foreign key.
fn spec(machines: usize) -> DatasetSpec {
    use DatasetValue as V;
    let plants = DatasetTable {
        name: "plants".to_owned(),
        description: "Plants".to_owned(),
        columns: vec![
            DatasetColumn::key("plant_id", "key"),
            DatasetColumn::new("code", DatasetType::Text, "code"),
        ],
        foreign_keys: vec![],
        rows: vec![
            vec![V::Integer(1), V::Text("DET".to_owned())],
            vec![V::Integer(2), V::Text("LYO".to_owned())],
        ],
    };
    let day = nl2sql_adapter::dataset::days_from_civil(2024, 2, 29);
    let rows = (0..machines)
        .map(|i| {
            vec![
                V::Integer(i as i64 + 1),
                V::Integer(i as i64 % 2 + 1),
                V::Text(format!("it's machine {i}")),
                V::Real(i as f64 / 4.0),
                V::Date(day),
                V::Timestamp(i64::from(day) * 86_400 + 3_723),
                V::Boolean(i % 3 == 0),
                if i % 2 == 0 { V::Null } else { V::Integer(7) },
            ]
        })
        .collect();
    let machines = DatasetTable {
        name: "machines".to_owned(),
        description: "Machines".to_owned(),
        columns: vec![
            DatasetColumn::key("machine_id", "key"),
            DatasetColumn::new("plant_id", DatasetType::Integer, "plant"),
            DatasetColumn::new("name", DatasetType::Text, "name"),
            DatasetColumn::new("load", DatasetType::Real, "load"),
            DatasetColumn::new("installed_on", DatasetType::Date, "installed"),
            DatasetColumn::new("serviced_at", DatasetType::Timestamp, "serviced"),
            DatasetColumn::new("running", DatasetType::Boolean, "running"),
            DatasetColumn::new("spare", DatasetType::Integer, "spare").nullable(),
        ],
        foreign_keys: vec![DatasetForeignKey::new("plant_id", "plants", "plant_id")],
        rows,
    };
    DatasetSpec {
        tables: vec![plants, machines],
    }
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test]
async fn writes_types_keys_and_rows() {
    let dir = dir("ok");
    let path = dir.join("plant.duckdb");
    assert_eq!(write_database(&path, &spec(1000)).unwrap(), 1002);
    assert_eq!(leftovers(&dir), ["plant.duckdb"]);
    let conn = duckdb::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM machines", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1000);
    let row: (String, f64, String, String, bool, Option<i64>, String) = conn
        .query_row(
            "SELECT name, load, CAST(installed_on AS VARCHAR), CAST(serviced_at AS VARCHAR), \
             running, spare, typeof(installed_on) || '/' || typeof(serviced_at) || '/' || typeof(load) \
             FROM machines WHERE machine_id = 4",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "it's machine 3".to_owned(),
            0.75,
            "2024-02-29".to_owned(),
            "2024-02-29 01:02:03".to_owned(),
            true,
            Some(7),
            "DATE/TIMESTAMP/DOUBLE".to_owned()
        )
    );
    let nulls: i64 = conn
        .query_row(
            "SELECT count(*) FROM machines WHERE spare IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 500);
    // Descriptions are kept as comments.
    let comment: String = conn
        .query_row(
            "SELECT comment FROM duckdb_tables() WHERE table_name = 'machines'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(comment, "Machines");
    drop(conn);
    // Keys are declared: the adapter's snapshot sees the foreign key and the primary key.
    let a = DuckDbAdapter::open("plant", &path, Limits::default()).unwrap();
    let snap = a.schema_snapshot().await.unwrap();
    let machines = &snap.contract.tables["main.machines"];
    assert_eq!(machines.foreign_keys.len(), 1);
    assert_eq!(machines.foreign_keys[0].referred_table.table_name, "plants");
    let frame = a
        .run_sql(
            &super::raw("SELECT count(*) FROM machines m LEFT JOIN plants p ON p.plant_id = m.plant_id WHERE p.plant_id IS NULL"),
            a.limits(),
        )
        .await;
    assert!(frame.success, "{:?}", frame.error);
    // Rewriting replaces the file as a whole.
    drop(a);
    assert_eq!(write_database(&path, &spec(10)).unwrap(), 12);
    let conn = duckdb::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM machines", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 10);
}

#[test]
fn a_failing_spec_leaves_no_file_behind() {
    let dir = dir("fail");
    let path = dir.join("plant.duckdb");
    let mut duplicate = spec(10);
    let copy = duplicate.tables[1].rows[0].clone();
    duplicate.tables[1].rows.push(copy);
    let err = write_database(&path, &duplicate).unwrap_err();
    assert_eq!(err.code, ErrorCode::ExecutionFailed);
    assert!(
        err.message.to_lowercase().contains("duplicate key"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(dir.to_str().unwrap()), "path leaked");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    // A dangling foreign key fails the same way.
    let mut dangling = spec(10);
    dangling.tables[1].rows[0][1] = DatasetValue::Integer(99);
    let err = write_database(&path, &dangling).unwrap_err();
    assert!(
        err.message.to_lowercase().contains("foreign key"),
        "{}",
        err.message
    );
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    // A malformed spec (a row too short, a value of the wrong type) fails before writing.
    let mut short = spec(10);
    short.tables[1].rows[3].pop();
    assert!(write_database(&path, &short).is_err());
    let mut wrong = spec(10);
    wrong.tables[1].rows[3][2] = DatasetValue::Integer(1);
    assert!(write_database(&path, &wrong).is_err());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    // An existing database is left exactly as it was.
    write_database(&path, &spec(5)).unwrap();
    let before = std::fs::read(&path).unwrap();
    write_database(&path, &duplicate).unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(leftovers(&dir), ["plant.duckdb"]);
}
