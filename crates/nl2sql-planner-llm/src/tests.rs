//! Unit tests of the LLM planner's pieces: configuration, templates, reply extraction,
//! the breaker and the backoff.

use std::time::Duration;

use nl2sql_plan::SubQuery;
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, ConfigError, Dialect, ErrorCode,
    ForeignKeyContract, PipelineError, SchemaContract, SchemaMetadata, SchemaSnapshot, Severity,
    TableContract, TableMetadata, TableRef,
};
use serde_json::{Value, json};

use super::config::{LlmConfig, StructuredOutput};
use super::prompt::{self, ALL_TEMPLATES, pretty_ascii, render, schema_context};
use super::reply::{self, extract_json};
use super::transport::backoff_delay;
use nl2sql_planner::{
    AnswerRequest, DatasourceInfo, DecomposeRequest, PlanRequest, RefineRequest, Step,
    TerminalResult,
};

fn config(toml: &str) -> Result<LlmConfig, ConfigError> {
    LlmConfig::from_toml_str(toml)
}

fn invalid_key(toml: &str) -> (String, String) {
    match config(toml) {
        Err(ConfigError::Invalid { key, message }) => (key, message),
        other => panic!("expected an invalid key, got {other:?}"),
    }
}

#[test]
fn per_step_agent_overrides_default_and_inherits_the_rest() {
    let c = config(
        r#"
        [default]
        provider = "openai"
        model = "gpt-4o"
        base_url = "http://localhost:8080/v1/"
        timeout_sec = 30
        [agents.astplanner]
        model = "gpt-4o-mini"
        temperature = 0.2
        [agents.answersynthesizer]
        provider = "openai-compatible"
        structured_output = "off"
        "#,
    )
    .unwrap();
    let plan = c.settings(Step::AstPlanner).unwrap();
    assert_eq!(plan.model, "gpt-4o-mini");
    assert_eq!(plan.temperature, 0.2);
    assert_eq!(plan.base_url, "http://localhost:8080/v1");
    assert_eq!(plan.timeout, Duration::from_secs(30));
    assert_eq!(plan.max_retries, 3);
    assert_eq!(plan.structured_output, StructuredOutput::Auto);
    assert_eq!(plan.api_key_ref.as_deref(), Some("${env:OPENAI_API_KEY}"));
    let decompose = c.settings(Step::Decomposer).unwrap();
    assert_eq!(decompose.model, "gpt-4o");
    assert_eq!(decompose.temperature, 0.0);
    let answer = c.settings(Step::AnswerSynthesizer).unwrap();
    assert_eq!(answer.model, "gpt-4o");
    assert_eq!(answer.provider, "openai-compatible");
    assert_eq!(answer.structured_output, StructuredOutput::Off);
}

#[test]
fn defaults_apply_when_nothing_is_set_but_the_model() {
    let s = config("[default]\nmodel = \"m\"\n")
        .unwrap()
        .settings(Step::Refiner)
        .unwrap();
    assert_eq!(s.base_url, "https://api.openai.com/v1");
    assert_eq!(s.timeout, Duration::from_secs(60));
    assert_eq!(s.provider, "openai");
    assert_eq!(s.max_retries, 3);
}

#[test]
fn unsupported_provider_is_an_error_naming_the_key() {
    let (key, message) =
        invalid_key("[default]\nmodel = \"m\"\n[agents.refiner]\nprovider = \"anthropic\"\n");
    assert_eq!(key, "agents.refiner.provider");
    assert!(
        message.contains("unsupported LLM provider 'anthropic'"),
        "{message}"
    );
}

#[test]
fn unknown_step_and_unknown_key_are_rejected() {
    let (key, _) = invalid_key("[default]\nmodel = \"m\"\n[agents.summarizer]\nmodel = \"x\"\n");
    assert_eq!(key, "agents.summarizer");
    assert!(matches!(
        config("[default]\nmodel = \"m\"\nmodle = \"x\"\n"),
        Err(ConfigError::Parse(m)) if m.contains("modle")
    ));
}

#[test]
fn literal_api_key_is_rejected_without_echoing_it() {
    let (key, message) = invalid_key("[default]\nmodel = \"m\"\napi_key = \"sk-live-123\"\n");
    assert_eq!(key, "default.api_key");
    assert!(!message.contains("sk-live-123"), "{message}");
}

#[test]
fn missing_model_and_bad_timeout_are_errors() {
    let (key, _) = invalid_key("[default]\nprovider = \"openai\"\n");
    assert_eq!(key, "default.model");
    let (key, _) = invalid_key("[default]\nmodel = \"m\"\n[agents.decomposer]\ntimeout_sec = 0\n");
    assert_eq!(key, "agents.decomposer.timeout_sec");
}

#[test]
fn render_substitutes_once_and_keeps_unknown_placeholders() {
    let out = render(
        "a {{x}} b {{ y }} c {{z}} {{open",
        &[("x", "{{y}}".to_owned()), ("y", "Y".to_owned())],
    );
    assert_eq!(out, "a {{y}} b Y c {{z}} {{open");
}

fn snapshot() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("shop", "sqlite");
    let mut orders = TableContract {
        table: TableRef {
            schema_name: "main".into(),
            table_name: "orders".into(),
        },
        ..TableContract::default()
    };
    for (name, ty, pk) in [
        ("id", "INTEGER", true),
        ("customer_id", "INTEGER", false),
        ("email", "TEXT", false),
    ] {
        orders.columns.insert(
            name.into(),
            ColumnContract {
                name: name.into(),
                data_type: ty.into(),
                is_nullable: !pk,
                is_primary_key: pk,
            },
        );
    }
    orders.foreign_keys.push(ForeignKeyContract {
        constrained_columns: vec!["customer_id".into()],
        referred_table: TableRef {
            schema_name: "main".into(),
            table_name: "customers".into(),
        },
        referred_columns: vec!["id".into()],
        cardinality: Default::default(),
        business_meaning: Some("who ordered".into()),
        inferred: false,
    });
    contract.add_table(orders);
    let mut table_meta = TableMetadata {
        table: TableRef {
            schema_name: "main".into(),
            table_name: "orders".into(),
        },
        description: Some("Orders — één per klant".into()),
        row_count: Some(42),
        ..TableMetadata::default()
    };
    let stats = ColumnStatistics {
        distinct_count: 3,
        sample_values: vec![json!("a@example.com")],
        ..ColumnStatistics::default()
    };
    table_meta.columns.insert(
        "email".into(),
        ColumnMetadata {
            description: Some("contact".into()),
            statistics: Some(stats.clone()),
            pii: true,
            ..ColumnMetadata::default()
        },
    );
    table_meta.columns.insert(
        "customer_id".into(),
        ColumnMetadata {
            statistics: Some(ColumnStatistics {
                sample_values: vec![json!(7)],
                ..stats
            }),
            ..ColumnMetadata::default()
        },
    );
    let mut metadata = SchemaMetadata::default();
    metadata.tables.insert("main.orders".into(), table_meta);
    SchemaSnapshot {
        contract,
        metadata: Some(metadata),
    }
}

#[test]
fn schema_context_follows_retrieval_section_4_and_hides_pii_statistics() {
    let ctx = schema_context(&snapshot());
    let table = &ctx[0];
    assert_eq!(table["name"], "orders");
    assert_eq!(table["table_key"], "main.orders");
    assert_eq!(table["primary_key"], json!(["id"]));
    assert_eq!(table["row_count"], 42);
    assert_eq!(table["columns"][1]["stats"]["sample_values"], json!([7]));
    assert_eq!(table["columns"][2]["name"], "email");
    assert_eq!(table["columns"][2]["pii"], true);
    assert_eq!(table["columns"][2]["stats"], Value::Null);
    assert_eq!(table["columns"][2]["description"], "contact");
    assert_eq!(
        table["relationships"][0],
        json!({"from_table": "main.orders", "to_table": "main.customers",
               "from_columns": ["customer_id"], "to_columns": ["id"],
               "cardinality": "unknown", "business_meaning": "who ordered"})
    );
}

#[test]
fn pretty_ascii_escapes_non_ascii_and_indents_by_two() {
    let out = pretty_ascii(&json!({"k": "één 😀"}));
    assert_eq!(out, "{\n  \"k\": \"\\u00e9\\u00e9n \\ud83d\\ude00\"\n}");
}

fn sub_query() -> SubQuery {
    serde_json::from_value(json!({
        "id": "sq1", "datasource_id": "shop", "intent": "orders per customer",
        "expected_schema": [{"name": "customer_id", "dtype": "int"}, {"name": "orders", "dtype": "int"}]
    }))
    .unwrap()
}

fn plan_request() -> PlanRequest {
    PlanRequest {
        question: "How many orders per customer?".into(),
        sub_query: sub_query(),
        dialect: Dialect::Sqlite,
        schema: snapshot(),
        feedback: Some("use alias o".into()),
        today: Some("2025-01-31".into()),
    }
}

#[test]
fn every_template_renders_without_leftover_placeholders() {
    let decompose = prompt::decomposer(&DecomposeRequest {
        question: "q?".into(),
        datasources: vec![DatasourceInfo {
            id: "shop".into(),
            description: Some("orders".into()),
            domains: vec!["sales".into()],
            examples: vec![],
            schema_version: None,
            snapshot: Some(snapshot()),
        }],
        feedback: None,
        today: Some("2025-01-31".into()),
    })
    .unwrap();
    let plan = prompt::ast_planner(&plan_request()).unwrap();
    let refine = prompt::refiner(&RefineRequest {
        plan_request: plan_request(),
        failed_plan: None,
        errors: vec![PipelineError::new(
            "executor",
            ErrorCode::ExecutionFailed,
            Severity::Error,
            "no such column: o.custmer_id at /var/db/shop.db",
        )],
        history: vec!["[ast_planner]: Tables: orders".into()],
    })
    .unwrap();
    let answer = prompt::answer_synthesizer(&AnswerRequest {
        question: "q?".into(),
        results: vec![TerminalResult {
            node_id: "n1".into(),
            columns: vec!["a".into()],
            rows: (0..250).map(|i| vec![json!(i)]).collect(),
            total_rows: 250,
        }],
        unmapped: vec![],
        errors: vec![],
    })
    .unwrap();
    for (name, request) in [
        ("decomposer", &decompose),
        ("ast_planner", &plan),
        ("refiner", &refine),
        ("answer", &answer),
    ] {
        for text in [&request.system, &request.user] {
            assert!(!text.is_empty(), "{name}: empty message");
            assert!(
                !text.contains("{{"),
                "{name}: leftover placeholder in {text}"
            );
            assert!(!text.contains("<!--"), "{name}: marker left in {text}");
        }
    }
    assert!(decompose.user.contains("\"id\": \"shop\""));
    assert!(
        !decompose.user.contains("contract"),
        "snapshots stay out of the decomposer prompt"
    );
    assert!(decompose.user.contains("Today's date: 2025-01-31"));
    assert!(plan.user.contains("\"table_key\": \"main.orders\""));
    assert!(plan.user.contains("use alias o"));
    assert!(plan.user.contains("Intent to plan: orders per customer"));
    assert!(plan.system.contains("Worked example"));
    assert!(
        refine
            .user
            .contains("- EXECUTION_FAILED (executor): no such column: o.custmer_id at <path>")
    );
    assert!(refine.user.contains("(no plan was produced)"));
    assert!(answer.user.contains("\"total_rows\": 250"));
    assert!(
        answer.user.contains("199") && !answer.user.contains("200\n"),
        "rows capped at 200"
    );
    assert!(plan.schema.is_some() && refine.schema.is_none());
    for t in ALL_TEMPLATES {
        assert!(t.text.starts_with("<!-- system -->\n"), "{}", t.id());
        assert!(t.text.contains("\n<!-- user -->\n"), "{}", t.id());
    }
}

#[test]
fn extract_json_accepts_a_bare_object_or_one_fence() {
    assert_eq!(extract_json("  {\"a\":1}\n").unwrap(), "{\"a\":1}");
    assert_eq!(
        extract_json("Here it is:\n```json\n{\"a\":1}\n```\n").unwrap(),
        "{\"a\":1}"
    );
    assert_eq!(extract_json("```\n{\"a\":1}\n```").unwrap(), "{\"a\":1}");
    assert!(extract_json("").unwrap_err().contains("empty"));
    assert!(
        extract_json("the answer is 42")
            .unwrap_err()
            .contains("neither")
    );
    assert!(
        extract_json("```sql\nSELECT 1\n```")
            .unwrap_err()
            .contains("`sql`")
    );
    assert!(
        extract_json("```json\n{\"a\":1}")
            .unwrap_err()
            .contains("not closed")
    );
    assert!(
        extract_json("```json\n{}\n```\n```json\n{}\n```")
            .unwrap_err()
            .contains("more than one")
    );
}

#[test]
fn plan_reply_errors_carry_the_json_path_and_code() {
    let e = reply::plan(r#"{"tables": [{"name": "t", "alias": "t", "ordinal": 0}], "sql": "x"}"#)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.severity, Severity::Error);
    assert!(e.is_retryable());
    assert!(e.message.contains("$.sql"), "{}", e.message);
    assert_eq!(e.details.as_deref(), Some(&json!({"path": "$.sql"})));
    let e = reply::final_answer(
        r#"{"summary": "s", "format_type": "chart", "content": "", "warnings": []}"#,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::AggregatorFailed);
    assert_eq!(e.node, "answer_synthesizer");
    assert!(
        e.message.starts_with("answer synthesis failed"),
        "{}",
        e.message
    );
    let e = reply::feedback("  \n").unwrap_err();
    assert_eq!(e.code, ErrorCode::RefinerFailed);
}

#[test]
fn backoff_doubles_up_to_the_cap_plus_bounded_jitter() {
    let mut s = LlmConfig::single("m", "http://x")
        .settings(Step::AstPlanner)
        .unwrap();
    s.backoff_base = Duration::from_millis(100);
    s.backoff_max = Duration::from_millis(500);
    s.jitter = Duration::ZERO;
    let delays: Vec<u128> = (0..5).map(|n| backoff_delay(&s, n).as_millis()).collect();
    assert_eq!(delays, vec![100, 200, 400, 500, 500]);
    s.jitter = Duration::from_millis(50);
    for n in 0..20 {
        let d = backoff_delay(&s, 0).as_millis();
        assert!((100..150).contains(&d), "attempt {n}: {d}");
    }
}
