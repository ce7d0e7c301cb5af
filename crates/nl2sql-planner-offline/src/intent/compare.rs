//! Comparison phrases ("more than", "at least", "no fewer than", "over", `>=`): the
//! operator they spell and how many words they take.

use super::cues::CmpOp;
use crate::text::Token;

/// Whether the words from `from` up to `to` end in a comparison phrase ("more than",
/// "at least", "over"): the number at `to` is what is compared.
pub(super) fn is_comparison_at(tokens: &[Token], from: usize, to: usize) -> bool {
    (from..to).any(|k| comparison_words(tokens, k).is_some_and(|(_, len)| k + len == to))
}

/// A comparison phrase at `i`: its operator and length (the number follows).
pub(crate) fn comparison_words(tokens: &[Token], i: usize) -> Option<(CmpOp, usize)> {
    let w = |k: usize| tokens.get(i + k).map(|t| t.lower.as_str()).unwrap_or("");
    let two = (w(0), w(1));
    let op = match two {
        (
            "more" | "greater" | "larger" | "higher" | "bigger" | "longer" | "older" | "heavier"
            | "taller",
            "than",
        ) => (CmpOp::Gt, 2),
        ("less" | "fewer" | "smaller" | "lower" | "shorter" | "younger" | "lighter", "than") => {
            (CmpOp::Lt, 2)
        }
        ("at", "least") => (CmpOp::GtEq, 2),
        ("at", "most") | ("up", "to") => (CmpOp::LtEq, 2),
        ("no", "more") if w(2) == "than" => (CmpOp::LtEq, 3),
        ("no", "less" | "fewer") if w(2) == "than" => (CmpOp::GtEq, 3),
        ("equal", "to") => (CmpOp::Eq, 2),
        ("not", "equal") if w(2) == "to" => (CmpOp::NotEq, 3),
        ("over" | "above" | "exceeding" | "exceeds" | "exceed", _) => (CmpOp::Gt, 1),
        ("under" | "below", _) => (CmpOp::Lt, 1),
        ("exactly" | "equals", _) => (CmpOp::Eq, 1),
        ("between", _) => (CmpOp::GtEq, 1),
        (">", _) => (CmpOp::Gt, 1),
        (">=", _) => (CmpOp::GtEq, 1),
        ("<", _) => (CmpOp::Lt, 1),
        ("<=", _) => (CmpOp::LtEq, 1),
        ("=", _) => (CmpOp::Eq, 1),
        ("!=" | "<>", _) => (CmpOp::NotEq, 1),
        _ => return None,
    };
    Some(op)
}
