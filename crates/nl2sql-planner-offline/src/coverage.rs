//! Account for every word: after a plan is built, each content span of the question must
//! have become an element of it, or the question is refused, naming the words it could
//! not place and what it did understand, with suggestions.
//!
//! What counts, checked against the built [`PlanModel`] (not against the analysis's own
//! bookkeeping, so that a constraint the builder dropped shows):
//! - a word that links to nothing in the schema (and is not a grammar or intent word) is
//!   unplaced;
//! - a table, column or value mention is placed only when its table, column or value is
//!   in the plan (a value in a filter on its column);
//! - a number or date is placed only when it is a literal of the plan (a filter, a
//!   grouping condition, the limit).
//!
//! Cue words (aggregations, comparisons, ordering, grouping) are placed by the cues that
//! read them; a comparison that found no column leaves its number unplaced, which is how
//! "pets heavier than 10" with no weight filter is refused.

use nl2sql_plan::{Interpretation, InterpretedSpan, PlanModel};

use super::analyze::{Analysis, EveryColumn};
use super::confidence::{MODEL, signals};
use super::intent::both_positions;
use super::link::{Mention, SchemaIndex, Target};
use super::text::{Token, TokenKind, is_function_word, is_stop_word, number_word};

mod cues;
mod hints;
mod shapes;
mod used;
mod verbs;

use cues::missing_cues;
pub(crate) use hints::closest_names;
use hints::{number_suggestion, rephrase_hint};
use shapes::{contradiction, paired_through_unnamed, shared_parent, ungrouped_extreme};
use used::{Used, element_of, format_number, span_text};

/// Words that, where they link to nothing, add nothing a plan must express ("located",
/// "registered", "listed"): learned from the Spider train split by `cargo xtask
/// learn-fillers` (see that task for how): one lower-case word a line, then the counts
/// it was kept on; `#` starts a comment line.
const FILLERS: &str = include_str!("data/fillers.txt");

/// What a cue word became.
const OPERATION: &str = "an operation (aggregate, comparison, grouping or order)";
/// The element of the words of a comparison with a value computed over rows.
const COMPUTED: &str = "a comparison with the";

/// What is left of a contraction once its apostrophe splits it ("we've", "don't").
const CONTRACTIONS: &[&str] = &["ve", "ll", "re", "d", "s", "t", "m"];

/// Whether `word` (lower case) is a learned filler.
fn is_filler(word: &str) -> bool {
    FILLERS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l.split_whitespace().next() == Some(word))
}

/// The reading of a question against its plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Coverage {
    /// Spans and the plan elements they became, in question order.
    pub(crate) interpretation: Interpretation,
    /// Words that became nothing in the plan, in question order.
    pub(crate) unplaced: Vec<String>,
    /// Suggestions for the unplaced words.
    pub(crate) suggestions: Vec<String>,
}

/// The plan element a word of a link table's name became: that table's rows, missing.
fn missing_rows_of(index: &SchemaIndex, table: usize) -> String {
    format!(
        "table {}, whose rows must be missing",
        index.tables[table].name
    )
}

/// Reads `analysis` (of `tokens`) against `plan`.
pub(crate) fn cover(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
) -> Coverage {
    let used = Used::of(plan);
    let functions = cues::plan_functions(plan);
    let aggregates = plan.select_items.iter().any(|s| s.expr.is_aggregate_call());
    let mut spans: Vec<(usize, InterpretedSpan)> = Vec::new();
    let mut unplaced: Vec<(usize, String)> = Vec::new();
    let mut suggestions = Vec::new();
    let mut covered = vec![false; tokens.len()];
    let compounds = compound_halves(tokens, analysis, index);
    for (k, m) in analysis.mentions.iter().enumerate() {
        covered[m.start..m.end].iter_mut().for_each(|c| *c = true);
        if let Some(why) = misread(k, tokens, analysis, index, &used, &compounds) {
            suggestions.push(why);
            unplaced.push((m.start, span_text(tokens, m.start, m.end)));
            continue;
        }
        let text = span_text(tokens, m.start, m.end);
        let (element, placed) = if analysis.rows_named.contains(&k) {
            let table = m.target.table(index);
            (
                format!("the rows of table {}", index.tables[table].name),
                used.reads_table(index, table),
            )
        } else if let Some((_, table)) = analysis
            .link_words
            .iter()
            .find(|(p, _)| (m.start..m.end).contains(p))
        {
            // "faculty who do not participate in any activity": the verb is a word of the
            // link table's name (`Faculty_Participates_in`) whose rows must be missing.
            (missing_rows_of(index, *table), true)
        } else if analysis.absent_with.contains(&k) {
            (
                format!(
                    "{}, whose rows must be missing",
                    element_of(m, index, &used).0
                ),
                true,
            )
        } else {
            element_of(m, index, &used)
        };
        // "across all our plants", "in every factory": a table named only to say "all of
        // them" restricts nothing, when the rows the plan reads belong to its rows (refer
        // to them); unless its rows refer to rows the plan reads ("the average age of all
        // gymnasts", gymnasts referring to people): then it says which. Rows that belong
        // to no row of it ("countries of all the swimmers" read from stadiums) are not
        // its rows at all.
        // Listed rows "of all the clubs" ("the names and players of all the clubs") are
        // the clubs' own: only a figure computed over the rows ("the average age of all
        // gymnasts") is quantified by "of all".
        let owner_of_listed = !aggregates
            && tokens[m.start.saturating_sub(4)..m.start]
                .iter()
                .any(|t| t.is("of"));
        let quantified = match m.target {
            Target::Table(t) => {
                !owner_of_listed
                    && tokens[m.start.saturating_sub(3)..m.start]
                        .iter()
                        .any(|t| t.is_any(&["all", "every", "across"]))
                    && !index
                        .foreign_keys
                        .iter()
                        .any(|fk| fk.from == t && fk.to != t && used.reads_table(index, fk.to))
                    && (0..index.tables.len())
                        .any(|r| used.reads_table(index, r) && index.refers_to(r, t))
            }
            _ => false,
        };
        let summed = if placed {
            cues::counted_or_summed(m, tokens, analysis, index, &functions, &used)
        } else {
            None
        };
        if let Some(c) = summed {
            // Rows counted, or a count column added up: refused, naming both.
            let column = &index.columns[c];
            suggestions.push(format!(
                "'{text}' reads as a count of the rows of table {} or as the total of {}.{}; \
                 say 'the number of rows' or 'the total {}'",
                index.tables[m.target.table(index)].name,
                index.tables[column.table].name,
                column.name,
                column.name
            ));
            unplaced.push((m.start, text));
        } else if placed && let Some(other) = &m.guess {
            // Two readings nothing tells apart: refused, naming both.
            let second = Mention {
                target: other.clone(),
                guess: None,
                ..m.clone()
            };
            let (other_element, _) = element_of(&second, index, &used);
            suggestions.push(format!(
                "'{text}' reads as {element} or as {other_element} equally; name the one you mean"
            ));
            unplaced.push((m.start, text));
        } else if placed || quantified {
            spans.push((m.start, InterpretedSpan { text, element }));
        } else {
            suggestions.push(format!(
                "'{text}' reads as {element}, which the plan does not use"
            ));
            unplaced.push((m.start, text));
        }
    }
    // A word that asks for an intersection ("both", "shared") is placed, or refused as
    // such, below.
    for i in both_positions(tokens) {
        covered[i] = true;
    }
    for (i, t) in tokens.iter().enumerate() {
        if covered[i] {
            continue;
        }
        match t.kind {
            TokenKind::Number => {
                let Some(x) = t.number() else { continue };
                // A year or count inside a date phrase ("after 2012", "the last 10
                // years") became the phrase's bounds.
                let dated = analysis
                    .cues
                    .dates
                    .iter()
                    .find(|d| d.start <= i && i < d.end)
                    .is_some_and(|d| {
                        [&d.lo, &d.hi]
                            .into_iter()
                            .flatten()
                            .any(|bound| used.has_text(bound))
                    });
                if dated {
                    spans.push((
                        i,
                        InterpretedSpan {
                            text: t.raw.clone(),
                            element: "a date range".to_owned(),
                        },
                    ));
                } else if used.has_number(x) {
                    spans.push((
                        i,
                        InterpretedSpan {
                            text: t.raw.clone(),
                            element: format!("the value {}", format_number(x)),
                        },
                    ));
                } else {
                    if let Some(s) = number_suggestion(tokens, i, analysis, index, x) {
                        suggestions.push(s);
                    }
                    unplaced.push((i, t.raw.clone()));
                }
            }
            TokenKind::Date | TokenKind::Quoted => {
                if used.has_text(&t.raw) {
                    spans.push((
                        i,
                        InterpretedSpan {
                            text: t.raw.clone(),
                            element: format!("the value '{}'", t.raw),
                        },
                    ));
                } else {
                    unplaced.push((i, t.raw.clone()));
                }
            }
            TokenKind::Word => {
                // A number written as a word ("three") that a comparison reads: the same
                // check as a number ("one" only after "than", "least" or "most": it is
                // usually a pronoun).
                let counted = number_word(&t.lower).filter(|n| {
                    *n > 1
                        || (*n == 1
                            && i > 0
                            && tokens[i - 1].is_any(&["than", "least", "most", "exactly"]))
                });
                // ("at least one" in a comparison with a computed value quantifies rows.)
                let quantifies = analysis
                    .computed_read
                    .iter()
                    .any(|(start, end, _, _)| (*start..*end).contains(&i));
                if let Some((k, _)) = analysis.roles.iter().find(|(_, w)| w.contains(&i)) {
                    // "started from the station": the role of the key the plan joins by.
                    let key = &index.foreign_keys[*k];
                    let table = index.tables[key.from].name.to_lowercase();
                    if key.from_columns.iter().all(|c| {
                        used.join_columns
                            .contains(&(table.clone(), c.to_lowercase()))
                    }) {
                        spans.push((
                            i,
                            InterpretedSpan {
                                text: t.raw.clone(),
                                element: format!(
                                    "the key {}.{} (the role it names)",
                                    index.tables[key.from].name,
                                    key.from_columns.join(", ")
                                ),
                            },
                        ));
                    } else {
                        unplaced.push((i, t.raw.clone()));
                    }
                } else if let Some(n) = counted
                    && !quantifies
                    && analysis.cues.used.get(i).copied().unwrap_or(false)
                {
                    if used.has_number(n as f64) {
                        spans.push((
                            i,
                            InterpretedSpan {
                                text: t.raw.clone(),
                                element: format!("the value {n}"),
                            },
                        ));
                    } else {
                        unplaced.push((i, t.raw.clone()));
                    }
                } else if analysis.cues.used.get(i).copied().unwrap_or(false) {
                    let every_column = analysis
                        .cues
                        .every_column
                        .filter(|(start, end)| (*start..*end).contains(&i))
                        .and(analysis.every_column);
                    let element = match every_column {
                        Some(EveryColumn::Of(t)) => {
                            format!("every column of table {}", index.tables[t].name)
                        }
                        Some(EveryColumn::Listed) => "the columns listed before it".to_owned(),
                        None => match analysis
                            .computed_read
                            .iter()
                            .find(|(start, end, _, _)| (*start..*end).contains(&i))
                        {
                            Some((_, _, c, agg)) => format!(
                                "{COMPUTED} {} of {}.{}",
                                crate::build::agg_word(*agg),
                                index.tables[index.columns[*c].table].name,
                                index.columns[*c].name
                            ),
                            None => OPERATION.to_owned(),
                        },
                    };
                    spans.push((
                        i,
                        InterpretedSpan {
                            text: t.raw.clone(),
                            element,
                        },
                    ));
                } else if let Some(n) = counted.filter(|n| *n > 1)
                    && !used.has_number(n as f64)
                {
                    // "the types of schools that have two schools": a count no cue read
                    // is a condition the plan would drop.
                    unplaced.push((i, t.raw.clone()));
                } else if let Some((_, table)) = analysis.link_words.iter().find(|(p, _)| *p == i) {
                    spans.push((
                        i,
                        InterpretedSpan {
                            text: t.raw.clone(),
                            element: missing_rows_of(index, *table),
                        },
                    ));
                } else if analysis.unlinked.contains(&t.raw)
                    && !is_function_word(&t.lower)
                    && !is_stop_word(&t.lower)
                    && !CONTRACTIONS.contains(&t.lower.as_str())
                {
                    if is_filler(&t.lower) {
                        spans.push((
                            i,
                            InterpretedSpan {
                                text: t.raw.clone(),
                                element: "nothing (a word that adds nothing to this plan)"
                                    .to_owned(),
                            },
                        ));
                    } else if let Some(element) =
                        verbs::placed_as(tokens, i, analysis, index, &used, plan)
                    {
                        spans.push((
                            i,
                            InterpretedSpan {
                                text: t.raw.clone(),
                                element,
                            },
                        ));
                    } else {
                        unplaced.push((i, t.raw.clone()));
                    }
                }
            }
        }
    }
    // Each cue the question holds must show in the plan: a dropped aggregation,
    // superlative, top-N, ordering or distinct is a constraint the answer would lack.
    for (start, end, what) in missing_cues(tokens, analysis, index, plan, &used, &covered) {
        let text = span_text(tokens, start, end);
        let why = format!("'{text}' asks for {what}, which the plan does not have");
        refuse(
            &mut spans,
            &mut unplaced,
            &mut suggestions,
            start..end,
            text,
            why,
        );
    }
    for b in &analysis.both {
        spans.push((
            b.at,
            InterpretedSpan {
                text: tokens[b.at].raw.clone(),
                element: "each condition after it, on some row of every answer (an \
                          intersection)"
                    .to_owned(),
            },
        ));
    }
    // A plan is one set of rows with one condition per row: an intersection it could not
    // read (on Spider train, such answers were wrong 53 times in 66) is refused.
    for i in both_positions(tokens).filter(|i| !analysis.both.iter().any(|b| b.at == *i)) {
        let why = format!(
            "'{} … and …' asks for what has each of two things at once (an intersection of \
             two sets of rows), which this planner cannot express; ask about each one \
             separately",
            tokens[i].raw
        );
        let text = tokens[i].raw.clone();
        refuse(
            &mut spans,
            &mut unplaced,
            &mut suggestions,
            i..i + 1,
            text,
            why,
        );
    }
    for &i in &analysis.unread_or {
        suggestions.push(format!(
            "'{}' asks for rows that meet one condition or another, which this plan cannot \
             read here; ask about each alternative separately",
            tokens[i].raw
        ));
        unplaced.push((i, tokens[i].raw.clone()));
    }
    if let Some(p) = paired_through_unnamed(tokens, analysis, index, plan, &spans) {
        let m = &analysis.mentions[p.second_mention];
        let text = span_text(tokens, m.start, m.end);
        let why = format!(
            "nothing in the question pairs {} with {}: the plan pairs them through {}, \
             which no word names; say how they are related, or ask for each list separately",
            p.first, p.second, p.via
        );
        refuse(
            &mut spans,
            &mut unplaced,
            &mut suggestions,
            m.start..m.start + 1,
            text,
            why,
        );
    }
    if let Some((start, end)) = ungrouped_extreme(analysis, plan) {
        let text = span_text(tokens, start, end);
        let why = format!(
            "'{text}' is read as a largest or smallest value per group of the other \
             outputs, but no word asks for groups; ask for the one row ranked first (\
             'the … with the latest …'), or say 'for each …'"
        );
        refuse(
            &mut spans,
            &mut unplaced,
            &mut suggestions,
            start..end,
            text,
            why,
        );
    }
    if let Some(c) = contradiction(plan) {
        // The conditions' words are placed; the plan built from them selects nothing.
        let at = analysis
            .filters
            .iter()
            .filter_map(|f| f.span)
            .map(|(start, end)| (start, span_text(tokens, start, end)))
            .next_back()
            .or_else(|| {
                let m = analysis.mentions.last()?;
                Some((m.start, span_text(tokens, m.start, m.end)))
            });
        if let Some((start, text)) = at {
            let why = format!(
                "the plan's conditions cannot all hold on one row ({c}); if you mean rows \
                 that meet each condition on different rows, ask about each one separately"
            );
            refuse(
                &mut spans,
                &mut unplaced,
                &mut suggestions,
                start..start + 1,
                text,
                why,
            );
        }
    }
    if let Some(p) = shared_parent(analysis, index, plan) {
        let m = &analysis.mentions[p.mention];
        let text = span_text(tokens, m.start, m.end);
        let why = format!(
            "the plan pairs {a} with {b} only through {parent}, which both refer to and no \
             word names: each {a} row would meet every {b} row of the same {parent}; say how \
             they are related",
            a = p.children[0],
            b = p.children[1],
            parent = p.parent
        );
        refuse(
            &mut spans,
            &mut unplaced,
            &mut suggestions,
            m.start..m.start + 1,
            text,
            why,
        );
    }
    spans.sort_by_key(|(i, _)| *i);
    // Adjacent words of one operation read as one span ("How many", "for each", "more
    // than the average").
    let mut merged: Vec<(usize, InterpretedSpan)> = Vec::with_capacity(spans.len());
    for (i, span) in spans {
        if let Some((j, last)) = merged.last_mut()
            && (span.element == OPERATION || span.element.starts_with(COMPUTED))
            && last.element == span.element
            && *j + last.text.split(' ').count() == i
        {
            last.text.push(' ');
            last.text.push_str(&span.text);
            continue;
        }
        merged.push((i, span));
    }
    let spans = merged;
    unplaced.sort_by_key(|(i, _)| *i);
    let unplaced: Vec<String> = unplaced.into_iter().map(|(_, w)| w).collect();
    let (likely, signals) = MODEL.score(&signals(tokens, analysis, index, plan));
    let confidence = if unplaced.is_empty() { likely } else { 0.0 };
    if !unplaced.is_empty() && suggestions.is_empty() {
        suggestions.push(rephrase_hint(index, plan));
    }
    Coverage {
        interpretation: Interpretation {
            spans: spans.into_iter().map(|(_, s)| s).collect(),
            confidence,
            signals,
        },
        unplaced,
        suggestions,
    }
}

/// Refuses the words at `words` (their text `text`): no span of them stays in the
/// interpretation, `text` is unplaced, and `why` says what the plan did with them.
fn refuse(
    spans: &mut Vec<(usize, InterpretedSpan)>,
    unplaced: &mut Vec<(usize, String)>,
    suggestions: &mut Vec<String>,
    words: std::ops::Range<usize>,
    text: String,
    why: String,
) {
    spans.retain(|(i, _)| !words.contains(i));
    suggestions.push(why);
    unplaced.push((words.start, text));
}

/// Why the reading of mention `k` is refused though its element may be in the plan: a
/// compound noun split across two tables' columns, one relation taken twice, or acts
/// read as the agents who do them. `None` when none of these holds.
fn misread(
    k: usize,
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    used: &Used,
    compounds: &[(usize, usize)],
) -> Option<String> {
    let m = &analysis.mentions[k];
    let text = span_text(tokens, m.start, m.end);
    if let Some(&(first, _)) = compounds.iter().find(|(_, second)| *second == k) {
        let a = &analysis.mentions[first];
        let whole = span_text(tokens, a.start, m.end);
        return Some(format!(
            "'{whole}' reads as one thing, but '{}' is {} and '{text}' {} of another table; \
             name the column you mean",
            span_text(tokens, a.start, a.end),
            element_of(a, index, used).0,
            element_of(m, index, used).0,
        ));
    }
    // "friends of friends", "managers of managers": the same words on both sides of
    // "of", one relation taken twice, which one reading of the column cannot express.
    let twice = k > 0 && {
        let before = &analysis.mentions[k - 1];
        before.target == m.target
            && matches!(m.target, Target::Column(_))
            && before.end + 1 == m.start
            && tokens[before.end].is("of")
            && tokens[before.start..before.end]
                .iter()
                .map(|t| &t.stem)
                .eq(tokens[m.start..m.end].iter().map(|t| &t.stem))
    };
    if twice {
        let whole = span_text(tokens, analysis.mentions[k - 1].start, m.end);
        return Some(format!(
            "'{whole}' takes one relation twice (a chain of rows), which this planner \
             cannot express; ask about each step separately"
        ));
    }
    agent_noun_read_as_act(m, tokens, index).map(|table_word| {
        format!(
            "'{text}' reads as table {} ({table_word}s, who do it), not as the {text} \
             themselves; say '{table_word}s' if you mean them",
            index.tables[m.target.table(index)].name
        )
    })
}

/// A plural noun linked to a table named by its agent noun only through the stemmer
/// ("reviews" to `Reviewer`, "plays" to `Players`): the acts are not the people who do
/// them, so "how many reviews" must not count reviewers. The table's word, when so.
fn agent_noun_read_as_act(m: &Mention, tokens: &[Token], index: &SchemaIndex) -> Option<String> {
    let Target::Table(t) = m.target else {
        return None;
    };
    if m.end != m.start + 1 {
        return None;
    }
    let token = &tokens[m.start];
    let word = &token.lower;
    // The table's word the token met.
    let table_word = crate::text::split_ident(&index.tables[t].name)
        .into_iter()
        .map(|w| w.to_lowercase())
        .find(|w| crate::text::stem(w) == crate::text::stem(word))?;
    let agent = table_word.strip_suffix('s').unwrap_or(&table_word);
    (agent.len() >= 5 && agent.ends_with("er") && word.ends_with('s') && !word.starts_with(agent))
        .then(|| agent.to_owned())
}

/// Two column mentions written as one compound noun ("the home team name", "the opening
/// year", "the hometown address": nothing between them) that read columns of two
/// different tables, the second's table named by nothing else: the compound names one
/// thing, so the second word read as another table's column (joined for it) is a guess.
/// `(first, second)` mention indexes.
fn compound_halves(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
) -> Vec<(usize, usize)> {
    let mentions = &analysis.mentions;
    let mut out = Vec::new();
    for (k, pair) in mentions.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        let (Target::Column(ca), Target::Column(cb)) = (&a.target, &b.target) else {
            continue;
        };
        let (ta, tb) = (index.columns[*ca].table, index.columns[*cb].table);
        let named_elsewhere = mentions
            .iter()
            .enumerate()
            .any(|(j, m)| j != k + 1 && m.target.table(index) == tb);
        // One space between: "names, color descriptions" lists two things.
        let touching = a.end == b.start && tokens[b.start].pos.0 == tokens[a.end - 1].pos.1 + 1;
        // "the winning aircraft name", "the customer address city", "the color
        // description" of a `color_code`: the first word names the second's table, or the
        // first column refers to it; the compound is that row's column.
        let leads_there = index.column_refers_to(*ca, tb)
            || tokens[a.start..a.end]
                .iter()
                .any(|t| index.tables[tb].stems.contains(&t.stem));
        if touching && ta != tb && !named_elsewhere && !leads_there {
            out.push((k, k + 1));
        }
    }
    out
}

impl Coverage {
    /// The coverage of a text the analysis could not read at all: its words are
    /// unplaced.
    pub(crate) fn unread(u: &super::analyze::Unlinked) -> Coverage {
        Coverage {
            interpretation: Interpretation::default(),
            unplaced: if u.words.is_empty() {
                vec![u.reason.clone()]
            } else {
                u.words.clone()
            },
            suggestions: vec![u.reason.clone()],
        }
    }

    /// The interpretation, with unplaced words listed as such (a lenient plan).
    pub(crate) fn into_interpretation(self) -> Interpretation {
        let mut interpretation = self.interpretation;
        interpretation
            .spans
            .extend(self.unplaced.into_iter().map(|text| InterpretedSpan {
                text,
                element: "not placed".to_owned(),
            }));
        interpretation
    }
}
