//! Unit tests of the binary's settings: files, storage placement, the artifact store and
//! the refused variables, each through an injected lookup.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};

use nl2sql_state::ArtifactDurability;

use super::*;

fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| (*v).to_owned())
            .filter(|v| !v.trim().is_empty())
    }
}

fn leak(pairs: &[(&'static str, &'static str)]) -> &'static [(&'static str, &'static str)] {
    Box::leak(pairs.to_vec().into_boxed_slice())
}

/// The error of `validate` under `pairs`, which must name `key` first.
fn refused(pairs: &[(&'static str, &'static str)], key: &str) {
    let lookup = env(leak(pairs));
    let err = validate(&lookup).unwrap_err();
    assert!(err.to_string().starts_with(key), "{pairs:?}: {err}");
}

#[test]
fn unsupported_features_and_bad_values_are_refused_at_startup_naming_the_key() {
    validate(&env(&[])).unwrap();
    for key in [
        "EMBEDDING_MODEL",
        "SECRETS_CONFIG",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ] {
        refused(&[(key, "anything")], key);
    }
    // Blank counts as unset.
    validate(&env(&[("EMBEDDING_MODEL", " ")])).unwrap();
    // One bad value of each layer: engine, registry, index, storage, artifacts, files.
    for (k, v) in [
        ("SQL_AGENT_MAX_RETRIES", "many"),
        ("DEFAULT_ROW_LIMIT", "0"),
        ("CONNECT_TIMEOUT_MS", "soon"),
        ("SCHEMA_STATS_TIMEOUT_MS", "-1"),
        ("SCHEMA_STATS_SAMPLE_ROWS", "lots"),
        ("SANDBOX_INDEX_WORKERS", "0"),
        ("ROUTER_L1_THRESHOLD", "2"),
        ("SCHEMA_CONTEXT_MAX_TABLES", "x"),
        ("SCHEMA_STORE_BACKEND", "sqlite"),
        ("SCHEMA_STORE_BACKEND", "redis"),
        ("VECTOR_STORE_COLLECTION", "../up"),
        ("RESULT_ARTIFACT_BACKEND", "ftp"),
        ("RESULT_ARTIFACT_DURABILITY", "eventually"),
        ("RESULT_ARTIFACT_S3_BUCKET", "b"),
    ] {
        refused(&[(k, v)], k);
    }
    refused(
        &[("NL2SQL_CONFIG", "a.toml"), ("DATASOURCE_CONFIG", "b.toml")],
        "DATASOURCE_CONFIG",
    );
}

#[test]
fn the_configuration_file_comes_from_the_flag_then_either_variable() {
    let flag = PathBuf::from("flag.toml");
    assert_eq!(
        config_path(Some(&flag), &env(&[("NL2SQL_CONFIG", "a.toml")])).unwrap(),
        Some(flag)
    );
    assert_eq!(
        config_path(None, &env(&[("DATASOURCE_CONFIG", "d.toml")])).unwrap(),
        Some(PathBuf::from("d.toml"))
    );
    assert_eq!(
        config_path(
            None,
            &env(&[("NL2SQL_CONFIG", "a.toml"), ("DATASOURCE_CONFIG", "a.toml")])
        )
        .unwrap(),
        Some(PathBuf::from("a.toml"))
    );
    assert_eq!(config_path(None, &env(&[])).unwrap(), None);
    assert_eq!(
        llm_config_path(None, &env(&[("LLM_CONFIG", "llm.toml")])),
        Some((PathBuf::from("llm.toml"), "LLM_CONFIG"))
    );
    assert_eq!(
        policy_path(&env(&[("POLICIES_CONFIG", "p.json")])),
        Some(PathBuf::from("p.json"))
    );
    assert_eq!(
        questions_path(&env(&[("SAMPLE_QUESTIONS", "q.json")])),
        Some(PathBuf::from("q.json"))
    );
}

#[test]
fn storage_is_placed_by_the_settings() {
    let engine = Path::new("data/engines/abc");
    let default = Storage::of(&env(&[]), engine).unwrap();
    assert_eq!(default.store_dir, Some(engine.join("schema_store")));
    assert_eq!(default.index_file, engine.join("index/lexical_index.json"));
    assert_eq!(default.settings, IndexSettings::default());

    let moved = Storage::of(
        &env(&[
            ("SCHEMA_STORE_PATH", "snapshots"),
            ("VECTOR_STORE", "vectors"),
            ("VECTOR_STORE_COLLECTION", "nl2sql_store"),
            ("SCHEMA_STORE_MAX_VERSIONS", "1"),
        ]),
        engine,
    )
    .unwrap();
    assert_eq!(moved.store_dir, Some(PathBuf::from("snapshots/abc")));
    assert_eq!(
        moved.index_file,
        PathBuf::from("vectors/abc/nl2sql_store.json")
    );
    assert_eq!(moved.settings.store_max_versions, 1);

    let memory = Storage::of(&env(&[("SCHEMA_STORE_BACKEND", "Memory")]), engine).unwrap();
    assert_eq!(memory.store_dir, None);
    let store = memory.open_store().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.dir(), None, "nothing written");
    assert_eq!(store.max_versions(), 3);

    let err = Storage::of(
        &env(&[
            ("SCHEMA_STORE_BACKEND", "memory"),
            ("SCHEMA_STORE_PATH", "x"),
        ]),
        engine,
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("SCHEMA_STORE_PATH"), "{err}");
}

fn setting(pairs: &'static [(&'static str, &'static str)]) -> Option<ArtifactSetting> {
    artifacts_setting(&env(pairs), None, Path::new("data")).unwrap()
}

fn artifact_error(
    pairs: &'static [(&'static str, &'static str)],
    configured: Option<&str>,
) -> String {
    let configured = configured.map(|uri| {
        (
            ArtifactsSection {
                uri: uri.to_owned(),
                path_template: None,
                durability: ArtifactDurability::Atomic,
            },
            PathBuf::from("conf"),
        )
    });
    artifacts_setting(&env(pairs), configured, Path::new("data"))
        .unwrap_err()
        .to_string()
}

#[test]
fn the_artifact_backend_builds_its_location_and_refuses_what_it_does_not_use() {
    // Nothing set: the engine's default store.
    assert_eq!(setting(&[]), None);
    assert_eq!(setting(&[("RESULT_ARTIFACT_BACKEND", "local")]), None);

    let s3 = setting(&[
        ("RESULT_ARTIFACT_BACKEND", "s3"),
        ("RESULT_ARTIFACT_S3_BUCKET", "results"),
        ("RESULT_ARTIFACT_S3_PREFIX", "/nl2sql/runs/"),
    ])
    .unwrap();
    assert_eq!(s3.section.uri, "s3://results/nl2sql/runs");
    assert!(s3.options.is_empty());
    // The store opens (no network is used to open one).
    let store = nl2sql_orchestrator::artifact_store(&s3.section, &s3.base, &s3.options)
        .unwrap_or_else(|e| panic!("{e}"));
    let shown = format!("{store:?}");
    assert!(
        shown.contains("results") && shown.contains("nl2sql/runs"),
        "{shown}"
    );

    let adls = setting(&[
        ("RESULT_ARTIFACT_BACKEND", "adls"),
        ("RESULT_ARTIFACT_ADLS_CONTAINER", "artifacts"),
        ("RESULT_ARTIFACT_ADLS_ACCOUNT", "acct"),
        (
            "RESULT_ARTIFACT_ADLS_CONNECTION_STRING",
            "AccountName=acct;AccountKey=c2VjcmV0",
        ),
    ])
    .unwrap();
    assert_eq!(adls.section.uri, "az://artifacts");
    let keys: Vec<&str> = adls.options.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["azure_storage_account_name", "connection_string"]);
    let store = nl2sql_orchestrator::artifact_store(&adls.section, &adls.base, &adls.options)
        .unwrap_or_else(|e| panic!("{e}"));
    let shown = format!("{store:?}");
    assert!(
        shown.contains("artifacts") && !shown.contains("c2VjcmV0"),
        "{shown}"
    );

    let memory = setting(&[("RESULT_ARTIFACT_BACKEND", "memory")]).unwrap();
    assert_eq!(memory.section.uri, "memory://");

    // A base URI of the backend is used as it is.
    let uri = setting(&[
        ("RESULT_ARTIFACT_BACKEND", "s3"),
        ("RESULT_ARTIFACT_BASE_URI", "s3://bucket/p"),
    ])
    .unwrap();
    assert_eq!(uri.section.uri, "s3://bucket/p");

    // The durability and template alone go to the default store, relative to the data
    // directory.
    let synced = setting(&[("RESULT_ARTIFACT_DURABILITY", "synced")]).unwrap();
    assert_eq!(synced.section.uri, "artifacts");
    assert_eq!(synced.base, PathBuf::from("data"));
    assert_eq!(synced.section.durability, ArtifactDurability::Synced);

    for (pairs, configured, key) in [
        (
            leak(&[("RESULT_ARTIFACT_BACKEND", "s3")]),
            None,
            "RESULT_ARTIFACT_BACKEND",
        ),
        (
            leak(&[("RESULT_ARTIFACT_BACKEND", "adls")]),
            None,
            "RESULT_ARTIFACT_BACKEND",
        ),
        (
            leak(&[("RESULT_ARTIFACT_BACKEND", "gcs")]),
            None,
            "RESULT_ARTIFACT_BACKEND",
        ),
        (
            leak(&[
                ("RESULT_ARTIFACT_BACKEND", "s3"),
                ("RESULT_ARTIFACT_BASE_URI", "/tmp/x"),
            ]),
            None,
            "RESULT_ARTIFACT_BASE_URI",
        ),
        (
            leak(&[
                ("RESULT_ARTIFACT_BACKEND", "s3"),
                ("RESULT_ARTIFACT_BASE_URI", "s3://b"),
                ("RESULT_ARTIFACT_S3_BUCKET", "b"),
            ]),
            None,
            "RESULT_ARTIFACT_S3_BUCKET",
        ),
        (
            leak(&[
                ("RESULT_ARTIFACT_BACKEND", "s3"),
                ("RESULT_ARTIFACT_S3_PREFIX", "p"),
            ]),
            None,
            "RESULT_ARTIFACT_S3_PREFIX",
        ),
        (
            leak(&[
                ("RESULT_ARTIFACT_BACKEND", "local"),
                ("RESULT_ARTIFACT_ADLS_ACCOUNT", "a"),
            ]),
            None,
            "RESULT_ARTIFACT_ADLS_ACCOUNT",
        ),
        (
            leak(&[("RESULT_ARTIFACT_S3_BUCKET", "b")]),
            None,
            "RESULT_ARTIFACT_S3_BUCKET",
        ),
        (
            leak(&[("RESULT_ARTIFACT_BACKEND", "local")]),
            Some("s3://configured/bucket"),
            "RESULT_ARTIFACT_BACKEND",
        ),
    ] {
        let err = artifact_error(pairs, configured);
        assert!(err.starts_with(key), "{pairs:?}: {err}");
    }
}

#[test]
fn a_benchmark_matrix_names_one_llm_configuration_per_table() {
    let toml = r#"
[small]
default = { model = "small-model", base_url = "http://127.0.0.1:9/v1", api_key_env = "" }

[large]
default = { model = "large-model", base_url = "http://127.0.0.1:9/v1", api_key_env = "" }
agents.ast_planner = { model = "planner-model" }
"#;
    let entries = parse_matrix(toml, false).unwrap();
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["large", "small"]);
    assert_eq!(entries[0].1.default.model.as_deref(), Some("large-model"));
    assert_eq!(entries[0].1.agents.len(), 1);

    let json = r#"{"b": {"default": {"model": "m"}}, "a": {"default": {"model": "n"}}}"#;
    let names: Vec<String> = parse_matrix(json, true)
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names.len(), 2);

    let err =
        parse_matrix("[bad]\ndefault = { model = \"m\", turbo = true }\n", false).unwrap_err();
    assert!(err.starts_with("configuration 'bad': "), "{err}");
    assert!(err.contains("turbo"), "{err}");
    let err = parse_matrix("name = 3\n", false).unwrap_err();
    assert!(err.contains("'name' is not a table"), "{err}");
}
