//! The offline deterministic planner (the embedded default): no network, no model. It reads
//! common analytical questions over any indexed schema, working only from the snapshot
//! (table and column names, descriptions, synonyms, sample values, foreign keys):
//!
//! - `text`: tokenising, identifier splitting, light stemming, stop words, synonyms;
//! - `link`: the per-snapshot index and the scored, deterministic schema linker;
//! - `intent`: analytical cues (count, total, average, min/max, top-N, grouping,
//!   comparisons, date phrases relative to `today`, ordering, distinct);
//! - `analyze`: cues + links → an `Analysis` (the meaning of the question);
//! - `joins`: shortest foreign-key paths (petgraph) from the FROM table;
//! - `build`: `Analysis` → `PlanModel` and the semantic parts of a `SubQuery`;
//! - `decompose`: datasource choice and sub-queries; `refine` and `answer`: templates.
//!
//! Same input, same output: relative dates use the request's `today` (the engine always
//! sets one: `--today`, the demo's own last day, else the clock's date, and the run log
//! records it), and every tie is broken by name. Only a request without `today` reads the
//! clock.

mod analyze;
mod answer;
mod build;
mod confidence;
mod coverage;
mod decompose;
mod intent;
mod joins;
mod link;
mod refine;
mod text;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_plan::{DecomposerResponse, FilterOperator, FilterValue, PlanModel, SubQuery};
use nl2sql_state::Node;
use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde_json::json;

use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};

use analyze::{Unlinked, analyze};
use build::{BuildError, output_names, plan_model};
use coverage::{Coverage, cover};
use intent::Day;
use link::{IndexCache, SchemaIndex, datasource_words};

/// The offline deterministic planner.
#[derive(Debug, Clone)]
pub struct OfflinePlanner {
    /// Refuse a plan that leaves words of the question unplaced (the default).
    strict: bool,
    /// Refuse a reading whose confidence is below this (the learned threshold by
    /// default; 0 never refuses on confidence).
    min_confidence: f64,
    /// The schema indexes of the snapshots planned over most recently (shared by clones).
    indexes: Arc<IndexCache>,
}

impl Default for OfflinePlanner {
    fn default() -> Self {
        OfflinePlanner {
            strict: true,
            min_confidence: confidence::MODEL.threshold,
            indexes: Arc::default(),
        }
    }
}

impl OfflinePlanner {
    /// A planner with default settings: it refuses a question any word of which it
    /// cannot place in the plan (`AMBIGUOUS_QUESTION`).
    pub fn new() -> Self {
        OfflinePlanner::default()
    }

    /// A planner that answers even when words are unplaced, listing them in the plan's
    /// interpretation as `not placed`: for measuring what refusing costs, and for
    /// learning which words are fillers (`cargo xtask learn-fillers`). Not for users.
    pub fn lenient() -> Self {
        OfflinePlanner {
            strict: false,
            min_confidence: 0.0,
            indexes: Arc::default(),
        }
    }

    /// The same planner refusing readings whose confidence (the probability, learned by
    /// `cargo xtask learn-confidence`, that the reading is right) is below `min` instead
    /// of the learned threshold: 0 answers every reading it can place, 1 refuses all.
    #[must_use]
    pub fn with_min_confidence(mut self, min: f64) -> Self {
        self.min_confidence = min.clamp(0.0, 1.0);
        self
    }

    /// The confidence below which this planner refuses a reading.
    pub fn min_confidence(&self) -> f64 {
        self.min_confidence
    }

    /// The threshold the shipped confidence model was learned with.
    pub fn learned_min_confidence() -> f64 {
        confidence::MODEL.threshold
    }

    /// Decomposes a question without the async trait (the work is synchronous).
    pub fn decompose_sync(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError> {
        decompose::decompose(request, today(request.today.as_deref()), &self.indexes).map_err(|u| {
            let indexes: Vec<Arc<SchemaIndex>> = request
                .datasources
                .iter()
                .filter_map(|d| d.snapshot.as_ref().map(|s| self.indexes.index(s)))
                .collect();
            unlinked_error(Node::Decomposer.as_str(), &u, &indexes)
        })
    }

    /// Plans one sub-query without the async trait.
    pub fn plan_sync(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError> {
        plan(request, self.strict, self.min_confidence, &self.indexes)
    }

    /// Refiner feedback without the async trait.
    pub fn refine_sync(&self, request: &RefineRequest) -> String {
        refine::feedback(request)
    }

    /// The final answer without the async trait.
    pub fn answer_sync(&self, request: &AnswerRequest) -> FinalAnswer {
        answer::answer(request)
    }
}

#[async_trait]
impl Planner for OfflinePlanner {
    fn name(&self) -> String {
        "offline".to_owned()
    }

    async fn decompose(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError> {
        self.decompose_sync(request)
    }

    async fn plan(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.plan_sync(request)
    }

    async fn refine(&self, request: &RefineRequest) -> Result<String, PipelineError> {
        Ok(self.refine_sync(request))
    }

    async fn answer(&self, request: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        Ok(self.answer_sync(request))
    }

    fn ignores_feedback(&self) -> bool {
        true
    }
}

/// `today` of a request, else the clock's date (UTC).
fn today(given: Option<&str>) -> Day {
    given.and_then(Day::parse).unwrap_or_else(Day::from_clock)
}

/// The refusal of a question with words that link to nothing in the schema
/// (`AMBIGUOUS_QUESTION`, not retried): it names them and suggests the schema's names
/// closest to them.
fn unlinked_error(node: &str, u: &Unlinked, indexes: &[Arc<SchemaIndex>]) -> PipelineError {
    let suggestions = coverage::closest_names(&u.words, indexes);
    let message = if u.words.is_empty() {
        format!("could not understand the question: {}", u.reason)
    } else {
        format!(
            "could not link: {}",
            u.words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let message = match suggestions.first() {
        Some(s) => format!("{message}; {s}"),
        None => message,
    };
    PipelineError::new(node, ErrorCode::AmbiguousQuestion, Severity::Error, message).with_details(
        json!({ "unlinked": u.words, "reason": u.reason, "suggestions": suggestions }),
    )
}

/// The refusal of a question whose plan leaves words out (`AMBIGUOUS_QUESTION`): it names
/// them, says what was understood, and suggests how to ask.
fn uncovered_error(c: &Coverage) -> PipelineError {
    let quote = |w: &String| format!("'{w}'");
    let understood: Vec<String> = c
        .interpretation
        .spans
        .iter()
        .map(|s| format!("'{}' as {}", s.text, s.element))
        .collect();
    let mut message = format!(
        "could not place {} in a plan",
        c.unplaced.iter().map(quote).collect::<Vec<_>>().join(", ")
    );
    if !understood.is_empty() {
        message.push_str(&format!("; understood {}", understood.join(", ")));
    }
    if let Some(s) = c.suggestions.first() {
        message.push_str(&format!("; {s}"));
    }
    PipelineError::new(
        Node::AstPlanner,
        ErrorCode::AmbiguousQuestion,
        Severity::Error,
        message,
    )
    .with_details(json!({
        "unplaced": c.unplaced,
        "understood": c.interpretation.spans,
        "suggestions": c.suggestions,
    }))
}

/// The refusal of a reading whose every word is placed but which is less likely right
/// than the threshold (`AMBIGUOUS_QUESTION`): it says what was understood, names the
/// traits that lowered the confidence most (the question's words first), and suggests
/// how to ask.
fn unsure_error(c: &Coverage, min_confidence: f64) -> PipelineError {
    let i = &c.interpretation;
    let mut lowered: Vec<&nl2sql_plan::Signal> =
        i.signals.iter().filter(|s| s.weight < 0.0).collect();
    lowered.sort_by(|a, b| a.weight.total_cmp(&b.weight).then(a.name.cmp(&b.name)));
    lowered.truncate(4);
    let understood: Vec<String> = i
        .spans
        .iter()
        .map(|s| format!("'{}' as {}", s.text, s.element))
        .collect();
    let mut message = format!(
        "not sure enough of this reading to answer (confidence {:.2}, below {:.2})",
        i.confidence, min_confidence
    );
    if !understood.is_empty() {
        message.push_str(&format!("; understood {}", understood.join(", ")));
    }
    if !lowered.is_empty() {
        message.push_str(&format!(
            "; questions with {} were often read wrongly",
            lowered
                .iter()
                .map(|s| confidence::describe(&s.name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let doubtful: Vec<String> = lowered
        .iter()
        .filter_map(|s| confidence::words_of(&s.name))
        .collect();
    let suggestion = "ask it more plainly, one condition at a time, naming the table and \
                      column you mean";
    message.push_str(&format!("; {suggestion}"));
    // If the reading it understood is the one meant, the caller can accept it.
    let accept = format!(
        "if that reading is what you meant, set OFFLINE_MIN_CONFIDENCE to {:.2} or lower to \
         accept readings this sure",
        (i.confidence * 100.0).floor() / 100.0
    );
    PipelineError::new(
        Node::AstPlanner,
        ErrorCode::AmbiguousQuestion,
        Severity::Error,
        message,
    )
    .with_details(json!({
        "confidence": i.confidence,
        "min_confidence": min_confidence,
        "doubtful": doubtful,
        "lowered_by": lowered,
        "understood": i.spans,
        "suggestions": [suggestion, accept],
    }))
}

fn failure(message: String) -> PipelineError {
    PipelineError::new(
        Node::AstPlanner,
        ErrorCode::PlanningFailure,
        Severity::Error,
        message,
    )
}

/// Plans one sub-query: analyse its intent (else the question, else a question rebuilt
/// from its semantic parts) over the relevant tables, and name the outputs as the
/// expected schema says.
fn plan(
    request: &PlanRequest,
    strict: bool,
    min_confidence: f64,
    indexes: &IndexCache,
) -> Result<PlanModel, PipelineError> {
    let index = indexes.index(&request.schema);
    let day = today(request.today.as_deref());
    let ignore = datasource_words(&request.sub_query.datasource_id);
    let expected: Vec<String> = request
        .sub_query
        .expected_schema
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let mut texts = vec![request.sub_query.intent.clone()];
    if request.question.trim() != request.sub_query.intent.trim() {
        texts.push(request.question.clone());
    }
    if let Some(t) = spec_text(&request.sub_query) {
        texts.push(t);
    }
    let mut first_error: Option<Unlinked> = None;
    let mut mismatch: Option<String> = None;
    // The first reading refused for its words (unplaced, or placed but unsure): later
    // texts are rebuilt from the sub-query, so a refusal of theirs must not hide why the
    // sub-query's own words were refused.
    let mut refused: Option<(Coverage, Refusal)> = None;
    let mut ambiguous: Option<String> = None;
    // The words to account for are the sub-query's own (the question, or the part of it
    // the decomposer wrote), whichever text the plan is finally built from.
    let intent = &request.sub_query.intent;
    let intent_tokens = link::question_tokens(intent, &index);
    let intent_reading = analyze(intent, &index, day, &ignore);
    for (k, text) in texts.iter().enumerate() {
        // The first text is the intent itself: read once.
        let read = if k == 0 {
            intent_reading.clone()
        } else {
            analyze(text, &index, day, &ignore)
        };
        let mut analysis = match read {
            Ok(a) => a,
            Err(u) => {
                first_error.get_or_insert(u);
                continue;
            }
        };
        follow_group_by(&mut analysis, &index, &request.sub_query);
        let names = output_names(&analysis, &index);
        let names = if expected.is_empty() || names == expected {
            names
        } else if names.len() == expected.len() {
            expected.clone()
        } else {
            mismatch.get_or_insert(format!(
                "the plan for '{text}' selects [{}] but the sub-query expects [{}]",
                names.join(", "),
                expected.join(", ")
            ));
            continue;
        };
        let mut model = match plan_model(&analysis, &index, &names) {
            Ok(model) => model,
            Err(BuildError::Failed(m)) => return Err(failure(m)),
            Err(BuildError::Ambiguous(m)) => {
                ambiguous.get_or_insert(m);
                continue;
            }
        };
        // Every word of the sub-query must have become part of the plan.
        let coverage = match &intent_reading {
            Ok(reading) => cover(&intent_tokens, reading, &index, &model),
            Err(u) => Coverage::unread(u),
        };
        if strict && !coverage.unplaced.is_empty() {
            refused.get_or_insert((coverage, Refusal::Unplaced));
            continue;
        }
        if strict && coverage.interpretation.confidence < min_confidence {
            refused.get_or_insert((coverage, Refusal::Unsure));
            continue;
        }
        model.interpretation = Some(coverage.into_interpretation());
        return Ok(model);
    }
    let unsure = match refused {
        Some((coverage, Refusal::Unplaced)) => return Err(uncovered_error(&coverage)),
        Some((coverage, Refusal::Unsure)) => Some(coverage),
        None => None,
    };
    if let Some(m) = ambiguous {
        return Err(PipelineError::new(
            Node::AstPlanner,
            ErrorCode::AmbiguousQuestion,
            Severity::Error,
            format!("could not tell how to join the tables: {m}"),
        )
        .with_details(json!({ "suggestions": [m] })));
    }
    if let Some(coverage) = unsure {
        return Err(unsure_error(&coverage, min_confidence));
    }
    match (mismatch, first_error) {
        (Some(m), _) => Err(failure(m)),
        (None, Some(u)) => Err(unlinked_error(
            Node::AstPlanner.as_str(),
            &u,
            std::slice::from_ref(&index),
        )),
        (None, None) => Err(failure("nothing to plan".to_owned())),
    }
}

/// Why a reading whose plan was built was refused.
enum Refusal {
    /// Words of the sub-query the plan does not place.
    Unplaced,
    /// Every word placed, but the reading is less likely right than the gate allows.
    Unsure,
}

/// A sub-query grouped by an attribute that another column of the grouped table spells
/// ("factory_code" where the text reads "per plant", the factory's name): the plan groups
/// by that column, as the decomposer decided (so that two datasources join on it).
fn follow_group_by(a: &mut analyze::Analysis, index: &SchemaIndex, sq: &SubQuery) {
    let ([c], [spec]) = (a.group_by.as_slice(), sq.group_by.as_slice()) else {
        return;
    };
    let c = *c;
    if build::identifier(&build::column_name(index, c)) == spec.attribute {
        return;
    }
    let table = index.columns[c].table;
    if let Some(k) = index.tables[table]
        .columns
        .iter()
        .copied()
        .find(|k| *k != c && build::identifier(&index.columns[*k].name) == spec.attribute)
    {
        a.regroup(c, k);
    }
}

/// A question rebuilt from a sub-query's metrics, group-by and filters, for sub-queries
/// whose intent the analysis cannot read (an LLM decomposer's wording).
fn spec_text(sq: &SubQuery) -> Option<String> {
    if sq.metrics.is_empty() && sq.group_by.is_empty() && sq.filters.is_empty() {
        return None;
    }
    let words = |s: &str| s.replace(['_', '-'], " ");
    let mut parts: Vec<String> = Vec::new();
    for m in &sq.metrics {
        let agg = match m.aggregation {
            Some(nl2sql_plan::Aggregation::Count) => "number of",
            Some(nl2sql_plan::Aggregation::Sum) => "total",
            Some(nl2sql_plan::Aggregation::Avg) => "average",
            Some(nl2sql_plan::Aggregation::Min) => "minimum",
            Some(nl2sql_plan::Aggregation::Max) => "maximum",
            None => "",
        };
        let name = words(&m.name);
        let name = name
            .trim_end_matches(" count")
            .trim_start_matches("total ")
            .trim_start_matches("number of ")
            .trim_start_matches("avg ")
            .trim_start_matches("average ");
        parts.push(format!("{agg} {name}").trim().to_owned());
    }
    let mut text = parts.join(" and ");
    for (i, g) in sq.group_by.iter().enumerate() {
        text.push_str(if i == 0 { " per " } else { " and " });
        text.push_str(&words(&g.attribute));
    }
    for f in &sq.filters {
        let value = match &f.value {
            FilterValue::String(s) => s.clone(),
            FilterValue::Int(i) => i.to_string(),
            FilterValue::Float(x) => x.to_string(),
            FilterValue::Bool(b) => b.to_string(),
            FilterValue::StringList(v) => v.join(" or "),
            FilterValue::IntList(v) => v
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" and "),
            FilterValue::FloatList(v) => v
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" and "),
        };
        let is_date = Day::parse(&value).is_some();
        let phrase = match (f.operator, is_date) {
            (FilterOperator::Eq | FilterOperator::In | FilterOperator::Contains, true) => {
                format!("on {value}")
            }
            (FilterOperator::Eq | FilterOperator::In | FilterOperator::Contains, false) => {
                format!("'{value}'")
            }
            (FilterOperator::StartsWith, _) => {
                format!("{} starting with '{value}'", words(&f.attribute))
            }
            (FilterOperator::EndsWith, _) => {
                format!("{} ending with '{value}'", words(&f.attribute))
            }
            (FilterOperator::GtEq, true) => format!("since {value}"),
            (FilterOperator::Gt, true) => format!("after {value}"),
            (FilterOperator::Lt | FilterOperator::LtEq, true) => format!("before {value}"),
            (FilterOperator::Gt, false) => format!("{} more than {value}", words(&f.attribute)),
            (FilterOperator::GtEq, false) => format!("{} at least {value}", words(&f.attribute)),
            (FilterOperator::Lt, false) => format!("{} less than {value}", words(&f.attribute)),
            (FilterOperator::LtEq, false) => format!("{} at most {value}", words(&f.attribute)),
            (FilterOperator::Between, _) => format!("{} between {value}", words(&f.attribute)),
            (FilterOperator::NotEq, _) => format!("not '{value}'"),
        };
        text.push(' ');
        text.push_str(&phrase);
    }
    Some(text)
}
