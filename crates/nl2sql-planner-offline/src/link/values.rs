//! Value linking: question spans matched against the known values of text columns
//! (sampled, or listed in a description): whole values (`Offline`, `Widget Beta`),
//! capitalised names shaped like the known ones, single words inside multi-word values
//! (`LIKE`), and unknown capitalised place names after "in" on a place column whose samples
//! are incomplete.

use serde_json::Value;

use super::super::text::{
    Token, TokenKind, canonical, dated_after, is_function_word, is_stop_word, singular,
    source_text, stem,
};
use super::mention::{Candidates, Mention, Part, Target, pending};
use super::schema::{Sample, SchemaIndex};

/// Capitalised phrases (`Widget Beta`, `WH-Texas`) that share a word with the known values
/// of a column whose samples are not exhaustive: the phrase itself is the value.
pub(super) fn proper_nouns(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let capital = |t: &Token| {
        t.kind == TokenKind::Word
            && t.raw.chars().next().is_some_and(char::is_uppercase)
            && !is_function_word(&t.lower)
    };
    let mut i = 1;
    while i < tokens.len() {
        if used[i] || taken[i] || !capital(&tokens[i]) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len()
            && !used[j]
            && !taken[j]
            && (capital(&tokens[j]) || tokens[j].kind == TokenKind::Number)
            && tokens[j].pos.0 <= tokens[j - 1].pos.1 + 1
        {
            j += 1;
        }
        let words: Vec<&str> = tokens[i..j].iter().map(|t| t.lower.as_str()).collect();
        let phrase = source_text(text, tokens, i, j);
        // "Northwind Automotive Inc.": the final period belongs to the name when the
        // known values of that shape end with one.
        let dot_after = text.chars().nth(tokens[j - 1].pos.1) == Some('.');
        let mut cands: Candidates = Vec::new();
        if j - i >= 2 {
            for (c, col) in index.columns.iter().enumerate() {
                let shaped: Vec<&Sample> = col
                    .samples
                    .iter()
                    .filter(|s| {
                        s.words.len() == words.len()
                            && s.words.iter().any(|w| words.contains(&w.as_str()))
                    })
                    .collect();
                if !shaped.is_empty() && !col.exhaustive {
                    let dotted = dot_after
                        && shaped
                            .iter()
                            .all(|s| s.value.as_str().is_some_and(|v| v.ends_with('.')));
                    let value = if dotted {
                        format!("{phrase}.")
                    } else {
                        phrase.clone()
                    };
                    cands.push((Target::known(c, Value::String(value)), 14));
                }
            }
        }
        if cands.is_empty() {
            i = j;
            continue;
        }
        taken[i..j].iter_mut().for_each(|t| *t = true);
        out.push(pending(i, j, cands));
        i = j;
    }
    out
}

pub(super) fn values_exact(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        // "a name containing 'Opera'" is a part of a value, even when 'Opera' is a whole
        // value somewhere else (`literal_values` reads it).
        if tokens[i].kind == TokenKind::Quoted && containing_before(tokens, i).is_some() {
            i += 1;
            continue;
        }
        let mut found: Option<(usize, Candidates)> = None;
        for n in (1..=6.min(tokens.len() - i)).rev() {
            let span = &tokens[i..i + n];
            if span
                .iter()
                .zip(&used[i..i + n])
                .any(|(t, u)| *u && t.kind != TokenKind::Quoted)
            {
                continue;
            }
            if n == 1 && (!single_value_word(&span[0], i) || names_column(tokens, i, index)) {
                continue;
            }
            // A common noun that names another part of the schema is that name, not a
            // value of `c`: a table ("the nurse with the most appointments" over a table
            // `Nurse` whose `Position` holds 'Nurse'); a column that refers to the rows of
            // `c` ("the instructor who teaches the most courses": `Course.Instructor`
            // refers to the faculty whose `Rank` holds 'Instructor'); a column, when the
            // date after the word dates it ("problems reported before 1978-06-26" over
            // `date_problem_reported` and a status 'Reported'). ("How many invoices were
            // sent?" over `sent_from` and a status 'Sent' stays the status; "good
            // customers" over `good_or_bad_customer` holding 'good' stays the value.)
            let noun = n == 1 && common_noun(&span[0], i);
            let names_table = noun && names_a_table(&span[0], index);
            let dated = noun && dated_after(tokens, i).is_some();
            let named_elsewhere = |c: usize| {
                names_table
                    || (noun
                        && index.columns.iter().enumerate().any(|(k, x)| {
                            k != c
                                && x.stems.contains(&span[0].stem)
                                && (dated || index.column_refers_to(k, index.columns[c].table))
                        }))
            };
            let words: Vec<&str> = if n == 1 && span[0].kind == TokenKind::Quoted {
                Vec::new()
            } else {
                span.iter().map(|t| t.lower.as_str()).collect()
            };
            // A plural that is not itself the name of a table or column.
            let plural_of_value = n == 1
                && span[0].kind == TokenKind::Word
                && span[0].lower.ends_with('s')
                && singular(&span[0].lower) != span[0].lower
                && !names_schema(&span[0], index);
            // The span as written, to tell a value spelt exactly as stored.
            let written = span
                .iter()
                .map(|t| t.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            // A lower-case word naming part of the schema ("name", "ids") is that name,
            // unless it is one of a column's frequent values.
            let schema_word = noun && names_schema(&span[0], index);
            let mut cands: Candidates = Vec::new();
            for (c, col) in index.columns.iter().enumerate() {
                if named_elsewhere(c) {
                    continue;
                }
                let hits: Vec<Value> = col
                    .samples
                    .iter()
                    .filter(|s| s.readable_by(schema_word))
                    .filter(|s| {
                        if words.is_empty() {
                            s.value
                                .as_str()
                                .is_some_and(|v| v.to_lowercase() == span[0].lower)
                        } else if s.words.iter().map(String::as_str).eq(words.iter().copied()) {
                            true
                        } else {
                            // "sold through distributors": the plural of a one-word value.
                            n == 1
                                && plural_of_value
                                && s.words.len() == 1
                                && singular(words[0]) == s.words[0]
                        }
                    })
                    .map(|s| s.value.clone())
                    .collect();
                // A value spelt exactly as stored ("UK Gallery", where another column
                // holds "UK gallery") is the better reading of the two.
                let exact = hits
                    .iter()
                    .position(|v| v.as_str() == Some(written.as_str()));
                if let Some(v) = exact.map(|k| &hits[k]).or(hits.first()) {
                    cands.push((
                        Target::known(c, v.clone()),
                        30 + u32::try_from(n).unwrap_or(0) + u32::from(exact.is_some()),
                    ));
                }
            }
            if !cands.is_empty() {
                found = Some((n, cands));
                break;
            }
        }
        match found {
            Some((n, cands)) => {
                taken[i..i + n].iter_mut().for_each(|t| *t = true);
                out.push(pending(i, i + n, cands));
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

/// True when the word at `i` and its next or previous one are two consecutive words of a
/// column name: "shipped from" names `ship_from_factory_code`, not the status value
/// `Shipped`.
fn names_column(tokens: &[Token], i: usize, index: &SchemaIndex) -> bool {
    let pair_names = |a: Option<&Token>, b: Option<&Token>| {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        if a.kind != TokenKind::Word || b.kind != TokenKind::Word {
            return false;
        }
        let pair = [stem(&a.lower), stem(&b.lower)];
        index
            .columns
            .iter()
            .any(|c| c.plain.windows(2).any(|w| w == pair))
    };
    // "shipped from" (`ship_from_…`) and "quantity received" (`quantity_received`).
    pair_names(tokens.get(i), tokens.get(i + 1))
        || (i > 0 && pair_names(tokens.get(i - 1), tokens.get(i)))
}

/// A word written in lower case (or first in the question).
fn common_noun(t: &Token, pos: usize) -> bool {
    t.kind == TokenKind::Word && (pos == 0 || !t.raw.chars().next().is_some_and(char::is_uppercase))
}

/// True when a word is a word of a table name.
fn names_a_table(t: &Token, index: &SchemaIndex) -> bool {
    index.tables.iter().any(|x| x.stems.contains(&t.stem))
}

/// True when a word is a word of a table or column name.
fn names_schema(t: &Token, index: &SchemaIndex) -> bool {
    names_a_table(t, index) || index.columns.iter().any(|x| x.stems.contains(&t.stem))
}

/// Whether one token alone may be a whole value: quoted, or a content word (a stop word
/// only when capitalised inside the sentence).
fn single_value_word(t: &Token, pos: usize) -> bool {
    match t.kind {
        TokenKind::Quoted => true,
        TokenKind::Word => {
            !is_function_word(&t.lower)
                && (!is_stop_word(&t.lower)
                    || (pos > 0 && t.raw.chars().next().is_some_and(char::is_uppercase)))
        }
        TokenKind::Number | TokenKind::Date => false,
    }
}

pub(super) fn values_partial(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if used[i] || taken[i] || t.kind != TokenKind::Word || is_stop_word(&t.lower) {
            continue;
        }
        if t.lower.len() < 3 {
            continue;
        }
        let schema_word = names_schema(t, index);
        let mut cands: Candidates = Vec::new();
        for (c, col) in index.columns.iter().enumerate() {
            let hits: Vec<Value> = col
                .samples
                .iter()
                .filter(|s| s.readable_by(schema_word))
                .filter(|s| {
                    s.words.len() > 1
                        && s.words
                            .iter()
                            .any(|w| *w == t.lower || canonical(w) == t.stem)
                })
                .map(|s| s.value.clone())
                .collect();
            if !hits.is_empty() {
                cands.push((
                    Target::Value {
                        column: c,
                        values: hits,
                        exact: false,
                        word: t.raw.clone(),
                        part: Part::Inside,
                    },
                    12,
                ));
            }
        }
        if !cands.is_empty() {
            taken[i] = true;
            out.push(pending(i, i + 1, cands));
        }
    }
    out
}

/// Words of column names that hold places, coarsest first: a capitalised word after "in"
/// that no known value matches is taken as a value of the first such column of a table.
/// (A "where" question's answer is checked against these and the words of
/// `analyze::assemble`'s `MORE_PLACE_WORDS`.)
pub(crate) const PLACE_WORDS: &[&str] = &[
    "country", "nation", "region", "state", "province", "city", "town", "location",
];

/// "customers based in Japan": a capitalised word after `in` that links to nothing
/// is an equality value of a place column (`country`, `city`, …) whose samples are not
/// all its values (only a few values per column are sampled, so a real value is often
/// missing). One candidate per table, the coarsest place first; ties between tables are
/// settled by context like any other.
pub(super) fn place_names(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for i in 1..tokens.len() {
        let t = &tokens[i];
        let capital = t.kind == TokenKind::Word
            && t.raw.chars().next().is_some_and(char::is_uppercase)
            && t.raw.chars().skip(1).any(char::is_lowercase)
            && !is_function_word(&t.lower)
            && !is_stop_word(&t.lower);
        if !capital || used[i] || taken[i] || !tokens[i - 1].is("in") {
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len()
            && !used[j]
            && !taken[j]
            && tokens[j].kind == TokenKind::Word
            && tokens[j].raw.chars().next().is_some_and(char::is_uppercase)
        {
            j += 1;
        }
        let phrase = source_text(text, tokens, i, j);
        let mut cands: Candidates = Vec::new();
        for table in &index.tables {
            let place = PLACE_WORDS.iter().find_map(|w| {
                table.columns.iter().copied().find(|c| {
                    let col = &index.columns[*c];
                    col.class == super::schema::TypeClass::Text
                        && !col.exhaustive
                        && col.plain.last().is_some_and(|p| p == w)
                })
            });
            if let Some(c) = place {
                cands.push((Target::known(c, Value::String(phrase.clone())), 5));
            }
        }
        if !cands.is_empty() {
            taken[i..j].iter_mut().for_each(|t| *t = true);
            out.push(pending(i, j, cands));
        }
    }
    out
}

/// "customers in the Marine industry", "the Acme supplier": capitalised words right
/// before the name of a text column (or of a table whose label is a text column) that no
/// known value matches are a value of that column, when its samples are not all its
/// values (only a few values per column are sampled).
pub(super) fn named_values(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
    mentions: &[Mention],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for m in mentions {
        let Target::Column(c) = m.target else {
            continue;
        };
        let col = &index.columns[c];
        if col.class != super::schema::TypeClass::Text || col.is_key || col.exhaustive {
            continue;
        }
        let capital = |k: usize| {
            let t = &tokens[k];
            t.kind == TokenKind::Word
                && !used[k]
                && !taken[k]
                && t.raw.chars().next().is_some_and(char::is_uppercase)
                && !is_function_word(&t.lower)
                && !is_stop_word(&t.lower)
        };
        let mut i = m.start;
        while i > 1 && capital(i - 1) && tokens[i - 1].pos.1 + 1 >= tokens[i].pos.0 {
            i -= 1;
        }
        if i == m.start {
            continue;
        }
        let phrase = source_text(text, tokens, i, m.start);
        taken[i..m.start].iter_mut().for_each(|t| *t = true);
        out.push(pending(
            i,
            m.start,
            vec![(Target::known(c, Value::String(phrase)), 5)],
        ));
    }
    out
}

/// Particles of phrasal verbs whose compound is a noun ("break down" → "breakdown").
const PARTICLES: &[&str] = &["down", "up", "over", "out", "off", "in", "back"];

/// "when a machine breaks down", "lines that changed over": a verb and its particle that
/// together spell a one-word known value ("Breakdown", "Changeover") are that value.
pub(super) fn phrasal_values(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for i in 0..tokens.len().saturating_sub(1) {
        let (verb, particle) = (&tokens[i], &tokens[i + 1]);
        let free = |k: usize| !used[k] && !taken[k] && tokens[k].kind == TokenKind::Word;
        if !free(i) || !free(i + 1) || !PARTICLES.contains(&particle.lower.as_str()) {
            continue;
        }
        let v = verb.lower.as_str();
        let bases: Vec<&str> = std::iter::once(v)
            .chain(
                ["s", "es", "ed", "d", "ing"]
                    .iter()
                    .filter_map(|e| v.strip_suffix(e)),
            )
            .filter(|b| b.len() >= 3)
            .collect();
        let mut cands: Candidates = Vec::new();
        for (c, col) in index.columns.iter().enumerate() {
            let values: Vec<Value> = col
                .samples
                .iter()
                .filter(|s| {
                    s.words.len() == 1
                        && bases
                            .iter()
                            .any(|b| s.words[0] == format!("{b}{}", particle.lower))
                })
                .map(|s| s.value.clone())
                .collect();
            if !values.is_empty() {
                cands.push((
                    Target::Value {
                        column: c,
                        values,
                        exact: true,
                        word: String::new(),
                        part: Part::Inside,
                    },
                    10,
                ));
            }
        }
        if !cands.is_empty() {
            taken[i..i + 2].iter_mut().for_each(|t| *t = true);
            out.push(pending(i, i + 2, cands));
        }
    }
    out
}

/// Words that may stand between a column (or a table and "named") and the literal it is
/// given: "whose last name is 'Kim'", "the product named 'flax'", "room KLR209".
const BINDERS: &[&str] = &[
    "is", "are", "was", "were", "be", "being", "named", "called", "titled", "equals", "equal",
    "to", "the", "a", "an", "either",
];

/// Words that make a table name its row by its label ("the product named 'flax'").
const NAMING: &[&str] = &["named", "called", "titled"];

/// Words after which a literal is a part of the value, not all of it.
const CONTAINING: &[&str] = &[
    "contain",
    "contains",
    "containing",
    "contained",
    "include",
    "includes",
    "including",
    "substring",
    "word",
    "letter",
    "letters",
];

/// A literal the question spells out: a quoted string, a code mixing letters and digits
/// (`KLR209`), or a capitalised name after a column that binds it ("last name McEwen").
fn literal_end(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    taken: &[bool],
    i: usize,
    loose: bool,
) -> Option<usize> {
    let t = &tokens[i];
    if taken[i] {
        return None;
    }
    match t.kind {
        TokenKind::Quoted => Some(i + 1),
        TokenKind::Word if !used[i] => {
            let digits = t.raw.chars().any(|c| c.is_ascii_digit());
            let letters = t.raw.chars().any(char::is_alphabetic);
            if digits && letters {
                return Some(i + 1);
            }
            let capital = |k: usize| {
                let w = &tokens[k];
                k > 0
                    && w.kind == TokenKind::Word
                    && !used[k]
                    && !taken[k]
                    && w.raw.chars().next().is_some_and(char::is_uppercase)
                    && !is_function_word(&w.lower)
                    && !is_stop_word(&w.lower)
            };
            // "… on the Online channel? Use the average.": a capitalised word that starts
            // a sentence is not a name.
            let sentence =
                i > 0 && text_between(tokens, i - 1, i, text).contains(['.', '?', '!', ';', ':']);
            if !loose || !capital(i) || sentence {
                return None;
            }
            let mut j = i + 1;
            while j < tokens.len() && capital(j) && tokens[j].pos.0 <= tokens[j - 1].pos.1 + 1 {
                j += 1;
            }
            Some(j)
        }
        _ => None,
    }
}

/// "whose last name is 'Kim'", "the product named 'flax'", "the 'Herbs' category",
/// "a name containing the word 'court'", "room KLR209": a literal the question spells out
/// is a value of the text column it is said of, even when no sample holds it. The
/// engine's value grounding then checks it against the column's stored values (and
/// refuses, naming the nearest ones, when none matches), so the reading never silently
/// filters on a value the data lacks.
pub(super) fn literal_values(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
    mentions: &[Mention],
    anchored: &[Anchored],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let text_column = |c: usize| index.columns[c].class == super::schema::TypeClass::Text;
    // The column a mention names, with the other text columns it could name as well (its
    // ties are settled later, in context, as the mention's own are).
    let columns_of = |m: &Mention, c: usize| -> Vec<(usize, u32)> {
        let mut out = vec![(c, m.score)];
        for (t, score) in &m.alternatives {
            if let Target::Column(a) = t
                && *a != c
                && text_column(*a)
            {
                out.push((*a, *score));
            }
        }
        out
    };
    // The text columns a literal said of mention `m` may be a value of: the column it
    // names, or the label of the table it names.
    let said_of = |m: &Mention| match m.target {
        Target::Column(c) if text_column(c) => Some(columns_of(m, c)),
        Target::Table(t) => index
            .label_column(t)
            .filter(|c| text_column(*c))
            .map(|c| vec![(c, m.score)]),
        _ => None,
    };
    let ending_at = |k: usize| mentions.iter().find(|m| m.end == k);
    let mut i = 0;
    while i < tokens.len() {
        // A bound literal: what precedes it, over binder words, names its column.
        let mut k = i;
        while k > 0 && i - k < 3 && tokens[k - 1].is_any(BINDERS) {
            k -= 1;
        }
        let gap = &tokens[k..i];
        let before = ending_at(k);
        let naming = gap.iter().any(|t| t.is_any(NAMING));
        let bound = before.and_then(|m| match m.target {
            Target::Column(c) if text_column(c) => Some((m.end, columns_of(m, c))),
            Target::Table(t) if naming => {
                name_column(index, t).map(|c| (m.end, vec![(c, m.score)]))
            }
            _ => None,
        });
        // "names starting with the letter S", "post codes starting with 4": the literal
        // right after "starts with" is the start (or, after "ends with", the end) of the
        // value, whatever kind of word it is.
        let anchored = anchored
            .iter()
            .find(|a| a.literal == i)
            .map(|a| (a.verb, a.part));
        if anchored.is_none()
            && let Some(m) = number_value(tokens, used, taken, i, index, mentions, k, before)
                .or_else(|| number_alternative(tokens, used, taken, i, &out))
        {
            taken[m.start..m.end].iter_mut().for_each(|t| *t = true);
            out.push(m);
            i += 1;
            continue;
        }
        let literal = match anchored {
            Some(_) => Some(i + 1),
            None => literal_end(text, tokens, used, taken, i, bound.is_some())
                .or_else(|| known_word_of(tokens, used, taken, i, index, bound.as_ref()?)),
        };
        let Some(j) = literal else {
            i += 1;
            continue;
        };
        let quoted = tokens[i].kind == TokenKind::Quoted;
        // "containing the substring 'Miss'": the value holds the literal.
        let contains = anchored
            .map(|(p, _)| p)
            .or_else(|| containing_before(tokens, i));
        let part = anchored.map_or(Part::Inside, |(_, part)| part);
        let found = if let Some(p) = contains {
            // "names that do not start with 'A'": a negation (read with the value later)
            // may stand between the column and the verb.
            let mut q = p;
            while q > 0
                && p - q < 3
                && (tokens[q - 1].is_any(BINDERS)
                    || tokens[q - 1].is_any(&["that", "which", "whose", "has", "have", "with"])
                    || tokens[q - 1].is_any(&["do", "does", "did", "not"]))
            {
                q -= 1;
            }
            // "have the substring 'dar' in their names": the column said after the
            // literal is the one it is part of; after another column ("catalog
            // publishers have 'Murray' in their names"), whose names they are is unsaid.
            // "the state whose name contains 'North'", "catalog publishers whose name
            // contains 'Murray'": a bare "name" after "whose" is the name the text column
            // said before it holds (a state's, a publisher's), not another `name`.
            let before = ending_at(q).map(|b| {
                let bare_name = b.end == b.start + 1 && tokens[b.start].is_any(&["name", "names"]);
                let owner = (bare_name && b.start > 0 && tokens[b.start - 1].is("whose"))
                    .then(|| ending_at(b.start - 1))
                    .flatten()
                    .filter(|o| matches!(o.target, Target::Column(c) if text_column(c)));
                owner.unwrap_or(b)
            });
            match (before, column_after(tokens, mentions, j)) {
                (Some(b), Some(a))
                    if matches!(b.target, Target::Column(_)) && b.target != a.target =>
                {
                    None
                }
                (b, a) => a.or(b).and_then(said_of).map(|c| (p, c, false)),
            }
        } else if let Some((start, c)) = bound {
            Some((start, c, true))
        } else if quoted {
            // "the 'Herbs' category", "'Shanghai' city": a column (or a table, by its
            // label) named right after a quoted literal.
            mentions
                .iter()
                .find(|m| m.start == j)
                .and_then(said_of)
                .map(|c| (i, c, true))
        } else {
            None
        };
        let Some((start, columns, exact)) = found else {
            i = j;
            continue;
        };
        if taken[start..i].iter().any(|t| *t) {
            i = j;
            continue;
        }
        let value = if quoted {
            tokens[i].raw.clone()
        } else {
            source_text(text, tokens, i, j)
        };
        taken[start..j].iter_mut().for_each(|t| *t = true);
        let cands = columns
            .into_iter()
            .map(|(column, score)| {
                let target = if exact {
                    Target::known(column, Value::String(value.clone()))
                } else {
                    // A part of the value: `LIKE '%word%'`.
                    Target::Value {
                        column,
                        values: Vec::new(),
                        exact: false,
                        word: value.clone(),
                        part,
                    }
                };
                (target, score)
            })
            .collect();
        out.push(pending(start, j, cands));
        i = j;
    }
    out
}

/// "documents with the status code done": a lower-case word right after the column it
/// is a known value of is that value, even a word that carries no meaning elsewhere
/// ("done" is a stop word). The end of the literal, one word.
fn known_word_of(
    tokens: &[Token],
    used: &[bool],
    taken: &[bool],
    i: usize,
    index: &SchemaIndex,
    (_, columns): &(usize, Vec<(usize, u32)>),
) -> Option<usize> {
    let t = &tokens[i];
    let known = |c: usize| {
        index.columns[c]
            .samples
            .iter()
            .any(|s| matches!(&s.value, Value::String(v) if v.eq_ignore_ascii_case(&t.raw)))
    };
    (t.kind == TokenKind::Word && !used[i] && !taken[i] && columns.iter().any(|(c, _)| known(*c)))
        .then_some(i + 1)
}

/// "the document with id 3", "grade 5", "courses with 1 credit": a number right after a
/// numeric column (over binder words), or right before one after "with", "has" or
/// "have", is that column's value. Numbers a cue reads (comparisons, limits, dates) are
/// not.
#[allow(clippy::too_many_arguments)]
fn number_value(
    tokens: &[Token],
    used: &[bool],
    taken: &[bool],
    i: usize,
    index: &SchemaIndex,
    mentions: &[Mention],
    k: usize,
    before: Option<&Mention>,
) -> Option<Mention> {
    let t = &tokens[i];
    let x = t.number().filter(|_| !used[i] && !taken[i])?;
    let numeric = |c: usize| index.columns[c].class == super::schema::TypeClass::Numeric;
    let value = number_json(x)?;
    let target = |column: usize| Target::known(column, value.clone());
    if let Some(m) = before
        && let Target::Column(c) = m.target
        && numeric(c)
        && taken[k..i].iter().all(|t| !*t)
    {
        // "document id 3" where `document_id` is a column of five tables: the number is a
        // value of whichever of them the context settles the column words on (their ties
        // are resolved later, the value's with them), not of the first by name.
        let mut cands = vec![(target(c), 20)];
        cands.extend(m.alternatives.iter().filter_map(|(t, _)| match t {
            Target::Column(a) if *a != c && numeric(*a) => Some((target(*a), 20)),
            _ => None,
        }));
        return Some(pending(m.end, i + 1, cands));
    }
    let after = mentions.iter().find(|m| m.start == i + 1)?;
    let Target::Column(c) = after.target else {
        return None;
    };
    // "students who are 18 years old": the age the number is.
    let aged = tokens.get(i + 1).is_some_and(|t| t.lower == "years old");
    (numeric(c) && (aged || (i > 0 && tokens[i - 1].is_any(&["with", "has", "have", "had"]))))
        .then(|| pending(i, i + 1, vec![(target(c), 20)]))
}

/// "aged 35 or 36": a number right after "or" whose number before it is a value of a
/// numeric column is another value of that column (the two become one `IN` list).
fn number_alternative(
    tokens: &[Token],
    used: &[bool],
    taken: &[bool],
    i: usize,
    out: &[Mention],
) -> Option<Mention> {
    let x = tokens[i].number().filter(|_| !used[i] && !taken[i])?;
    if i < 2 || !tokens[i - 1].is("or") || tokens[i - 2].number().is_none() {
        return None;
    }
    let Target::Value {
        column,
        values,
        exact: true,
        ..
    } = &out.last().filter(|m| m.end == i - 1)?.target
    else {
        return None;
    };
    if !matches!(values.as_slice(), [Value::Number(_)]) {
        return None;
    }
    Some(pending(
        i,
        i + 1,
        vec![(Target::known(*column, number_json(x)?), 20)],
    ))
}

/// A number of the question as a JSON value: an integer when it is whole.
pub(super) fn number_json(x: f64) -> Option<Value> {
    serde_json::Number::from_f64(x).map(|n| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            #[allow(clippy::cast_possible_truncation)]
            Value::from(x as i64)
        } else {
            Value::Number(n)
        }
    })
}

/// The column a table's rows are named by ("the product named 'flax'"): its label when
/// that is a text column called a name, or its title when no column of the table is a
/// name ("the employee named …" is not the employee's job title).
fn name_column(index: &SchemaIndex, table: usize) -> Option<usize> {
    let c = index.label_column(table)?;
    let col = &index.columns[c];
    let named = |name: &str| name.to_lowercase().contains("name");
    let no_names = !index.tables[table]
        .columns
        .iter()
        .any(|k| named(&index.columns[*k].name));
    (col.class == super::schema::TypeClass::Text
        && (named(&col.name) || (col.name.eq_ignore_ascii_case("title") && no_names)))
        .then_some(c)
}

/// The mention said right after a literal ending at `j` as what holds it: "in their
/// names", "in its title", "in the description".
fn column_after<'m>(tokens: &[Token], mentions: &'m [Mention], j: usize) -> Option<&'m Mention> {
    let start = crate::text::holder_after(tokens, j)?;
    mentions.iter().find(|m| m.start == start)
}

/// The word that makes the literal at `i` a part of a value ("containing the substring
/// 'Miss'", "names that include 'a'"), within four words before it.
fn containing_before(tokens: &[Token], i: usize) -> Option<usize> {
    (i.saturating_sub(4)..i).find(|&p| tokens[p].is_any(CONTAINING))
}

/// A literal that starts or ends values ("starts with the letter S"): the verb's
/// position, the literal's, and which part of the value it is.
#[derive(Debug, Clone, Copy)]
pub(super) struct Anchored {
    pub(super) verb: usize,
    pub(super) literal: usize,
    pub(super) part: Part,
}

/// The spans ("starts with the letter S", verb to literal) that [`anchored_before`]
/// reads, marked taken so that no other reading claims their words first.
pub(super) fn reserve_anchored(
    tokens: &[Token],
    used: &[bool],
    taken: &mut [bool],
) -> Vec<Anchored> {
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        if let Some((verb, part)) = anchored_before(tokens, used, taken, i) {
            taken[verb..=i].iter_mut().for_each(|t| *t = true);
            out.push(Anchored {
                verb,
                literal: i,
                part,
            });
        }
    }
    out
}

/// Verbs that, before "with", say where a value starts or ends.
const STARTING: &[&str] = &[
    "start",
    "starts",
    "started",
    "starting",
    "begin",
    "begins",
    "beginning",
    "began",
];
const ENDING: &[&str] = &["end", "ends", "ended", "ending"];

/// Words that may stand between "starts with" and the literal: "starts with the letter
/// S", "ends with the digit 7".
const PIECES: &[&str] = &[
    "the",
    "a",
    "an",
    "letter",
    "letters",
    "character",
    "characters",
    "word",
    "digit",
    "digits",
    "number",
    "string",
    "text",
    "prefix",
    "suffix",
];

/// "starts with 'Orbit'", "begins with the letter S", "ending with the letter m": the
/// literal at `i`
/// is the start (or end) of a value when "start"/"begin"/"end" and "with" come right
/// before it, over piece words; with the position of the verb. The literal is a quoted
/// string, a number, a capitalised word or a word after "letter" — never a plain word
/// ("clubs starting with the oldest" orders, it does not filter).
fn anchored_before(
    tokens: &[Token],
    used: &[bool],
    taken: &[bool],
    i: usize,
) -> Option<(usize, Part)> {
    let t = &tokens[i];
    if used[i] || taken[i] {
        return None;
    }
    let mut w = i;
    while w > 0 && i - w < 3 && tokens[w - 1].is_any(PIECES) {
        w -= 1;
    }
    if w < 2 || !tokens[w - 1].is("with") {
        return None;
    }
    let verb = &tokens[w - 2];
    let part = if verb.is_any(STARTING) {
        Part::Start
    } else if verb.is_any(ENDING) {
        Part::End
    } else {
        return None;
    };
    let after_letter = tokens[w..i]
        .iter()
        .any(|p| p.is_any(&["letter", "letters", "character", "characters", "digit"]));
    let literal = match t.kind {
        TokenKind::Quoted | TokenKind::Number => true,
        TokenKind::Word => {
            after_letter
                // "starts with A": a single capital letter, even the article's.
                || (t.raw.len() == 1 && t.raw.chars().all(|c| c.is_ascii_uppercase()))
                || (t.raw.chars().next().is_some_and(char::is_uppercase)
                    && !is_function_word(&t.lower)
                    && !is_stop_word(&t.lower))
        }
        _ => false,
    };
    literal.then_some((w - 2, part))
}

/// The source text between the end of token `a` and the start of token `b`.
fn text_between<'t>(tokens: &[Token], a: usize, b: usize, text: &'t str) -> &'t str {
    let (from, to) = (tokens[a].pos.1, tokens[b].pos.0);
    let start = text.char_indices().nth(from).map_or(text.len(), |(i, _)| i);
    let end = text.char_indices().nth(to).map_or(text.len(), |(i, _)| i);
    text.get(start..end.max(start)).unwrap_or("")
}
