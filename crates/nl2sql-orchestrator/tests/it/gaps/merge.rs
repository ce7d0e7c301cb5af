//! GAP-15: parallel scans merge in node-id order, whatever order they finish in.

use super::*;

// ---------------------------------------------------------------------------------------
// GAP-15

/// The offline planner, but the plan of a scan on `slow` takes a while, and every plan
/// call can be made to fail; records the order in which plan calls finish.
#[derive(Debug, Default)]
struct Staggered {
    inner: OfflinePlanner,
    slow: Mutex<String>,
    fail: bool,
    finished: Mutex<Vec<String>>,
}

#[async_trait]
impl Planner for Staggered {
    fn name(&self) -> String {
        "staggered".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        let ds = r.sub_query.datasource_id.clone();
        if *self.slow.lock().unwrap() == ds {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        self.finished.lock().unwrap().push(ds.clone());
        if self.fail {
            return Err(planner_error(
                ErrorCode::PlanningFailure,
                Severity::Critical,
                &format!("no plan for the scan on {ds}"),
            ));
        }
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

/// What a run produced, without what differs from run to run by design (trace id,
/// timings, artifact locations).
fn shape(r: &RunResult) -> Value {
    json!({
        "status": r.status,
        "rows": r.rows,
        "terminal_results": r.terminal_results,
        "subqueries": r.subqueries.iter().map(|s| json!({
            "id": s.id,
            "datasource_id": s.datasource_id,
            "status": s.status,
            "attempts": s.attempts,
            "sql": s.sql,
            "row_count": s.row_count,
        })).collect::<Vec<_>>(),
        "errors": r.errors,
        "warnings": r.warnings,
        "answer": r.answer,
    })
}

const TWO_PLANTS: &str =
    "Compare the number of factories in plant north with the number of factories in plant south";

async fn two_plants(dir: &Path, planner: Arc<dyn Planner>) -> Engine {
    let north = dir.join("north.db");
    let south = dir.join("south.db");
    std::fs::copy(fixture(), &north).unwrap();
    std::fs::copy(fixture(), &south).unwrap();
    let toml = format!(
        "version = 1\n\n[[datasources]]\nid = \"plant_north\"\nurl = \"sqlite://{}\"\n\n[[datasources]]\nid = \"plant_south\"\nurl = \"sqlite://{}\"\n",
        north.display(),
        south.display()
    );
    let config = ConfigFile::from_toml_str(&toml).unwrap();
    let registry =
        DatasourceRegistry::from_config(&config, dir, &EnvSecrets, crate::support::drivers())
            .unwrap();
    engine_over(registry, &dir.join("data"), planner, fast_options()).await
}

/// Runs the two-plant question twice, first with the north scan slow, then the south
/// one; returns both results and the order the scans finished planning in.
async fn staggered_runs(fail: bool) -> [(RunResult, Vec<String>); 2] {
    let dir = TempDir::new("gap15");
    let planner = Arc::new(Staggered {
        fail,
        ..Staggered::default()
    });
    let engine = two_plants(dir.path(), planner.clone()).await;
    let mut out = Vec::new();
    for slow in ["plant_north", "plant_south"] {
        *planner.slow.lock().unwrap() = slow.to_owned();
        planner.finished.lock().unwrap().clear();
        let r = engine.ask(TWO_PLANTS, AskOptions::default()).await;
        out.push((r, planner.finished.lock().unwrap().clone()));
    }
    let [a, b]: [(RunResult, Vec<String>); 2] = out.try_into().unwrap();
    [a, b]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap15_parallel_scans_merge_in_node_id_order_whatever_order_they_finish_in() {
    // Both scans fail: each adds an error and a warning to the run, in merge order.
    let [(a, a_order), (b, b_order)] = staggered_runs(true).await;
    assert_eq!(a_order, ["plant_south", "plant_north"]);
    assert_eq!(b_order, ["plant_north", "plant_south"]);
    assert_eq!(a.subqueries.len(), 2, "{:#?}", a.errors);
    assert_eq!(shape(&a), shape(&b));
    let mut ids: Vec<&str> = a.subqueries.iter().map(|s| s.id.as_str()).collect();
    let in_report_order = ids.clone();
    ids.sort_unstable();
    assert_eq!(in_report_order, ids, "scans are reported in id order");
    let error_ids: Vec<&str> = a
        .errors
        .iter()
        .filter_map(|e| e.subquery_id.as_deref())
        .collect();
    assert_eq!(error_ids, ids, "{:#?}", a.errors);
    assert!(
        a.errors
            .iter()
            .filter(|e| e.subquery_id.is_some())
            .all(|e| e.code == ErrorCode::PlanningFailure),
        "{:#?}",
        a.errors
    );
    let warned: Vec<&str> = a
        .warnings
        .iter()
        .filter_map(|w| ids.iter().copied().find(|id| w.contains(id)))
        .collect();
    assert_eq!(warned, ids, "{:?}", a.warnings);

    // Both scans succeed: the same rows, terminal results and reports either way.
    let [(a, a_order), (b, b_order)] = staggered_runs(false).await;
    assert_eq!(a_order, ["plant_south", "plant_north"]);
    assert_eq!(b_order, ["plant_north", "plant_south"]);
    assert!(a.success, "{:#?}", a.errors);
    assert_eq!(shape(&a), shape(&b));
    assert_eq!(a.subqueries.len(), 2);
}
