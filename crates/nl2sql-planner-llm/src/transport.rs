//! One chat-completions call over HTTP (spec: errors-and-recovery.md §3-4, §6): the request
//! body, the per-call timeout, transport retries with exponential backoff and jitter (429
//! honouring `Retry-After`, 5xx, 408, connection failures and timeouts), the one-time
//! fallback from structured output to JSON in text, and the circuit breaker around it all.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nl2sql_state::{Backoff, Secret, SplitMix64, sanitize_engine_message};
use serde_json::{Value, json};

use super::config::{AgentSettings, StructuredOutput};
use nl2sql_state::Breaker;

/// The fixed sampling seed of every call (spec: config-and-security.md §3.2).
pub(crate) const SEED: u64 = 42;

/// The JSON Schema a structured answer must follow.
#[derive(Debug, Clone)]
pub(crate) struct ResponseSchema {
    /// The schema's name in `response_format.json_schema.name`.
    pub(crate) name: &'static str,
    /// The schema.
    pub(crate) schema: Value,
    /// Whether to ask for strict schema adherence (only for schemas that meet the
    /// provider's strict-mode subset).
    pub(crate) strict: bool,
}

/// The messages of one call and the schema of its answer, if structured.
#[derive(Debug, Clone)]
pub(crate) struct ChatRequest {
    pub(crate) system: String,
    pub(crate) user: String,
    pub(crate) schema: Option<ResponseSchema>,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) total_tokens: u64,
}

/// A successful call: the assistant's text and what it cost.
#[derive(Debug, Clone)]
pub(crate) struct ChatReply {
    pub(crate) content: String,
    pub(crate) usage: Usage,
    pub(crate) attempts: u32,
    pub(crate) structured: bool,
    pub(crate) finish_reason: Option<String>,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The breaker refused the call; nothing was sent.
    BreakerOpen { retry_in: Duration },
    /// The last attempt did not finish within the timeout.
    Timeout { timeout: Duration },
    /// The last attempt could not connect or lost the connection.
    Connection(String),
    /// The server answered with an error status (body sanitised and shortened).
    Status { status: u16, body: String },
    /// The server answered 2xx with a body that is not a chat completion.
    BadReply(String),
}

/// A failed call with the attempts it made.
#[derive(Debug, Clone)]
pub(crate) struct CallFailure {
    pub(crate) failure: Failure,
    pub(crate) attempts: u32,
    pub(crate) structured: bool,
}

/// One step's connection to its endpoint.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) client: reqwest::Client,
    pub(crate) settings: AgentSettings,
    pub(crate) key: Option<Secret>,
    pub(crate) breaker: Arc<Breaker>,
    /// Set once the server rejected `response_format`; shared by the steps that use the
    /// same base URL and model, for the planner's lifetime.
    pub(crate) text_only: Arc<AtomicBool>,
}

enum Attempt {
    Done(ChatReply),
    Retry {
        failure: Failure,
        retry_after: Option<Duration>,
    },
    Fail(Failure),
    FallBackToText,
}

impl Endpoint {
    /// Runs one call: breaker, attempts, retries, fallback.
    pub(crate) async fn chat(&self, request: &ChatRequest) -> Result<ChatReply, CallFailure> {
        let mode = self.settings.structured_output;
        let mut structured = request.schema.is_some()
            && match mode {
                StructuredOutput::On => true,
                StructuredOutput::Off => false,
                StructuredOutput::Auto => !self.text_only.load(Ordering::Relaxed),
            };
        let permit = match self.breaker.try_acquire() {
            Ok(permit) => permit,
            Err(rejected) => {
                return Err(CallFailure {
                    failure: Failure::BreakerOpen {
                        retry_in: rejected.retry_in,
                    },
                    attempts: 0,
                    structured,
                });
            }
        };
        let mut attempts = 0u32;
        let mut retries = 0u32;
        let mut fell_back = false;
        let failure = loop {
            attempts += 1;
            match self.attempt(request, structured).await {
                Attempt::Done(mut reply) => {
                    permit.success();
                    reply.attempts = attempts;
                    return Ok(reply);
                }
                Attempt::FallBackToText if !fell_back && mode == StructuredOutput::Auto => {
                    tracing::warn!(
                        target: "planner",
                        endpoint = %self.breaker.name(),
                        model = %self.settings.model,
                        "server rejected response_format; using JSON in text from now on"
                    );
                    self.text_only.store(true, Ordering::Relaxed);
                    structured = false;
                    fell_back = true;
                }
                Attempt::FallBackToText => {
                    break Failure::Status {
                        status: 400,
                        body: "the server rejected response_format (structured output)".to_owned(),
                    };
                }
                Attempt::Retry {
                    failure,
                    retry_after,
                } => {
                    if retries >= self.settings.max_retries {
                        break failure;
                    }
                    let delay =
                        retry_after.unwrap_or_else(|| backoff_delay(&self.settings, retries));
                    retries += 1;
                    tracing::warn!(
                        target: "planner",
                        endpoint = %self.breaker.name(),
                        model = %self.settings.model,
                        attempt = attempts,
                        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        failure = ?failure,
                        "transient model call failure; retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                Attempt::Fail(failure) => break failure,
            }
        };
        match &failure {
            Failure::Timeout { .. } | Failure::Connection(_) => permit.failure(),
            Failure::Status { status, .. } if *status >= 500 || *status == 408 => {
                permit.failure();
            }
            _ => permit.success(),
        }
        Err(CallFailure {
            failure,
            attempts,
            structured,
        })
    }

    async fn attempt(&self, request: &ChatRequest, structured: bool) -> Attempt {
        let body = request_body(&self.settings, request, structured);
        let url = format!("{}/chat/completions", self.settings.base_url);
        let mut builder = self
            .client
            .post(url)
            .timeout(self.settings.timeout)
            .json(&body);
        if let Some(key) = &self.key {
            builder = builder.bearer_auth(key.expose());
        }
        let response = match builder.send().await {
            Ok(response) => response,
            Err(e) => return self.transport_error(&e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0);
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return self.transport_error(&e),
        };
        if (200..300).contains(&status) {
            return match parse_completion(&text) {
                Ok(mut reply) => {
                    reply.structured = structured;
                    Attempt::Done(reply)
                }
                Err(reason) => Attempt::Fail(Failure::BadReply(reason)),
            };
        }
        let failure = Failure::Status {
            status,
            body: snippet(&text),
        };
        if status == 429 {
            return Attempt::Retry {
                failure,
                retry_after: retry_after
                    .map(|secs| Duration::from_secs_f64(secs).min(self.settings.max_retry_after)),
            };
        }
        if status >= 500 || status == 408 {
            return Attempt::Retry {
                failure,
                retry_after: None,
            };
        }
        if status == 400 && structured && rejects_response_format(&text) {
            return Attempt::FallBackToText;
        }
        Attempt::Fail(failure)
    }

    fn transport_error(&self, e: &reqwest::Error) -> Attempt {
        if e.is_timeout() {
            return Attempt::Retry {
                failure: Failure::Timeout {
                    timeout: self.settings.timeout,
                },
                retry_after: None,
            };
        }
        let message = sanitize_engine_message(&error_chain(e));
        if e.is_connect() || e.is_request() || e.is_body() || e.is_decode() {
            Attempt::Retry {
                failure: Failure::Connection(message),
                retry_after: None,
            }
        } else {
            Attempt::Fail(Failure::Connection(message))
        }
    }
}

/// `nl2sql_state::Backoff` with the step's settings: `min(max, base·2ⁿ) + U(0, jitter)`,
/// the jitter drawn from a generator seeded by the clock (calls of many clients spread).
pub(crate) fn backoff_delay(settings: &AgentSettings, n: u32) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut rng = SplitMix64::new((nanos as u64) ^ u64::from(n).rotate_left(32));
    Backoff {
        base: settings.backoff_base,
        max: settings.backoff_max,
        jitter: settings.jitter,
    }
    .delay(n, rng.unit())
}

/// The JSON body of a chat-completions request.
pub(crate) fn request_body(
    settings: &AgentSettings,
    request: &ChatRequest,
    structured: bool,
) -> Value {
    let mut system = request.system.clone();
    if let (Some(schema), false) = (&request.schema, structured) {
        system.push_str(
            "\n\nAnswer with one JSON object, and nothing else, that conforms to this JSON Schema:\n```json\n",
        );
        system.push_str(&schema.schema.to_string());
        system.push_str("\n```\n");
    }
    let mut body = json!({
        "model": settings.model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": request.user},
        ],
        "temperature": settings.temperature,
        "seed": SEED,
        "stream": false,
    });
    if let (Some(schema), true) = (&request.schema, structured) {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {
                "name": schema.name,
                "strict": schema.strict,
                "schema": schema.schema,
            },
        });
    }
    body
}

/// Reads a chat-completions response body.
fn parse_completion(text: &str) -> Result<ChatReply, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the server's reply is not JSON: {e}"))?;
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| "the server's reply has no choices[0]".to_owned())?;
    let message = choice
        .get("message")
        .ok_or_else(|| "the server's reply has no choices[0].message".to_owned())?;
    let content = match message.get("content").and_then(Value::as_str) {
        Some(content) => content.to_owned(),
        None => {
            return Err(match message.get("refusal").and_then(Value::as_str) {
                Some(refusal) => format!("the model refused: {}", snippet(refusal)),
                None => "the server's reply has no choices[0].message.content".to_owned(),
            });
        }
    };
    let count = |key: &str| {
        value
            .get("usage")
            .and_then(|u| u.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatReply {
        content,
        usage: Usage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
            total_tokens: count("total_tokens"),
        },
        attempts: 0,
        structured: false,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn rejects_response_format(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    lower.contains("response_format") || lower.contains("json_schema")
}

/// The first 300 characters of `text`, sanitised.
fn snippet(text: &str) -> String {
    let cut: String = text.chars().take(300).collect();
    sanitize_engine_message(&cut)
}

fn error_chain(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
