//! Tests of the path template, the local store's atomic writes and hash-verified reads;
//! the object-storage backend in `tests/object.rs`, its S3 client against a loopback
//! server from `tests/s3_server.rs`.

mod object;
mod s3_server;

use std::sync::Arc;

use arrow::array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use nl2sql_state::ArtifactDurability::{self, Atomic};
use nl2sql_state::{ArtifactRef, ErrorCode};
use tempfile::TempDir;

use super::*;
use crate::time::format_utc;

fn meta() -> ArtifactMeta {
    ArtifactMeta {
        tenant_id: "acme".into(),
        request_id: "6f1c9a52-8d3e-4b7a-9c1f-2e5d4a3b2c1d".into(),
        subgraph_name: "sql_agent".into(),
        dag_node_id: "sq_0d5392e02016".into(),
        schema_version: Some("20240101000000_abcdef01".into()),
    }
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("product", DataType::Utf8, true),
        Field::new("units", DataType::Int64, true),
        Field::new("ratio", DataType::Float64, true),
    ]))
}

fn batch() -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from(vec![Some("bolt"), None, Some("nut")])),
            Arc::new(Int64Array::from(vec![Some(3), Some(5), None])),
            Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5])),
        ],
    )
    .expect("batch")
}

fn store(dir: &TempDir) -> LocalArtifactStore {
    let template = PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template");
    LocalArtifactStore::new(dir.path(), template).expect("store")
}

fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_dir() {
            out.extend(files_under(&entry.path()));
        } else {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

#[test]
fn default_template_renders_every_segment() {
    let t = PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template");
    assert_eq!(
        t.render(&meta()).expect("renders"),
        "acme/6f1c9a52-8d3e-4b7a-9c1f-2e5d4a3b2c1d/sql_agent/sq_0d5392e02016/20240101000000_abcdef01/part-00000.parquet"
    );
}

#[test]
fn values_are_made_path_safe_and_missing_version_is_unversioned() {
    let t = PathTemplate::parse("<tenant_id>/<dag_node_id>/<schema_version>.parquet")
        .expect("template");
    let m = ArtifactMeta {
        tenant_id: "../etc passwd".into(),
        dag_node_id: "a/b\\c".into(),
        schema_version: None,
        ..meta()
    };
    assert_eq!(
        t.render(&m).expect("renders"),
        ".._etc_passwd/a_b_c/unversioned.parquet"
    );
}

#[test]
fn unknown_or_unterminated_placeholder_is_a_configuration_error() {
    for bad in ["<tenant>/x", "<tenant_id/x"] {
        let err = PathTemplate::parse(bad).expect_err("rejected");
        assert_eq!(err.code, ErrorCode::InvalidState, "{bad}");
    }
}

#[test]
fn missing_tenant_or_dot_segment_is_an_error() {
    let t = PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template");
    let err = t
        .render(&ArtifactMeta {
            tenant_id: String::new(),
            ..meta()
        })
        .expect_err("missing tenant");
    assert_eq!(
        err.message,
        "Missing 'tenant_id' in metadata for upload path generation."
    );
    let err = t
        .render(&ArtifactMeta {
            dag_node_id: "..".into(),
            ..meta()
        })
        .expect_err("dot dot");
    assert!(
        err.message.contains("not a valid path segment"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn write_then_read_round_trips_rows_nulls_and_hash() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    assert_eq!(artifact.backend, "local");
    assert_eq!(artifact.format, "parquet");
    assert_eq!(artifact.row_count, 3);
    assert_eq!(artifact.columns, vec!["product", "units", "ratio"]);
    assert_eq!(artifact.path_template, DEFAULT_PATH_TEMPLATE);
    assert_eq!(
        artifact.schema_version.as_deref(),
        Some("20240101000000_abcdef01")
    );
    assert!(artifact.uri.starts_with("file:///"));
    assert!(
        artifact
            .uri
            .ends_with("/sq_0d5392e02016/20240101000000_abcdef01/part-00000.parquet")
    );
    let path = artifact.uri.trim_start_matches("file://");
    let bytes = std::fs::read(path).expect("file");
    assert_eq!(artifact.bytes, bytes.len() as u64);
    assert_eq!(artifact.content_hash, nl2sql_state::sha256_hex(&bytes));
    let table = store.read(&artifact).await.expect("read");
    assert_eq!(table.row_count(), 3);
    assert_eq!(table.schema.fields().len(), 3);
    assert_eq!(table.batches[0], batch());
    assert_eq!(files_under(dir.path()), vec!["part-00000.parquet"]);
}

#[tokio::test]
async fn both_durabilities_write_the_same_complete_artifact() {
    let atomic_dir = TempDir::new().expect("temp dir");
    let synced_dir = TempDir::new().expect("temp dir");
    let atomic = store(&atomic_dir);
    assert_eq!(atomic.durability(), Atomic);
    let synced = store(&synced_dir).with_durability(ArtifactDurability::Synced);
    assert_eq!(synced.durability(), ArtifactDurability::Synced);
    let a = atomic
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("atomic");
    let s = synced
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("synced");
    assert_eq!(a.content_hash, s.content_hash);
    assert_eq!(a.bytes, s.bytes);
    for (store, artifact, dir) in [(&atomic, &a, &atomic_dir), (&synced, &s, &synced_dir)] {
        assert_eq!(
            store.read(artifact).await.expect("read").batches,
            vec![batch()]
        );
        // Only the final file: no temporary file is left behind.
        assert_eq!(files_under(dir.path()), vec!["part-00000.parquet"]);
    }
}

#[tokio::test]
async fn columns_are_zstd_compressed() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let file = std::fs::File::open(artifact.uri.trim_start_matches("file://")).expect("file");
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet");
    let column = builder.metadata().row_group(0).column(0);
    assert!(matches!(
        column.compression(),
        parquet::basic::Compression::ZSTD(_)
    ));
    assert!(column.statistics().is_some());
}

#[tokio::test]
async fn empty_result_is_a_valid_file_with_the_schema() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = store.write(&meta(), schema(), &[]).await.expect("written");
    assert_eq!(artifact.row_count, 0);
    let table = store.read(&artifact).await.expect("read");
    assert_eq!(table.row_count(), 0);
    assert_eq!(table.schema.field(1).name(), "units");
}

#[tokio::test]
async fn same_meta_overwrites_the_same_object() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let first = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("first");
    let second = store
        .write(&meta(), schema(), &[batch().slice(0, 1)])
        .await
        .expect("second");
    assert_eq!(first.uri, second.uri);
    assert_ne!(first.content_hash, second.content_hash);
    assert_eq!(files_under(dir.path()), vec!["part-00000.parquet"]);
    assert_eq!(store.read(&second).await.expect("read").row_count(), 1);
    // The first reference no longer matches the bytes under its name.
    assert_eq!(
        store.read(&first).await.expect_err("stale").code,
        ErrorCode::AggregatorFailed
    );
}

#[tokio::test]
async fn tampered_artifact_fails_the_hash_check() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let path = artifact.uri.trim_start_matches("file://").to_owned();
    let mut bytes = std::fs::read(&path).expect("file");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, bytes).expect("tamper");
    let err = store.read(&artifact).await.expect_err("mismatch");
    assert_eq!(err.code, ErrorCode::AggregatorFailed);
    assert!(
        err.message.contains("does not match its content hash"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn missing_foreign_scheme_or_outside_artifacts_are_refused() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let cases = [
        (
            artifact.uri.replace("part-00000", "part-00001"),
            "is missing",
        ),
        (
            "s3://bucket/key.parquet".to_owned(),
            "Unsupported local URI",
        ),
        (
            format!("file://{}", std::env::temp_dir().display()),
            "outside the store",
        ),
    ];
    for (uri, want) in cases {
        let forged = ArtifactRef {
            uri: uri.clone(),
            ..artifact.clone()
        };
        let err = store.read(&forged).await.expect_err("refused");
        assert_eq!(err.code, ErrorCode::AggregatorFailed);
        assert!(err.message.contains(want), "{uri}: {}", err.message);
    }
}

#[tokio::test]
async fn leftover_temporary_files_are_removed_and_finished_ones_kept() {
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let nested = dir.path().join("acme/x");
    std::fs::create_dir_all(&nested).expect("dir");
    std::fs::write(nested.join("part-00000.parquet.tmp-abc"), b"partial").expect("tmp");
    assert_eq!(store.remove_temporary_files().expect("cleaned"), 1);
    assert_eq!(files_under(dir.path()), vec!["part-00000.parquet"]);
}

#[test]
fn opening_a_store_removes_what_a_killed_writer_left_and_nothing_else() {
    let dir = TempDir::new().expect("temp dir");
    let nested = dir.path().join("acme/x");
    std::fs::create_dir_all(&nested).expect("dir");
    // A pid that cannot be running (above the kernel's maximum), one that is (this
    // process), and a name without a pid.
    let dead = "part-00000.parquet.tmp-4194305-0123abcd";
    let alive = format!("part-00001.parquet.tmp-{}-4567ef", std::process::id());
    for name in [dead, alive.as_str(), "part-00002.parquet.tmp-abc"] {
        std::fs::write(nested.join(name), b"partial").expect("tmp");
    }
    std::fs::write(nested.join("part-00003.parquet"), b"whole").expect("final");
    let _store = store(&dir);
    assert_eq!(
        files_under(dir.path()),
        vec![
            alive,
            "part-00002.parquet.tmp-abc".to_owned(),
            "part-00003.parquet".to_owned(),
        ]
    );
}

#[test]
fn timestamps_are_iso_8601_utc() {
    assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(format_utc(1_700_000_000), "2023-11-14T22:13:20Z");
}

#[test]
fn store_reports_its_backend() {
    let dir = TempDir::new().expect("temp dir");
    assert_eq!(store(&dir).backend(), "local");
}

#[test]
fn local_store_works_outside_a_tokio_runtime() {
    // Without a runtime the blocking work runs inline, so the future is ready on its
    // first poll: any executor (here a bare poll) can drive the store.
    fn ready<T>(fut: impl Future<Output = T>) -> T {
        let mut fut = std::pin::pin!(fut);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match fut.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("pending without a runtime"),
        }
    }
    let dir = TempDir::new().expect("temp dir");
    let store = store(&dir);
    let artifact = ready(store.write(&meta(), schema(), &[batch()])).expect("written");
    let table = ready(store.read(&artifact)).expect("read");
    assert_eq!(table.batches, vec![batch()]);
}

#[tokio::test]
async fn open_artifact_store_picks_the_backend_from_the_base_uri() {
    let dir = TempDir::new().expect("temp dir");
    let template = || PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template");
    let none = std::iter::empty::<(&str, &str)>();
    let plain = open_artifact_store(
        &dir.path().display().to_string(),
        template(),
        Atomic,
        none.clone(),
    )
    .expect("path");
    assert_eq!(plain.backend(), "local");
    let url = format!("file://{}", dir.path().join("nested").display());
    let file = open_artifact_store(&url, template(), Atomic, none.clone()).expect("file url");
    assert_eq!(file.backend(), "local");
    let artifact = file
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    assert!(
        artifact.uri.starts_with(&format!(
            "file://{}/nested/acme/",
            dir.path().canonicalize().expect("canonical").display()
        )),
        "{}",
        artifact.uri
    );
    let memory =
        open_artifact_store("memory://runs", template(), Atomic, none.clone()).expect("memory");
    assert_eq!(memory.backend(), "memory");
    let err = open_artifact_store("ftp://host/x", template(), Atomic, none).expect_err("refused");
    assert_eq!(err.code, ErrorCode::InvalidState);
}

#[test]
fn stores_are_object_safe_and_their_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    let dir = TempDir::new().expect("temp dir");
    let stores: Vec<std::sync::Arc<dyn ArtifactStore>> = vec![
        std::sync::Arc::new(store(&dir)),
        std::sync::Arc::new(
            ObjectArtifactStore::from_url(
                "memory://x",
                PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template"),
                std::iter::empty::<(&str, &str)>(),
            )
            .expect("memory"),
        ),
    ];
    for store in &stores {
        let m = meta();
        let batches = [batch()];
        let write = store.write(&m, schema(), &batches);
        send(&write);
        drop(write);
    }
    assert_eq!(
        stores.iter().map(|s| s.backend()).collect::<Vec<_>>(),
        vec!["local", "memory"]
    );
}
