//! Verbs that only relate two things the question names ("products made by the
//! supplier", "students who belong to the club", "the courses taken by each student"):
//! where the schema has no column for the verb, the relation is the join between the two
//! tables, and the verb is placed when the plan joins them.

use crate::analyze::Analysis;
use crate::link::{SchemaIndex, nearest_after, nearest_before};
use crate::text::{Token, is_relating_verb};

use super::used::Used;

/// How many tokens a side of the relation may be from the verb.
const REACH: usize = 4;

/// The two tables the verb at `i` relates, when it is a relating verb (not followed by
/// "by") between a mention of one table (just before it) and a mention of another (just
/// after it), and the plan reads both tables (so it joins them).
pub(super) fn related_tables(
    tokens: &[Token],
    i: usize,
    analysis: &Analysis,
    index: &SchemaIndex,
    used: &Used,
) -> Option<(usize, usize)> {
    // "made by": "by" reads as a grouping, which a join does not account for.
    if !is_relating_verb(&tokens[i].lower)
        || used.tables.len() < 2
        || tokens.get(i + 1).is_some_and(|t| t.is("by"))
    {
        return None;
    }
    let in_plan = |t: usize| used.tables.contains(&index.tables[t].name.to_lowercase());
    let before = nearest_before(&analysis.mentions, i, REACH)?
        .1
        .target
        .table(index);
    let after = nearest_after(&analysis.mentions, i, REACH)?
        .1
        .target
        .table(index);
    (before != after && in_plan(before) && in_plan(after)).then_some((before, after))
}
