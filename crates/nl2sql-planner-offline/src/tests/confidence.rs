//! The learned confidence: its model file, its schema-free traits, and the refusal of a
//! reading below the threshold.

use nl2sql_state::ErrorCode;

use super::super::OfflinePlanner;
use super::super::confidence::{MODEL, Model, describe, words_of};
use super::plan_request;

#[test]
fn the_shipped_model_parses_whole() {
    let text = include_str!("../data/confidence.txt");
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    // Every line is `bias`, `threshold` or one weighted trait: none is skipped.
    assert_eq!(MODEL.len() + 2, lines);
    assert!(
        (0.0..=1.0).contains(&MODEL.threshold),
        "{}",
        MODEL.threshold
    );
}

#[test]
fn the_confidence_is_the_logistic_of_the_summed_weights() {
    let model = Model::parse("bias 0.5\nthreshold 0.6\nword:not -1.5\nplan:tables=1 0.25\n");
    let (p, signals) = model.score(&[
        "word:not".to_owned(),
        "plan:tables=1".to_owned(),
        "word:unheard".to_owned(),
    ]);
    let z: f64 = 0.5 - 1.5 + 0.25;
    assert!((p - 1.0 / (1.0 + (-z).exp())).abs() < 1e-12, "{p}");
    let weights: Vec<(&str, f64)> = signals
        .iter()
        .map(|s| (s.name.as_str(), s.weight))
        .collect();
    assert_eq!(
        weights,
        vec![
            ("word:not", -1.5),
            ("plan:tables=1", 0.25),
            ("word:unheard", 0.0)
        ]
    );
    assert!((model.threshold - 0.6).abs() < 1e-12);
}

#[test]
fn traits_never_name_the_schema() {
    let plan = OfflinePlanner::lenient()
        .plan_sync(&plan_request(
            "What is the average downtime of machines in factory 'Plant North' per month?",
            Some("2024-05-15"),
        ))
        .unwrap();
    let signals = plan.interpretation.unwrap().signals;
    assert!(!signals.is_empty());
    let names: Vec<&str> = signals.iter().map(|s| s.name.as_str()).collect();
    for schema_word in ["machine", "factor", "downtime", "plant", "north"] {
        assert!(
            names
                .iter()
                .all(|n| !n.to_lowercase().contains(schema_word)),
            "{schema_word} in {names:?}"
        );
    }
    // What the spans linked to, and the plan's shape, are there.
    assert!(names.contains(&"link:table"), "{names:?}");
    assert!(names.contains(&"plan:aggregate=AVG"), "{names:?}");
    assert!(names.contains(&"word:average"), "{names:?}");
}

#[test]
fn a_reading_below_the_threshold_is_refused_saying_why() {
    let question = "How many machines are there in each factory?";
    let request = plan_request(question, Some("2024-05-15"));
    let answered = OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&request)
        .unwrap();
    let confidence = answered.interpretation.as_ref().unwrap().confidence;
    assert!(confidence > 0.0 && confidence < 1.0, "{confidence}");
    let e = refused_by_a_certain_gate(&request);
    assert!(
        e.message.starts_with(&format!(
            "not sure enough of this reading to answer (confidence {confidence:.2}, below 1.00)"
        )),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("'machines' as table machines"),
        "{}",
        e.message
    );
    let details = e.details.unwrap();
    assert_eq!(details["min_confidence"], 1.0);
    let suggestions = details["suggestions"].as_array().unwrap();
    assert_eq!(suggestions.len(), 2, "{suggestions:?}");
    assert!(
        suggestions[1]
            .as_str()
            .unwrap()
            .starts_with("if that reading is what you meant, set OFFLINE_MIN_CONFIDENCE to 0."),
        "{suggestions:?}"
    );
    // The lenient planner never refuses on confidence.
    assert_eq!(OfflinePlanner::lenient().min_confidence(), 0.0);
    assert_eq!(
        OfflinePlanner::new().min_confidence(),
        OfflinePlanner::learned_min_confidence()
    );
}

#[test]
fn traits_read_as_words_in_a_refusal() {
    assert_eq!(describe("word:not"), "'not'");
    assert_eq!(describe("pair:more_than"), "'more than'");
    assert_eq!(describe("pair:<schema>_with"), "'… with'");
    assert_eq!(describe("plan:tables=3"), "a join of 3 tables");
    assert_eq!(describe("plan:aggregate=AVG"), "an average");
    assert_eq!(words_of("pair:<schema>_with").as_deref(), Some("with"));
    assert_eq!(words_of("plan:tables=3"), None);
}

/// A sub-query whose own words were all placed but below the gate is refused for that,
/// even when a text rebuilt from its metrics (tried after it) leaves words unplaced: the
/// refusal names why the question's own reading failed, not the rebuilt one's.
#[test]
fn the_question_own_reading_decides_the_refusal() {
    let question = "How many machines are there in each factory?";
    let mut request = plan_request(question, Some("2024-05-15"));
    // Rebuilt as "number of machines": no grouping, so "each factory" is not placed.
    request.sub_query.metrics = vec![nl2sql_plan::MetricSpec {
        name: "machine_count".into(),
        aggregation: Some(nl2sql_plan::Aggregation::Count),
        description: None,
    }];
    let e = refused_by_a_certain_gate(&request);
    assert!(
        e.message.starts_with("not sure enough of this reading"),
        "{}",
        e.message
    );
}

/// The strict planner's refusal of `request` with a gate no reading passes (confidence 1),
/// asserted to be `AMBIGUOUS_QUESTION`.
fn refused_by_a_certain_gate(request: &nl2sql_planner::PlanRequest) -> nl2sql_state::PipelineError {
    let e = OfflinePlanner::new()
        .with_min_confidence(1.0)
        .plan_sync(request)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    e
}
