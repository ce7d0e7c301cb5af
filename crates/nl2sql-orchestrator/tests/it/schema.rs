//! Schema changes and what the configuration adds to the engine: re-indexing only a
//! datasource whose structure changed, the schema-version mismatch policy, the resolver's
//! fallback when the index ranks no datasource, documentation files reaching the index
//! and the decomposer, and the artifact store named by `[artifacts]`.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use nl2sql_orchestrator::{
    AskOptions, DatasourceRegistry, Engine, EngineOptions, artifact_store, load_docs,
};
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    ArtifactDurability, ArtifactsSection, ConfigFile, EnvSecrets, ErrorCode, MismatchPolicy,
    PipelineError,
};
use nl2sql_test_support::TempDir;

use crate::support::fixture;

/// A writable copy of the fixture in `dir` and its ad-hoc registry (id `plant`).
fn plant(dir: &Path) -> (PathBuf, DatasourceRegistry) {
    let db = dir.join("plant.db");
    std::fs::copy(fixture(), &db).unwrap();
    let registry = DatasourceRegistry::ad_hoc(
        &format!("sqlite://{}", db.display()),
        crate::support::drivers(),
    )
    .unwrap();
    (db, registry)
}

fn options(policy: MismatchPolicy) -> EngineOptions {
    EngineOptions {
        today: Some("2024-06-30".to_owned()),
        schema_version_mismatch: policy,
        ..EngineOptions::default()
    }
}

fn write(db: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(sql).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_datasource_whose_structure_changed_is_indexed_again() {
    let dir = TempDir::new("stale");
    let (db, registry) = plant(dir.path());
    let engine =
        Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data")).unwrap();
    let first = engine.index_stale().await;
    assert_eq!(first.indexed.len(), 1, "never indexed: {:?}", first.failed);
    let v1 = first.indexed[0].schema_version.clone();
    assert!(engine.index_stale().await.indexed.is_empty(), "unchanged");

    // New rows are not a new schema.
    write(
        &db,
        "INSERT INTO factories (name, location, opened_on) VALUES ('Plant Oslo', 'Oslo', '2024-01-01');",
    );
    assert!(engine.index_stale().await.indexed.is_empty(), "rows only");

    // A new column is.
    write(&db, "ALTER TABLE factories ADD COLUMN region TEXT;");
    let again = engine.index_stale().await;
    assert_eq!(again.indexed.len(), 1);
    let v2 = again.indexed[0].schema_version.clone();
    assert_ne!(v1, v2);
    assert_eq!(
        engine.store().latest_version("plant").as_deref(),
        Some(v2.as_str())
    );
    let snapshot = engine.store().latest_snapshot("plant").unwrap();
    assert!(
        snapshot.contract.tables["main.factories"]
            .columns
            .contains_key("region")
    );
    assert!(engine.index_stale().await.indexed.is_empty());

    // A datasource that died is reported, not indexed, and not fatal (a new engine: an
    // open connection would still read the unlinked file).
    drop(engine);
    std::fs::remove_file(&db).unwrap();
    let registry = DatasourceRegistry::ad_hoc(
        &format!("sqlite://{}", db.display()),
        crate::support::drivers(),
    )
    .unwrap();
    let engine =
        Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data")).unwrap();
    let gone = engine.index_stale().await;
    assert!(gone.indexed.is_empty());
    assert_eq!(gone.failed.len(), 1);
    assert_eq!(gone.failed[0].0, "plant");
}

/// An engine whose schema store holds a newer version than the index was built from:
/// indexed, then the table changes and only the store learns of it.
async fn mismatched(dir: &Path, policy: MismatchPolicy) -> Engine {
    // A description, so the index ranks the datasource for the question (the check
    // compares the ranked document's version with the store's).
    let db = dir.join("plant.db");
    std::fs::copy(fixture(), &db).unwrap();
    let config = ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"plant\"\ndescription = \"Our factories\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let registry =
        DatasourceRegistry::from_config(&config, dir, &EnvSecrets, crate::support::drivers())
            .unwrap();
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data"))
        .unwrap()
        .with_options(options(policy));
    assert_eq!(engine.index_all().await.indexed.len(), 1);
    write(&db, "ALTER TABLE machines ADD COLUMN vendor TEXT;");
    let adapter = engine.registry().adapter("plant").await.unwrap();
    let mut snapshot = adapter.schema_snapshot().await.unwrap();
    snapshot.contract.datasource_id = "plant".to_owned();
    engine.store().register_snapshot(snapshot).unwrap();
    engine
}

const QUESTION: &str = "How many factories do we have?";
const MISMATCH: &str = "Schema version mismatch for datasources: plant";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mismatch_policy_warns_fails_or_ignores() {
    let dir = TempDir::new("mismatch-warn");
    let r = mismatched(dir.path(), MismatchPolicy::Warn)
        .await
        .ask(QUESTION, AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert!(r.warnings.iter().any(|w| w == MISMATCH), "{:?}", r.warnings);

    let dir = TempDir::new("mismatch-fail");
    let r = mismatched(dir.path(), MismatchPolicy::Fail)
        .await
        .ask(QUESTION, AskOptions::default())
        .await;
    assert!(!r.success);
    assert!(r.subqueries.is_empty(), "nothing runs");
    assert_eq!(r.errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(r.errors[0].code, ErrorCode::InvalidState);
    assert_eq!(r.errors[0].message, MISMATCH);

    let dir = TempDir::new("mismatch-ignore");
    let r = mismatched(dir.path(), MismatchPolicy::Ignore)
        .await
        .ask(QUESTION, AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert!(
        !r.warnings.iter().any(|w| w.contains("mismatch")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_ranked_datasource_every_indexed_one_is_considered() {
    let dir = TempDir::new("fallback");
    let (_, registry) = plant(dir.path());
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data"))
        .unwrap()
        .with_options(options(MismatchPolicy::Warn));
    // Nothing indexed: the index cannot help, and says so.
    let r = engine.ask("Xyzzy plugh?", AskOptions::default()).await;
    assert_eq!(r.errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(r.errors[0].code, ErrorCode::SchemaRetrievalFailed);
    assert!(r.errors[0].message.contains("schema index unavailable"));

    // Indexed, but no word of the question is in any document: the datasource is still
    // tried (with a warning), and the planner names what it could not link.
    engine.index_all().await;
    let r = engine.ask("Xyzzy plugh?", AskOptions::default()).await;
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("every indexed datasource was considered")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(r.errors[0].code, ErrorCode::AmbiguousQuestion);
    assert!(
        r.errors[0].message.contains("Xyzzy"),
        "{}",
        r.errors[0].message
    );
}

/// Delegates to the offline planner and keeps every decompose request.
#[derive(Debug)]
struct Recording {
    inner: OfflinePlanner,
    seen: Mutex<Vec<DecomposeRequest>>,
}

#[async_trait]
impl Planner for Recording {
    fn name(&self) -> String {
        "recording".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.seen.lock().unwrap().push(r.clone());
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documentation_files_reach_the_index_and_the_decomposer() {
    let dir = TempDir::new("docs");
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(
        dir.join("docs.json"),
        r#"{"version": 1, "datasources": {"plant": {"domains": ["manufacturing", " stock "],
            "tables": {"inventory": {
            "description": "Stock per warehouse", "columns": {"on_hand": "Units on the shelf"}}}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("questions.json"),
        r#"{"version": 1, "datasources": {"plant": ["How many units are on the shelf?"]}}"#,
    )
    .unwrap();
    let config = ConfigFile::from_toml_str(
        "version = 1\nschema_docs = \"docs.json\"\nquestions = \"questions.json\"\n\n\
         [[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let docs = load_docs(&config, dir.path()).unwrap();
    let registry = DatasourceRegistry::from_config(
        &config,
        dir.path(),
        &EnvSecrets,
        crate::support::drivers(),
    )
    .unwrap();
    let planner = Arc::new(Recording {
        inner: OfflinePlanner::new(),
        seen: Mutex::new(Vec::new()),
    });
    let engine = Engine::open(registry, planner.clone(), &dir.join("data"))
        .unwrap()
        .with_options(options(MismatchPolicy::Warn))
        .with_docs(docs);
    engine.index_all().await;
    let snapshot = engine.store().latest_snapshot("plant").unwrap();
    let metadata = snapshot.metadata.unwrap();
    let domains = vec!["manufacturing".to_owned(), "stock".to_owned()];
    assert_eq!(metadata.domains.as_ref(), Some(&domains));
    let inventory = &metadata.tables["main.inventory"];
    assert_eq!(
        inventory.description.as_deref(),
        Some("Stock per warehouse")
    );
    assert_eq!(
        inventory.columns["on_hand"].description.as_deref(),
        Some("Units on the shelf")
    );
    let r = engine
        .ask(
            "How many inventory records are there?",
            AskOptions::default(),
        )
        .await;
    assert!(r.success, "{:#?}", r.errors);
    let seen = planner.seen.lock().unwrap();
    assert_eq!(
        seen[0].datasources[0].examples,
        vec!["How many units are on the shelf?".to_owned()]
    );
    // The documented domains reach the decomposer (GAP-23).
    assert_eq!(seen[0].datasources[0].domains, domains);

    // A documentation file that is missing is an error naming its key.
    let bad = ConfigFile::from_toml_str(
        "version = 1\nquestions = \"nope.json\"\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let err = load_docs(&bad, dir.path()).unwrap_err().to_string();
    assert!(
        err.starts_with("questions: ") && err.contains("nope.json"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_artifact_store_receives_the_results() {
    let dir = TempDir::new("artifacts");
    let (_, registry) = plant(dir.path());
    let memory = ArtifactsSection {
        uri: "memory://results".to_owned(),
        path_template: None,
        durability: ArtifactDurability::Atomic,
    };
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data"))
        .unwrap()
        .with_options(options(MismatchPolicy::Warn))
        .with_artifacts(artifact_store(&memory, dir.path(), &[]).unwrap());
    engine.index_all().await;
    let r = engine.ask(QUESTION, AskOptions::default()).await;
    assert!(r.success, "{:#?}", r.errors);
    let artifact = r.subqueries[0].artifact.as_ref().unwrap();
    assert!(
        artifact.uri.starts_with("memory://results/"),
        "{}",
        artifact.uri
    );
    assert_eq!(r.rows, Some(vec![vec![serde_json::json!(3)]]));

    // A relative directory is relative to the configuration file's directory.
    let local = ArtifactsSection {
        uri: "out".to_owned(),
        path_template: Some("runs/<request_id>/<dag_node_id>.parquet".to_owned()),
        durability: ArtifactDurability::Synced,
    };
    let (_, registry) = plant(dir.path());
    let engine = Engine::open(
        registry,
        Arc::new(OfflinePlanner::new()),
        &dir.join("data2"),
    )
    .unwrap()
    .with_options(options(MismatchPolicy::Warn))
    .with_artifacts(artifact_store(&local, dir.path(), &[]).unwrap());
    engine.index_all().await;
    let r = engine.ask(QUESTION, AskOptions::default()).await;
    assert!(r.success, "{:#?}", r.errors);
    let runs = dir.join("out/runs");
    let written: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .flat_map(|run| std::fs::read_dir(run.path()).unwrap().flatten())
        .map(|f| f.path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].extension().is_some_and(|x| x == "parquet"));
    assert!(!dir.join("data2/artifacts").join("runs").exists());

    // A bad template or scheme is INVALID_STATE naming the key.
    let bad = ArtifactsSection {
        uri: "ftp://nowhere".to_owned(),
        path_template: None,
        durability: ArtifactDurability::Atomic,
    };
    let err = artifact_store(&bad, dir.path(), &[]).err().unwrap();
    assert_eq!(err.code, ErrorCode::InvalidState);
    assert!(err.message.starts_with("artifacts.uri"), "{}", err.message);
}

#[test]
fn settings_come_from_the_file_then_the_environment() {
    let file = ConfigFile::from_toml_str(
        "version = 1\n[engine]\nschema_version_mismatch = \"fail\"\nmax_parallel_scans = 2\nmax_retries = 5\nglobal_timeout_sec = 12.5\n",
    )
    .unwrap();
    let from_file = EngineOptions::default().with_section(&file.engine);
    assert_eq!(from_file.schema_version_mismatch, MismatchPolicy::Fail);
    assert_eq!(from_file.max_parallel_scans, 2);
    assert_eq!(from_file.max_retries, 5);
    assert_eq!(
        from_file.global_timeout,
        std::time::Duration::from_millis(12_500)
    );

    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let both = from_file
        .clone()
        .with_env(env(&[
            ("SCHEMA_VERSION_MISMATCH_POLICY", "Ignore"),
            ("SANDBOX_EXEC_WORKERS", "3"),
            ("LOGICAL_VALIDATOR_STRICT_COLUMNS", "false"),
            ("SQL_AGENT_RETRY_JITTER_SEC", "0"),
            ("PHYSICAL_MAX_COST", "1e6"),
            ("LLM_TIMEOUT_SEC", "7"),
            ("VALUE_GROUNDING_MAX_VALUES", "25"),
        ]))
        .unwrap();
    assert_eq!(both.schema_version_mismatch, MismatchPolicy::Ignore);
    assert_eq!(both.max_parallel_scans, 3);
    assert!(!both.strict_columns);
    assert_eq!(both.retry_jitter, std::time::Duration::ZERO);
    assert_eq!(both.max_cost, Some(1e6));
    assert_eq!(both.planner_timeout, std::time::Duration::from_secs(7));
    assert_eq!(both.value_lookup_limit, 25);
    assert_eq!(from_file.value_lookup_limit, 1_000);
    assert_eq!(both.max_retries, 5, "unset variables keep the file's value");
    let scans = from_file
        .clone()
        .with_env(env(&[
            ("SANDBOX_EXEC_WORKERS", "3"),
            ("MAX_PARALLEL_SCANS", "9"),
        ]))
        .unwrap();
    assert_eq!(scans.max_parallel_scans, 9, "MAX_PARALLEL_SCANS wins");

    for (pairs, key) in [
        (&[("MAX_PARALLEL_SCANS", "0")][..], "MAX_PARALLEL_SCANS"),
        (&[("GLOBAL_TIMEOUT_SEC", "soon")][..], "GLOBAL_TIMEOUT_SEC"),
        (
            &[("SCHEMA_VERSION_MISMATCH_POLICY", "shrug")][..],
            "SCHEMA_VERSION_MISMATCH_POLICY",
        ),
        (
            &[("LOGICAL_VALIDATOR_STRICT_COLUMNS", "maybe")][..],
            "LOGICAL_VALIDATOR_STRICT_COLUMNS",
        ),
        (
            &[("SQL_AGENT_MAX_RETRIES", "-1")][..],
            "SQL_AGENT_MAX_RETRIES",
        ),
        (&[("PHYSICAL_MAX_COST", "0")][..], "PHYSICAL_MAX_COST"),
        (
            &[("VALUE_GROUNDING_MAX_VALUES", "all")][..],
            "VALUE_GROUNDING_MAX_VALUES",
        ),
    ] {
        let pairs: &'static [(&'static str, &'static str)] =
            Box::leak(pairs.to_vec().into_boxed_slice());
        let err = EngineOptions::default().with_env(env(pairs)).unwrap_err();
        assert!(err.to_string().starts_with(key), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_datasource_is_used_and_an_unknown_one_is_named() {
    let dir = TempDir::new("override");
    let (_, registry) = plant(dir.path());
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), &dir.join("data"))
        .unwrap()
        .with_options(options(MismatchPolicy::Warn));
    engine.index_all().await;
    // No word of this question is in the datasource's documents; the override needs none.
    let pick = |id: &str| AskOptions {
        datasource: Some(id.to_owned()),
        ..AskOptions::default()
    };
    let r = engine.ask(QUESTION, pick("plant")).await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.subqueries[0].datasource_id, "plant");
    assert!(
        !r.warnings
            .iter()
            .any(|w| w.contains("every indexed datasource")),
        "{:?}",
        r.warnings
    );
    let r = engine.ask(QUESTION, pick("nope")).await;
    assert_eq!(r.errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(r.errors[0].code, ErrorCode::InvalidState);
    assert_eq!(r.errors[0].message, "Datasource not found: nope");
    assert!(r.subqueries.is_empty());
}
