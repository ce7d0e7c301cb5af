//! The prompts: versioned template files under `prompts/` (embedded at build time), a
//! single-pass `{{placeholder}}` renderer, and the JSON contexts the templates receive
//! (schema context per retrieval.md §4, datasources, results).
//!
//! A template holds a system part and a user part, split by the marker lines
//! `<!-- system -->` and `<!-- user -->`. Values substituted into a template are never
//! scanned for placeholders again.

use nl2sql_plan::{decomposition_json_schema, plan_json_schema};
use nl2sql_state::{PipelineError, SchemaSnapshot, sanitize_engine_message};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::transport::{ChatRequest, ResponseSchema};
use nl2sql_planner::{AnswerRequest, DecomposeRequest, PlanRequest, RefineRequest};

/// A prompt template and its version.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Template {
    /// The step it serves.
    pub(crate) name: &'static str,
    /// Its version (`v1`).
    pub(crate) version: &'static str,
    /// The file's text.
    pub(crate) text: &'static str,
}

impl Template {
    /// `name.version`, as recorded in each call record.
    pub(crate) fn id(&self) -> String {
        format!("{}.{}", self.name, self.version)
    }

    /// The system and user messages with `vars` substituted.
    pub(crate) fn render(&self, vars: &[(&str, String)]) -> (String, String) {
        let body = self
            .text
            .strip_prefix("<!-- system -->\n")
            .unwrap_or(self.text);
        let (system, user) = body.split_once("\n<!-- user -->\n").unwrap_or((body, ""));
        (
            render(system, vars).trim().to_owned(),
            render(user, vars).trim().to_owned(),
        )
    }
}

/// The decomposer's prompt.
pub(crate) const DECOMPOSER: Template = Template {
    name: "decomposer",
    version: "v1",
    text: include_str!("../prompts/decomposer.v1.md"),
};

/// The AST planner's prompt.
pub(crate) const AST_PLANNER: Template = Template {
    name: "ast_planner",
    version: "v2",
    text: include_str!("../prompts/ast_planner.v2.md"),
};

/// The refiner's prompt.
pub(crate) const REFINER: Template = Template {
    name: "refiner",
    version: "v1",
    text: include_str!("../prompts/refiner.v1.md"),
};

/// The answer synthesizer's prompt.
pub(crate) const ANSWER_SYNTHESIZER: Template = Template {
    name: "answer_synthesizer",
    version: "v1",
    text: include_str!("../prompts/answer_synthesizer.v1.md"),
};

/// Every template, for tests.
#[cfg(test)]
pub(crate) const ALL_TEMPLATES: [Template; 4] =
    [DECOMPOSER, AST_PLANNER, REFINER, ANSWER_SYNTHESIZER];

/// Replaces each `{{name}}` of `template` that `vars` defines, in one pass; unknown
/// placeholders stay as written.
pub(crate) fn render(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The decomposer call.
pub(crate) fn decomposer(request: &DecomposeRequest) -> Result<ChatRequest, PipelineError> {
    let datasources: Vec<Value> = request
        .datasources
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "description": d.description,
                "domains": d.domains,
                "examples": d.examples,
                "schema_version": d.schema_version,
            })
        })
        .collect();
    let (system, user) = DECOMPOSER.render(&[
        ("today", today(request.today.as_deref())),
        ("datasources", pretty_ascii(&Value::Array(datasources))),
        ("feedback", or_none(request.feedback.as_deref())),
        ("question", request.question.clone()),
    ]);
    Ok(ChatRequest {
        system,
        user,
        schema: Some(ResponseSchema {
            name: "decomposer_response",
            schema: without_meta(decomposition_json_schema()),
            strict: false,
        }),
    })
}

/// The AST planner call.
pub(crate) fn ast_planner(request: &PlanRequest) -> Result<ChatRequest, PipelineError> {
    let (system, user) = AST_PLANNER.render(&[
        ("today", today(request.today.as_deref())),
        ("dialect", request.dialect.as_str().to_owned()),
        ("schema", pretty_ascii(&schema_context(&request.schema))),
        (
            "expected_schema",
            pretty_ascii(&to_value(&request.sub_query.expected_schema)?),
        ),
        ("semantic_context", "(none)".to_owned()),
        ("feedback", or_none(request.feedback.as_deref())),
        ("question", request.question.clone()),
        ("sub_query", pretty_ascii(&to_value(&request.sub_query)?)),
        ("intent", request.sub_query.intent.clone()),
    ]);
    Ok(ChatRequest {
        system,
        user,
        schema: Some(ResponseSchema {
            name: "plan_model",
            schema: without_meta(plan_json_schema()),
            strict: false,
        }),
    })
}

/// The refiner call (its answer is plain text).
pub(crate) fn refiner(request: &RefineRequest) -> Result<ChatRequest, PipelineError> {
    let tables = match schema_context(&request.plan_request.schema) {
        Value::Array(tables) if !tables.is_empty() => tables
            .iter()
            .map(pretty_ascii)
            .collect::<Vec<_>>()
            .join("\n---\n"),
        _ => "(none)".to_owned(),
    };
    let failed_plan = match &request.failed_plan {
        Some(plan) => pretty_ascii(&to_value(plan)?),
        None => "(no plan was produced)".to_owned(),
    };
    let (system, user) = REFINER.render(&[
        ("intent", request.plan_request.sub_query.intent.clone()),
        ("tables", tables),
        ("failed_plan", failed_plan),
        ("errors", error_lines(&request.errors)),
        ("history", lines_or_none(&request.history)),
    ]);
    Ok(ChatRequest {
        system,
        user,
        schema: None,
    })
}

/// The most rows per terminal node sent to the answer step.
pub(crate) const MAX_ANSWER_ROWS: usize = 200;

/// The answer-synthesizer call.
pub(crate) fn answer_synthesizer(request: &AnswerRequest) -> Result<ChatRequest, PipelineError> {
    let mut results = Map::new();
    for r in &request.results {
        let rows: Vec<&Vec<Value>> = r.rows.iter().take(MAX_ANSWER_ROWS).collect();
        results.insert(
            r.node_id.clone(),
            json!({"columns": r.columns, "rows": rows, "total_rows": r.total_rows}),
        );
    }
    let (system, user) = ANSWER_SYNTHESIZER.render(&[
        ("question", request.question.clone()),
        ("results", pretty_ascii(&Value::Object(results))),
        ("unmapped", pretty_ascii(&to_value(&request.unmapped)?)),
        ("errors", error_lines(&request.errors)),
    ]);
    Ok(ChatRequest {
        system,
        user,
        schema: Some(ResponseSchema {
            name: "final_answer",
            schema: final_answer_schema(),
            strict: true,
        }),
    })
}

/// The JSON Schema of [`nl2sql_planner::FinalAnswer`] (strict-mode compatible).
pub(crate) fn final_answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "format_type": {"type": "string", "enum": ["text", "list", "table"]},
            "content": {"type": "string"},
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["summary", "format_type", "content", "warnings"],
        "additionalProperties": false,
    })
}

/// The schema context of retrieval.md §4: one object per table, sorted by table key, with
/// columns (type, nullability, key flag, description, statistics, synonyms, PII flag),
/// primary key and relationships. Statistics of PII columns are left out.
pub(crate) fn schema_context(snapshot: &SchemaSnapshot) -> Value {
    let metadata = snapshot.metadata.as_ref();
    let tables = snapshot
        .contract
        .tables
        .iter()
        .map(|(key, table)| {
            let table_meta = metadata.and_then(|m| m.tables.get(key));
            let columns: Vec<Value> = table
                .columns
                .values()
                .map(|c| {
                    let meta = table_meta.and_then(|t| t.columns.get(&c.name));
                    let pii = meta.is_some_and(|m| m.pii);
                    let stats = meta
                        .and_then(|m| m.statistics.as_ref())
                        .filter(|_| !pii)
                        .and_then(|s| serde_json::to_value(s).ok());
                    json!({
                        "name": c.name,
                        "type": c.data_type,
                        "nullable": c.is_nullable,
                        "is_primary_key": c.is_primary_key,
                        "description": meta.and_then(|m| m.description.clone()),
                        "stats": stats,
                        "synonyms": meta.and_then(|m| m.synonyms.clone()),
                        "pii": pii,
                    })
                })
                .collect();
            let primary_key: Vec<&str> = table
                .columns
                .values()
                .filter(|c| c.is_primary_key)
                .map(|c| c.name.as_str())
                .collect();
            let relationships: Vec<Value> = table
                .foreign_keys
                .iter()
                .map(|fk| {
                    json!({
                        "from_table": key,
                        "to_table": fk.referred_table.full_name(),
                        "from_columns": fk.constrained_columns,
                        "to_columns": fk.referred_columns,
                        "cardinality": fk.cardinality,
                        "business_meaning": fk.business_meaning,
                    })
                })
                .collect();
            json!({
                "name": table.table.table_name,
                "schema_name": table.table.schema_name,
                "table_key": key,
                "description": table_meta.and_then(|t| t.description.clone()),
                "row_count": table_meta.and_then(|t| t.row_count),
                "primary_key": if primary_key.is_empty() { Value::Null } else { json!(primary_key) },
                "columns": columns,
                "relationships": relationships,
            })
        })
        .collect();
    Value::Array(tables)
}

/// JSON with a 2-space indent and every non-ASCII character escaped as `\uXXXX`.
pub(crate) fn pretty_ascii(value: &Value) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    if pretty.is_ascii() {
        return pretty;
    }
    let mut out = String::with_capacity(pretty.len() + 16);
    for c in pretty.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, PipelineError> {
    serde_json::to_value(value).map_err(|e| {
        PipelineError::new(
            "planner",
            nl2sql_state::ErrorCode::PlanningFailure,
            nl2sql_state::Severity::Error,
            format!("cannot serialise the prompt context: {e}"),
        )
    })
}

fn without_meta(mut schema: Value) -> Value {
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
    }
    schema
}

fn today(today: Option<&str>) -> String {
    or_none(today)
}

fn or_none(text: Option<&str>) -> String {
    match text.map(str::trim) {
        Some(t) if !t.is_empty() => t.to_owned(),
        _ => "(none)".to_owned(),
    }
}

fn lines_or_none(lines: &[String]) -> String {
    if lines.is_empty() {
        "(none)".to_owned()
    } else {
        lines.join("\n")
    }
}

/// `- CODE: safe message` per error, sanitised (spec: errors-and-recovery.md §1.4).
fn error_lines(errors: &[PipelineError]) -> String {
    let lines: Vec<String> = errors
        .iter()
        .map(|e| {
            format!(
                "- {} ({}): {}",
                e.code,
                e.node,
                sanitize_engine_message(e.safe_message())
            )
        })
        .collect();
    lines_or_none(&lines)
}
