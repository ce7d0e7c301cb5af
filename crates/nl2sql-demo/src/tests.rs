//! The demo: the same content on every run, the largest table over 100,000 rows, a
//! configuration that loads and whose datasources open, foreign keys declared and holding,
//! shared business keys that match across databases, and a policy that parses.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use arrow::array::{Array, Int64Array};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use nl2sql_adapter::{DatasetValue, DatasourceAdapter, Limits};
use nl2sql_state::{ConfigFile, EnvSecrets, PolicyFile};
use nl2sql_test_support::temp_dir;

use super::{DemoLayout, catalog, create_demo, operations, sales, supply};
use nl2sql_orchestrator::DatasourceRegistry;

/// Limits wide enough to read a whole demo table.
fn dump_limits() -> Limits {
    Limits {
        row_limit: 10_000_000,
        statement_timeout_ms: 300_000,
        max_bytes: 4 << 30,
    }
}

async fn registry(layout: &DemoLayout) -> DatasourceRegistry {
    let text = std::fs::read_to_string(&layout.config).unwrap();
    let config = ConfigFile::from_toml_str(&text).unwrap();
    DatasourceRegistry::from_config(&config, &layout.dir, &EnvSecrets, super::drivers()).unwrap()
}

/// `sql` as the guard (without a schema) renders it for `a`.
fn guarded(a: &dyn DatasourceAdapter, sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_adapter::shape_check(a.id(), a.dialect(), sql).unwrap()
}

async fn adapter(reg: &DatasourceRegistry, id: &str) -> Arc<dyn DatasourceAdapter> {
    reg.adapter(id).await.unwrap()
}

/// One number of a one-row, one-column result.
async fn scalar(a: &dyn DatasourceAdapter, sql: &str) -> i64 {
    let frame = a.run_sql(&guarded(a, sql), dump_limits()).await;
    assert!(frame.success, "{sql}: {:?}", frame.error);
    let col = frame.batches[0].column(0);
    let col = arrow::compute::cast(col, &arrow::datatypes::DataType::Int64).unwrap();
    col.as_any().downcast_ref::<Int64Array>().unwrap().value(0)
}

/// (row count, hash of every value in primary-key order) of one table.
async fn content(a: &dyn DatasourceAdapter, table: &str) -> (u64, u64) {
    let frame = a
        .run_sql(
            &guarded(a, &format!("SELECT * FROM \"{table}\" ORDER BY 1")),
            dump_limits(),
        )
        .await;
    assert!(frame.success, "{table}: {:?}", frame.error);
    assert!(!frame.truncated, "{table} was truncated");
    let mut h = DefaultHasher::new();
    let options = FormatOptions::default();
    for batch in &frame.batches {
        let formatters: Vec<ArrayFormatter<'_>> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            for f in &formatters {
                f.value(row).to_string().hash(&mut h);
            }
        }
    }
    (frame.row_count, h.finish())
}

/// Every table's content through the adapters, by `datasource.table`.
async fn contents(layout: &DemoLayout) -> BTreeMap<String, (u64, u64)> {
    let reg = registry(layout).await;
    let mut out = BTreeMap::new();
    for db in &layout.databases {
        let a = adapter(&reg, &db.id).await;
        for (table, _) in &db.tables {
            out.insert(
                format!("{}.{table}", db.id),
                content(a.as_ref(), table).await,
            );
        }
    }
    out
}

fn text_files(layout: &DemoLayout) -> Vec<String> {
    [
        &layout.config,
        &layout.policy,
        &layout.questions,
        &layout.schema_docs,
    ]
    .iter()
    .map(|p| std::fs::read_to_string(p).unwrap())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_write_the_same_content() {
    let (first_dir, second_dir) = (temp_dir("demo-first"), temp_dir("demo-second"));
    let started = std::time::Instant::now();
    let first = create_demo(&first_dir).unwrap();
    let elapsed = started.elapsed();
    let second = create_demo(&second_dir).unwrap();
    // Writing over an existing demo works too, and changes nothing.
    let again = create_demo(&first.dir).unwrap();
    assert_eq!(again.databases, first.databases);
    let a = contents(&first).await;
    let b = contents(&second).await;
    assert_eq!(a, b);
    assert_eq!(text_files(&first), text_files(&second));
    // The layout's row counts are the databases' row counts.
    for db in &first.databases {
        for (table, rows) in &db.tables {
            assert_eq!(
                a[&format!("{}.{table}", db.id)].0,
                *rows,
                "{}.{table}",
                db.id
            );
        }
    }
    let largest = a.values().map(|(n, _)| *n).max().unwrap();
    assert!(largest >= 100_000, "largest table has {largest} rows");
    assert!(a["operations.production_runs"].0 >= 100_000);
    assert!(a["sales.order_items"].0 >= 100_000);
    // No temporary files are left behind.
    for entry in std::fs::read_dir(&first.dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.') && !name.contains(".tmp-"), "{name}");
    }
    // Timing is reported, not asserted (speed lives in benches).
    eprintln!("create_demo took {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_loads_opens_and_keeps_its_keys() {
    let dir = temp_dir("demo-keys");
    let layout = create_demo(&dir).unwrap();
    let config =
        ConfigFile::from_toml_str(&std::fs::read_to_string(&layout.config).unwrap()).unwrap();
    assert_eq!(config.ids(), ["operations", "supply", "sales"]);
    assert_eq!(config.policy.as_deref(), Some("policy.json"));
    for ds in &config.datasources {
        assert!(!ds.url.contains(":///"), "{}: absolute URL", ds.url);
        assert!(ds.description.as_deref().is_some_and(|d| !d.is_empty()));
        assert!(ds.row_limit.is_some() && ds.statement_timeout_ms.is_some());
    }
    let reg = registry(&layout).await;
    for db in &layout.databases {
        let a = adapter(&reg, &db.id).await;
        a.test_connection().await.unwrap();
        let snap = a.schema_snapshot().await.unwrap();
        let mut fks = 0;
        for (table, _) in &db.tables {
            let contract = &snap.contract.tables[&format!("main.{table}")];
            for fk in &contract.foreign_keys {
                fks += 1;
                let (col, pk) = (&fk.constrained_columns[0], &fk.referred_columns[0]);
                let parent = &fk.referred_table.table_name;
                let orphans = scalar(
                    a.as_ref(),
                    &format!(
                        "SELECT count(*) FROM \"{table}\" c LEFT JOIN \"{parent}\" p ON p.\"{pk}\" = c.\"{col}\" \
                         WHERE c.\"{col}\" IS NOT NULL AND p.\"{pk}\" IS NULL"
                    ),
                )
                .await;
                assert_eq!(orphans, 0, "{}.{table}.{col} -> {parent}", db.id);
            }
        }
        assert!(fks >= 4, "{}: only {fks} foreign keys", db.id);
    }
    // Cross-source business keys: every SKU made is sold, every plant code is a factory.
    let ops = adapter(&reg, "operations").await;
    let sales = adapter(&reg, "sales").await;
    let supply = adapter(&reg, "supply").await;
    let factory_codes = column_set(ops.as_ref(), "SELECT factory_code FROM factories").await;
    let skus = column_set(sales.as_ref(), "SELECT sku FROM products").await;
    let made = column_set(
        ops.as_ref(),
        "SELECT DISTINCT product_sku FROM production_runs",
    )
    .await;
    assert!(made.is_subset(&skus) && !made.is_empty());
    for (a, sql) in [
        (&supply, "SELECT DISTINCT factory_code FROM purchase_orders"),
        (&supply, "SELECT DISTINCT factory_code FROM inventory"),
        (&sales, "SELECT DISTINCT ship_from_factory_code FROM orders"),
        (&sales, "SELECT DISTINCT made_in_factory_code FROM products"),
    ] {
        let codes = column_set(a.as_ref(), sql).await;
        assert!(
            codes.is_subset(&factory_codes) && !codes.is_empty(),
            "{sql}"
        );
    }
    // Statuses are the documented ones.
    let statuses = column_set(ops.as_ref(), "SELECT DISTINCT status FROM machines").await;
    assert_eq!(
        statuses,
        ["Idle", "Maintenance", "Offline", "Running"]
            .map(str::to_owned)
            .into()
    );
    // The policy parses and means what the demo says.
    let policy =
        PolicyFile::from_json_str(&std::fs::read_to_string(&layout.policy).unwrap()).unwrap();
    let analyst = policy.access_for(&["analyst".to_owned()]);
    for ds in ["operations", "supply", "sales"] {
        assert!(analyst.datasource_allowed(ds));
    }
    assert!(analyst.column_denied("sales", "customers", "email"));
    assert!(!analyst.column_denied("sales", "customers", "name"));
    let viewer = policy.access_for(&["supply_viewer".to_owned()]);
    assert!(viewer.datasource_allowed("supply"));
    assert!(!viewer.datasource_allowed("sales") && !viewer.datasource_allowed("operations"));
    // The example questions name only configured datasources.
    let questions: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&layout.questions).unwrap()).unwrap();
    let ids: BTreeSet<&str> = questions["datasources"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, config.ids().into_iter().collect());
}

async fn column_set(a: &dyn DatasourceAdapter, sql: &str) -> BTreeSet<String> {
    let frame = a.run_sql(&guarded(a, sql), dump_limits()).await;
    assert!(frame.success, "{sql}: {:?}", frame.error);
    let mut out = BTreeSet::new();
    for batch in &frame.batches {
        let f =
            ArrayFormatter::try_new(batch.column(0).as_ref(), &FormatOptions::default()).unwrap();
        for i in 0..batch.num_rows() {
            out.insert(f.value(i).to_string());
        }
    }
    out
}

#[test]
fn specs_are_well_formed_and_deterministic() {
    let products = catalog::products();
    let skus: BTreeSet<&str> = products.iter().map(|p| p.sku.as_str()).collect();
    assert_eq!(skus.len(), products.len(), "duplicate SKU");
    let ops = operations::spec(&products);
    let sup = supply::spec();
    let sal = sales::spec(&products);
    for spec in [&ops, &sup, &sal] {
        spec.check().unwrap();
        for t in &spec.tables {
            assert!(!t.description.is_empty(), "{}", t.name);
            assert!(
                t.columns.iter().all(|c| !c.description.is_empty()),
                "{}",
                t.name
            );
        }
    }
    assert_eq!(ops, operations::spec(&catalog::products()));
    assert_eq!(sal, sales::spec(&catalog::products()));
    // Every date lies in 2023-2024 for the facts.
    let (lo, hi) = (catalog::first_day(), catalog::first_day() + catalog::DAYS);
    for (spec, table, column) in [
        (&sal, "orders", 3),
        (&sup, "purchase_orders", 7),
        (&ops, "shifts", 2),
    ] {
        for row in &spec.table(table).unwrap().rows {
            let DatasetValue::Date(d) = row[column] else {
                panic!("{table}: not a date: {:?}", row[column]);
            };
            assert!((lo..hi).contains(&d), "{table}: {d}");
        }
    }
}

#[test]
fn the_generator_is_fixed() {
    let mut a = super::rng::Rng::new(1, "x");
    let first: Vec<u64> = (0..3).map(|_| a.next_u64()).collect();
    let mut b = super::rng::Rng::new(1, "x");
    assert_eq!(first, (0..3).map(|_| b.next_u64()).collect::<Vec<_>>());
    let mut c = super::rng::Rng::new(1, "y");
    assert_ne!(first[0], c.next_u64());
    assert!((0..1000).all(|_| a.below(7) < 7));
}
