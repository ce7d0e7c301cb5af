//! The LLM planner against a local HTTP/1.1 server written here: request contents, replies
//! in and out of fences, retries on 429 and 5xx, timeouts, the structured-output fallback,
//! the circuit breaker and secret hygiene.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nl2sql_plan::{parse_decomposition, parse_plan};
use nl2sql_planner::{
    AnswerFormat, AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner,
    RefineRequest, Step,
};
use nl2sql_planner_llm::{AgentConfig, BreakerConfig, LlmConfig, LlmPlanner, StructuredOutput};
use nl2sql_state::{
    ColumnContract, ConfigError, Dialect, ErrorCode, PipelineError, SchemaContract, SchemaSnapshot,
    Secret, SecretSource, Severity, TableContract, TableRef,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const KEY: &str = "sk-test-7f3a9c1e5b2d4f6a8c0e";

/// One canned HTTP response.
#[derive(Debug, Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    fn ok(content: &str) -> Reply {
        Reply::status(200, &completion(content))
    }

    fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }

    fn header(mut self, name: &'static str, value: &str) -> Reply {
        self.headers.push((name, value.to_owned()));
        self
    }

    fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

/// A local server answering with `replies` in order, then repeating the last one.
struct Server {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    connections: Arc<AtomicUsize>,
}

impl Server {
    async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let replies = Arc::new(replies);
        let (r, c) = (received.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                c.fetch_add(1, Ordering::SeqCst);
                let (r, next, replies) = (r.clone(), next.clone(), replies.clone());
                tokio::spawn(async move {
                    let _ = handle(stream, r, next, replies).await;
                });
            }
        });
        Server {
            url,
            received,
            connections,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

async fn handle(
    mut stream: TcpStream,
    received: Arc<Mutex<Vec<Received>>>,
    next: Arc<AtomicUsize>,
    replies: Arc<Vec<Reply>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    received.lock().unwrap().push(Received {
        request_line,
        headers,
        body,
    });
    let i = next.fetch_add(1, Ordering::SeqCst);
    let reply = replies[i.min(replies.len() - 1)].clone();
    tokio::time::sleep(reply.delay).await;
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

/// A chat-completions response body whose message is `content`.
fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
    .to_string()
}

fn config(server: &Server, tweak: impl FnOnce(&mut LlmConfig)) -> LlmConfig {
    let mut config = LlmConfig::single("test-model", server.url.clone());
    config.default.max_retries = Some(2);
    config.default.timeout_sec = Some(5.0);
    config.default.backoff_base_ms = Some(10);
    config.default.backoff_max_ms = Some(40);
    config.default.jitter_ms = Some(5);
    tweak(&mut config);
    config
}

fn planner(config: &LlmConfig) -> LlmPlanner {
    LlmPlanner::with_api_key(config, Some(Secret::new(KEY))).unwrap()
}

const PLAN: &str = r#"{"tables": [{"name": "orders", "alias": "o", "ordinal": 0}],
 "select_items": [{"ordinal": 0, "alias": "orders",
   "expr": {"kind": "func", "func_name": "COUNT", "is_aggregate": true,
            "args": [{"kind": "column", "alias": "o", "column_name": "id"}]}}]}"#;

fn plan_request() -> PlanRequest {
    let mut contract = SchemaContract::new("shop", "sqlite");
    let mut table = TableContract {
        table: TableRef {
            schema_name: "main".into(),
            table_name: "orders".into(),
        },
        ..TableContract::default()
    };
    table.columns.insert(
        "id".into(),
        ColumnContract {
            name: "id".into(),
            data_type: "INTEGER".into(),
            is_nullable: false,
            is_primary_key: true,
        },
    );
    contract.add_table(table);
    PlanRequest {
        question: "How many orders are there?".into(),
        sub_query: serde_json::from_value(json!({
            "id": "sq1", "datasource_id": "shop", "intent": "count orders",
            "expected_schema": [{"name": "orders", "dtype": "int"}]
        }))
        .unwrap(),
        dialect: Dialect::Sqlite,
        schema: SchemaSnapshot {
            contract,
            metadata: None,
        },
        feedback: None,
        today: Some("2025-01-31".into()),
    }
}

async fn plan_err(planner: &LlmPlanner) -> PipelineError {
    match planner.plan(&plan_request()).await {
        Ok(plan) => panic!("expected an error, got {plan:?}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn structured_reply_gives_the_plan_and_the_request_carries_the_contract() {
    let server = Server::start(vec![Reply::ok(PLAN)]).await;
    let planner = planner(&config(&server, |_| {}));
    let plan = planner.plan(&plan_request()).await.unwrap();
    assert_eq!(plan, parse_plan(PLAN).unwrap());

    let received = server.received();
    assert_eq!(received.len(), 1);
    let r = &received[0];
    assert_eq!(r.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(r.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(r.body["seed"], 42);
    assert_eq!(r.body["temperature"], 0.0);
    assert_eq!(r.body["stream"], false);
    assert_eq!(r.body["messages"][0]["role"], "system");
    assert_eq!(r.body["messages"][1]["role"], "user");
    let user = r.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Intent to plan: count orders"), "{user}");
    assert!(user.contains("\"table_key\": \"main.orders\""), "{user}");
    let format = &r.body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "plan_model");
    assert!(
        format["json_schema"]["schema"]["properties"]["select_items"].is_object(),
        "{format}"
    );

    let calls = planner.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].step, Step::AstPlanner);
    assert_eq!(calls[0].model, "test-model");
    assert_eq!(calls[0].prompt_version, "ast_planner.v2");
    assert_eq!(calls[0].attempts, 1);
    assert!(calls[0].structured);
    assert_eq!(calls[0].error, None);
    let usage = planner.usage();
    assert_eq!(
        (
            usage.calls,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (1, 11, 7, 18)
    );
}

#[tokio::test]
async fn decomposition_inside_a_json_fence_is_accepted() {
    let decomposition = r#"{"sub_queries": [{"id": "a", "datasource_id": "shop",
        "intent": "orders per month", "metrics": [{"name": "orders", "aggregation": "count"}]}],
        "combine_groups": [{"group_id": "g1", "operation": "standalone",
                            "inputs": [{"subquery_id": "a"}]}]}"#;
    let server = Server::start(vec![Reply::ok(&format!(
        "Here is the decomposition:\n```json\n{decomposition}\n```\n"
    ))])
    .await;
    let planner = planner(&config(&server, |_| {}));
    let request = DecomposeRequest {
        question: "orders per month".into(),
        datasources: vec![],
        feedback: Some("sub-query b had no metric".into()),
        today: None,
    };
    let response = planner.decompose(&request).await.unwrap();
    assert_eq!(response, parse_decomposition(decomposition).unwrap());
    let body = &server.received()[0].body;
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        "decomposer_response"
    );
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("sub-query b had no metric"), "{user}");
    assert_eq!(planner.calls()[0].prompt_version, "decomposer.v1");
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_retry_after_delay() {
    let server = Server::start(vec![
        Reply::status(429, r#"{"error": {"message": "slow down"}}"#).header("Retry-After", "1"),
        Reply::ok(PLAN),
    ])
    .await;
    let planner = planner(&config(&server, |_| {}));
    let plan = planner.plan(&plan_request()).await.unwrap();
    assert_eq!(plan, parse_plan(PLAN).unwrap());
    assert_eq!(server.received().len(), 2);
    let call = &planner.calls()[0];
    assert_eq!(call.attempts, 2);
    // The backoff alone is at most 45 ms: only Retry-After explains a second's wait.
    assert!(call.latency_ms >= 1000, "Retry-After ignored: {call:?}");
}

#[tokio::test]
async fn server_error_is_retried_then_succeeds() {
    let server = Server::start(vec![Reply::status(500, "oops"), Reply::ok(PLAN)]).await;
    let planner = planner(&config(&server, |_| {}));
    assert_eq!(
        planner.plan(&plan_request()).await.unwrap(),
        parse_plan(PLAN).unwrap()
    );
    assert_eq!(server.received().len(), 2);
    assert_eq!(planner.calls()[0].attempts, 2);
}

#[tokio::test]
async fn capture_calls_returns_the_calls_made_inside_it_and_only_those() {
    let server = Server::start(vec![Reply::ok(PLAN)]).await;
    let planner = planner(&config(&server, |_| {}));
    planner.plan(&plan_request()).await.unwrap();
    let (plan, calls) = nl2sql_planner_llm::capture_calls(planner.plan(&plan_request())).await;
    assert_eq!(plan.unwrap(), parse_plan(PLAN).unwrap());
    // One call inside the scope (the earlier one is not in it), with the server's usage.
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0], planner.calls()[1]);
    assert_eq!(calls[0].model, "test-model");
    assert_eq!(
        (
            calls[0].prompt_tokens,
            calls[0].completion_tokens,
            calls[0].total_tokens
        ),
        (11, 7, 18)
    );
    // A planner that calls no model leaves the scope empty.
    let (_, none) = nl2sql_planner_llm::capture_calls(async { 1 }).await;
    assert!(none.is_empty());
}

#[tokio::test]
async fn persistent_server_error_fails_after_max_retries_plus_one_attempts() {
    let server = Server::start(vec![Reply::status(503, "down for maintenance")]).await;
    let planner = planner(&config(&server, |_| {}));
    let e = plan_err(&planner).await;
    assert_eq!(server.received().len(), 3);
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.severity, Severity::Error);
    assert!(e.is_retryable());
    assert_eq!(e.node, "ast_planner");
    assert!(e.message.contains("HTTP 503 (3 attempts)"), "{}", e.message);
    assert!(e.message.contains("down for maintenance"), "{}", e.message);
    let call = &planner.calls()[0];
    assert_eq!(
        (call.attempts, call.error),
        (3, Some(ErrorCode::PlanningFailure))
    );
}

#[tokio::test]
async fn slow_server_times_out_with_a_timeout_message() {
    let server = Server::start(vec![Reply::ok(PLAN).delayed(Duration::from_millis(1200))]).await;
    let planner = planner(&config(&server, |c| {
        c.default.timeout_sec = Some(0.2);
        c.default.max_retries = Some(0);
    }));
    let e = plan_err(&planner).await;
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert!(
        e.message.contains("timed out after 200 ms"),
        "{}",
        e.message
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn truncated_json_is_a_planning_failure_with_the_parse_error() {
    let server = Server::start(vec![Reply::ok(&PLAN[..PLAN.len() / 2])]).await;
    let planner = planner(&config(&server, |_| {}));
    let e = plan_err(&planner).await;
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.severity, Severity::Error);
    assert!(e.message.contains("invalid plan at $"), "{}", e.message);
    assert!(e.message.contains("EOF while parsing"), "{}", e.message);
    assert_eq!(
        server.received().len(),
        1,
        "bad output is not a transport retry"
    );
}

#[tokio::test]
async fn rejected_response_format_falls_back_to_text_for_the_planner_lifetime() {
    let server = Server::start(vec![
        Reply::status(
            400,
            r#"{"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model"}}"#,
        ),
        Reply::ok(PLAN),
    ])
    .await;
    let planner = planner(&config(&server, |_| {}));
    assert_eq!(
        planner.plan(&plan_request()).await.unwrap(),
        parse_plan(PLAN).unwrap()
    );
    assert_eq!(
        planner.plan(&plan_request()).await.unwrap(),
        parse_plan(PLAN).unwrap()
    );
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert!(received[0].body.get("response_format").is_some());
    for r in &received[1..] {
        assert!(r.body.get("response_format").is_none(), "{}", r.body);
        let system = r.body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("conforms to this JSON Schema"), "{system}");
    }
    let calls = planner.calls();
    assert!(!calls[0].structured && !calls[1].structured);
    assert_eq!((calls[0].attempts, calls[1].attempts), (2, 1));
}

#[tokio::test]
async fn structured_output_on_does_not_fall_back() {
    let server = Server::start(vec![Reply::status(400, "response_format is not supported")]).await;
    let planner = planner(&config(&server, |c| {
        c.default.structured_output = Some(StructuredOutput::On);
    }));
    let e = plan_err(&planner).await;
    assert!(e.message.contains("HTTP 400"), "{}", e.message);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn rejected_key_is_not_retried_and_is_critical() {
    let server = Server::start(vec![Reply::status(401, r#"{"error": "invalid api key"}"#)]).await;
    let planner = planner(&config(&server, |_| {}));
    let e = plan_err(&planner).await;
    assert_eq!(server.received().len(), 1);
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.severity, Severity::Critical);
    assert!(!e.is_retryable());
    assert!(!e.message.contains(KEY));
}

#[tokio::test]
async fn open_breaker_fails_fast_without_contacting_the_server() {
    let server = Server::start(vec![Reply::status(500, "broken")]).await;
    let planner = planner(&config(&server, |c| {
        c.default.max_retries = Some(0);
        c.breaker = BreakerConfig {
            fail_max: 2,
            reset_timeout_ms: 60_000,
        };
    }));
    for _ in 0..2 {
        assert_eq!(plan_err(&planner).await.code, ErrorCode::PlanningFailure);
    }
    assert_eq!(server.connections(), 2);
    // The breaker is per endpoint: the refiner shares it with the planner.
    let e = planner
        .refine(&RefineRequest {
            plan_request: plan_request(),
            failed_plan: None,
            errors: vec![],
            history: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ServiceUnavailable);
    assert_eq!(e.severity, Severity::Critical);
    assert_eq!(e.node, "refiner");
    assert!(e.message.contains("circuit breaker open"), "{}", e.message);
    assert!(
        e.message.contains(&server.url),
        "names the dependency: {}",
        e.message
    );
    assert_eq!(server.connections(), 2);
    assert_eq!(planner.calls()[2].attempts, 0);
}

#[tokio::test]
async fn refiner_returns_text_and_answer_returns_a_strict_final_answer() {
    let answer = r#"{"summary": "There are 3 orders.", "format_type": "text",
                     "content": "3 orders in total.", "warnings": []}"#;
    let server = Server::start(vec![
        Reply::ok("  1. Use alias o for orders.\n2. Count o.id.  \n"),
        Reply::ok(answer),
        Reply::ok(r#"{"summary": "s", "format_type": "text", "content": "c", "warnings": [], "extra": 1}"#),
    ])
    .await;
    let planner = planner(&config(&server, |c| {
        c.agents.insert(
            "answersynthesizer".into(),
            AgentConfig {
                model: Some("answer-model".into()),
                ..AgentConfig::default()
            },
        );
    }));
    let refine = RefineRequest {
        plan_request: plan_request(),
        failed_plan: Some(parse_plan(PLAN).unwrap()),
        errors: vec![PipelineError::new(
            "executor",
            ErrorCode::ExecutionFailed,
            Severity::Error,
            "no such column: o.idd",
        )],
        history: vec!["[ast_planner]: Tables: orders".into()],
    };
    let feedback = planner.refine(&refine).await.unwrap();
    assert_eq!(feedback, "1. Use alias o for orders.\n2. Count o.id.");
    let request = AnswerRequest {
        question: "How many orders?".into(),
        results: vec![],
        unmapped: vec![],
        errors: vec![],
    };
    let final_answer = planner.answer(&request).await.unwrap();
    assert_eq!(
        final_answer,
        FinalAnswer {
            summary: "There are 3 orders.".into(),
            format_type: AnswerFormat::Text,
            content: "3 orders in total.".into(),
            warnings: vec![],
        }
    );
    let e = planner.answer(&request).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::AggregatorFailed);
    assert!(e.message.contains("unknown field `extra`"), "{}", e.message);

    let received = server.received();
    assert!(received[0].body.get("response_format").is_none());
    let refine_user = received[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(refine_user.contains("- EXECUTION_FAILED (executor): no such column: o.idd"));
    assert!(
        refine_user.contains("\"alias\": \"o\""),
        "failed plan as JSON: {refine_user}"
    );
    assert_eq!(received[1].body["model"], "answer-model");
    assert_eq!(
        received[1].body["response_format"]["json_schema"]["strict"],
        true
    );
    let versions: Vec<String> = planner
        .calls()
        .into_iter()
        .map(|c| c.prompt_version)
        .collect();
    assert_eq!(
        versions,
        [
            "refiner.v1",
            "answer_synthesizer.v1",
            "answer_synthesizer.v1"
        ]
    );
}

/// Environment-like secrets for tests (the real environment is never modified).
struct FakeEnv(BTreeMap<&'static str, &'static str>);

impl SecretSource for FakeEnv {
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String> {
        assert_eq!(provider, "env");
        Ok(self.0.get(key).map(|v| (*v).to_owned()))
    }
}

#[tokio::test]
async fn key_comes_from_the_named_variable_and_never_prints() {
    let server = Server::start(vec![Reply::ok(PLAN)]).await;
    let config = config(&server, |c| {
        c.default.api_key_env = Some("NL2SQL_TEST_LLM_KEY".into());
    });
    let env = FakeEnv(BTreeMap::from([("NL2SQL_TEST_LLM_KEY", KEY)]));
    let planner = LlmPlanner::from_config_with_secrets(&config, &env).unwrap();
    planner.plan(&plan_request()).await.unwrap();
    assert_eq!(
        server.received()[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
    let debug = format!(
        "{planner:?} {config:?} {:?}",
        planner.settings(Step::AstPlanner)
    );
    assert!(!debug.contains(KEY), "{debug}");
    assert!(debug.contains("test-model"), "{debug}");

    match LlmPlanner::from_config_with_secrets(&config, &FakeEnv(BTreeMap::new())) {
        Err(ConfigError::Secret { key, message }) => {
            assert_eq!(key, "default.api_key");
            assert!(message.contains("NL2SQL_TEST_LLM_KEY"), "{message}");
        }
        other => panic!("expected a missing secret, got {other:?}"),
    }
}

#[tokio::test]
async fn empty_key_variable_sends_no_authorization() {
    let server = Server::start(vec![Reply::ok(PLAN)]).await;
    let config = config(&server, |c| c.default.api_key_env = Some(String::new()));
    let planner = LlmPlanner::from_config_with_secrets(&config, &FakeEnv(BTreeMap::new())).unwrap();
    planner.plan(&plan_request()).await.unwrap();
    assert!(!server.received()[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_step_without_a_model_runs_on_the_offline_planner() {
    let server = Server::start(vec![Reply::ok(PLAN)]).await;
    // Only the AST planner has a model: the other steps run offline (SPEC.md §9 GAP-59).
    let config = config(&server, |c| {
        c.default.model = None;
        c.agents.insert(
            "ast_planner".to_owned(),
            AgentConfig {
                model: Some("plan-model".to_owned()),
                ..AgentConfig::default()
            },
        );
    });
    config.check().unwrap();
    let planner = planner(&config);
    assert!(planner.calls_model(Step::AstPlanner));
    assert!(!planner.calls_model(Step::AnswerSynthesizer));
    assert!(planner.settings(Step::Decomposer).is_none());
    assert_eq!(planner.name(), "llm:plan-model");

    let plan = planner.plan(&plan_request()).await.unwrap();
    assert_eq!(plan, parse_plan(PLAN).unwrap());
    let request = AnswerRequest {
        question: "How many orders?".into(),
        results: vec![],
        unmapped: vec![],
        errors: vec![],
    };
    let answer = planner.answer(&request).await.unwrap();
    let offline = nl2sql_planner_offline::OfflinePlanner::new()
        .answer(&request)
        .await
        .unwrap();
    assert_eq!(answer, offline);
    // The server saw the plan call only, with the step's own model.
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body["model"], "plan-model");
    assert_eq!(planner.calls().len(), 1);

    // A file in which no step has a model is a mistake, named by its key.
    let mut none = LlmConfig::single("m", server.url.clone());
    none.default.model = None;
    match none.check() {
        Err(ConfigError::Invalid { key, message }) => {
            assert_eq!(key, "default.model");
            assert!(message.contains("no step has a model"), "{message}");
        }
        other => panic!("expected an invalid default.model, got {other:?}"),
    }
}
