//! The offline decomposer: picks the datasource whose schema links the question best and
//! writes one scan sub-query (semantic metrics, filters, group-by and expected schema) with
//! a standalone combine group. A question whose parts live in two datasources ("compare X
//! in A with Y in B", "for each factory code, X and Y", "X alongside Y by factory code")
//! becomes two scans and a compare or join group on the shared attribute (two standalone
//! groups when there is none). A split is taken when the whole question does not read
//! cleanly in one datasource, when it names two, or when each part reads cleanly in its
//! own datasource and clearly worse in the other's.

use std::sync::Arc;

use nl2sql_plan::{
    CombineGroup, CombineInput, CombineOperation, DecomposerResponse, JoinKeyPair, Role, SubQuery,
    SubQueryKind,
};

use nl2sql_planner::{DatasourceInfo, DecomposeRequest};

use super::analyze::{Analysis, Unlinked, analyze};
use super::build::semantic_parts;
use super::intent::Day;
use super::link::{IndexCache, SchemaIndex, datasource_words};
use super::text::{split_ident, tokenize};

/// How much better (in link score) a part must read in its own datasource than in another
/// to count as needing it: about one whole-name link.
const FIT_MARGIN: u32 = 8;

/// One datasource's reading of (part of) the question.
struct Reading<'a> {
    ds: &'a DatasourceInfo,
    index: &'a SchemaIndex,
    result: Result<Analysis, Unlinked>,
}

impl Reading<'_> {
    /// Sort key: readings that succeed, with fewer unlinked words and higher scores, first.
    fn rank(&self, order: usize) -> (bool, usize, std::cmp::Reverse<u32>, usize) {
        match &self.result {
            Ok(a) => (false, a.unlinked.len(), std::cmp::Reverse(a.score), order),
            Err(u) => (true, u.words.len(), std::cmp::Reverse(0), order),
        }
    }

    /// True when the reading succeeds with every content word linked.
    fn clean(&self) -> bool {
        self.result.as_ref().is_ok_and(|a| a.unlinked.is_empty())
    }
}

/// Decomposes `request` (see the module docs).
pub(crate) fn decompose(
    request: &DecomposeRequest,
    today: Day,
    cache: &IndexCache,
) -> Result<DecomposerResponse, Unlinked> {
    let candidates: Vec<&DatasourceInfo> = request
        .datasources
        .iter()
        .filter(|d| d.snapshot.is_some())
        .collect();
    if candidates.is_empty() {
        return Err(Unlinked {
            words: Vec::new(),
            reason: "no datasource has a schema snapshot to link the question against".into(),
        });
    }
    let ignore: Vec<String> = candidates
        .iter()
        .flat_map(|d| datasource_words(&d.id))
        .collect();
    // One index per datasource, shared by every reading of every part.
    let indexes: Vec<Arc<SchemaIndex>> = candidates
        .iter()
        .map(|d| {
            d.snapshot
                .as_ref()
                .map(|s| cache.index(s))
                .unwrap_or_default()
        })
        .collect();
    let readings = |text: &str| -> Vec<Reading<'_>> {
        candidates
            .iter()
            .zip(&indexes)
            .map(|(ds, index)| Reading {
                ds,
                index,
                result: analyze(text, index, today, &ignore),
            })
            .collect()
    };
    let whole_readings = readings(&request.question);
    let whole = best_reading(&whole_readings, &request.question, &candidates);
    let clean_whole = whole.is_some_and(Reading::clean);
    let named_count = candidates
        .iter()
        .filter(|d| mentions_datasource(&request.question, &d.id))
        .count();
    if candidates.len() >= 2 {
        // A part of the question that reads cleanly only in one datasource, and another
        // that reads cleanly only in another, need two scans even when one datasource
        // links every word of the whole question somehow.
        let loose = !clean_whole || named_count >= 2;
        for (left, right, compare) in splits(&request.question) {
            let (lr, rr) = (readings(&left), readings(&right));
            // A part fits another datasource when it reads cleanly there nearly as well
            // (within one strong link) as in its own.
            let fits = |rs: &[Reading<'_>], own: &Reading<'_>, other: &str| {
                let score = |r: &Reading<'_>| r.result.as_ref().map_or(0, |a| a.score);
                rs.iter()
                    .find(|r| r.ds.id == other)
                    .is_some_and(|r| r.clean() && score(r) + FIT_MARGIN >= score(own))
            };
            let (Some(l), Some(r)) = (
                best_reading(&lr, &left, &candidates),
                best_reading(&rr, &right, &candidates),
            ) else {
                continue;
            };
            let (Ok(la), Ok(ra)) = (&l.result, &r.result) else {
                continue;
            };
            if l.ds.id == r.ds.id {
                continue;
            }
            let named = |text: &str| named_datasource(text, &candidates).is_some();
            let distinct = l.clean()
                && r.clean()
                && (named(&right) || !fits(&rr, r, &l.ds.id))
                && (named(&left) || !fits(&lr, l, &r.ds.id));
            if !(loose || distinct) {
                continue;
            }
            let (mut la, mut ra) = (la.clone(), ra.clone());
            align_groups((&mut la, l.index), (&mut ra, r.index));
            return Ok(two_scans(
                (&left, l.ds, l.index, &la),
                (&right, r.ds, r.index, &ra),
                compare,
            ));
        }
    }
    let Some(reading) = whole else {
        return Err(Unlinked {
            words: Vec::new(),
            reason: "no datasource matches the question".into(),
        });
    };
    let analysis = reading.result.as_ref().map_err(Clone::clone)?;
    let sq = sub_query(
        "sq1",
        &request.question,
        reading.ds,
        reading.index,
        analysis,
    );
    Ok(DecomposerResponse {
        combine_groups: vec![CombineGroup {
            group_id: "g1".into(),
            operation: CombineOperation::Standalone,
            inputs: vec![CombineInput {
                subquery_id: sq.id.clone(),
                role: None,
            }],
            join_keys: Vec::new(),
        }],
        sub_queries: vec![sq],
        post_combine_ops: Vec::new(),
        unmapped_subqueries: Vec::new(),
    })
}

/// "For each depot, the trips and the invoiced amount": one part grouped by an entity's
/// name, the other by a code column of another datasource ("depot_code",
/// "ship_from_factory_code"). The join needs the same key on both sides, so the part
/// grouped by the name is grouped by its table's column whose name ends the other's
/// ("depot_code", "factory_code") instead.
fn align_groups(left: (&mut Analysis, &SchemaIndex), right: (&mut Analysis, &SchemaIndex)) {
    let ([gl], [gr]) = (left.0.group_by.as_slice(), right.0.group_by.as_slice()) else {
        return;
    };
    let (gl, gr) = (*gl, *gr);
    if !left.0.grains.is_empty() || !right.0.grains.is_empty() {
        return;
    }
    let words = |i: &SchemaIndex, c: usize| split_ident(&i.columns[c].name.to_lowercase());
    if words(left.1, gl) == words(right.1, gr) {
        return;
    }
    // A column of the label's table whose words end the other side's key.
    let shared = |i: &SchemaIndex, label: usize, other: &[String]| -> Option<usize> {
        let t = i.columns[label].table;
        if i.label_column(t) != Some(label) {
            return None;
        }
        i.tables[t]
            .columns
            .iter()
            .copied()
            .filter(|&k| k != label && !i.columns[k].is_pk)
            .filter(|&k| {
                let w = words(i, k);
                !w.is_empty() && other.ends_with(&w)
            })
            .max_by_key(|&k| (words(i, k).len(), std::cmp::Reverse(k)))
    };
    if let Some(k) = shared(left.1, gl, &words(right.1, gr)) {
        left.0.regroup(gl, k);
    } else if let Some(k) = shared(right.1, gr, &words(left.1, gl)) {
        right.0.regroup(gr, k);
    }
}

/// The best reading of a text: among the datasources it names (if exactly one), the one
/// that succeeds with the fewest unlinked words and the highest score, ties to resolver
/// order.
fn best_reading<'r, 'a>(
    rs: &'r [Reading<'a>],
    text: &str,
    candidates: &[&DatasourceInfo],
) -> Option<&'r Reading<'a>> {
    let named = named_datasource(text, candidates);
    rs.iter()
        .enumerate()
        .filter(|(_, r)| named.is_none_or(|n| n == r.ds.id))
        .min_by_key(|(i, r)| r.rank(*i))
        .map(|(_, r)| r)
}

/// Makes a question safe as a sub-query intent: no SQL comment or statement syntax, and
/// `order by`/`group by` spelled as the participles the analysis also reads.
pub(crate) fn sanitize_intent(text: &str) -> String {
    let mut s: String = text
        .replace("--", " ")
        .replace("/*", " ")
        .replace("*/", " ")
        .replace([';', '`'], " ");
    for (from, to) in [
        ("order by", "ordered by"),
        ("Order by", "Ordered by"),
        ("ORDER BY", "ordered by"),
        ("group by", "grouped by"),
        ("Group by", "Grouped by"),
        ("GROUP BY", "grouped by"),
    ] {
        s = s.replace(from, to);
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen_select = false;
    for w in words {
        let lw = w.to_lowercase();
        let core = lw.trim_matches(|c: char| !c.is_alphanumeric());
        if core == "select" {
            seen_select = true;
        }
        if seen_select && core == "from" {
            out.push("in".to_owned());
            continue;
        }
        let pair_bad = out.last().is_some_and(|prev| {
            let p = prev.to_lowercase();
            matches!(
                (p.as_str(), core),
                ("union", "select") | ("insert", "into") | ("delete", "from") | ("drop", "table")
            )
        });
        if pair_bad {
            out.pop();
        }
        out.push(w.to_owned());
    }
    let joined = out.join(" ");
    if joined.trim().is_empty() {
        "answer the question".to_owned()
    } else {
        joined
    }
}

fn sub_query(
    id: &str,
    text: &str,
    ds: &DatasourceInfo,
    index: &SchemaIndex,
    a: &Analysis,
) -> SubQuery {
    let (metrics, filters, group_by, expected_schema) = semantic_parts(a, index);
    SubQuery {
        id: id.to_owned(),
        datasource_id: ds.id.clone(),
        intent: sanitize_intent(text.trim()),
        kind: SubQueryKind::Scan,
        metrics,
        filters,
        group_by,
        expected_schema,
        schema_version: ds.schema_version.clone(),
    }
}

fn two_scans(
    left: (&str, &DatasourceInfo, &SchemaIndex, &Analysis),
    right: (&str, &DatasourceInfo, &SchemaIndex, &Analysis),
    compare: bool,
) -> DecomposerResponse {
    let a = sub_query("sq1", left.0, left.1, left.2, left.3);
    let b = sub_query("sq2", right.0, right.1, right.2, right.3);
    let groups = match (a.group_by.as_slice(), b.group_by.as_slice()) {
        ([ga], [gb]) => {
            let (operation, roles) = if compare {
                (CombineOperation::Compare, (Role::Base, Role::Compare))
            } else {
                (CombineOperation::Join, (Role::Left, Role::Right))
            };
            vec![CombineGroup {
                group_id: "g1".into(),
                operation,
                inputs: vec![
                    CombineInput {
                        subquery_id: a.id.clone(),
                        role: Some(roles.0),
                    },
                    CombineInput {
                        subquery_id: b.id.clone(),
                        role: Some(roles.1),
                    },
                ],
                join_keys: vec![JoinKeyPair {
                    left: ga.attribute.clone(),
                    right: gb.attribute.clone(),
                }],
            }]
        }
        _ => [("g1", &a), ("g2", &b)]
            .into_iter()
            .map(|(g, sq)| CombineGroup {
                group_id: g.into(),
                operation: CombineOperation::Standalone,
                inputs: vec![CombineInput {
                    subquery_id: sq.id.clone(),
                    role: None,
                }],
                join_keys: Vec::new(),
            })
            .collect(),
    };
    DecomposerResponse {
        sub_queries: vec![a, b],
        combine_groups: groups,
        post_combine_ops: Vec::new(),
        unmapped_subqueries: Vec::new(),
    }
}

/// The datasource a text names, if exactly one.
fn named_datasource<'a>(text: &str, candidates: &[&'a DatasourceInfo]) -> Option<&'a str> {
    let named: Vec<&str> = candidates
        .iter()
        .filter(|d| mentions_datasource(text, &d.id))
        .map(|d| d.id.as_str())
        .collect();
    match named.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// True when the words of datasource `id` appear in order in `text`.
fn mentions_datasource(text: &str, id: &str) -> bool {
    let words = datasource_words(id);
    if words.is_empty() {
        return false;
    }
    let lower: Vec<String> = tokenize(text).into_iter().map(|t| t.lower).collect();
    lower.windows(words.len()).any(|w| w == words.as_slice())
}

/// Candidate splits of a question into two parts at a connector, left to right: (left,
/// right, is a comparison). A grouping both parts share is repeated in each: a leading
/// "For each X," clause, or a trailing "by X" / "per X" / "for each X" of the right part
/// when the left part has none ("machines and orders per factory code").
fn splits(question: &str) -> Vec<(String, String, bool)> {
    // "put X side by side with Y", "show X and Y next to each other": a comparison laid
    // out in columns; the phrase itself goes.
    let (question, side_by_side) = without_layout_phrase(question);
    let lower = question.to_lowercase();
    let compare = side_by_side
        || ["compare", "versus", " vs", "against", "compared"]
            .iter()
            .any(|w| lower.contains(w));
    let all: Vec<&str> = question.split_whitespace().collect();
    let (lead, words) = leading_group(&all);
    let mut out = Vec::new();
    for i in 1..words.len() {
        let Some(len) = connector_len(&words, i) else {
            continue;
        };
        if i + len >= words.len() {
            continue;
        }
        let mut left: Vec<&str> = words[..i].to_vec();
        if left.first().is_some_and(|f| core(f) == "compare") {
            left.remove(0);
        }
        if core(words[i]) == "to" && left.last().is_some_and(|l| core(l) == "compared") {
            left.pop();
        }
        let right: Vec<&str> = words[i + len..].to_vec();
        if left.is_empty() || right.is_empty() {
            continue;
        }
        let mut l = left.join(" ").trim_matches(|c: char| c == ',').to_owned();
        let mut r = right.join(" ").trim_end_matches(['?', '.']).to_owned();
        match &lead {
            Some(g) => {
                // "By category, … did customers order?": appended as "per category", so
                // that "order by category" is not read as a sort.
                let g = match g.strip_prefix("by ") {
                    Some(rest) => format!("per {rest}"),
                    None => g.clone(),
                };
                l = format!("{l} {g}");
                r = format!("{r} {g}");
            }
            None => {
                if group_start(&left).is_none()
                    && let Some(k) = group_start(&right)
                    && !right
                        .get(k + 1)
                        .is_some_and(|w| RATE_UNITS.contains(&core(w).as_str()))
                {
                    let tail = right[k..].join(" ");
                    l = format!("{l} {}", tail.trim_end_matches(['?', '.']));
                }
            }
        }
        out.push((l, r, compare));
    }
    out
}

/// The question without a layout phrase ("side by side", "next to each other"), and
/// whether it had one.
fn without_layout_phrase(question: &str) -> (String, bool) {
    let words: Vec<&str> = question.split_whitespace().collect();
    let tokens: Vec<String> = words.iter().map(|w| core(w)).collect();
    for i in 0..words.len() {
        let hyphenated =
            tokens[i] == "sidebyside" || core(&words[i].replace('-', "")) == "sidebyside";
        let len = if hyphenated {
            Some(1)
        } else {
            match (
                tokens[i].as_str(),
                tokens.get(i + 1).map_or("", String::as_str),
                tokens.get(i + 2).map_or("", String::as_str),
                tokens.get(i + 3).map_or("", String::as_str),
            ) {
                ("side", "by", "side", _) => Some(3),
                ("next", "to", "each", "other") | ("next", "to", "one", "another") => Some(4),
                ("alongside", "each", "other", _) | ("alongside", "one", "another", _) => Some(3),
                _ => None,
            }
        };
        if let Some(len) = len {
            let mut kept: Vec<String> = words[..i].iter().map(|w| (*w).to_owned()).collect();
            // Keep the punctuation that ended the phrase ("…, side by side." → "….").
            let last = words[i + len - 1];
            let tail: String = last
                .chars()
                .rev()
                .take_while(|c| !c.is_alphanumeric())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if let Some(prev) = kept.last_mut() {
                prev.push_str(&tail);
            }
            kept.extend(words[i + len..].iter().map(|w| (*w).to_owned()));
            return (kept.join(" "), true);
        }
    }
    (question.to_owned(), false)
}

/// Units of a rate ("units per hour"), which is not a grouping.
const RATE_UNITS: &[&str] = &[
    "second", "minute", "hour", "day", "week", "month", "year", "unit", "person", "head",
];

/// The lower-case letters and digits of a word.
fn core(word: &str) -> String {
    word.to_lowercase()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_owned()
}

/// A leading "For each X," / "Per X," / "By X," clause (the grouping without its comma)
/// and the words after it.
fn leading_group<'w>(words: &[&'w str]) -> (Option<String>, Vec<&'w str>) {
    let starts = match words {
        [a, b, ..]
            if ["for", "in"].contains(&core(a).as_str())
                && ["each", "every", "all"].contains(&core(b).as_str()) =>
        {
            true
        }
        [a, ..] => ["per", "by"].contains(&core(a).as_str()),
        [] => false,
    };
    let comma = words.iter().take(7).position(|w| w.ends_with(','));
    match (starts, comma) {
        (true, Some(k)) if k + 1 < words.len() => {
            let phrase = words[..=k].join(" ");
            let phrase = phrase.trim_end_matches(',');
            let mut phrase = phrase.to_owned();
            if let Some(first) = phrase.get(..1) {
                phrase = format!("{}{}", first.to_lowercase(), &phrase[1..]);
            }
            (Some(phrase), words[k + 1..].to_vec())
        }
        _ => (None, words.to_vec()),
    }
}

/// Where a grouping phrase (`by`, `per`, `for each`, `in each`) starts in `words`.
fn group_start(words: &[&str]) -> Option<usize> {
    (0..words.len()).rev().find(|&k| {
        let w = core(words[k]);
        let next = words.get(k + 1).map(|n| core(n)).unwrap_or_default();
        k + 1 < words.len()
            && (["by", "per"].contains(&w.as_str())
                || (["for", "in"].contains(&w.as_str())
                    && ["each", "every"].contains(&next.as_str())))
    })
}

/// The length of a connector between two parts at `i` (`and`, `with`, `as well as`,
/// `together with`…).
fn connector_len(words: &[&str], i: usize) -> Option<usize> {
    let w = |k: usize| words.get(k).map(|x| core(x)).unwrap_or_default();
    match (w(i).as_str(), w(i + 1).as_str(), w(i + 2).as_str()) {
        ("as", "well", "as") => Some(3),
        ("together" | "along", "with", _) | ("next", "to", _) => Some(2),
        ("with" | "and" | "versus" | "vs" | "against" | "to" | "alongside" | "plus", _, _) => {
            Some(1)
        }
        _ => None,
    }
}
