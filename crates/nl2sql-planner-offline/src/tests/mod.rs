//! Unit tests of the offline planner: tokeniser, linking (including sample values), each
//! intent, date phrases relative to a given today, foreign-key path choice, decomposition
//! (one and two datasources), the "could not link" error and the answer templates. Plans
//! are validated with the logical validator and rendered for SQLite against the real
//! manufacturing fixture database.

mod abbreviations;
mod absent;
mod alternatives;
mod analyst;
mod cache;
mod comparisons;
mod compounds;
mod confidence;
mod coverage;
mod cross_source;
mod cue_names;
mod distinct;
mod distinct_listings;
mod every_column;
mod extremes;
mod frequency;
mod genders;
mod groupings;
mod id_words;
mod intersections;
mod join_paths;
mod keys;
mod listings;
mod literals;
mod names_of;
mod negations;
mod nouns;
mod numbers_as_text;
mod owners;
mod per_answer;
mod phrasing;
mod question_words;
mod readings;
mod referenced;
mod roles;
mod rules;
mod sort_keys;
mod ties;
mod time_rankings;
mod value_lists;
mod years;

use std::path::Path;
use std::sync::OnceLock;

use nl2sql_adapter::{DatasourceAdapter, Limits};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_plan::{CombineOperation, DatasourceResolution, SubQuery, SubQueryKind};
use nl2sql_sqlgen::SqlGenerator;
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, Dialect, ErrorCode, ForeignKeyContract,
    PipelineError, SchemaContract, SchemaMetadata, SchemaSnapshot, Severity, TableContract,
    TableMetadata, TableRef,
};
use nl2sql_validate::{LogicalContext, validate_decomposition, validate_plan};
use serde_json::json;

use super::OfflinePlanner;
use super::intent::{Day, cues};
use super::link::{SchemaIndex, Target, link};
use super::text::{TokenKind, split_ident, stem, tokenize};
use nl2sql_planner::{
    AnswerFormat, AnswerRequest, DatasourceInfo, DecomposeRequest, PlanRequest, RefineRequest,
    TerminalResult,
};

fn db_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fixtures/manufacturing.db")
}

fn adapter() -> &'static SqliteAdapter {
    static ADAPTER: OnceLock<SqliteAdapter> = OnceLock::new();
    ADAPTER.get_or_init(|| {
        SqliteAdapter::open("manufacturing", &db_path(), Limits::default()).unwrap()
    })
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn snapshot() -> &'static SchemaSnapshot {
    static SNAP: OnceLock<SchemaSnapshot> = OnceLock::new();
    SNAP.get_or_init(|| block_on(adapter().schema_snapshot()).unwrap())
}

fn plan_request(question: &str, today: Option<&str>) -> PlanRequest {
    PlanRequest {
        question: question.to_owned(),
        sub_query: SubQuery {
            id: "sq1".into(),
            datasource_id: "manufacturing".into(),
            intent: question.to_owned(),
            kind: SubQueryKind::Scan,
            metrics: Vec::new(),
            filters: Vec::new(),
            group_by: Vec::new(),
            expected_schema: Vec::new(),
            schema_version: None,
        },
        dialect: Dialect::Sqlite,
        schema: snapshot().clone(),
        feedback: None,
        today: today.map(str::to_owned),
    }
}

/// Plans `question`, validates the plan, renders SQLite SQL and runs it; returns the SQL or
/// the error message.
///
/// The reading rules are tested on the lenient planner: what each phrase becomes, whatever
/// the coverage check then says of the whole question. Coverage has its own tests
/// (`coverage.rs`); the corpora run the strict default.
fn sql_for(question: &str, today: Option<&str>) -> String {
    let planner = OfflinePlanner::lenient();
    let plan = match planner.plan_sync(&plan_request(question, today)) {
        Ok(p) => p,
        Err(e) => return format!("ERROR {}", e.message),
    };
    let snap = snapshot();
    let ctx = LogicalContext::new("manufacturing", &snap.contract)
        .with_metadata(snap.metadata.as_ref().unwrap());
    let report = validate_plan(Some(&plan), &ctx);
    assert!(report.is_ok(), "{question}: {:#?}", report.findings);
    let sql = SqlGenerator::new(Dialect::Sqlite)
        .with_schema(&snap.contract)
        .generate(&plan)
        .unwrap();
    let a = adapter();
    let guarded = nl2sql_adapter::shape_check(a.id(), a.dialect(), &sql).unwrap();
    let frame = block_on(a.run_sql(&guarded, Limits::default()));
    assert!(frame.success, "{question}: {sql}: {:?}", frame.error);
    sql
}

/// Checks the SQLite SQL planned for `question` with `today` 2024-05-15.
fn check(question: &str, expect: &str) {
    assert_eq!(sql_for(question, Some("2024-05-15")), expect, "{question}");
}

fn col(name: &str, ty: &str, pk: bool) -> (String, ColumnContract) {
    (
        name.to_owned(),
        ColumnContract {
            name: name.to_owned(),
            data_type: ty.to_owned(),
            is_nullable: !pk,
            is_primary_key: pk,
        },
    )
}

/// A snapshot (no metadata) of `tables` in the SQLite datasource `id`.
fn snapshot_of(id: &str, tables: Vec<TableContract>) -> SchemaSnapshot {
    let mut contract = SchemaContract::new(id, "sqlite");
    for t in tables {
        contract.add_table(t);
    }
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

fn table(name: &str, cols: Vec<(String, ColumnContract)>, fks: Vec<(&str, &str)>) -> TableContract {
    TableContract {
        table: TableRef {
            schema_name: "main".into(),
            table_name: name.into(),
        },
        columns: cols.into_iter().collect(),
        foreign_keys: fks
            .into_iter()
            .map(|(c, t)| ForeignKeyContract {
                constrained_columns: vec![c.into()],
                referred_table: TableRef {
                    schema_name: "main".into(),
                    table_name: t.into(),
                },
                referred_columns: vec!["id".into()],
                cardinality: Default::default(),
                business_meaning: None,
                inferred: false,
            })
            .collect(),
    }
}

fn samples(values: &[&str]) -> ColumnMetadata {
    ColumnMetadata {
        statistics: Some(ColumnStatistics {
            distinct_count: values.len() as u64,
            sample_values: values.iter().map(|v| json!(v)).collect(),
            ..ColumnStatistics::default()
        }),
        ..ColumnMetadata::default()
    }
}

/// A small plant schema: machines (with a status) in sites, and their alarms.
fn plant() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("plant", "sqlite");
    contract.add_table(table(
        "sites",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("city", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "machines",
        vec![
            col("id", "INTEGER", true),
            col("site_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("status", "TEXT", false),
            col("installed_on", "DATE", false),
        ],
        vec![("site_id", "sites")],
    ));
    contract.add_table(table(
        "alarms",
        vec![
            col("id", "INTEGER", true),
            col("machine_id", "INTEGER", false),
            col("raised_at", "DATETIME", false),
            col("severityLevel", "INTEGER", false),
        ],
        vec![("machine_id", "machines")],
    ));
    let mut metadata = SchemaMetadata {
        datasource_id: "plant".into(),
        ..SchemaMetadata::default()
    };
    metadata.tables.insert(
        "main.machines".into(),
        TableMetadata {
            table: TableRef {
                schema_name: "main".into(),
                table_name: "machines".into(),
            },
            columns: [(
                "status".to_owned(),
                samples(&["Online", "Offline", "Maintenance"]),
            )]
            .into_iter()
            .collect(),
            ..TableMetadata::default()
        },
    );
    metadata.tables.insert(
        "main.sites".into(),
        TableMetadata {
            table: TableRef {
                schema_name: "main".into(),
                table_name: "sites".into(),
            },
            columns: [("city".to_owned(), samples(&["Austin", "Berlin"]))]
                .into_iter()
                .collect(),
            ..TableMetadata::default()
        },
    );
    SchemaSnapshot {
        contract,
        metadata: Some(metadata),
    }
}

/// A small sales schema: orders with an amount per region.
fn sales() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("sales", "sqlite");
    contract.add_table(table(
        "orders",
        vec![
            col("id", "INTEGER", true),
            col("region", "TEXT", false),
            col("amount", "REAL", false),
            col("ordered_on", "DATE", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

fn datasource(id: &str, snapshot: SchemaSnapshot) -> DatasourceInfo {
    DatasourceInfo {
        id: id.into(),
        description: None,
        domains: Vec::new(),
        examples: Vec::new(),
        schema_version: None,
        snapshot: Some(snapshot),
    }
}

fn decompose(
    question: &str,
    datasources: Vec<DatasourceInfo>,
) -> Result<nl2sql_plan::DecomposerResponse, PipelineError> {
    OfflinePlanner::new().decompose_sync(&DecomposeRequest {
        question: question.into(),
        datasources,
        feedback: None,
        today: Some("2024-05-15".into()),
    })
}

/// The linked targets of `question` over `snapshot`, as `table`, `table.column` or
/// `column=value` strings.
fn links(question: &str, snapshot: &SchemaSnapshot) -> Vec<String> {
    let index = SchemaIndex::build(snapshot);
    let tokens = tokenize(question);
    let c = cues(&tokens, Day::parse("2024-05-15").unwrap());
    link(question, &tokens, &c.used, &index)
        .into_iter()
        .map(|m| match m.target {
            Target::Table(t) => index.tables[t].name.clone(),
            Target::Column(c) => format!(
                "{}.{}",
                index.tables[index.columns[c].table].name, index.columns[c].name
            ),
            Target::Value { column, values, .. } => format!(
                "{}={}",
                index.columns[column].name,
                values
                    .iter()
                    .map(|v| v.as_str().unwrap_or("?"))
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        })
        .collect()
}

#[test]
fn tokeniser_keeps_numbers_dates_and_quoted_values() {
    let t =
        tokenize("Top 5 runs in 'Plant Austin' since 2024-04-01, over 1,200 units; rate >= 3.5");
    let shown: Vec<String> = t
        .iter()
        .map(|t| match t.kind {
            TokenKind::Word => t.lower.clone(),
            TokenKind::Number => format!("#{}", t.raw),
            TokenKind::Date => format!("@{}", t.raw),
            TokenKind::Quoted => format!("'{}'", t.raw),
        })
        .collect();
    assert_eq!(
        shown.join(" "),
        "top #5 runs in 'Plant Austin' since @2024-04-01 over #1,200 units rate >= #3.5"
    );
    assert_eq!(t[8].number(), Some(1200.0));
}

#[test]
fn identifiers_split_and_words_stem() {
    assert_eq!(split_ident("production_runs"), ["production", "runs"]);
    assert_eq!(split_ident("severityLevel"), ["severity", "level"]);
    assert_eq!(split_ident("HTTPCode"), ["http", "code"]);
    for (a, b) in [
        ("machines", "machine"),
        ("factories", "factory"),
        ("produced", "produce"),
        ("manufacturers", "manufacturer"),
        ("ids", "id"),
        ("people", "person"),
        ("persons", "person"),
        ("children", "child"),
        ("women", "woman"),
        ("buildings", "building"),
        ("bookings", "booking"),
        ("savings", "saving"),
    ] {
        assert_eq!(stem(a), stem(b), "{a} / {b}");
    }
    assert_ne!(stem("product"), stem("production"));
    assert_eq!(crate::text::singular("people"), "person");
    assert_eq!(crate::text::plural("person"), "people");
    assert_eq!(crate::text::plural("child"), "children");
}

#[test]
fn links_names_camel_case_and_sample_values() {
    assert_eq!(
        links("How many offline machines are there?", &plant()),
        ["status=Offline", "machines"]
    );
    assert_eq!(
        links("alarms by severity level", &plant()),
        ["alarms", "alarms.severityLevel"]
    );
    // A site's city, and ties broken by the table mentioned elsewhere.
    assert_eq!(
        links("machines in Berlin", &plant()),
        ["machines", "city=Berlin"]
    );
    assert_eq!(
        links("machine name and status", &plant()),
        ["machines.name", "machines.status"]
    );
}

#[test]
fn plans_counts_sums_averages_and_extremes() {
    check(
        "How many machines are there?",
        "SELECT COUNT(*) AS machine_count FROM machines AS m LIMIT 10000",
    );
    check(
        "What is the total scrap count?",
        "SELECT SUM(pr.scrap_count) AS total_scrap_count FROM production_runs AS pr LIMIT 10000",
    );
    check(
        "Average downtime by maintenance type",
        "SELECT ml.maintenance_type AS maintenance_type, AVG(ml.downtime_minutes) AS avg_downtime_minutes FROM maintenance_logs AS ml GROUP BY ml.maintenance_type ORDER BY ml.maintenance_type LIMIT 10000",
    );
    check(
        "What is the highest downtime?",
        "SELECT MAX(ml.downtime_minutes) AS max_downtime_minutes FROM maintenance_logs AS ml LIMIT 10000",
    );
    check(
        "What is the earliest opening date of any factory?",
        "SELECT f.name AS factory, f.opened_on AS opened_on FROM factories AS f ORDER BY f.opened_on LIMIT 1",
    );
}

#[test]
fn plans_rankings_and_groups() {
    check(
        "Top 3 products by quantity produced",
        "SELECT p.name AS product, SUM(pr.quantity_produced) AS total_quantity_produced FROM production_runs AS pr INNER JOIN products AS p ON pr.product_id = p.id GROUP BY p.name ORDER BY total_quantity_produced DESC LIMIT 3",
    );
    check(
        "Which factory has the most machines?",
        "SELECT f.name AS factory, COUNT(*) AS machine_count FROM machines AS m INNER JOIN factories AS f ON m.factory_id = f.id GROUP BY f.name ORDER BY machine_count DESC LIMIT 1",
    );
    check(
        "What is the most common defect type?",
        "SELECT d.defect_type AS defect_type, COUNT(*) AS defect_count FROM defects AS d GROUP BY d.defect_type ORDER BY defect_count DESC LIMIT 1",
    );
    check(
        "Which two factories opened most recently?",
        "SELECT f.name AS factory, f.opened_on AS opened_on FROM factories AS f ORDER BY f.opened_on DESC LIMIT 2",
    );
    check(
        "inventory on hand per warehouse sorted by on hand descending",
        "SELECT i.warehouse AS warehouse, SUM(i.on_hand) AS total_on_hand FROM inventory AS i GROUP BY i.warehouse ORDER BY total_on_hand DESC LIMIT 10000",
    );
    check(
        "Factories with more than 1 machine",
        "SELECT f.name AS factory, COUNT(*) AS machine_count FROM machines AS m INNER JOIN factories AS f ON m.factory_id = f.id GROUP BY f.id, f.name HAVING COUNT(*) > 1 ORDER BY f.id, f.name LIMIT 10000",
    );
}

#[test]
fn plans_filters_on_values_numbers_and_distinct_lists() {
    check(
        "How many production runs were on the Night shift?",
        "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.shift = 'Night' LIMIT 10000",
    );
    check(
        "List the ids of runs with a scrap count between 10 and 18.",
        "SELECT pr.id AS id FROM production_runs AS pr WHERE pr.scrap_count >= 10 AND pr.scrap_count <= 18 LIMIT 10000",
    );
    check(
        "How many maintenance jobs had at least 90 minutes of downtime?",
        "SELECT COUNT(*) AS maintenance_log_count FROM maintenance_logs AS ml WHERE ml.downtime_minutes >= 90 LIMIT 10000",
    );
    check(
        "List the distinct product categories",
        "SELECT DISTINCT p.category AS category FROM products AS p ORDER BY p.category LIMIT 10000",
    );
    // A value beyond the five samples, spelled like them.
    check(
        "What is the SKU of Widget Beta?",
        "SELECT p.sku AS sku FROM products AS p WHERE p.name = 'Widget Beta' LIMIT 10000",
    );
}

#[test]
fn date_phrases_are_relative_to_today() {
    check(
        "How many runs last month",
        "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.started_at >= '2024-04-01' AND pr.started_at < '2024-05-01' LIMIT 10000",
    );
    check(
        "Total quantity produced in April 2024",
        "SELECT SUM(pr.quantity_produced) AS total_quantity_produced FROM production_runs AS pr WHERE pr.started_at >= '2024-04-01' AND pr.started_at < '2024-05-01' LIMIT 10000",
    );
    check(
        "How many production runs started on April 10, 2024?",
        "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.started_at >= '2024-04-10' AND pr.started_at < '2024-04-11' LIMIT 10000",
    );
    check(
        "Which factories opened after January 1, 2015?",
        "SELECT f.name AS factory, f.opened_on AS opened_on FROM factories AS f WHERE f.opened_on >= '2015-01-02' LIMIT 10000",
    );
    assert_eq!(
        sql_for("How many runs this year", Some("2025-03-01")),
        "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.started_at >= '2025-01-01' AND pr.started_at < '2026-01-01' LIMIT 10000"
    );
    // Without a today, the clock's: last year is the year before the clock's year.
    let this_year = Day::from_clock().y;
    assert_eq!(
        sql_for("How many runs last year", None),
        format!(
            "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.started_at >= '{}-01-01' AND pr.started_at < '{this_year}-01-01' LIMIT 10000",
            this_year - 1
        )
    );
}

#[test]
fn joins_follow_the_shortest_foreign_key_path() {
    check(
        "What is the total defect count per factory?",
        "SELECT f.name AS factory, SUM(d.defect_count) AS total_defect_count FROM defects AS d INNER JOIN production_runs AS pr ON d.production_run_id = pr.id INNER JOIN machines AS m ON pr.machine_id = m.id INNER JOIN factories AS f ON m.factory_id = f.id GROUP BY f.name ORDER BY f.name LIMIT 10000",
    );
    check(
        "List machines in Plant Austin",
        "SELECT m.name AS machine FROM machines AS m INNER JOIN factories AS f ON m.factory_id = f.id WHERE f.name = 'Plant Austin' LIMIT 10000",
    );
}

#[test]
fn plan_names_outputs_as_the_expected_schema() {
    let mut request = plan_request("units produced per product", None);
    request.sub_query.expected_schema = vec![
        nl2sql_plan::ExpectedColumn {
            name: "product".into(),
            dtype: None,
        },
        nl2sql_plan::ExpectedColumn {
            name: "units_produced".into(),
            dtype: None,
        },
    ];
    // Output naming, whatever the learned confidence of this terse question.
    let plan = OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&request)
        .unwrap();
    let aliases: Vec<_> = plan
        .select_items
        .iter()
        .map(|s| s.alias.clone().unwrap())
        .collect();
    assert_eq!(aliases, ["product", "units_produced"]);
}

#[test]
fn decomposes_one_question_into_one_valid_scan() {
    let r = decompose(
        "How many offline machines are there per site?",
        vec![datasource("sales", sales()), datasource("plant", plant())],
    )
    .unwrap();
    assert_eq!(r.sub_queries.len(), 1);
    let sq = &r.sub_queries[0];
    assert_eq!(sq.datasource_id, "plant");
    let names: Vec<&str> = sq.expected_schema.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["site", "machine_count"]);
    assert_eq!(sq.filters[0].attribute, "status");
    assert_eq!(r.combine_groups[0].operation, CombineOperation::Standalone);
    let json = serde_json::to_string(&r).unwrap();
    let report = validate_decomposition(&json, &DatasourceResolution::permissive());
    assert!(report.is_ok(), "{:?}", report.feedback());
}

#[test]
fn decomposes_a_two_datasource_comparison() {
    let r = decompose(
        "Compare the number of machines per city in plant with the total amount per region in sales",
        vec![datasource("plant", plant()), datasource("sales", sales())],
    )
    .unwrap();
    let ds: Vec<&str> = r
        .sub_queries
        .iter()
        .map(|s| s.datasource_id.as_str())
        .collect();
    assert_eq!(ds, ["plant", "sales"]);
    let g = &r.combine_groups[0];
    assert_eq!(g.operation, CombineOperation::Compare);
    assert_eq!(
        (g.join_keys[0].left.as_str(), g.join_keys[0].right.as_str()),
        ("city", "region")
    );
    let json = serde_json::to_string(&r).unwrap();
    let report = validate_decomposition(&json, &DatasourceResolution::permissive());
    assert!(report.is_ok(), "{:?}", report.feedback());
}

#[test]
fn refuses_questions_that_link_to_nothing_and_names_the_words() {
    let e = decompose(
        "What is the salary of each employee?",
        vec![datasource("plant", plant())],
    )
    .unwrap_err();
    assert_eq!(
        (e.code, e.severity),
        (ErrorCode::AmbiguousQuestion, Severity::Error)
    );
    assert!(
        e.message
            .starts_with("could not link: 'salary', 'employee'; rephrase the question with the schema's names: its tables are "),
        "{}",
        e.message
    );
    assert_eq!(
        e.details.unwrap()["unlinked"],
        json!(["salary", "employee"])
    );
    assert_eq!(
        sql_for("How many unicorns are in Plant Austin?", None),
        "ERROR could not link: 'unicorns'; rephrase the question with the schema's names: its tables are defects, factories, inventory, machine_types, machines, maintenance_logs, production_runs, products"
    );
}

fn result(columns: &[&str], rows: Vec<Vec<serde_json::Value>>) -> TerminalResult {
    TerminalResult {
        node_id: "sq_1".into(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        total_rows: rows.len() as u64,
        rows,
    }
}

fn answer(results: Vec<TerminalResult>, errors: Vec<PipelineError>) -> nl2sql_planner::FinalAnswer {
    OfflinePlanner::new().answer_sync(&AnswerRequest {
        question: "q".into(),
        results,
        unmapped: Vec::new(),
        errors,
    })
}

#[test]
fn answers_with_templates() {
    let a = answer(
        vec![result(&["machine_count"], vec![vec![json!(12)]])],
        vec![],
    );
    assert_eq!(
        (a.summary.as_str(), a.format_type),
        ("There are 12 machines.", AnswerFormat::Text)
    );
    let a = answer(
        vec![result(
            &["total_quantity_produced"],
            vec![vec![json!(1950)]],
        )],
        vec![],
    );
    assert_eq!(a.summary, "The total quantity produced is 1,950.");
    let a = answer(
        vec![result(
            &["factory", "machine_count"],
            vec![
                vec![json!("Austin"), json!(2)],
                vec![json!("Berlin"), json!(1)],
            ],
        )],
        vec![],
    );
    assert_eq!(a.format_type, AnswerFormat::List);
    assert_eq!(a.content, "- Austin: 2\n- Berlin: 1");
    assert_eq!(
        a.summary,
        "2 rows; first: factory = Austin, machine_count = 2."
    );
    let rows: Vec<Vec<serde_json::Value>> = (0..25)
        .map(|i| vec![json!(i), json!("x"), json!(1.5)])
        .collect();
    let a = answer(vec![result(&["id", "name", "rate"], rows)], vec![]);
    assert_eq!(a.format_type, AnswerFormat::Table);
    assert!(
        a.summary.starts_with("25 rows; first: id = 0"),
        "{}",
        a.summary
    );
    let err = PipelineError::new(
        "executor",
        ErrorCode::ExecutionFailed,
        Severity::Error,
        "SQL execution failed.",
    );
    let a = answer(vec![], vec![err]);
    assert_eq!(
        a.summary,
        "The question could not be answered: SQL execution failed"
    );
    assert_eq!(a.warnings, ["EXECUTION_FAILED: SQL execution failed."]);
}

#[test]
fn refine_suggests_the_closest_column() {
    let request = RefineRequest {
        plan_request: plan_request("total quantity", None),
        failed_plan: None,
        errors: vec![PipelineError::new(
            "logical_validator",
            ErrorCode::ColumnNotFound,
            Severity::Error,
            "Column 'quantity_produce' does not exist in table alias 'pr' (production_runs).",
        )],
        history: Vec::new(),
    };
    let text = OfflinePlanner::new().refine_sync(&request);
    assert!(text.contains("2. Column 'quantity_produce' does not exist; use production_runs.quantity_produced instead."), "{text}");
}
