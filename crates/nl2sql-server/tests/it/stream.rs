//! `POST /query` with `Accept: text/event-stream` over real HTTP: events arrive while the
//! run is still going (the planner is held at a gate the test opens), the last event is
//! the answer, checked against direct SQL; a client that disconnects cancels its run,
//! which is then recorded as cancelled.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use nl2sql_orchestrator::Planner;
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_planner::{AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, RefineRequest};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_server::PlannerInfo;
use nl2sql_state::PipelineError;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::support::{ANALYST_KEY, COUNT_QUESTION, Server, sql_count, start_full};

/// The offline planner, whose `plan` waits for a permit of `gate` (none at first).
#[derive(Debug)]
struct Gated {
    inner: OfflinePlanner,
    gate: Arc<Semaphore>,
}

#[async_trait]
impl Planner for Gated {
    fn name(&self) -> String {
        "gated".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        let permit = self.gate.acquire().await;
        drop(permit);
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

async fn gated_server(name: &str) -> (Server, Arc<Semaphore>) {
    let gate = Arc::new(Semaphore::new(0));
    let planner = Arc::new(Gated {
        inner: OfflinePlanner::new(),
        gate: Arc::clone(&gate),
    });
    (
        start_full(name, PlannerInfo::Offline, planner, |_| {}).await,
        gate,
    )
}

/// Reads server-sent events from `resp` until `stop` says so or the stream ends;
/// returns them as (event, data).
async fn read_events(
    resp: &mut reqwest::Response,
    buffer: &mut String,
    mut stop: impl FnMut(&str, &Value) -> bool,
) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut name = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if name.is_empty() {
                continue; // a keep-alive comment
            }
            let value: Value = serde_json::from_str(&data).unwrap();
            let done = stop(&name, &value);
            events.push((name, value));
            if done {
                return events;
            }
        }
        match tokio::time::timeout(Duration::from_secs(60), resp.chunk()).await {
            Ok(Ok(Some(bytes))) => buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
            Ok(Ok(None)) => return events,
            Ok(Err(e)) => panic!("stream failed: {e}"),
            Err(_) => panic!("no event for 60 s; so far {events:#?}"),
        }
    }
}

async fn open_stream(server: &Server, question: &str) -> reqwest::Response {
    let resp = server
        .client
        .post(format!("{}/query", server.base))
        .bearer_auth(ANALYST_KEY)
        .header("Accept", "text/event-stream")
        .json(&json!({"natural_language": question}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    resp
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_while_the_run_goes_and_end_with_the_answer() {
    let (server, gate) = gated_server("sse-answer").await;
    let mut resp = open_stream(&server, COUNT_QUESTION).await;
    let mut buffer = String::new();
    // Everything up to the planner, which is held: the run cannot have ended.
    let before = read_events(&mut resp, &mut buffer, |name, data| {
        name == "node_started" && data["node"] == "ast_planner"
    })
    .await;
    let names: Vec<&str> = before.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"run"), "{names:?}");
    let trace_id = before[0].1["trace_id"].as_str().unwrap().to_owned();
    assert!(names.contains(&"datasources"), "{names:?}");
    let resolved = before.iter().find(|(n, _)| n == "datasources").unwrap();
    assert_eq!(resolved.1["datasource_ids"], json!(["plant"]));
    assert!(!names.contains(&"answer"), "{names:?}");
    let finished: Vec<&Value> = before
        .iter()
        .filter(|(n, _)| n == "node_finished")
        .map(|(_, d)| d)
        .collect();
    assert!(
        finished.iter().any(|d| d["node"] == "datasource_resolver"
            && d["duration_ms"].is_u64()
            && d["started_at"].is_string()),
        "{finished:#?}"
    );

    gate.add_permits(100);
    let after = read_events(&mut resp, &mut buffer, |name, _| {
        name == "answer" || name == "error"
    })
    .await;
    let names: Vec<&str> = after.iter().map(|(n, _)| n.as_str()).collect();
    // The SQL once validated, then the partial result, then the answer, in that order.
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap_or(usize::MAX);
    assert!(
        at("sql") < at("partial_result") && at("partial_result") < at("answer"),
        "{names:?}"
    );
    let sql = &after[at("sql")].1;
    assert!(
        sql["sql"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("factories"),
        "{sql}"
    );
    assert_eq!(after[at("partial_result")].1["row_count"], 1);
    let answer = &after.last().unwrap().1;
    assert_eq!(answer["trace_id"], trace_id.as_str());
    assert_eq!(answer["status"], "succeeded");
    let row = answer["results"][0].as_object().unwrap();
    assert_eq!(
        row.values().next().unwrap().as_i64(),
        Some(sql_count("factories"))
    );
    // Nothing follows the answer: the stream ends.
    assert!(
        read_events(&mut resp, &mut buffer, |_, _| false)
            .await
            .is_empty()
    );
    // The streamed run is recorded like any other.
    let (status, body) = server
        .get(&format!("/query/{trace_id}"), Some(ANALYST_KEY))
        .await;
    assert_eq!((status, body["status"].as_str()), (200, Some("succeeded")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_its_run() {
    let (server, _gate) = gated_server("sse-cancel").await;
    let mut resp = open_stream(&server, COUNT_QUESTION).await;
    let mut buffer = String::new();
    let seen = read_events(&mut resp, &mut buffer, |name, data| {
        name == "node_started" && data["node"] == "ast_planner"
    })
    .await;
    let trace_id = seen[0].1["trace_id"].as_str().unwrap().to_owned();
    // The planner waits forever; the client goes away.
    drop(resp);
    let path = format!("/query/{trace_id}");
    let mut last = (0, Value::Null);
    for _ in 0..100 {
        last = server.get(&path, Some(ANALYST_KEY)).await;
        if last.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last.0, 200, "the run was never recorded: {:#}", last.1);
    assert_eq!(last.1["status"], "cancelled", "{:#}", last.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_question_streams_an_error_event() {
    let (server, gate) = gated_server("sse-refused").await;
    gate.add_permits(100);
    let mut resp = open_stream(&server, "Delete every factory").await;
    let mut buffer = String::new();
    let events = read_events(&mut resp, &mut buffer, |name, _| {
        name == "answer" || name == "error"
    })
    .await;
    let (name, data) = events.last().unwrap();
    assert_eq!(name, "error", "{events:#?}");
    assert_eq!(data["error_code"], "INTENT_VIOLATION", "{data:#}");
    assert_eq!(data["status"], 403, "{data:#}");
    assert!(data["details"]["trace_id"].is_string(), "{data:#}");
}
