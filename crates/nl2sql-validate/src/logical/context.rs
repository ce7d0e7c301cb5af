//! What a plan is validated against (`LogicalContext`), and how a finding is made.

use nl2sql_state::{
    AccessPolicy, ErrorCode, Node, PipelineError, SchemaContract, SchemaMetadata, Severity,
};
use serde_json::json;

/// The node name findings carry.
pub(crate) const NODE: &str = Node::LogicalValidator.as_str();

/// What a plan is validated against.
#[derive(Debug, Clone)]
pub struct LogicalContext<'a> {
    /// The sub-query's datasource; `None` fails the policy check closed.
    pub datasource_id: Option<String>,
    /// The relevant tables (and their foreign keys, which define the allowed joins).
    pub contract: &'a SchemaContract,
    /// Column statistics and synonyms, when the index has them.
    pub metadata: Option<&'a SchemaMetadata>,
    /// The sub-query's expected output column names, in order (may be empty).
    pub expected_schema: Vec<String>,
    /// The caller's access policy.
    pub policy: AccessPolicy,
    /// `LOGICAL_VALIDATOR_STRICT_COLUMNS`: unknown columns are errors (else warnings).
    pub strict_columns: bool,
}

impl<'a> LogicalContext<'a> {
    /// A context for datasource `datasource_id` with `contract`, no statistics, no expected
    /// schema, everything allowed and strict columns.
    pub fn new(datasource_id: &str, contract: &'a SchemaContract) -> Self {
        LogicalContext {
            datasource_id: Some(datasource_id.to_owned()),
            contract,
            metadata: None,
            expected_schema: Vec::new(),
            policy: AccessPolicy::allow_all(),
            strict_columns: true,
        }
    }

    /// The same context with column statistics.
    #[must_use]
    pub fn with_metadata(mut self, metadata: &'a SchemaMetadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The same context with the sub-query's expected output names.
    #[must_use]
    pub fn with_expected_schema(mut self, names: Vec<String>) -> Self {
        self.expected_schema = names;
        self
    }

    /// The same context with the caller's policy.
    #[must_use]
    pub fn with_policy(mut self, policy: AccessPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same context with `LOGICAL_VALIDATOR_STRICT_COLUMNS` set to `strict`.
    #[must_use]
    pub fn with_strict_columns(mut self, strict: bool) -> Self {
        self.strict_columns = strict;
        self
    }
}

/// A finding with a JSON path in its details.
pub(crate) fn finding(
    code: ErrorCode,
    severity: Severity,
    message: impl Into<String>,
    path: &str,
) -> PipelineError {
    PipelineError::new(NODE, code, severity, message).with_details(json!({ "path": path }))
}
