//! Every word accounted for: the strict planner's interpretation of what it answers, and
//! its refusals (`AMBIGUOUS_QUESTION`) of what it cannot place, over the manufacturing
//! fixture.

use nl2sql_state::ErrorCode;

use super::super::OfflinePlanner;
use super::plan_request;

fn strict(question: &str) -> Result<nl2sql_plan::PlanModel, nl2sql_state::PipelineError> {
    OfflinePlanner::new().plan_sync(&plan_request(question, Some("2024-05-15")))
}

pub(super) fn unplaced(e: &nl2sql_state::PipelineError) -> Vec<String> {
    e.details.as_ref().unwrap()["unplaced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_answered_question_carries_its_interpretation() {
    let plan = strict("How many machines are there in each factory?").unwrap();
    let interpretation = plan.interpretation.expect("an interpretation");
    let shown: Vec<(String, String)> = interpretation
        .spans
        .iter()
        .map(|s| (s.text.clone(), s.element.clone()))
        .collect();
    assert!(
        shown.contains(&("machines".to_owned(), "table machines".to_owned())),
        "{shown:?}"
    );
    assert!(
        shown
            .iter()
            .any(|(t, e)| t == "factory" && e.contains("factories")),
        "{shown:?}"
    );
    assert!(shown.iter().all(|(_, e)| e != "not placed"), "{shown:?}");
    assert!(interpretation.confidence > 0.0 && interpretation.confidence <= 1.0);
}

#[test]
fn a_word_that_links_to_nothing_is_refused_by_name() {
    let e = strict("How many machines were glorbed?").unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert_eq!(unplaced(&e), vec!["glorbed".to_owned()]);
    assert!(
        e.message.contains("could not place 'glorbed'"),
        "{}",
        e.message
    );
    // What was understood is said too.
    assert!(
        e.message.contains("'machines' as table machines"),
        "{}",
        e.message
    );
    let suggestions = e.details.as_ref().unwrap()["suggestions"]
        .as_array()
        .unwrap();
    assert!(!suggestions.is_empty());
}

#[test]
fn a_number_or_a_count_the_plan_does_not_use_is_refused() {
    // No column of machines is a weight: refused, not a count of all machines. "heavier
    // than" is read as a comparison; its bound is what the plan could not place.
    let e = strict("How many machines are heavier than 10?").unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert_eq!(unplaced(&e), vec!["10".to_owned()]);
    // A count the plan lost is named as such.
    let e = strict("How many machines 42?").unwrap_err();
    assert!(
        e.message
            .contains("'How many' asks for a count, which the plan does not have"),
        "{}",
        e.message
    );
}

#[test]
fn an_aggregate_word_no_cue_read_is_refused_unless_part_of_a_name() {
    // "the number and average …": the average alone would drop the count.
    let question = "Show the number and average capacity index of factories in each location.";
    let e = strict(question).unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert_eq!(unplaced(&e), vec!["number".to_owned()]);
    assert!(
        e.message
            .contains("'number' asks for a count, which the plan does not have"),
        "{}",
        e.message
    );
    // After a noun the word is part of a name ("serial number"), not a figure.
    let plan = strict("List the serial number of every machine.").unwrap();
    assert!(
        plan.select_items
            .iter()
            .all(|s| !s.expr.is_aggregate_call())
    );
}

#[test]
fn a_number_word_no_condition_reads_is_refused() {
    // "that have two machines" is a count per factory the plan would drop: refused by
    // name, not answered with every factory.
    let e = strict("Show the names of factories that have two machines.").unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert!(unplaced(&e).contains(&"two".to_owned()), "{e:?}");
}

#[test]
fn the_lenient_planner_answers_and_lists_what_it_did_not_place() {
    let plan = OfflinePlanner::lenient()
        .plan_sync(&plan_request(
            "How many machines were glorbed?",
            Some("2024-05-15"),
        ))
        .unwrap();
    let interpretation = plan.interpretation.unwrap();
    assert!(
        interpretation
            .spans
            .iter()
            .any(|s| s.text == "glorbed" && s.element == "not placed"),
        "{:?}",
        interpretation.spans
    );
    assert_eq!(interpretation.confidence, 0.0);
}

#[test]
fn a_comparison_at_the_start_of_a_question_is_read() {
    // The comparison's cue starts the question: reading it once underflowed
    // ("attempt to subtract with overflow", Spider dev).
    let got = super::sql_for(
        "More than 2 machines are in which factories?",
        Some("2024-05-15"),
    );
    assert!(got.contains("COUNT(") && got.contains("> 2"), "{got}");
}

#[test]
fn both_asking_for_an_intersection_is_refused_but_both_listing_outputs_is_not() {
    // Products made on both machines: rows of each, which one set of rows cannot say (an
    // IN list would answer "either").
    let e = strict("Which products were made on both Press-01 and Cutter-01?").unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert!(
        unplaced(&e).contains(&"both".to_owned()),
        "{:?}",
        unplaced(&e)
    );
    let suggestions = e.details.as_ref().unwrap()["suggestions"].to_string();
    assert!(suggestions.contains("an intersection"), "{suggestions}");
    // "Return both X and Y" lists two outputs.
    let plan = strict(
        "How many machines are there in each factory? Return both the factory and the count.",
    );
    if let Err(e) = &plan {
        assert!(!unplaced(e).contains(&"both".to_owned()), "{e:?}");
    }
}

#[test]
fn a_date_asked_for_by_its_word_must_be_read_from_a_column() {
    // The gallery keeps no date of a picture: "dates" must not vanish as a grammar word
    // (the answer would be the pictures' names, without any date).
    let e = OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&super::rules::request_over(
            &super::literals::gallery(),
            "What are the dates of the pictures?",
        ))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert_eq!(unplaced(&e), vec!["dates".to_owned()]);
    assert!(
        e.message.contains("'dates' asks for a date"),
        "{}",
        e.message
    );
    // Where a year column is read, the word is placed.
    let plan = OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&super::rules::request_over(
            &super::years::shows(),
            "What are the titles and years of the concerts?",
        ))
        .expect("titles and years are columns");
    let sql = format!("{:?}", plan.select_items);
    assert!(sql.contains("\"Year\""), "{sql}");
}
