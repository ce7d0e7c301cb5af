//! The pipeline's nodes: the name each stage reports in errors (`PipelineError::node`),
//! the run log and the timings. One enum, so a stage's name is spelt once and a typo does
//! not compile; the names themselves are stable (they are in run logs and API answers).

use std::fmt;

/// A stage of the pipeline, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// Chooses the datasources the caller may use (RBAC, the index's ranking).
    DatasourceResolver,
    /// Refuses a question that asks to change data.
    IntentGuard,
    /// Splits the question into sub-queries (and validates the decomposition).
    Decomposer,
    /// Dispatches each layer of the DAG's scans.
    LayerRouter,
    /// Retrieves the tables a scan's planner sees.
    SchemaRetriever,
    /// Writes a scan's PlanModel.
    AstPlanner,
    /// Checks a PlanModel against the schema and the policy.
    LogicalValidator,
    /// Looks up the values a plan compares text columns with.
    ValueGrounder,
    /// Renders a PlanModel as SQL.
    SqlGenerator,
    /// Guard, dry run and cost estimate.
    PhysicalValidator,
    /// Runs the guarded statement in the datasource's sandbox.
    Executor,
    /// Turns a failed attempt's errors into feedback.
    Refiner,
    /// Waits before a retry (backoff).
    RetryHandler,
    /// Combines the scans' artifacts.
    Aggregator,
    /// Phrases the final answer.
    AnswerSynthesizer,
    /// Writes and reads the scans' parquet artifacts.
    ArtifactStore,
    /// Indexes schemas for retrieval.
    SchemaIndex,
}

impl Node {
    /// Every node, in run order.
    pub const ALL: [Node; 17] = [
        Node::DatasourceResolver,
        Node::IntentGuard,
        Node::Decomposer,
        Node::LayerRouter,
        Node::SchemaRetriever,
        Node::AstPlanner,
        Node::LogicalValidator,
        Node::ValueGrounder,
        Node::SqlGenerator,
        Node::PhysicalValidator,
        Node::Executor,
        Node::Refiner,
        Node::RetryHandler,
        Node::Aggregator,
        Node::AnswerSynthesizer,
        Node::ArtifactStore,
        Node::SchemaIndex,
    ];

    /// The stable snake-case name (`executor`, `ast_planner`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Node::DatasourceResolver => "datasource_resolver",
            Node::IntentGuard => "intent_guard",
            Node::Decomposer => "decomposer",
            Node::LayerRouter => "layer_router",
            Node::SchemaRetriever => "schema_retriever",
            Node::AstPlanner => "ast_planner",
            Node::LogicalValidator => "logical_validator",
            Node::ValueGrounder => "value_grounder",
            Node::SqlGenerator => "generator",
            Node::PhysicalValidator => "physical_validator",
            Node::Executor => "executor",
            Node::Refiner => "refiner",
            Node::RetryHandler => "retry_handler",
            Node::Aggregator => "aggregator",
            Node::AnswerSynthesizer => "answer_synthesizer",
            Node::ArtifactStore => "artifact_store",
            Node::SchemaIndex => "schema_index",
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Node> for String {
    fn from(node: Node) -> String {
        node.as_str().to_owned()
    }
}

impl PartialEq<Node> for String {
    fn eq(&self, node: &Node) -> bool {
        self == node.as_str()
    }
}

impl PartialEq<Node> for str {
    fn eq(&self, node: &Node) -> bool {
        self == node.as_str()
    }
}

impl PartialEq<Node> for &str {
    fn eq(&self, node: &Node) -> bool {
        *self == node.as_str()
    }
}
