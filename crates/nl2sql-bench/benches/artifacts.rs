//! Artifact throughput: writing a scan result as a zstd parquet artifact and reading it back
//! (hash verified), through the `ArtifactStore` trait of `nl2sql_artifacts`.
//!
//! - `artifacts/write/{local,memory}`: encode 1,000,000 rows (the group-by table of the
//!   aggregation benches: three non-null Int64 columns) to parquet, hash it and store it,
//!   in a temporary directory (temporary file then rename: the default `atomic`
//!   durability, no fsync) or in the in-memory object store (one `put`).
//! - `artifacts/read/{local,memory}`: read that artifact back, recompute its hash and
//!   decode it into Arrow batches.
//!
//! Throughput counts rows. `NL2SQL_BENCH_ROWS` sets the row count (default 1,000,000).
//! Run with `cargo xtask bench artifacts`.

use std::sync::Arc;
use std::time::Duration;

use arrow::compute::concat_batches;
use criterion::{Criterion, Throughput};
use nl2sql_artifacts::{
    ArtifactMeta, ArtifactStore, DEFAULT_PATH_TEMPLATE, PathTemplate, open_artifact_store,
};
use nl2sql_bench::{group_by_table, rows_from_env, size_label};
use nl2sql_state::ArtifactDurability;

fn meta() -> ArtifactMeta {
    ArtifactMeta {
        tenant_id: "bench".to_owned(),
        request_id: "run".to_owned(),
        subgraph_name: "sql_agent".to_owned(),
        dag_node_id: "scan".to_owned(),
        schema_version: None,
    }
}

fn artifacts(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rows = rows_from_env();
    let label = size_label(rows);
    let table = group_by_table(rows);
    let schema = table.schema();
    let batches = vec![table];
    let dir = std::env::temp_dir().join(format!("nl2sql-bench-artifacts-{}", std::process::id()));
    let template = PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("default template");
    let no_options: [(&str, String); 0] = [];
    let stores: Vec<(&str, Arc<dyn ArtifactStore>)> = vec![
        (
            "local",
            open_artifact_store(
                &dir.to_string_lossy(),
                template.clone(),
                ArtifactDurability::Atomic,
                no_options.clone(),
            )
            .expect("local store"),
        ),
        (
            "memory",
            open_artifact_store(
                "memory://bench",
                template,
                ArtifactDurability::Atomic,
                no_options,
            )
            .expect("memory store"),
        ),
    ];

    let mut group = c.benchmark_group("artifacts");
    group.throughput(Throughput::Elements(rows as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, store) in &stores {
        // The artifact the read benchmark reads, written (and checked) once up front.
        let artifact = rt
            .block_on(store.write(&meta(), schema.clone(), &batches))
            .expect("write");
        let back = rt.block_on(store.read(&artifact)).expect("read");
        assert_eq!(back.row_count(), rows, "{name}: rows read back");
        let combined = concat_batches(&schema, &back.batches).expect("one schema");
        assert_eq!(combined, batches[0], "{name}: the same data back");

        group.bench_function(format!("write_{label}/{name}"), |b| {
            b.iter(|| {
                rt.block_on(store.write(&meta(), schema.clone(), &batches))
                    .expect("write")
            });
        });
        group.bench_function(format!("read_{label}/{name}"), |b| {
            b.iter(|| rt.block_on(store.read(&artifact)).expect("read"));
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    artifacts(&mut criterion);
    criterion.final_summary();
}
