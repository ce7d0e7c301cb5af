//! Path templates (spec: storage.md §1.3): placeholders `<tenant_id>`, `<request_id>`,
//! `<subgraph_name>`, `<dag_node_id>`, `<schema_version>`, values made path-safe.

use nl2sql_state::Node;
use nl2sql_state::{ErrorCode, PipelineError, Severity};

use crate::ArtifactMeta;

/// The default template.
pub const DEFAULT_PATH_TEMPLATE: &str =
    "<tenant_id>/<request_id>/<subgraph_name>/<dag_node_id>/<schema_version>/part-00000.parquet";

const PLACEHOLDERS: [&str; 5] = [
    "tenant_id",
    "request_id",
    "subgraph_name",
    "dag_node_id",
    "schema_version",
];

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Placeholder(&'static str),
}

/// A checked path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    source: String,
    pieces: Vec<Piece>,
}

impl PathTemplate {
    /// Parses `template`; an unknown or unterminated `<…>` is an `INVALID_STATE`
    /// configuration error.
    pub fn parse(template: &str) -> Result<Self, PipelineError> {
        let mut pieces = Vec::new();
        let mut rest = template;
        while let Some(start) = rest.find('<') {
            if start > 0 {
                pieces.push(Piece::Text(rest[..start].to_owned()));
            }
            let after = &rest[start + 1..];
            let Some(end) = after.find('>') else {
                return Err(config_error(format!(
                    "path template '{template}' has an unterminated '<'"
                )));
            };
            let name = &after[..end];
            let Some(known) = PLACEHOLDERS.iter().find(|p| **p == name) else {
                return Err(config_error(format!(
                    "path template '{template}' has the unknown placeholder '<{name}>'"
                )));
            };
            pieces.push(Piece::Placeholder(known));
            rest = &after[end + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(PathTemplate {
            source: template.to_owned(),
            pieces,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The relative path for `meta`; a missing tenant, request or node id, or a value that
    /// is `.`/`..`, is an `INVALID_STATE` error.
    pub fn render(&self, meta: &ArtifactMeta) -> Result<String, PipelineError> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Placeholder(name) => out.push_str(&value(meta, name)?),
            }
        }
        Ok(out)
    }
}

fn value(meta: &ArtifactMeta, name: &str) -> Result<String, PipelineError> {
    let raw = match name {
        "tenant_id" => meta.tenant_id.as_str(),
        "request_id" => meta.request_id.as_str(),
        "subgraph_name" => meta.subgraph_name.as_str(),
        "dag_node_id" => meta.dag_node_id.as_str(),
        _ => meta.schema_version.as_deref().unwrap_or("unversioned"),
    };
    if raw.is_empty() {
        return Err(config_error(format!(
            "Missing '{name}' in metadata for upload path generation."
        )));
    }
    let safe: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == "." || safe == ".." {
        return Err(config_error(format!(
            "'{name}' value '{raw}' is not a valid path segment"
        )));
    }
    Ok(safe)
}

fn config_error(message: String) -> PipelineError {
    PipelineError::new(
        Node::ArtifactStore,
        ErrorCode::InvalidState,
        Severity::Error,
        message,
    )
}
