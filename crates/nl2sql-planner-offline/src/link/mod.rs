//! Schema linking: a per-snapshot index of tables, columns (words, synonyms, descriptions,
//! sample values) and foreign keys, and the matcher that links question words and phrases
//! to them with scores. Ties are broken by context (tables mentioned elsewhere) and then by
//! name, so the outcome is deterministic.
//!
//! In order: capitalised names and exact known values (`values`), boolean adjectives
//! (`booleans`), names (`names`), then words inside multi-word values (`values`). `listed`
//! reads the values a description enumerates into the known values. Once ties are
//! settled, `keys` links "id" to the key of its table and `referenced` reads a foreign key
//! column as the key it refers to where the question is about the referenced table.

use super::text::{Token, TokenKind, punctuated_before, split_ident, stem};

mod booleans;
mod cache;
mod compounds;
mod countries;
mod full_names;
mod genders;
mod keys;
mod listed;
mod mention;
mod names;
mod referenced;
mod roles;
mod schema;
mod values;

pub(crate) use cache::IndexCache;
pub(crate) use compounds::question_tokens;
pub(crate) use countries::names_country;
use names::names;
pub(crate) use roles::roles_said;
use values::{proper_nouns, values_exact, values_partial};

pub(crate) use mention::{Mention, Part, Target, nearest_after, nearest_before};
pub(crate) use schema::{ColumnInfo, ForeignKey, SchemaIndex, TypeClass};
pub(crate) use values::PLACE_WORDS;

/// Links question tokens to the schema. `used[i]` marks tokens consumed by intent cues;
/// they are not linked (values still may be, since they are literal text).
pub(crate) fn link(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) -> Vec<Mention> {
    let mut taken: Vec<bool> = vec![false; tokens.len()];
    // "ending with the letter m", "starts with 'A'": kept from every other reading (a
    // value "2", the column `end_date`) until the literals are read.
    let anchored = values::reserve_anchored(tokens, used, &mut taken);
    // Capitalised names first: "Northwind Automotive Inc." is a customer, not the
    // industry value "Automotive" inside it.
    let mut mentions = proper_nouns(text, tokens, used, index, &mut taken);
    mentions.extend(values_exact(tokens, used, index, &mut taken));
    mentions.extend(values::phrasal_values(tokens, used, index, &mut taken));
    mentions.extend(booleans::booleans(tokens, used, index, &mut taken));
    mentions.extend(countries::countries(tokens, used, index, &mut taken));
    mentions.extend(genders::genders(tokens, used, index, &mut taken));
    mentions.extend(full_names::full_names(tokens, used, index, &mut taken));
    mentions.extend(names(tokens, used, index, &mut taken));
    mentions.extend(values_partial(tokens, used, index, &mut taken));
    mentions.extend(values::place_names(text, tokens, used, index, &mut taken));
    let named = values::named_values(text, tokens, used, index, &mut taken, &mentions);
    mentions.extend(named);
    for a in &anchored {
        taken[a.verb..=a.literal]
            .iter_mut()
            .for_each(|t| *t = false);
    }
    let literal =
        values::literal_values(text, tokens, used, index, &mut taken, &mentions, &anchored);
    mentions.extend(literal);
    let prefer = match tokens.first().map(|t| t.lower.as_str()) {
        Some("who" | "where") => Some(TypeClass::Text),
        Some("when") => Some(TypeClass::Time),
        _ => None,
    };
    mentions.sort_by_key(|m| m.start);
    resolve_ties(&mut mentions, tokens, used, index, prefer);
    full_names::same_table(&mut mentions, tokens, index);
    full_names::same_person(&mut mentions, index);
    let mentions = complete_names(mentions, tokens, index);
    let mut mentions = merge_qualified(mentions, tokens, index);
    names_of_tables(&mut mentions, tokens, used, index);
    attributes_of_tables(&mut mentions, tokens, used, index);
    let mut mentions = names_after_their_noun(mentions, tokens, used, index);
    column_words_before_values(&mut mentions, tokens, index);
    keys::key_words(&mut mentions, tokens, used, index);
    referenced::to_referenced_keys(&mut mentions, tokens, index);
    phone_numbers(&mut mentions, tokens, used, index);
    dates_of_tables(&mut mentions, tokens, used, index);
    mentions
}

/// "the airport with name 'London Gatwick'": a column word right before a value, every
/// word of which is a word of the value's column name (`Airport_Name`), names that
/// column, even where it linked to another table's column (`pilot.Name`); it is then part
/// of the value's filter, not a column to list. A value that reads as a value of the
/// column named right before it, among others equally, is that column's.
fn column_words_before_values(mentions: &mut [Mention], tokens: &[Token], index: &SchemaIndex) {
    for k in 1..mentions.len() {
        let Some(vc) = mentions[k].column() else {
            continue;
        };
        if !matches!(mentions[k].target, Target::Value { .. }) {
            continue;
        }
        let m = &mentions[k - 1];
        let Target::Column(c) = m.target else {
            continue;
        };
        // "document type code CV" where "CV" is a type's code and its name too: the
        // value is the named column's.
        if c != vc
            && m.end == mentions[k].start
            && let Some(alt) = mentions[k]
                .alternatives
                .iter()
                .map(|(t, _)| t)
                .find(|t| matches!(t, Target::Value { column, .. } if *column == c))
                .cloned()
        {
            let v = &mut mentions[k];
            v.target = alt;
            v.alternatives.clear();
            v.guess = None;
            continue;
        }
        let stems = &index.columns[vc].stems;
        if c != vc
            && m.end == mentions[k].start
            && tokens[m.start..m.end]
                .iter()
                .all(|t| stems.contains(&t.stem))
        {
            let m = &mut mentions[k - 1];
            m.target = Target::Column(vc);
            m.alternatives.clear();
            m.guess = None;
        }
    }
}

/// "the dates of the assessment notes", "the dates for all orders": "date(s)" (a word
/// that alone names no column, since most schemas hold several dates) right before
/// "of"/"for" and a table with exactly one date or timestamp column names that column.
fn dates_of_tables(
    mentions: &mut Vec<Mention>,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) {
    const BETWEEN: &[&str] = &["the", "all", "each", "every", "its", "their", "these"];
    for i in 0..tokens.len() {
        if !tokens[i].is_any(&["date", "dates"])
            || used.get(i).copied().unwrap_or(false)
            || mentions.iter().any(|m| m.start <= i && i < m.end)
            || !tokens.get(i + 1).is_some_and(|t| t.is_any(&["of", "for"]))
        {
            continue;
        }
        let mut at = i + 2;
        while tokens.get(at).is_some_and(|t| t.is_any(BETWEEN)) {
            at += 1;
        }
        let Some(Target::Table(t)) = mentions
            .iter()
            .find(|m| m.start == at)
            .map(|m| m.target.clone())
        else {
            continue;
        };
        let mut dates = index.tables[t]
            .columns
            .iter()
            .copied()
            .filter(|c| index.columns[*c].is_temporal());
        let (Some(c), None) = (dates.next(), dates.next()) else {
            continue;
        };
        let k = mentions.partition_point(|m| m.start < i);
        mentions.insert(
            k,
            Mention {
                start: i,
                end: i + 1,
                target: Target::Column(c),
                score: mention::WHOLE_NAME_SCORE,
                alternatives: Vec::new(),
                guess: None,
            },
        );
    }
}

/// Words that name a number to call; "number" after one is part of its name.
const PHONE_WORDS: &[&str] = &["phone", "telephone", "fax", "mobile", "cell"];

/// "the phone numbers of all employees" over `Employee.Phone`: "number(s)" right after a
/// mention of a phone column whose name lacks it is the rest of that column's name, not a
/// word left over.
fn phone_numbers(mentions: &mut [Mention], tokens: &[Token], used: &[bool], index: &SchemaIndex) {
    for k in 0..mentions.len() {
        let end = mentions[k].end;
        let Target::Column(c) = mentions[k].target else {
            continue;
        };
        let stems = &index.columns[c].stems;
        let after = tokens
            .get(end)
            .is_some_and(|t| t.is_any(&["number", "numbers"]));
        if after
            && !used.get(end).copied().unwrap_or(false)
            && stems
                .iter()
                .any(|w| PHONE_WORDS.iter().any(|p| stem(p) == *w))
            && !stems.iter().any(|w| *w == stem("number"))
            && !mentions.iter().any(|m| m.start <= end && end < m.end)
        {
            mentions[k].end = end + 1;
        }
    }
}

/// "the names of all movies" where movies have a title, not a name: the name the
/// question asks for is the named table's label, not another table's `name` column (nor
/// another `…name` column of the same table: "the names of songs" are `song_name`, not
/// `artist_name`). A list of columns before "of" belongs to the table too ("the names
/// and locations of festivals").
fn names_of_tables(mentions: &mut [Mention], tokens: &[Token], used: &[bool], index: &SchemaIndex) {
    for k in 0..mentions.len() {
        let m = &mentions[k];
        let m_start = m.start;
        let Target::Column(c) = m.target else {
            continue;
        };
        if m.end != m.start + 1
            || !tokens[m.start].is_any(&["name", "names"])
            || (m.start > 0 && tokens[m.start - 1].is("full"))
        {
            continue;
        }
        // Past the other columns of a list ("names and locations of").
        let mut at = m.end;
        let mut next = k + 1;
        // "the name and budget of departments": the last column of the list read with its
        // table ("budget of departments" is one mention), which is then the list's.
        let mut of_inside = None;
        while tokens.get(at).is_some_and(|t| t.is_any(&["and", ","])) {
            let Some(n) = mentions
                .get(next)
                .filter(|n| n.start == at + 1 && matches!(n.target, Target::Column(_)))
            else {
                break;
            };
            of_inside = table_inside(tokens, index, n);
            at = n.end;
            next += 1;
        }
        // "the company name": the table named right before the word.
        let before = nearest_before(&mentions[..k], m_start, 0).and_then(|(_, n)| match n.target {
            Target::Table(t) => Some((t, true)),
            // "the winning aircraft name": a column that refers to a table, then the
            // name of the row it refers to.
            Target::Column(f) => {
                referenced::referenced_key(index, f).map(|key| (index.columns[key].table, false))
            }
            Target::Value { .. } => None,
        });
        // Past a comma ("customer ids, names for all accounts") a table named (as a table)
        // after the list goes first.
        let after = || table_after_of(mentions, tokens, used, index, at).or(of_inside);
        let (found, from_before) = match (punctuated_before(tokens, m_start), after()) {
            (true, Some(a)) if a.1 => (Some(a), false),
            (_, a) if before.is_none() => (a, false),
            _ => (before, true),
        };
        let Some((t, table_named)) = found else {
            // "the names of authors" over a `submission.Author` column: no table is
            // named, but a column of names is, by its whole name and no table beside it,
            // and the word asks for its values (the mirror of "all author names",
            // `names_after_their_noun`), not for another table's `name`. (Not "the names
            // of all the products" over `product_stock_number`, nor "the name of the
            // airline" where `airlines` is a table as well as a column of `routes`.)
            if let Some(n) = past_of(tokens, used, at, |i| value_end(mentions, i))
                .and_then(|i| mentions.iter().find(|n| n.start == i))
                && n.score >= mention::WHOLE_NAME_SCORE
                && !n
                    .alternatives
                    .iter()
                    .any(|(t, _)| matches!(t, Target::Table(_)))
                && let Some(Target::Column(x)) = noun_named(n, index)
                && x != c
            {
                let m = &mut mentions[k];
                m.target = Target::Column(x);
                m.alternatives.clear();
                m.guess = None;
            }
            continue;
        };
        // Read from the table before the word or after "for", a key is no name.
        let beside = from_before || tokens.get(at).is_some_and(|t| t.is("for"));
        let Some(label) = index.label_column(t).filter(|l| {
            index.columns[*l].class == TypeClass::Text && !(beside && index.columns[*l].is_key)
        }) else {
            continue;
        };
        if index.columns[c].table != t || (label != c && ends_with_name(&index.columns[label].name))
        {
            mentions[k].target = Target::Column(label);
        }
        // The table named after "of" decided which name: no tie is left ("the name of
        // the department" is `department.dept_name`, not a tie with `student.name`). Only
        // for a name column of a table the words name (not a table found through one of
        // its columns, "of the document type code"), and not for "the first name".
        let chosen = mentions[k].column().unwrap_or(c);
        if table_named
            && ends_with_name(&index.columns[chosen].name)
            && !(m_start > 0 && tokens[m_start - 1].is_any(&["first", "last"]))
        {
            mentions[k].guess = None;
        }
    }
}

/// "the city name" over a `city` table named by its `City` column, "all director names"
/// over a `Director` column, "the party name" where `Party` is a category of
/// representatives (who have a `Name` of their own): "name" right after a table's word is
/// the table's name column, and right after a text column (not a key, not a code) it is
/// that column's own values; the word joins the mention before it, and whatever else it
/// linked to goes.
fn names_after_their_noun(
    mentions: Vec<Mention>,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) -> Vec<Mention> {
    // "name" right after the word before it (one space: not "card number, name"), and
    // not a kind of name ("full name", "last name").
    let names_at = |i: usize| {
        i > 0
            && tokens[i].is_any(&["name", "names"])
            && !punctuated_before(tokens, i)
            && !tokens[i - 1].is_any(&[
                "full", "first", "last", "given", "middle", "family", "user", "nick", "code",
            ])
    };
    let mut out: Vec<Mention> = Vec::with_capacity(mentions.len());
    for m in mentions {
        let at = m.start;
        if m.end == at + 1
            && names_at(at)
            && let Some(prev) = out.last_mut()
            && prev.end == at
            && let Some(target) = noun_named(prev, index)
        {
            absorb_name(prev, at, target);
            continue;
        }
        out.push(m);
    }
    // The word linked to nothing at all.
    for (i, &cue) in used.iter().enumerate() {
        if !names_at(i) || cue || out.iter().any(|m| m.start <= i && i < m.end) {
            continue;
        }
        if let Some(prev) = out.iter_mut().find(|m| m.end == i)
            && let Some(target) = noun_named(prev, index)
        {
            absorb_name(prev, i, target);
        }
    }
    out
}

/// Mention `m` takes in the word "name" at `at` (right after it), as `target`, decided.
fn absorb_name(m: &mut Mention, at: usize, target: Target) {
    m.end = at + 1;
    m.target = target;
    m.alternatives.clear();
    m.guess = None;
}

/// What "name" right after mention `m` names: the name column of the table `m` names,
/// or the text column `m` names itself (a category or a name: not a key, a code or a
/// reference to another table); `None` when the mention is no such noun.
fn noun_named(m: &Mention, index: &SchemaIndex) -> Option<Target> {
    if m.guess.is_some() {
        return None;
    }
    match m.target {
        Target::Table(t) => index.name_column(t).map(Target::Column),
        Target::Column(c) => {
            let col = &index.columns[c];
            let words = split_ident(&col.name);
            let code = words
                .last()
                .is_some_and(|w| matches!(w.to_lowercase().as_str(), "code" | "id" | "type"));
            // A column that refers to a table ("the winning aircraft name") names a row
            // of it: `names_of_tables` reads that name.
            let refers = referenced::referenced_key(index, c).is_some();
            (col.class == TypeClass::Text && !col.is_key && !code && !refers)
                .then_some(Target::Column(c))
        }
        Target::Value { .. } => None,
    }
}

/// "the descriptions of the service types", "the details of the museums": a word that
/// names a column of some table, right before "of" and a table (or a column whose words
/// name the table it refers to: `Services.Service_Type_Code` for `Ref_Service_Types`), is
/// that table's column when exactly one of its columns holds the word (names are
/// `names_of_tables`'s).
fn attributes_of_tables(
    mentions: &mut [Mention],
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) {
    for k in 0..mentions.len() {
        let m = &mentions[k];
        let Target::Column(c) = m.target else {
            continue;
        };
        if m.end != m.start + 1 || tokens[m.start].is_any(&["name", "names"]) {
            continue;
        }
        let word = tokens[m.start].stem.clone();
        let Some(at) = past_of(tokens, used, m.end, |k| value_end(mentions, k)) else {
            continue;
        };
        let Some(n) = mentions.iter().find(|n| n.start == at) else {
            continue;
        };
        let owner = match n.target {
            Target::Table(t) => Some(t),
            Target::Column(o) => referenced::referenced_key(index, o)
                .map(|key| index.columns[key].table)
                .filter(|r| {
                    tokens[n.start..n.end]
                        .iter()
                        .all(|w| index.tables[*r].stems.contains(&w.stem))
                }),
            Target::Value { .. } => None,
        };
        let Some(t) = owner.filter(|t| *t != index.columns[c].table) else {
            continue;
        };
        let holding: Vec<usize> = index.tables[t]
            .columns
            .iter()
            .copied()
            .filter(|o| !index.columns[*o].is_key && index.columns[*o].stems.contains(&word))
            .collect();
        if let [only] = holding[..] {
            mentions[k].target = Target::Column(only);
            mentions[k].guess = None;
        }
    }
}

/// Whether a column's name ends in "name" (`song_name`, `Name`).
fn ends_with_name(column: &str) -> bool {
    column.to_lowercase().ends_with("name")
}

/// Words between "of" and the table it names.
const OF_DETERMINERS: &[&str] = &[
    "the", "all", "each", "every", "its", "their", "his", "her", "a", "an",
];

/// With "of" at `at`, the first token after it and the words that qualify the rows of
/// the table it names: determiners and "all", a count ("the names of the 3
/// departments"), words an intent cue took ("the name of the most recent movie") and values (`value_end` gives the end of a value starting at a
/// token). `None` without "of".
fn past_of(
    tokens: &[Token],
    used: &[bool],
    at: usize,
    value_end: impl Fn(usize) -> Option<usize>,
) -> Option<usize> {
    past_of_words(tokens, used, at, &["of"], value_end)
}

/// [`past_of`] after any of `words` ("of", or "for" where a name is asked for: "the
/// names for all regions").
fn past_of_words(
    tokens: &[Token],
    used: &[bool],
    at: usize,
    words: &[&str],
    value_end: impl Fn(usize) -> Option<usize>,
) -> Option<usize> {
    if !tokens.get(at).is_some_and(|t| t.is_any(words)) {
        return None;
    }
    let mut at = at + 1;
    loop {
        // "the names of the 3 departments": a count of the rows is passed too.
        let count = tokens.get(at).is_some_and(|t| {
            t.kind == TokenKind::Number
                && tokens
                    .get(at + 1)
                    .is_some_and(|n| n.kind == TokenKind::Word)
        });
        if tokens.get(at).is_some_and(|t| t.is_any(OF_DETERMINERS))
            || used.get(at).copied().unwrap_or(false)
            || count
        {
            at += 1;
        } else if let Some(end) = value_end(at) {
            at = end;
        } else {
            return Some(at);
        }
    }
}

/// The table of the column mention `n` names when it names the table too, after "of":
/// "budget of departments" read as one mention of `department.budget`.
fn table_inside(tokens: &[Token], index: &SchemaIndex, n: &Mention) -> Option<(usize, bool)> {
    let t = index.columns[n.column()?].table;
    let of = (n.start..n.end).find(|&i| tokens[i].is("of"))?;
    (of + 1..n.end)
        .any(|i| index.tables[t].stems.contains(&tokens[i].stem))
        .then_some((t, true))
}

/// Where a value mention starting at token `k` ends, if one does.
fn value_end(mentions: &[Mention], k: usize) -> Option<usize> {
    mentions
        .iter()
        .find(|n| n.start == k && matches!(n.target, Target::Value { .. }))
        .map(|v| v.end)
}

/// The table named right after "of" at `at` ("the name of its factory", "the names of
/// all female students"): past a determiner or "all" and values that qualify the rows,
/// the table, or a column qualified by its table's word ("movies directed"). Words of
/// intent cues between are passed too ("the name of the most recent movie"). With the
/// table, whether the words name the table itself (not one of its columns).
fn table_after_of(
    mentions: &[Mention],
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    at: usize,
) -> Option<(usize, bool)> {
    let at = past_of_words(tokens, used, at, &["of", "for"], |k| value_end(mentions, k))?;
    let n = mentions.iter().find(|n| n.start == at)?;
    match n.target {
        Target::Table(t) => Some((t, true)),
        Target::Column(o) => {
            let t = index.columns[o].table;
            index.tables[t]
                .stems
                .contains(&tokens[at].stem)
                .then_some((t, false))
        }
        Target::Value { .. } => None,
    }
}

/// "the quantity of incoming material rejected": a column name (`quantity`) whose words
/// are all in a longer column name (`quantity_rejected`) whose other words follow within
/// a few words is that longer column; mentions made only of those other words go.
fn complete_names(mentions: Vec<Mention>, tokens: &[Token], index: &SchemaIndex) -> Vec<Mention> {
    let mut absorbed: Vec<(usize, usize)> = Vec::new();
    let mut out = mentions;
    for m in &mut out {
        let Target::Column(c) = m.target else {
            continue;
        };
        let own = &index.columns[c].plain;
        if own.is_empty() {
            continue;
        }
        // Not past a conjunction: in "the president vote and the vice president vote"
        // "vice" belongs to the next column.
        let start = m.end;
        let end = (start..(start + 5).min(tokens.len()))
            .find(|i| tokens[*i].is_any(&["and", "or"]))
            .unwrap_or((start + 5).min(tokens.len()));
        let longer = index.columns.iter().enumerate().find_map(|(c2, col)| {
            if c2 == c || !col.is_measure() || col.plain.len() <= own.len() {
                return None;
            }
            if !own.iter().all(|w| col.plain.contains(w)) {
                return None;
            }
            let extra: Vec<&String> = col.plain.iter().filter(|w| !own.contains(w)).collect();
            let at: Vec<usize> = extra
                .iter()
                .map(|w| (start..end).find(|i| tokens[*i].has_stem(w)))
                .collect::<Option<Vec<usize>>>()?;
            Some((c2, at))
        });
        if let Some((c2, at)) = longer
            && index.columns[c].is_measure()
        {
            m.target = Target::Column(c2);
            m.alternatives.clear();
            for i in at {
                absorbed.push((i, i + 1));
            }
        }
    }
    out.retain(|m| !absorbed.iter().any(|(a, b)| *a <= m.start && m.end <= *b));
    out
}

/// Nouns that stand for "how much" after a measure's name.
const HEAD_NOUNS: &[&str] = &["quantity", "level", "figure", "amount", "total", "sum"];

/// `machine name`, `maintenance downtime`: a table word right before one of its columns
/// qualifies the column; a word that only partly names a table right before another
/// table's column modifies that column (`production lines`).
fn merge_qualified(mentions: Vec<Mention>, tokens: &[Token], index: &SchemaIndex) -> Vec<Mention> {
    let mut out: Vec<Mention> = Vec::new();
    for m in mentions {
        // "on-hand quantity": a generic measure noun after a measure's own name is that
        // measure, not another column that happens to hold the word.
        if let Some(prev) = out.last_mut()
            && prev.end == m.start
            && m.end == m.start + 1
            && prev.score >= 20
            && m.score <= 8
            && matches!(prev.target, Target::Column(p) if index.columns[p].is_measure())
            && matches!(m.target, Target::Column(_))
            && HEAD_NOUNS.contains(&tokens[m.start].stem.as_str())
        {
            prev.end = m.end;
            continue;
        }
        if let (Some(prev), Target::Column(c)) = (out.last(), &m.target)
            && prev.end == m.start
            && let Target::Table(t) = prev.target
        {
            let col_table = &index.tables[index.columns[*c].table];
            // A plural table word before a word is a subject and its verb
            // ("factories opened"), not a qualified column.
            let plural = tokens[prev.start..prev.end]
                .last()
                .is_some_and(|w| w.lower.ends_with('s') && w.lower != w.stem);
            let shares_words = tokens[prev.start..prev.end]
                .iter()
                .all(|w| col_table.stems.contains(&w.stem));
            let qualifies = index.columns[*c].table == t || prev.score <= 8 || shares_words;
            let verb = m.score <= 8
                && tokens[m.start..m.end]
                    .last()
                    .is_some_and(|w| w.lower.ends_with("ed"));
            if plural || verb || !qualifies {
                out.push(m);
                continue;
            }
            let start = prev.start;
            out.pop();
            out.push(Mention { start, ..m });
            continue;
        }
        out.push(m);
    }
    out
}

/// A mention's span and the table it names: (start, end, table, the column when it
/// names one).
type TableAt = (usize, usize, usize, Option<usize>);

/// The span and table of a mention of a table or a column (not of a value).
fn table_at(m: &Mention, index: &SchemaIndex) -> Option<TableAt> {
    match m.target {
        Target::Table(t) => Some((m.start, m.end, t, None)),
        Target::Column(c) => Some((m.start, m.end, index.columns[c].table, Some(c))),
        Target::Value { .. } => None,
    }
}

/// Picks one target per ambiguous mention: prefer a target whose table is mentioned
/// unambiguously elsewhere, then one adjacent by foreign key to such a table, then a
/// table's label column, then the smallest table and column name. A choice only the
/// names' order made (a guess) is taken again once the mentions after it are decided.
fn resolve_ties(
    mentions: &mut [Mention],
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    prefer: Option<TypeClass>,
) {
    const NEGATIONS: &[&str] = &[
        "no", "not", "never", "without", "none", "don", "doesn", "didn",
    ];
    let negated_after = |m: &Mention| {
        tokens[m.end..(m.end + 4).min(tokens.len())]
            .iter()
            .any(|t| t.is_any(NEGATIONS))
    };
    // Before a negation, a column that refers to the table of another reading of the same
    // words is not a reading of them: "rooms that have no reservations" are `Rooms`, not
    // `Reservations.Room`; "customer ids who don't have an account" are
    // `Customers.customer_id`, not `Accounts.customer_id` (which the account named after
    // the negation would put in context). Elsewhere it often is: "the grape of each
    // wine" is `wine.Grape`.
    let alternatives = |m: &Mention| -> Option<Vec<(Target, u32)>> {
        if !negated_after(m) {
            return (!m.alternatives.is_empty()).then(|| m.alternatives.clone());
        }
        (!m.alternatives.is_empty()).then(|| {
            let tables: Vec<usize> = m.alternatives.iter().map(|(t, _)| t.table(index)).collect();
            let kept: Vec<(Target, u32)> = m
                .alternatives
                .iter()
                .filter(|(t, _)| {
                    !matches!(t, Target::Column(c)
                        if tables.iter().any(|&to| to != index.columns[*c].table
                            && index.column_refers_to(*c, to)))
                })
                .cloned()
                .collect();
            if kept.is_empty() {
                m.alternatives.clone()
            } else {
                kept
            }
        })
    };
    let mut context: Vec<usize> = mentions
        .iter()
        .filter(|m| alternatives(m).is_none())
        .map(|m| m.target.table(index))
        .collect();
    let neighbours_of = |context: &[usize]| -> Vec<usize> {
        index
            .foreign_keys
            .iter()
            .flat_map(|fk| {
                let mut v = Vec::new();
                if context.contains(&fk.from) {
                    v.push(fk.to);
                }
                if context.contains(&fk.to) {
                    v.push(fk.from);
                }
                v
            })
            .collect()
    };
    // Tables named right beside each span ("the factory name", "the name of the ships"),
    // and columns other mentions name a value of ("performed … by Frank").
    let tables_at: Vec<TableAt> = mentions
        .iter()
        .filter(|m| m.alternatives.is_empty())
        .filter_map(|m| table_at(m, index))
        .collect();
    let valued: Vec<usize> = mentions
        .iter()
        .filter(|m| m.alternatives.is_empty())
        .filter_map(|m| match m.target {
            Target::Value { column, .. } => Some(column),
            _ => None,
        })
        .collect();
    let value_spans: Vec<(usize, usize)> = mentions
        .iter()
        .filter(|m| matches!(m.target, Target::Value { .. }))
        .map(|m| (m.start, m.end))
        .collect();
    // The target `alts` ranks first for the mention `m`, its score, and the runner-up when
    // only the names' order (the last two parts of the key) tells the two apart.
    let choose = |m: &Mention,
                  alts: &[(Target, u32)],
                  context: &[usize],
                  tables_at: &[TableAt]|
     -> Option<(Target, u32, Option<Target>)> {
        let neighbours = neighbours_of(context);
        let (start, end) = (m.start, m.end);
        // How many words from the nearest mention of the candidate's table (the very column
        // named by the word before or after counts as nearer still: "energy used" is the
        // energy column, "Los Angeles county" a value of the county); 4 and more: not near.
        let distance = |target: &Target, table: usize| {
            tables_at
                .iter()
                .filter(|&&(_, _, t, _)| t == table)
                .map(|&(s, e, _, c)| {
                    // Words between the two spans (0 when they touch or overlap).
                    let gap = start.saturating_sub(e).max(s.saturating_sub(end));
                    // A value's own column counts only when named right beside it ("Los
                    // Angeles county"; in "the friends of Bob" the column is what is asked).
                    let same_column = match target {
                        Target::Column(own) => c == Some(*own),
                        Target::Value { column, .. } => gap == 0 && c == Some(*column),
                        Target::Table(_) => false,
                    };
                    2 * gap + usize::from(!same_column)
                })
                .min()
                .unwrap_or(usize::MAX)
                .min(8)
        };
        // "the name of its factory", "the last names of female students": the table
        // named after "of" (past a determiner, "all" and values that qualify its rows).
        let of_table = past_of(tokens, used, end, |k| {
            value_spans.iter().find(|(s, _)| *s == k).map(|&(_, e)| e)
        })
        .and_then(|k| {
            tables_at
                .iter()
                .find(|&&(s, _, _, _)| s == k)
                .map(|&(_, _, t, _)| t)
        });
        let key = |(t, score): &(Target, u32)| {
            let table = t.table(index);
            let near = (of_table != Some(table), distance(t, table));
            let has_value = matches!(t, Target::Column(c) if valued.contains(c));
            let in_context = context.contains(&table);
            let adjacent = neighbours.contains(&table);
            let label = matches!(t, Target::Value { column, .. } | Target::Column(column) if index.label_column(table) == Some(*column));
            let is_table = matches!(t, Target::Table(_));
            let col_name = match t {
                Target::Column(c) | Target::Value { column: c, .. } => {
                    index.columns[*c].name.clone()
                }
                Target::Table(_) => String::new(),
            };
            let preferred = match (t, prefer) {
                (Target::Column(c) | Target::Value { column: c, .. }, Some(p)) => {
                    let class = index.columns[*c].class;
                    class == p || (p == TypeClass::Time && index.columns[*c].is_temporal())
                }
                _ => false,
            };
            (
                (near, !has_value),
                !in_context,
                !adjacent,
                std::cmp::Reverse(*score),
                !preferred,
                !is_table,
                !label,
                index.tables[table].name.clone(),
                col_name,
            )
        };
        let mut ranked: Vec<_> = alts.iter().map(|t| (key(t), t)).collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0));
        let (first, (best, score)) = ranked.first()?;
        let guess = ranked.get(1).and_then(|(second, (other, _))| {
            let same = (
                first.0, first.1, first.2, first.3, first.4, first.5, first.6,
            ) == (
                second.0, second.1, second.2, second.3, second.4, second.5, second.6,
            );
            (same && other != best).then(|| other.clone())
        });
        Some((best.clone(), *score, guess))
    };
    // In question order; each choice joins the context of the next, unless only the
    // names' order made it (a guess informs nothing).
    for m in mentions.iter_mut() {
        let Some(alts) = alternatives(m) else {
            continue;
        };
        if let Some((best, score, guess)) = choose(m, &alts, &context, &tables_at) {
            if guess.is_none() {
                context.push(best.table(index));
            }
            m.target = best;
            m.score = score;
            m.guess = guess;
        }
    }
    // A guess is taken again with what the mentions after it decided ("the names and ids
    // of documents that have the type code BK": `Documents`, once "ids of documents" and
    // "type code" are read).
    for k in 0..mentions.len() {
        if mentions[k].guess.is_none() {
            continue;
        }
        let Some(alts) = alternatives(&mentions[k]) else {
            continue;
        };
        let decided = |j: &usize| *j != k && mentions[*j].guess.is_none();
        let context: Vec<usize> = (0..mentions.len())
            .filter(decided)
            .map(|j| mentions[j].target.table(index))
            .collect();
        let tables_at: Vec<TableAt> = (0..mentions.len())
            .filter(decided)
            .filter_map(|j| table_at(&mentions[j], index))
            .collect();
        if let Some((best, score, None)) = choose(&mentions[k], &alts, &context, &tables_at) {
            let m = &mut mentions[k];
            m.target = best;
            m.score = score;
            m.guess = None;
        }
    }
}

/// The lower-case words of a datasource id, so a question naming the datasource does not
/// report them as unlinked.
pub(crate) fn datasource_words(id: &str) -> Vec<String> {
    split_ident(id)
}
