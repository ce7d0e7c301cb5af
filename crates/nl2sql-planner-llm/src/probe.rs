//! A reachability probe of an OpenAI-compatible endpoint, for `nl2sql doctor`: one
//! `GET {base_url}/models`, which costs no tokens.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

/// The outcome of [`probe_endpoint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeStatus {
    /// It answered, accepted the key and lists the models (or lists none).
    Ok,
    /// It is up, but its model list lacks a configured model or is not available.
    Warn,
    /// No answer, no connection, a refused key or a server error.
    Fail,
}

/// Asks an OpenAI-compatible endpoint `GET {base_url}/models` (cheap: no tokens spent)
/// with `key` as bearer token, within `timeout`: whether it answers, accepts the key, and
/// lists `models`. The detail line never holds the key or the URL's credentials.
pub async fn probe_endpoint(
    base_url: &str,
    key: Option<&str>,
    timeout: Duration,
    models: &BTreeSet<String>,
) -> (ProbeStatus, String) {
    let client = match reqwest::Client::builder().timeout(timeout).build() {
        Ok(c) => c,
        Err(e) => {
            return (
                ProbeStatus::Fail,
                format!("cannot build an HTTP client: {e}"),
            );
        }
    };
    let mut request = client.get(format!("{base_url}/models"));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return (
                ProbeStatus::Fail,
                format!("no answer within {} s", timeout.as_secs_f64()),
            );
        }
        Err(e) => {
            let what = if e.is_connect() {
                "cannot connect"
            } else {
                "no answer"
            };
            // The innermost cause says why ("Connection refused", a DNS failure, …);
            // without the URL, which may carry credentials.
            let e = e.without_url();
            let mut cause: &dyn std::error::Error = &e;
            while let Some(inner) = cause.source() {
                cause = inner;
            }
            return (ProbeStatus::Fail, format!("{what}: {cause}"));
        }
    };
    let code = response.status();
    if code.as_u16() == 401 || code.as_u16() == 403 {
        return (
            ProbeStatus::Fail,
            format!("the endpoint refused the API key (HTTP {})", code.as_u16()),
        );
    }
    if code.is_server_error() {
        return (
            ProbeStatus::Fail,
            format!("the endpoint answered HTTP {}", code.as_u16()),
        );
    }
    if !code.is_success() {
        return (
            ProbeStatus::Warn,
            format!(
                "the endpoint answered HTTP {} to GET /models: it is up, but its model list is not available",
                code.as_u16()
            ),
        );
    }
    let listed: Option<BTreeSet<String>> = response.json::<Value>().await.ok().and_then(|v| {
        v["data"].as_array().map(|items| {
            items
                .iter()
                .filter_map(|m| m["id"].as_str().map(str::to_owned))
                .collect()
        })
    });
    let wanted = models.iter().cloned().collect::<Vec<_>>().join(", ");
    match listed {
        Some(listed) => {
            let missing: Vec<&str> = models
                .iter()
                .filter(|m| !listed.contains(*m))
                .map(String::as_str)
                .collect();
            if missing.is_empty() {
                (
                    ProbeStatus::Ok,
                    format!(
                        "answered (HTTP {}); model(s) listed: {wanted}",
                        code.as_u16()
                    ),
                )
            } else {
                (
                    ProbeStatus::Warn,
                    format!(
                        "answered (HTTP {}), but its model list lacks: {}",
                        code.as_u16(),
                        missing.join(", ")
                    ),
                )
            }
        }
        None => (
            ProbeStatus::Ok,
            format!("answered (HTTP {})", code.as_u16()),
        ),
    }
}
