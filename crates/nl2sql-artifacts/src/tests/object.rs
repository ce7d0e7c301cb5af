//! Tests of the object-storage backend: in memory (layout, hashes, refusals, overwrites,
//! concurrency, configuration) and through the real S3 client against the loopback server
//! (round trip, signing, failed uploads).

use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt as _;
use nl2sql_state::{ArtifactRef, ErrorCode, sha256_hex};
use object_store::aws::AmazonS3Builder;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{BackoffConfig, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};

use super::s3_server::{PutMode, S3Server};
use super::{batch, meta, schema};
use crate::{
    ArtifactMeta, ArtifactStore, DEFAULT_PATH_TEMPLATE, ObjectArtifactStore, PathTemplate,
};

/// The default template rendered for `meta()`.
const RENDERED: &str = "acme/6f1c9a52-8d3e-4b7a-9c1f-2e5d4a3b2c1d/sql_agent/sq_0d5392e02016/20240101000000_abcdef01/part-00000.parquet";

fn template() -> PathTemplate {
    PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("template")
}

/// An in-memory store addressed as `url`, and the inner store, to look at the objects.
fn in_memory(url: &str) -> (ObjectArtifactStore, Arc<dyn ObjectStore>) {
    let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let store = ObjectArtifactStore::new(Arc::clone(&inner), url, template()).expect("store");
    (store, inner)
}

async fn object_bytes(store: &Arc<dyn ObjectStore>, key: &str) -> Vec<u8> {
    store
        .get(&Path::parse(key).expect("key"))
        .await
        .expect("object")
        .bytes()
        .await
        .expect("bytes")
        .to_vec()
}

/// Every key in `store`, sorted.
async fn keys(store: &Arc<dyn ObjectStore>) -> Vec<String> {
    let mut out: Vec<String> = store
        .list(None)
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .expect("listed");
    out.sort();
    out
}

/// An S3 client for the loopback server at `endpoint`, configured through
/// `ObjectArtifactStore::from_url` options like a deployment would be.
fn s3_store(endpoint: &str) -> ObjectArtifactStore {
    ObjectArtifactStore::from_url(
        "s3://bucket/team/prod/",
        template(),
        [
            ("aws_endpoint", endpoint),
            ("aws_allow_http", "true"),
            ("aws_virtual_hosted_style_request", "false"),
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "AKIDEXAMPLE"),
            ("aws_secret_access_key", "wJalrXUtnFEMI-test-secret"),
        ],
    )
    .expect("s3 store")
}

#[tokio::test]
async fn s3_layout_round_trips_rows_schema_and_hash() {
    let (store, inner) = in_memory("s3://bucket/team/prod/");
    assert_eq!(store.backend(), "s3");
    assert_eq!(store.prefix(), "team/prod");
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    // storage.md §1.3: s3://<bucket>/<prefix without trailing slash>/<rendered>.
    assert_eq!(artifact.uri, format!("s3://bucket/team/prod/{RENDERED}"));
    assert_eq!(artifact.backend, "s3");
    assert_eq!(artifact.format, "parquet");
    assert_eq!(artifact.row_count, 3);
    assert_eq!(artifact.columns, vec!["product", "units", "ratio"]);
    assert_eq!(artifact.path_template, DEFAULT_PATH_TEMPLATE);
    assert_eq!(
        artifact.schema_version.as_deref(),
        Some("20240101000000_abcdef01")
    );
    // One object, no temporary one, its key without a leading slash.
    let key = format!("team/prod/{RENDERED}");
    assert_eq!(keys(&inner).await, vec![key.clone()]);
    let stored = object_bytes(&inner, &key).await;
    assert_eq!(artifact.bytes, stored.len() as u64);
    assert_eq!(artifact.content_hash, sha256_hex(&stored));
    assert_eq!(&stored[..4], b"PAR1");
    let table = store.read(&artifact).await.expect("read");
    assert_eq!(table.schema, schema());
    assert_eq!(table.batches, vec![batch()]);
}

#[tokio::test]
async fn an_empty_prefix_adds_no_segment_and_memory_urls_work() {
    let (store, inner) = in_memory("s3://bucket");
    let artifact = store.write(&meta(), schema(), &[]).await.expect("written");
    assert_eq!(artifact.uri, format!("s3://bucket/{RENDERED}"));
    assert_eq!(keys(&inner).await, vec![RENDERED.to_owned()]);
    assert_eq!(store.read(&artifact).await.expect("read").row_count(), 0);

    let memory = ObjectArtifactStore::from_url(
        "memory://runs/today",
        template(),
        std::iter::empty::<(&str, &str)>(),
    )
    .expect("memory");
    let artifact = memory
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    assert_eq!(artifact.backend, "memory");
    assert_eq!(artifact.uri, format!("memory://runs/today/{RENDERED}"));
    assert_eq!(memory.read(&artifact).await.expect("read").row_count(), 3);
}

#[tokio::test]
async fn overwritten_bytes_fail_the_hash_check() {
    let (store, inner) = in_memory("s3://bucket/team/prod");
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let key = Path::parse(format!("team/prod/{RENDERED}")).expect("key");
    let mut bytes = object_bytes(&inner, key.as_ref()).await;
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let tampered = sha256_hex(&bytes);
    inner
        .put(&key, PutPayload::from(bytes))
        .await
        .expect("overwrite");
    let err = store.read(&artifact).await.expect_err("mismatch");
    assert_eq!(err.code, ErrorCode::AggregatorFailed);
    assert_eq!(
        err.message,
        format!(
            "artifact '{}' does not match its content hash (expected {}, found {tampered})",
            artifact.uri, artifact.content_hash
        )
    );

    // Bytes that match their hash but are not parquet are refused too.
    inner
        .put(&key, PutPayload::from_static(b"not parquet"))
        .await
        .expect("overwrite");
    let garbage = ArtifactRef {
        content_hash: sha256_hex(b"not parquet"),
        ..artifact
    };
    let err = store.read(&garbage).await.expect_err("not parquet");
    assert!(
        err.message.contains("is not readable parquet"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn missing_objects_and_foreign_uris_are_refused() {
    let (store, _inner) = in_memory("s3://bucket/team/prod");
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    let missing = artifact.uri.replace("part-00000", "part-00001");
    let cases = [
        (missing.clone(), format!("artifact '{missing}' is missing")),
        (
            format!("gs://bucket/team/prod/{RENDERED}"),
            format!("Unsupported S3 URI: 'gs://bucket/team/prod/{RENDERED}'"),
        ),
        (
            format!("s3://other/team/prod/{RENDERED}"),
            format!("Unsupported S3 URI: 's3://other/team/prod/{RENDERED}'"),
        ),
        (
            format!("s3://bucket//team/prod/{RENDERED}"),
            "Unsupported S3 URI".to_owned(),
        ),
        (
            "s3://bucket/team/prod/a/../../../etc/x.parquet".to_owned(),
            "Unsupported S3 URI".to_owned(),
        ),
        (
            "file:///tmp/x.parquet".to_owned(),
            "Unsupported S3 URI: 'file:///tmp/x.parquet'".to_owned(),
        ),
        (
            format!("s3://bucket/team/other/{RENDERED}"),
            format!("artifact 's3://bucket/team/other/{RENDERED}' is outside the store"),
        ),
        (
            format!("s3://bucket/team/prodx/{RENDERED}"),
            format!("artifact 's3://bucket/team/prodx/{RENDERED}' is outside the store"),
        ),
    ];
    for (uri, want) in cases {
        let forged = ArtifactRef {
            uri: uri.clone(),
            ..artifact.clone()
        };
        let err = store.read(&forged).await.expect_err("refused");
        assert_eq!(err.code, ErrorCode::AggregatorFailed, "{uri}");
        assert!(err.message.starts_with(&want), "{uri}: {}", err.message);
    }
}

#[tokio::test]
async fn same_meta_overwrites_the_same_object() {
    let (store, inner) = in_memory("s3://bucket/team/prod");
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
    assert_eq!(keys(&inner).await.len(), 1);
    assert_eq!(store.read(&second).await.expect("read").row_count(), 1);
    // The first reference no longer matches the bytes under its name.
    let err = store.read(&first).await.expect_err("stale");
    assert!(err.message.contains("does not match its content hash"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_of_different_nodes_all_land() {
    let (store, inner) = in_memory("s3://bucket/team/prod");
    let store: Arc<dyn ArtifactStore> = Arc::new(store);
    let mut tasks = tokio::task::JoinSet::new();
    for node in 0..8_usize {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            let m = ArtifactMeta {
                dag_node_id: format!("sq_{node}"),
                ..meta()
            };
            let rows = batch().slice(0, node % 3 + 1);
            let artifact = store.write(&m, schema(), &[rows]).await.expect("written");
            (node, artifact)
        });
    }
    let mut written = Vec::new();
    while let Some(done) = tasks.join_next().await {
        written.push(done.expect("task"));
    }
    written.sort_by_key(|(node, _)| *node);
    assert_eq!(keys(&inner).await.len(), 8);
    for (node, artifact) in &written {
        assert!(
            artifact.uri.contains(&format!("/sql_agent/sq_{node}/")),
            "{}",
            artifact.uri
        );
        let table = store.read(artifact).await.expect("read");
        assert_eq!(table.row_count(), node % 3 + 1, "node {node}");
        assert_eq!(table.batches[0], batch().slice(0, node % 3 + 1));
    }
}

#[tokio::test]
async fn from_url_configures_each_cloud_without_network_and_hides_secrets() {
    let s3 = ObjectArtifactStore::from_url(
        "s3://bucket/p",
        template(),
        [
            ("aws_region", "eu-west-1"),
            ("aws_secret_access_key", "hunter2-secret"),
            ("aws_access_key_id", "AKID"),
        ],
    )
    .expect("s3");
    assert_eq!((s3.backend(), s3.prefix()), ("s3", "p"));
    let shown = format!("{s3:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("s3://bucket/"), "{shown}");

    let adls = ObjectArtifactStore::from_url(
        "abfss://data@acct.dfs.core.windows.net/nl2sql",
        template(),
        [("azure_storage_account_key", "c2VjcmV0")],
    )
    .expect("adls");
    assert_eq!((adls.backend(), adls.prefix()), ("adls", "nl2sql"));
    let by_connection_string = ObjectArtifactStore::from_url(
        "az://data",
        template(),
        [(
            "connection_string",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net",
        )],
    )
    .expect("connection string");
    assert_eq!(by_connection_string.backend(), "adls");

    let gcs = ObjectArtifactStore::from_url(
        "gs://bucket/p",
        template(),
        [("google_bucket", "ignored-the-url-wins")],
    )
    .expect("gcs");
    assert_eq!(gcs.backend(), "gcs");
    assert!(format!("{gcs:?}").contains("gs://bucket/"));

    let err = ObjectArtifactStore::from_url("s3://bucket", template(), [("colour", "blue")])
        .expect_err("unknown option");
    assert_eq!(err.code, ErrorCode::InvalidState);
    assert_eq!(err.message, "unknown S3 artifact store option 'colour'");
    if std::env::var_os("AZURE_STORAGE_ACCOUNT_NAME").is_none() {
        let err = ObjectArtifactStore::from_url(
            "az://data",
            template(),
            std::iter::empty::<(&str, &str)>(),
        )
        .expect_err("no account");
        assert_eq!(err.message, "ADLS account is not configured.");
    }
}

#[tokio::test]
async fn s3_client_round_trips_through_a_loopback_server() {
    let server = S3Server::start(PutMode::Store).await;
    let store = s3_store(&server.endpoint());
    let artifact = store
        .write(&meta(), schema(), &[batch()])
        .await
        .expect("written");
    assert_eq!(artifact.uri, format!("s3://bucket/team/prod/{RENDERED}"));
    let path = format!("/bucket/team/prod/{RENDERED}");
    {
        let state = server.state();
        // Path-style, one signed PUT of the whole object under its final key.
        let puts: Vec<_> = state
            .requests
            .iter()
            .filter(|r| r.method == "PUT")
            .collect();
        assert_eq!(puts.len(), 1, "{:?}", state.requests);
        assert_eq!(puts[0].path, path);
        let auth = puts[0].authorization.as_deref().unwrap_or_default();
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
            "{auth}"
        );
        assert!(!auth.contains("wJalrXUtnFEMI"), "{auth}");
        let stored = &state.objects[&path];
        assert_eq!(artifact.content_hash, sha256_hex(stored));
        assert_eq!(artifact.bytes, stored.len() as u64);
    }
    let table = store.read(&artifact).await.expect("read");
    assert_eq!(table.batches, vec![batch()]);
    assert!(
        server
            .state()
            .requests
            .iter()
            .any(|r| r.method == "GET" && r.path == path)
    );

    // Bytes changed on the server are caught by the hash.
    server
        .state()
        .objects
        .get_mut(&path)
        .expect("object")
        .push(0);
    let err = store.read(&artifact).await.expect_err("mismatch");
    assert!(
        err.message.contains("does not match its content hash"),
        "{}",
        err.message
    );

    // A 404 is a missing artifact naming its URI.
    let missing = ArtifactRef {
        uri: artifact.uri.replace("part-00000", "part-00009"),
        ..artifact
    };
    let err = store.read(&missing).await.expect_err("missing");
    assert_eq!(err.code, ErrorCode::AggregatorFailed);
    assert!(
        err.message
            .starts_with(&format!("artifact '{}' is missing", missing.uri)),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_failed_s3_upload_leaves_no_object_and_reports_execution_failed() {
    for mode in [PutMode::Fail, PutMode::Drop] {
        let server = S3Server::start(mode).await;
        let client = AmazonS3Builder::new()
            .with_bucket_name("bucket")
            .with_region("us-east-1")
            .with_endpoint(server.endpoint())
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_access_key_id("AKIDEXAMPLE")
            .with_secret_access_key("secret")
            .with_retry(RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(5),
                    max_backoff: Duration::from_millis(20),
                    base: 2.0,
                },
                max_retries: 1,
                retry_timeout: Duration::from_secs(5),
            })
            .build()
            .expect("client");
        let store = ObjectArtifactStore::new(Arc::new(client), "s3://bucket/team/prod", template())
            .expect("store");
        let started = std::time::Instant::now();
        let err = store
            .write(&meta(), schema(), &[batch()])
            .await
            .expect_err("upload fails");
        assert!(started.elapsed() < Duration::from_secs(10), "{mode:?}");
        assert_eq!(err.code, ErrorCode::ExecutionFailed, "{mode:?}");
        let uri = format!("s3://bucket/team/prod/{RENDERED}");
        assert!(
            err.message
                .starts_with(&format!("cannot write artifact '{uri}': ")),
            "{mode:?}: {}",
            err.message
        );
        assert!(!err.message.contains("secret"), "{}", err.message);
        {
            let state = server.state();
            assert!(state.objects.is_empty(), "{mode:?}");
            // Only the final key was ever addressed: no temporary objects to clean up.
            let path = format!("/bucket/team/prod/{RENDERED}");
            let puts: Vec<_> = state
                .requests
                .iter()
                .filter(|r| r.method == "PUT")
                .collect();
            // The first attempt and the one retry the client was configured for.
            assert_eq!(puts.len(), 2, "{mode:?}: {puts:?}");
            assert!(puts.iter().all(|r| r.path == path), "{mode:?}: {puts:?}");
        }
        // Nothing is readable under the final name.
        let would_be = ArtifactRef {
            uri: uri.clone(),
            backend: "s3".into(),
            format: "parquet".into(),
            row_count: 3,
            columns: vec![],
            bytes: 0,
            content_hash: String::new(),
            created_at: String::new(),
            schema_version: None,
            path_template: DEFAULT_PATH_TEMPLATE.into(),
        };
        let err = store.read(&would_be).await.expect_err("nothing there");
        assert!(
            err.message
                .starts_with(&format!("artifact '{uri}' is missing")),
            "{mode:?}: {}",
            err.message
        );
    }
}
