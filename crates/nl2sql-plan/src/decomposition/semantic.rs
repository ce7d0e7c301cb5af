//! The semantic-only rule (spec: plan-model.md §3.7, GAP-17): attributes are names made of
//! words, none of them a SQL keyword; intents are free text without SQL syntax.

use super::DecomposerResponse;

/// SQL keywords no attribute word may be.
const ATTRIBUTE_KEYWORDS: [&str; 14] = [
    "select", "from", "join", "where", "union", "insert", "update", "delete", "drop", "create",
    "alter", "truncate", "grant", "exec",
];
/// The 15th keyword, kept apart so the list above stays one line per rustfmt.
const EXECUTE: &str = "execute";
/// Character sequences an intent may not contain.
const INTENT_TOKENS: [&str; 5] = [";", "--", "/*", "*/", "`"];
/// Consecutive word pairs an intent may not contain.
const INTENT_PAIRS: [(&str, &str); 6] = [
    ("group", "by"),
    ("order", "by"),
    ("union", "select"),
    ("insert", "into"),
    ("delete", "from"),
    ("drop", "table"),
];

/// One element that breaks the semantic-only rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticViolation {
    /// JSON path of the element, e.g. `$.sub_queries[0].metrics[1].name`.
    pub path: String,
    /// The id of the sub-query, group or op that holds it.
    pub owner_id: String,
    /// The offending element: the attribute name, or `intent`.
    pub element: String,
    /// What is wrong.
    pub message: String,
}

/// Why `name` is not a valid semantic attribute, or `None` when it is.
pub fn attribute_violation(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '-'));
    if !first_ok || !rest_ok || name.chars().count() > 64 {
        return Some(format!(
            "attribute '{name}' is not a name: use letters, digits, '_', ' ' or '-', start with a letter or '_', at most 64 characters"
        ));
    }
    name.split([' ', '-'])
        .map(str::to_ascii_lowercase)
        .find(|w| ATTRIBUTE_KEYWORDS.contains(&w.as_str()) || w == EXECUTE)
        .map(|w| format!("attribute '{name}' contains the SQL keyword '{w}'"))
}

/// Why `intent` looks like SQL rather than a description, or `None` when it is fine.
pub fn intent_violation(intent: &str) -> Option<String> {
    if let Some(tok) = INTENT_TOKENS.iter().find(|t| intent.contains(**t)) {
        return Some(format!("intent contains the SQL syntax '{tok}'"));
    }
    let words: Vec<String> = intent
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if let Some(pos) = words.iter().position(|w| w == "select")
        && words[pos + 1..].iter().any(|w| w == "from")
    {
        return Some("intent contains 'select' followed by 'from'".to_owned());
    }
    words.windows(2).find_map(|pair| {
        INTENT_PAIRS
            .iter()
            .find(|(a, b)| pair[0] == *a && pair[1] == *b)
            .map(|(a, b)| format!("intent contains the SQL phrase '{a} {b}'"))
    })
}

/// Every violation of the semantic-only rule in `response`, in document order.
pub fn semantic_violations(response: &DecomposerResponse) -> Vec<SemanticViolation> {
    let mut out = Vec::new();
    let attr = |out: &mut Vec<SemanticViolation>, path: String, owner: &str, name: &str| {
        if let Some(message) = attribute_violation(name) {
            out.push(SemanticViolation {
                path,
                owner_id: owner.to_owned(),
                element: name.to_owned(),
                message,
            });
        }
    };
    for (i, sq) in response.sub_queries.iter().enumerate() {
        let at = format!("$.sub_queries[{i}]");
        if let Some(message) = intent_violation(&sq.intent) {
            out.push(SemanticViolation {
                path: format!("{at}.intent"),
                owner_id: sq.id.clone(),
                element: "intent".to_owned(),
                message,
            });
        }
        for (j, m) in sq.metrics.iter().enumerate() {
            attr(&mut out, format!("{at}.metrics[{j}].name"), &sq.id, &m.name);
        }
        for (j, f) in sq.filters.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.filters[{j}].attribute"),
                &sq.id,
                &f.attribute,
            );
        }
        for (j, g) in sq.group_by.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.group_by[{j}].attribute"),
                &sq.id,
                &g.attribute,
            );
        }
        for (j, c) in sq.expected_schema.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.expected_schema[{j}].name"),
                &sq.id,
                &c.name,
            );
        }
    }
    for (i, g) in response.combine_groups.iter().enumerate() {
        for (j, k) in g.join_keys.iter().enumerate() {
            let at = format!("$.combine_groups[{i}].join_keys[{j}]");
            attr(&mut out, format!("{at}.left"), &g.group_id, &k.left);
            attr(&mut out, format!("{at}.right"), &g.group_id, &k.right);
        }
    }
    for (i, op) in response.post_combine_ops.iter().enumerate() {
        let at = format!("$.post_combine_ops[{i}]");
        for (j, m) in op.metrics.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.metrics[{j}].name"),
                &op.op_id,
                &m.name,
            );
        }
        for (j, f) in op.filters.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.filters[{j}].attribute"),
                &op.op_id,
                &f.attribute,
            );
        }
        for (j, g) in op.group_by.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.group_by[{j}].attribute"),
                &op.op_id,
                &g.attribute,
            );
        }
        for (j, o) in op.order_by.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.order_by[{j}].attribute"),
                &op.op_id,
                &o.attribute,
            );
        }
        for (j, c) in op.expected_schema.iter().enumerate() {
            attr(
                &mut out,
                format!("{at}.expected_schema[{j}].name"),
                &op.op_id,
                &c.name,
            );
        }
    }
    out
}
