//! The offline decomposer: picks the datasource whose schema links the question best and
//! writes one scan sub-query (semantic metrics, filters, group-by and expected schema) with
//! a standalone combine group. A question whose parts live in two datasources ("compare X
//! in A with Y in B") becomes two scans and a compare or join group on the shared
//! attribute (two standalone groups when there is none).

use nl2sql_plan::{
    CombineGroup, CombineInput, CombineOperation, DecomposerResponse, JoinKeyPair, Role, SubQuery,
    SubQueryKind,
};

use crate::{DatasourceInfo, DecomposeRequest};

use super::analyze::{Analysis, Unlinked, analyze};
use super::build::semantic_parts;
use super::intent::Day;
use super::link::{SchemaIndex, datasource_words};
use super::text::tokenize;

/// One datasource's reading of (part of) the question.
struct Reading<'a> {
    ds: &'a DatasourceInfo,
    index: SchemaIndex,
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
}

/// Decomposes `request` (see the module docs).
pub(crate) fn decompose(
    request: &DecomposeRequest,
    today: Day,
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
    let readings = |text: &str| -> Vec<Reading<'_>> {
        candidates
            .iter()
            .map(|ds| {
                let index = ds
                    .snapshot
                    .as_ref()
                    .map(SchemaIndex::build)
                    .unwrap_or_default();
                let result = analyze(text, &index, today, &ignore);
                Reading { ds, index, result }
            })
            .collect()
    };
    let best = |rs, text: &str| best_reading(rs, text, &candidates);
    let whole = best(readings(&request.question), &request.question);
    let clean_whole = whole
        .as_ref()
        .is_some_and(|(_, r)| r.result.as_ref().is_ok_and(|a| a.unlinked.is_empty()));
    let named_count = candidates
        .iter()
        .filter(|d| mentions_datasource(&request.question, &d.id))
        .count();
    if candidates.len() >= 2 && (!clean_whole || named_count >= 2) {
        for (left, right, compare) in splits(&request.question) {
            let (Some((_, l)), Some((_, r))) =
                (best(readings(&left), &left), best(readings(&right), &right))
            else {
                continue;
            };
            let (Ok(la), Ok(ra)) = (&l.result, &r.result) else {
                continue;
            };
            if l.ds.id == r.ds.id {
                continue;
            }
            return Ok(two_scans(
                (&left, l.ds, &l.index, la),
                (&right, r.ds, &r.index, ra),
                compare,
            ));
        }
    }
    let Some((_, reading)) = whole else {
        return Err(Unlinked {
            words: Vec::new(),
            reason: "no datasource matches the question".into(),
        });
    };
    let analysis = reading.result?;
    let sq = sub_query(
        "sq1",
        &request.question,
        reading.ds,
        &reading.index,
        &analysis,
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

/// The best reading of a text: among the datasources it names (if exactly one), the one
/// that succeeds with the fewest unlinked words and the highest score, ties to resolver
/// order.
fn best_reading<'a>(
    rs: Vec<Reading<'a>>,
    text: &str,
    candidates: &[&DatasourceInfo],
) -> Option<(usize, Reading<'a>)> {
    let named = named_datasource(text, candidates);
    rs.into_iter()
        .enumerate()
        .filter(|(_, r)| named.is_none_or(|n| n == r.ds.id))
        .min_by_key(|(i, r)| r.rank(*i))
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
/// right, is a comparison).
fn splits(question: &str) -> Vec<(String, String, bool)> {
    let lower = question.to_lowercase();
    let compare = ["compare", "versus", " vs", "against", "compared"]
        .iter()
        .any(|w| lower.contains(w));
    let words: Vec<&str> = question.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let lw = w.to_lowercase();
        let lw = lw.trim_matches(|c: char| !c.is_alphanumeric());
        if i == 0 || i + 1 >= words.len() {
            continue;
        }
        if !["with", "and", "versus", "vs", "against", "to"].contains(&lw) {
            continue;
        }
        let mut left: Vec<&str> = words[..i].to_vec();
        if left
            .first()
            .is_some_and(|f| f.eq_ignore_ascii_case("compare"))
        {
            left.remove(0);
        }
        if lw == "to"
            && left
                .last()
                .is_some_and(|l| l.eq_ignore_ascii_case("compared"))
        {
            left.pop();
        }
        let right: Vec<&str> = words[i + 1..].to_vec();
        if left.is_empty() || right.is_empty() {
            continue;
        }
        out.push((
            left.join(" ").trim_matches(|c: char| c == ',').to_owned(),
            right.join(" ").trim_end_matches(['?', '.']).to_owned(),
            compare,
        ));
    }
    out
}
