//! GAP-16: a decomposition that fails validation is asked again with the findings.

use super::*;

// ---------------------------------------------------------------------------------------
// GAP-16

/// The offline planner, but its first decomposition gives the first sub-query an empty
/// expected schema (a progressive-validation finding); records each request's feedback.
#[derive(Debug, Default)]
struct InvalidOnce {
    inner: OfflinePlanner,
    feedback: Mutex<Vec<Option<String>>>,
    broken: Mutex<Option<String>>,
}

#[async_trait]
impl Planner for InvalidOnce {
    fn name(&self) -> String {
        "invalid-once".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        let first = {
            let mut fb = self.feedback.lock().unwrap();
            fb.push(r.feedback.clone());
            fb.len() == 1
        };
        let mut response = self.inner.decompose(r).await?;
        if first {
            let sq = &mut response.sub_queries[0];
            sq.expected_schema.clear();
            *self.broken.lock().unwrap() = Some(sq.id.clone());
        }
        Ok(response)
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
async fn gap16_a_decomposition_that_fails_validation_is_re_prompted_with_the_findings() {
    let dir = TempDir::new("gap16");
    let planner = Arc::new(InvalidOnce::default());
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let feedback = planner.feedback.lock().unwrap().clone();
    assert_eq!(feedback.len(), 2);
    assert_eq!(feedback[0], None);
    let second = feedback[1].clone().unwrap_or_default();
    let broken = planner.broken.lock().unwrap().clone().unwrap();
    assert!(
        second.starts_with("Decomposition validation failed at level"),
        "{second}"
    );
    assert!(second.contains(&broken), "{second}");
    assert!(second.contains("expected_schema"), "{second}");
    assert!(second.contains("Hint:"), "{second}");
    // The run log has both decomposer attempts; the first with the finding.
    let entries = run_log(&engine, &r);
    let decomposer: Vec<&RunLogEntry> = entries.iter().filter(|e| e.node == "decomposer").collect();
    assert_eq!(decomposer.len(), 2);
    assert_eq!(decomposer[0].delta["attempt"], json!(1));
    assert!(!decomposer[0].errors.is_empty());
    assert!(
        decomposer[0]
            .errors
            .iter()
            .all(|e| e.code == ErrorCode::InvalidPlanStructure)
    );
    assert_eq!(decomposer[1].delta["attempt"], json!(2));
    assert!(decomposer[1].errors.is_empty());

    // With no re-prompt left, the findings become the run's PLANNING_FAILURE.
    let dir = TempDir::new("gap16-no-retry");
    let planner = Arc::new(InvalidOnce::default());
    let options = EngineOptions {
        decomposer_max_retries: 0,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.subqueries.is_empty());
    assert_eq!(planner.feedback.lock().unwrap().len(), 1);
    let failures = r.errors_with(ErrorCode::PlanningFailure);
    assert_eq!(failures.len(), 1, "{:#?}", r.errors);
    assert!(
        failures[0]
            .message
            .contains("failed validation after 1 attempt(s)"),
        "{}",
        failures[0].message
    );
    assert!(failures[0].message.contains("expected_schema"));
}
