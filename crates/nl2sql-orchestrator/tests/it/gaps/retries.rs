//! GAP-02, GAP-03, GAP-04: which errors decide a retry, and what a generator or executor failure leads to.

use super::*;

// ---------------------------------------------------------------------------------------
// GAP-02

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap02_a_plan_with_only_warnings_runs_on_the_first_attempt() {
    let dir = TempDir::new("gap02");
    let planner = Scripted::new(vec![Turn::Edit(filter_on_an_unsampled_product)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(1)]]), "the filter ran");
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Succeeded);
    assert_eq!(sq.attempts, 1, "a warning never causes a retry");
    assert_eq!(sq.attempt_log.len(), 1);
    assert!(sq.attempt_log[0].errors.is_empty());
    assert!(
        sq.sql
            .as_deref()
            .unwrap_or_default()
            .contains("Widget Epsilon")
    );
    assert_eq!(planner.plan_calls(), 1);
    assert!(planner.refined_codes().is_empty(), "the refiner never ran");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    // The warning is reported to the caller.
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("'Widget Epsilon' not found in stats for products.name")),
        "{:?}",
        r.warnings
    );
    // The logical validator logged it as a WARNING, and the attempt went on to execute.
    let entries = run_log(&engine, &r);
    let logical = entries
        .iter()
        .find(|e| e.node == "logical_validator")
        .unwrap();
    assert_eq!(logical.errors.len(), 1, "{:?}", logical.errors);
    assert_eq!(logical.errors[0].severity, Severity::Warning);
    assert_eq!(logical.errors[0].code, ErrorCode::InvalidPlanStructure);
    let nodes = scan_nodes(&entries);
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(nodes.iter().all(|(a, _)| *a == 1), "{nodes:?}");
    assert!(
        !nodes
            .iter()
            .any(|(_, n)| n == "retry_handler" || n == "refiner")
    );
}

// ---------------------------------------------------------------------------------------
// GAP-03

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap03_an_earlier_attempts_error_does_not_decide_the_next_attempt() {
    // One retry allowed. Attempt 1 fails in the planner (a blocking, retryable error);
    // attempt 2 has a warning only. Judged on every error so far, attempt 2 would still
    // see attempt 1's PLANNING_FAILURE and, with no retry left, end the scan unexecuted.
    let dir = TempDir::new("gap03-a");
    let planner = Scripted::new(vec![
        Turn::Fail(planner_error(
            ErrorCode::PlanningFailure,
            Severity::Error,
            "the model's plan is not valid JSON",
        )),
        Turn::Edit(filter_on_an_unsampled_product),
    ]);
    let options = EngineOptions {
        max_retries: 1,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(1)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    assert_eq!(sq.attempt_log[0].errors.len(), 1);
    assert_eq!(sq.attempt_log[0].errors[0].code, ErrorCode::PlanningFailure);
    assert_eq!(sq.attempt_log[0].plan, None);
    assert!(sq.attempt_log[1].errors.is_empty());
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert_eq!(
        planner.refined_codes(),
        vec![vec![ErrorCode::PlanningFailure]]
    );

    // Three attempts failing at different steps: each refine call and each attempt's
    // feedback carry only the errors of the attempt just made.
    let dir = TempDir::new("gap03-b");
    let planner = Scripted::new(vec![
        Turn::Edit(select_a_missing_column),
        Turn::Edit(sum_that_overflows),
        Turn::Offline,
    ]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(8)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 3);
    let per_attempt: Vec<Vec<ErrorCode>> = sq
        .attempt_log
        .iter()
        .map(|a| a.errors.iter().map(|e| e.code).collect())
        .collect();
    assert_eq!(
        per_attempt,
        vec![
            vec![ErrorCode::ColumnNotFound],
            vec![ErrorCode::ExecutionFailed],
            vec![],
        ]
    );
    assert_eq!(
        planner.refined_codes(),
        vec![
            vec![ErrorCode::ColumnNotFound],
            vec![ErrorCode::ExecutionFailed]
        ]
    );
    let third = planner.feedback()[2].clone().unwrap_or_default();
    assert!(third.contains("EXECUTION_FAILED"), "{third}");
    assert!(!third.contains("COLUMN_NOT_FOUND"), "{third}");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);

    // A non-retryable error in the second attempt ends the scan there, and the scan's
    // errors are that attempt's: the first attempt's error stays in its attempt log.
    let dir = TempDir::new("gap03-c");
    let planner = Scripted::new(vec![
        Turn::Edit(select_a_missing_column),
        Turn::Fail(planner_error(
            ErrorCode::MissingLlm,
            Severity::Error,
            "no model is configured",
        )),
    ]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 2, "fatal: no third attempt");
    assert_eq!(planner.plan_calls(), 2);
    let scan_errors: Vec<ErrorCode> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .map(|e| e.code)
        .collect();
    assert_eq!(scan_errors, vec![ErrorCode::MissingLlm], "{:#?}", r.errors);
    assert_eq!(
        sq.attempt_log[0].errors[0].code,
        ErrorCode::ColumnNotFound,
        "kept in the attempt log"
    );
}

// ---------------------------------------------------------------------------------------
// GAP-04

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_a_generator_failure_is_refined_and_retried_without_reaching_the_executor() {
    let dir = TempDir::new("gap04-gen");
    let planner = Scripted::new(vec![Turn::Edit(group_by_a_constant)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    let first = &sq.attempt_log[0];
    assert_eq!(first.errors.len(), 1, "{:?}", first.errors);
    assert_eq!(first.errors[0].code, ErrorCode::SqlGenFailed);
    assert_eq!(first.errors[0].node, "generator");
    assert_eq!(first.sql, None, "no SQL was produced");
    assert!(sq.attempt_log[1].errors.is_empty());
    assert_eq!(planner.refined_codes(), vec![vec![ErrorCode::SqlGenFailed]]);
    let second = planner.feedback()[1].clone().unwrap_or_default();
    assert!(second.contains("SQL_GEN_FAILED"), "{second}");
    // Attempt 1 stopped at the generator: no physical validation, no execution, and no
    // MISSING_SQL anywhere.
    let entries = run_log(&engine, &r);
    let nodes = scan_nodes(&entries);
    for node in ["physical_validator", "executor"] {
        assert!(!nodes.contains(&(1, node.to_owned())), "{node}: {nodes:?}");
        assert!(nodes.contains(&(2, node.to_owned())), "{node}: {nodes:?}");
    }
    assert!(
        nodes.contains(&(1, "retry_handler".to_owned())),
        "{nodes:?}"
    );
    assert!(nodes.contains(&(1, "refiner".to_owned())), "{nodes:?}");
    assert!(
        !entries
            .iter()
            .flat_map(|e| &e.errors)
            .any(|e| e.code == ErrorCode::MissingSql)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_an_execution_failure_is_refined_and_retried_until_the_budget_ends() {
    // Attempt 1's statement fails while it runs; attempt 2 runs the offline plan.
    let dir = TempDir::new("gap04-exec");
    let planner = Scripted::new(vec![Turn::Edit(sum_that_overflows)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    let first = &sq.attempt_log[0];
    assert_eq!(first.errors.len(), 1, "{:?}", first.errors);
    assert_eq!(first.errors[0].code, ErrorCode::ExecutionFailed);
    assert_eq!(first.errors[0].node, "executor");
    assert!(first.sql.as_deref().unwrap_or_default().contains("SUM"));
    assert_eq!(
        planner.refined_codes(),
        vec![vec![ErrorCode::ExecutionFailed]]
    );
    let second = planner.feedback()[1].clone().unwrap_or_default();
    assert!(second.contains("EXECUTION_FAILED"), "{second}");
    let nodes = scan_nodes(&run_log(&engine, &r));
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(nodes.contains(&(2, "executor".to_owned())), "{nodes:?}");

    // A statement that always fails: 1 + max_retries attempts, then the scan fails with
    // the execution error.
    let dir = TempDir::new("gap04-exec-budget");
    let planner = Scripted::new(vec![
        Turn::Edit(sum_that_overflows),
        Turn::Edit(sum_that_overflows),
        Turn::Edit(sum_that_overflows),
    ]);
    let options = EngineOptions {
        max_retries: 2,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 3);
    assert_eq!(planner.plan_calls(), 3);
    assert_eq!(planner.refined_codes().len(), 2);
    let scan_errors: Vec<(ErrorCode, &str)> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .map(|e| (e.code, e.node.as_str()))
        .collect();
    assert_eq!(scan_errors, vec![(ErrorCode::ExecutionFailed, "executor")]);
}

/// The fixture through the real SQLite adapter, except that execution is refused the
/// way an engine sandbox refuses a statement (`SECURITY_VIOLATION`, CRITICAL).
struct RefusingExecution {
    inner: SqliteAdapter,
}

wrapping_adapter!(RefusingExecution {
    async fn execute_guarded(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
        _limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        let e = ResultError::new(
            ResultErrorCode::SecurityViolation,
            "The engine sandbox refused the statement.",
        )
        .at("execute", self.inner.id());
        ResultFrame::failed(e, 0.0)
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_a_fatal_executor_error_ends_the_scan_without_a_retry() {
    let dir = TempDir::new("gap04-fatal");
    let adapter = RefusingExecution {
        inner: SqliteAdapter::open("manufacturing", &fixture(), Limits::default()).unwrap(),
    };
    let registry = DatasourceRegistry::empty().with_adapter(Arc::new(adapter));
    let planner = Scripted::new(Vec::new());
    let engine = engine_over(registry, dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.rows, None);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 1);
    assert_eq!(planner.plan_calls(), 1);
    assert!(planner.refined_codes().is_empty(), "no refine, no retry");
    let scan_errors: Vec<_> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .collect();
    assert_eq!(scan_errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(scan_errors[0].code, ErrorCode::SecurityViolation);
    assert_eq!(scan_errors[0].severity, Severity::Critical);
    assert_eq!(scan_errors[0].node, "executor");
    let nodes = scan_nodes(&run_log(&engine, &r));
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(
        !nodes
            .iter()
            .any(|(_, n)| n == "retry_handler" || n == "refiner")
    );
}
