//! Unit tests of the shared vocabulary.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;

use crate::*;

/// Exhaustive: adding a variant without listing it here fails to compile.
fn listed(code: ErrorCode) -> bool {
    match code {
        ErrorCode::MissingLlm
        | ErrorCode::MissingSql
        | ErrorCode::MissingDatasourceId
        | ErrorCode::MissingPlan
        | ErrorCode::InvalidState
        | ErrorCode::InvalidPlanStructure
        | ErrorCode::SchemaRetrievalFailed
        | ErrorCode::SqlGenFailed
        | ErrorCode::TableNotFound
        | ErrorCode::ColumnNotFound
        | ErrorCode::InvalidAliasUsage
        | ErrorCode::MissingGroupBy
        | ErrorCode::InvalidDateFormat
        | ErrorCode::InvalidNumericValue
        | ErrorCode::JoinTableNotInPlan
        | ErrorCode::JoinMissingOnClause
        | ErrorCode::SecurityViolation
        | ErrorCode::SafeguardViolation
        | ErrorCode::DbExecutionError
        | ErrorCode::ExecutorCrash
        | ErrorCode::PlanningFailure
        | ErrorCode::AmbiguousQuestion
        | ErrorCode::ValueNotFound
        | ErrorCode::ValidatorCrash
        | ErrorCode::RefinerFailed
        | ErrorCode::PhysicalValidatorFailed
        | ErrorCode::PlanFeedback
        | ErrorCode::UnknownError
        | ErrorCode::AggregatorFailed
        | ErrorCode::PerformanceWarning
        | ErrorCode::ExecutionError
        | ErrorCode::OrchestratorCrash
        | ErrorCode::IntentViolation
        | ErrorCode::PipelineTimeout
        | ErrorCode::ServiceUnavailable
        | ErrorCode::ExecutionTimeout
        | ErrorCode::Cancelled
        | ErrorCode::ExecutionFailed
        | ErrorCode::PlannerFailed
        | ErrorCode::SqlSyntaxError
        | ErrorCode::UnsupportedSql => true,
    }
}

#[test]
fn error_codes_are_complete_unique_and_round_trip() {
    assert_eq!(ErrorCode::ALL.len(), 41);
    let mut names = std::collections::BTreeSet::new();
    for &code in ErrorCode::ALL {
        assert!(listed(code));
        assert!(names.insert(code.as_str()), "duplicate {code}");
        assert_eq!(code.as_str().parse::<ErrorCode>(), Ok(code));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        assert_eq!(
            serde_json::from_value::<ErrorCode>(json!(code.as_str())).unwrap(),
            code
        );
        assert!(!code.description().is_empty());
    }
    assert!("CANCELLED,".parse::<ErrorCode>().is_err());
    assert_eq!(ErrorCode::PlannerFailed.as_str(), "PLANNER_FAILED");
}

#[test]
fn fatal_set_is_exactly_the_spec_one() {
    let fatal: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| c.is_fatal())
        .map(|c| c.as_str())
        .collect();
    assert_eq!(
        fatal,
        vec![
            "MISSING_LLM",
            "MISSING_DATASOURCE_ID",
            "INVALID_STATE",
            "SECURITY_VIOLATION",
            "SAFEGUARD_VIOLATION",
            // Beyond the spec's set: a question the planner cannot read is read the same
            // way on a retry.
            "AMBIGUOUS_QUESTION",
            "INTENT_VIOLATION",
            "PIPELINE_TIMEOUT",
            "CANCELLED"
        ]
    );
}

#[test]
fn retryability_follows_severity_and_fatal_set() {
    let e = |code, severity| PipelineError::new("n", code, severity, "m");
    assert!(e(ErrorCode::ColumnNotFound, Severity::Error).is_retryable());
    assert!(!e(ErrorCode::ColumnNotFound, Severity::Critical).is_retryable());
    assert!(!e(ErrorCode::SecurityViolation, Severity::Error).is_retryable());
    assert!(!e(ErrorCode::Cancelled, Severity::Error).is_retryable());
    assert!(e(ErrorCode::PerformanceWarning, Severity::Warning).is_retryable());
    assert!(!e(ErrorCode::PerformanceWarning, Severity::Warning).is_blocking());
    assert!(e(ErrorCode::ExecutionError, Severity::Error).is_blocking());
}

#[test]
fn safe_messages_replace_internal_text() {
    let e = PipelineError::new(
        "executor",
        ErrorCode::ExecutorCrash,
        Severity::Critical,
        "segfault at 0x0 in /opt/x.so",
    );
    assert_eq!(
        e.safe_message(),
        "The query execution service encountered an unexpected error."
    );
    let e = PipelineError::new(
        "v",
        ErrorCode::ColumnNotFound,
        Severity::Error,
        "column 'x' does not exist",
    );
    assert_eq!(e.safe_message(), "column 'x' does not exist");
}

#[test]
fn pipeline_error_accepts_reference_keys_and_ignores_unknown_ones() {
    let e: PipelineError = serde_json::from_value(json!({
        "node": "planner", "message": "m", "severity": "ERROR", "error_code": "PLANNING_FAILURE", "extra": 1
    }))
    .unwrap();
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.details, None);
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["code"], "PLANNING_FAILURE");
    assert_eq!(v["stack_trace"], serde_json::Value::Null);
}

#[test]
fn pipeline_error_stays_small() {
    // Three strings, a boxed detail, a boxed scan id, two one-byte enums: keep it that way.
    assert_eq!(size_of::<PipelineError>(), 104);
}

#[test]
fn sanitizer_drops_secrets_paths_and_hosts() {
    let s = sanitize_engine_message(
        "could not connect to postgres://admin:hunter2@db.internal:5432/prod; file /var/lib/data.db; host 10.1.2.3 key sk-abcdefghijklmnop password=hunter2",
    );
    for leaked in [
        "hunter2",
        "admin",
        "/var/lib",
        "10.1.2.3",
        "sk-abc",
        "db.internal",
    ] {
        assert!(!s.contains(leaked), "{leaked} leaked: {s}");
    }
    assert!(s.contains("could not connect to"), "{s}");
    let long = "word ".repeat(400);
    let cut = sanitize_engine_message(&long);
    assert_eq!(cut.chars().count(), 500);
    assert!(cut.ends_with("..."));
    assert_eq!(
        sanitize_engine_message("no such column: nme"),
        "no such column: nme"
    );
}

#[test]
fn dialects_parse_with_aliases() {
    for (name, d) in [
        ("duckdb", Dialect::DuckDb),
        ("PostgreSQL", Dialect::Postgres),
        ("pg", Dialect::Postgres),
        ("mariadb", Dialect::MySql),
        ("sqlite3", Dialect::Sqlite),
        ("ansi", Dialect::Generic),
    ] {
        assert_eq!(name.parse::<Dialect>(), Ok(d));
    }
    let err = "oracle".parse::<Dialect>().unwrap_err();
    assert!(
        err.to_string()
            .contains("duckdb, postgres, mysql, sqlite, generic")
    );
    for d in Dialect::ALL {
        assert_eq!(serde_json::to_value(d).unwrap(), json!(d.as_str()));
        assert_eq!(d.as_str().parse::<Dialect>(), Ok(d));
    }
}

#[test]
fn norm_strips_quotes_schemas_and_case() {
    for name in [
        "[main].[orders]",
        "\"main\".\"orders\"",
        "main.orders",
        "ORDERS",
        " `orders` ",
    ] {
        assert_eq!(norm(name), "orders", "{name}");
    }
    assert_eq!(norm_parts("\"my.schema\".t"), vec!["my.schema", "t"]);
}

fn contract(fk_order_reversed: bool) -> SchemaContract {
    let mut c = SchemaContract::new("m", "sqlite");
    let fk = |table: &str, col: &str| ForeignKeyContract {
        constrained_columns: vec![col.to_owned()],
        referred_table: TableRef {
            schema_name: "main".into(),
            table_name: table.into(),
        },
        referred_columns: vec!["id".into()],
        cardinality: Cardinality::Unknown,
        business_meaning: None,
        inferred: false,
    };
    let mut fks = vec![fk("machines", "machine_id"), fk("products", "product_id")];
    if fk_order_reversed {
        fks.reverse();
    }
    let mut columns = indexmap::IndexMap::new();
    columns.insert(
        "id".to_owned(),
        ColumnContract {
            name: "id".into(),
            data_type: "INTEGER".into(),
            is_nullable: false,
            is_primary_key: true,
        },
    );
    c.add_table(TableContract {
        table: TableRef {
            schema_name: "main".into(),
            table_name: "production_runs".into(),
        },
        columns,
        foreign_keys: fks,
    });
    c
}

#[test]
fn fingerprint_ignores_foreign_key_order() {
    assert_eq!(contract(false).fingerprint(), contract(true).fingerprint());
    assert_eq!(contract(false).fingerprint().len(), 64);
    let mut other = contract(false);
    other.engine_type = "duckdb".into();
    assert_ne!(other.fingerprint(), contract(false).fingerprint());
}

#[test]
fn schema_json_round_trips_and_defaults() {
    let c = contract(false);
    let back: SchemaContract = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
    let minimal: ColumnContract =
        serde_json::from_value(json!({"name": "a", "data_type": "INT"})).unwrap();
    assert!(minimal.is_nullable && !minimal.is_primary_key);
}

const POLICY: &str = r#"{ "version": 1,
  "roles": {
    "analyst": { "description": "Production analyst", "role": "analyst",
                 "allowed_datasources": ["manufacturing"],
                 "allowed_tables": ["manufacturing.production_runs", "Manufacturing.Products", "sales.*"],
                 "denied_columns": ["manufacturing.machines.serial_number"] },
    "admin":   { "description": "Everything", "role": "admin",
                 "allowed_datasources": ["*"], "allowed_tables": ["*"] } } }"#;

#[test]
fn policy_evaluation_fails_closed_and_ignores_case() {
    let file = PolicyFile::from_json_str(POLICY).unwrap();
    let analyst = file.access_for(&["analyst".to_owned()]);
    assert!(analyst.datasource_allowed("Manufacturing"));
    assert!(!analyst.datasource_allowed("sales_db"));
    assert!(analyst.table_allowed("manufacturing", Some("main"), "PRODUCTS"));
    assert!(!analyst.table_allowed("manufacturing", None, "machines"));
    assert!(analyst.table_allowed("sales", None, "anything"));
    assert!(analyst.column_denied("manufacturing", "machines", "SERIAL_NUMBER"));
    assert!(!analyst.column_denied("manufacturing", "machines", "name"));
    for roles in [vec![], vec!["ghost".to_owned()]] {
        let none = file.access_for(&roles);
        assert!(!none.datasource_allowed("manufacturing"));
        assert!(!none.table_allowed("manufacturing", None, "production_runs"));
    }
    let admin = file.access_for(&["admin".to_owned(), "ghost".to_owned()]);
    assert!(admin.datasource_allowed("anything") && admin.table_allowed("x", None, "y"));
    assert!(!admin.allows_recursive_cte() && !admin.allows_system_catalogs());
}

#[test]
fn tenants_restrict_datasources_on_top_of_roles_and_fail_closed() {
    // Without a `tenants` section only roles decide, whatever the tenant.
    let single = PolicyFile::from_json_str(POLICY).unwrap();
    assert!(!single.is_multi_tenant());
    let admin = single.access_for_tenant(&["admin".to_owned()], "anyone");
    assert!(admin.datasource_allowed("sales") && admin.table_allowed("sales", None, "t"));

    let multi = POLICY.replace(
        r#""roles": {"#,
        r#""tenants": { "acme": { "description": "Acme plants", "allowed_datasources": ["manufacturing"] },
                       "beta": { "allowed_datasources": ["*"] } },
           "roles": {"#,
    );
    let file = PolicyFile::from_json_str(&multi).unwrap();
    assert!(file.is_multi_tenant());
    let roles = ["admin".to_owned()];
    // acme: the role allows everything, the tenant only manufacturing.
    let acme = file.access_for_tenant(&roles, "acme");
    assert!(acme.datasource_allowed("Manufacturing"));
    assert!(acme.table_allowed("manufacturing", None, "machines"));
    assert!(!acme.datasource_allowed("sales"));
    assert!(!acme.table_allowed("sales", None, "orders"));
    // beta: every datasource its roles allow.
    let beta = file.access_for_tenant(&roles, "beta");
    assert!(beta.datasource_allowed("sales") && beta.table_allowed("sales", None, "orders"));
    // The tenant never widens a role: the analyst of beta still reads no sales_db.
    let analyst = file.access_for_tenant(&["analyst".to_owned()], "beta");
    assert!(analyst.datasource_allowed("manufacturing") && !analyst.datasource_allowed("sales_db"));
    // A tenant the file does not name uses nothing.
    let ghost = file.access_for_tenant(&roles, "ghost");
    assert!(!ghost.datasource_allowed("manufacturing"));
    assert!(!ghost.table_allowed("manufacturing", None, "machines"));
    // The section is strict like the rest of the file.
    let typo = multi.replace(
        "allowed_datasources\": [\"*\"] }",
        "datasources\": [\"*\"] }",
    );
    assert!(PolicyFile::from_json_str(&typo).is_err(), "{typo}");
}

#[test]
fn policy_rejects_ambiguous_entries() {
    let bad_table = POLICY.replace("\"sales.*\"", "\"orders\"");
    assert!(matches!(
        PolicyFile::from_json_str(&bad_table),
        Err(PolicyError::InvalidTable { .. })
    ));
    let bad_column = POLICY.replace(
        "manufacturing.machines.serial_number",
        "machines.serial_number",
    );
    assert!(matches!(
        PolicyFile::from_json_str(&bad_column),
        Err(PolicyError::InvalidDeniedColumn { .. })
    ));
    let unknown_key = POLICY.replace(
        "\"role\": \"admin\"",
        "\"role\": \"admin\", \"superuser\": true",
    );
    assert!(matches!(
        PolicyFile::from_json_str(&unknown_key),
        Err(PolicyError::Parse { .. })
    ));
}

#[test]
fn canonical_json_sorts_keys_and_escapes_non_ascii() {
    let v = json!({"b": 1, "a": [true, null, 1.5], "é": "snow ☃ 😀", "A": {"z": "q\"\n"}});
    assert_eq!(
        canonical_json(&v),
        r#"{"A":{"z":"q\"\n"},"a":[true,null,1.5],"b":1,"\u00e9":"snow \u2603 \ud83d\ude00"}"#
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn trace_ids_are_lowercase_uuids() {
    let id = TraceId::new();
    assert_eq!(id.as_str().len(), 36);
    assert_eq!(id.as_str(), id.as_str().to_lowercase());
    assert_eq!(
        TraceId::parse("3F2B8C1E-0D4A-4B6F-9A51-2C7E8D9F0A1B")
            .unwrap()
            .as_str(),
        "3f2b8c1e-0d4a-4b6f-9a51-2c7e8d9f0a1b"
    );
    assert!(TraceId::parse("not-a-uuid").is_err());
    assert_ne!(TraceId::new(), TraceId::new());
}

fn err(node: &str, msg: &str) -> PipelineError {
    PipelineError::new(node, ErrorCode::ExecutionFailed, Severity::Error, msg)
}

fn scan_delta(node: &str) -> GraphStateDelta {
    GraphStateDelta {
        scan_status: BTreeMap::from([(node.to_owned(), ScanStatus::Failed)]),
        errors: vec![err(node, "first"), err(node, "second")],
        reasoning: vec![ReasoningEntry {
            node: node.to_owned(),
            content: ReasoningContent::Text("x".into()),
            kind: None,
        }],
        ..GraphStateDelta::default()
    }
}

#[test]
fn reducers_append_merge_replace_and_set_once() {
    let mut s = GraphState::new("t1", "q", UserContext::default());
    s.apply(GraphStateDelta {
        errors: vec![err("a", "1")],
        decomposer_response: Some(json!({"v": 1})),
        ..Default::default()
    })
    .unwrap();
    s.apply(GraphStateDelta {
        errors: vec![err("b", "2")],
        decomposer_response: Some(json!({"v": 2})),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        s.errors
            .iter()
            .map(|e| e.message.as_str())
            .collect::<Vec<_>>(),
        ["1", "2"]
    );
    assert_eq!(s.decomposer_response, Some(json!({"v": 2})));
    s.apply(GraphStateDelta {
        scan_status: BTreeMap::from([("n1".into(), ScanStatus::Running)]),
        ..Default::default()
    })
    .unwrap();
    s.apply(GraphStateDelta {
        scan_status: BTreeMap::from([
            ("n1".into(), ScanStatus::Succeeded),
            ("n2".into(), ScanStatus::Pending),
        ]),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(s.scan_status["n1"], ScanStatus::Succeeded);
    assert_eq!(s.scan_status.len(), 2);
    // Same value again is fine; a different one is INVALID_STATE and changes nothing.
    s.apply(GraphStateDelta {
        trace_id: Some("t1".into()),
        ..Default::default()
    })
    .unwrap();
    let before = s.clone();
    let e = s
        .apply(GraphStateDelta {
            trace_id: Some("t2".into()),
            errors: vec![err("c", "3")],
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidState);
    assert_eq!(s, before);
}

#[test]
fn parallel_branches_writing_one_key_are_invalid() {
    let mut s = GraphState::new("t", "q", UserContext::default());
    let e = s
        .merge_parallel(vec![
            ("a".into(), scan_delta("n")),
            ("b".into(), scan_delta("n")),
        ])
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidState);
    assert!(s.errors.is_empty());
}

proptest! {
    #[test]
    fn parallel_merge_does_not_depend_on_completion_order(order in Just((0..6).collect::<Vec<usize>>()).prop_shuffle()) {
        let nodes = ["scan_a", "scan_b", "scan_c", "scan_d", "scan_e", "scan_f"];
        let deltas = |idx: &[usize]| idx.iter().map(|&i| (nodes[i].to_owned(), scan_delta(nodes[i]))).collect::<Vec<_>>();
        let mut sorted = GraphState::new("t", "q", UserContext::default());
        sorted.merge_parallel(deltas(&[0, 1, 2, 3, 4, 5])).unwrap();
        let mut shuffled = GraphState::new("t", "q", UserContext::default());
        shuffled.merge_parallel(deltas(&order)).unwrap();
        prop_assert_eq!(&sorted, &shuffled);
        prop_assert_eq!(sorted.errors[0].node.as_str(), "scan_a");
    }

    #[test]
    fn graph_state_round_trips_through_json(
        query in "\\PC{0,40}", roles in prop::collection::vec("[a-z]{1,8}", 0..3),
        n_err in 0usize..4, status in prop::sample::select(vec![RunStatus::Succeeded, RunStatus::Partial, RunStatus::TimedOut]),
    ) {
        let mut s = GraphState::new(TraceId::new().to_string(), query, UserContext { user_id: Some("u".into()), tenant_id: None, roles });
        for i in 0..n_err {
            s.errors.push(err("x", &format!("e{i}")).with_details(json!({"path": ["a", i]})));
        }
        s.status = Some(status);
        s.artifact_refs.insert("scan_1".into(), ArtifactRef {
            uri: "file:///tmp/a.parquet".into(), backend: "local".into(), format: "parquet".into(), row_count: 3,
            columns: vec!["a".into()], bytes: 10, content_hash: "00".into(), created_at: "2026-01-01T00:00:00Z".into(),
            schema_version: None, path_template: "<tenant_id>/x".into(),
        });
        s.subgraph_outputs.insert("sql_agent:scan_1:t".into(), SubgraphOutput {
            sub_query: Some(json!({"id": "sq_1"})), subgraph_id: "sql_agent:scan_1:t".into(), subgraph_name: Some("sql_agent".into()),
            retry_count: 1, plan: None, sql_draft: Some("SELECT 1".into()), artifact: None, row_count: None,
            attempts: vec![Attempt { attempt: 1, plan: None, sql: Some("SELECT 1".into()), errors: vec![err("executor", "y").in_subgraph("sql_agent:scan_1:t")], feedback: Some("f".into()) }],
            errors: vec![], reasoning: vec![
                ReasoningEntry { node: "n".into(), content: ReasoningContent::Lines(vec!["a".into(), "b".into()]), kind: Some(ReasoningKind::Warning) }
            ], status: ScanStatus::Failed,
        });
        let text = serde_json::to_string(&s).unwrap();
        let back: GraphState = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, s);
    }
}

#[test]
fn subgraph_state_round_trips_and_ignores_unknown_keys() {
    let mut s = SubgraphExecutionState {
        trace_id: "t".into(),
        ..Default::default()
    };
    s.apply(SubgraphStateDelta {
        retry_count: Some(2),
        errors: vec![err("planner", "x")],
        generator_response: Some(json!({"sql_draft": "SELECT 1"})),
        ..Default::default()
    });
    s.apply(SubgraphStateDelta {
        errors: vec![err("executor", "y")],
        attempts: vec![Attempt {
            attempt: 1,
            plan: None,
            sql: Some("SELECT 1".into()),
            errors: vec![],
            feedback: None,
        }],
        ..Default::default()
    });
    assert_eq!(s.errors.len(), 2);
    assert_eq!(s.retry_count, 2);
    let mut v = serde_json::to_value(&s).unwrap();
    v["future_field"] = json!(true);
    let back: SubgraphExecutionState = serde_json::from_value(v).unwrap();
    assert_eq!(back, s);
}

#[test]
fn type_classes_are_read_from_engine_type_names() {
    let cases = [
        ("INTEGER", TypeClass::Numeric),
        ("bigint", TypeClass::Numeric),
        ("DOUBLE PRECISION", TypeClass::Numeric),
        ("decimal(10,2)", TypeClass::Numeric),
        ("NUMBER", TypeClass::Numeric),
        ("DATE", TypeClass::Date),
        (" date ", TypeClass::Date),
        ("DATETIME", TypeClass::DateTime),
        ("TIMESTAMP WITH TIME ZONE", TypeClass::DateTime),
        ("TIME", TypeClass::Time),
        ("BOOLEAN", TypeClass::Boolean),
        ("VARCHAR(20)", TypeClass::Text),
        ("", TypeClass::Text),
    ];
    for (name, class) in cases {
        assert_eq!(TypeClass::of(name), class, "{name}");
    }
}

#[test]
fn breaker_opens_after_fail_max_and_half_opens_after_reset() {
    let b = Breaker::new(
        "llm",
        BreakerConfig {
            fail_max: 2,
            reset_timeout: Duration::from_secs(10),
        },
    );
    let t0 = Instant::now();
    assert!(b.try_acquire_at(t0).is_ok());
    b.on_failure_at(t0);
    assert_eq!(b.state(), BreakerState::Closed);
    b.on_failure_at(t0);
    assert_eq!(b.state(), BreakerState::Open);
    let rejected = b.try_acquire_at(t0 + Duration::from_secs(4)).unwrap_err();
    assert_eq!(rejected.retry_in, Duration::from_secs(6));
    assert!(b.try_acquire_at(t0 + Duration::from_secs(10)).is_ok());
    assert_eq!(b.state(), BreakerState::HalfOpen);
    assert!(
        b.try_acquire_at(t0 + Duration::from_secs(10)).is_err(),
        "one trial at a time"
    );
    b.on_failure_at(t0 + Duration::from_secs(11));
    assert_eq!(b.state(), BreakerState::Open);
    assert!(b.try_acquire_at(t0 + Duration::from_secs(21)).is_ok());
    b.on_success();
    assert_eq!(b.state(), BreakerState::Closed);
    b.on_failure_at(t0);
    assert_eq!(b.state(), BreakerState::Closed, "success reset the count");
}

#[test]
fn abandoned_trial_reopens_the_breaker() {
    let b = Breaker::new(
        "llm",
        BreakerConfig {
            fail_max: 1,
            reset_timeout: Duration::ZERO,
        },
    );
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), BreakerState::Open);
    let trial = b.try_acquire().unwrap();
    assert_eq!(b.state(), BreakerState::HalfOpen);
    drop(trial);
    assert_eq!(b.state(), BreakerState::Open);
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), BreakerState::Closed);
    drop(b.try_acquire().unwrap());
    assert_eq!(
        b.state(),
        BreakerState::Closed,
        "an abandoned closed call changes nothing"
    );
}

#[test]
fn backoff_doubles_up_to_its_cap_and_adds_bounded_jitter() {
    let b = Backoff {
        base: Duration::from_millis(100),
        max: Duration::from_millis(500),
        jitter: Duration::from_millis(40),
    };
    let plain: Vec<u128> = (0..5).map(|n| b.delay(n, 0.0).as_millis()).collect();
    assert_eq!(plain, [100, 200, 400, 500, 500]);
    assert_eq!(b.delay(1, 0.5), Duration::from_millis(220));
    assert!(b.delay(40, 0.999_999) <= Duration::from_millis(540));
    // A unit outside [0, 1) is clamped: the jitter never exceeds its bound.
    assert!(b.delay(0, 7.0) <= Duration::from_millis(140));
    assert_eq!(b.delay(0, -3.0), Duration::from_millis(100));
}

#[test]
fn splitmix64_is_the_reference_sequence_and_streams_differ() {
    // The reference outputs of splitmix64 for seed 0 (Vigna's splitmix64.c).
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    let mut a = SplitMix64::with_stream(7, "orders");
    let mut b = SplitMix64::with_stream(7, "customers");
    assert_ne!(a.next_u64(), b.next_u64());
    let u = SplitMix64::new(42).unit();
    assert!((0.0..1.0).contains(&u));
}

#[test]
fn node_names_are_stable_distinct_snake_case() {
    let names: Vec<&str> = Node::ALL.iter().map(|n| n.as_str()).collect();
    let unique: std::collections::BTreeSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
    assert!(
        names
            .iter()
            .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
    );
    assert_eq!(Node::Executor.to_string(), "executor");
    assert_eq!(String::from(Node::SqlGenerator), "generator");
    assert!("ast_planner" == Node::AstPlanner);
    let owned: String = Node::Decomposer.into();
    assert!(owned == Node::Decomposer);
}
