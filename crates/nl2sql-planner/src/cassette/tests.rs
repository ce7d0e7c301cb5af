//! Unit tests of the cassette key and line parsing.

use std::path::Path;

use serde_json::json;

use super::{CassetteError, cassette_key, parse_lines};
use crate::Step;

#[test]
fn key_ignores_object_key_order_and_depends_on_the_step() {
    let a = cassette_key(Step::AstPlanner, &json!({"q": "x", "n": [1, 2]}));
    let b = cassette_key(Step::AstPlanner, &json!({"n": [1, 2], "q": "x"}));
    let c = cassette_key(Step::Refiner, &json!({"q": "x", "n": [1, 2]}));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 64);
    assert!(a.chars().all(|ch| ch.is_ascii_hexdigit()));
}

#[test]
fn a_tampered_key_is_rejected_with_its_line() {
    let request = json!({"q": 1});
    let good = json!({"key": cassette_key(Step::Refiner, &request), "step": "refiner",
                      "request": request, "response": {"ok": "fix it"}});
    let bad = json!({"key": "0".repeat(64), "step": "refiner",
                     "request": request, "response": {"ok": "fix it"}});
    let text = format!("{good}\n\n{bad}\n");
    match parse_lines(Path::new("c.jsonl"), &text) {
        Err(CassetteError::Malformed { line, reason, .. }) => {
            assert_eq!(line, 3);
            assert!(reason.contains("does not match"), "{reason}");
        }
        other => panic!("expected a malformed line, got {other:?}"),
    }
    let ok = parse_lines(Path::new("c.jsonl"), &format!("{good}\n")).unwrap();
    assert_eq!(ok.len(), 1);
}
