//! "the trips that started from the station", "the documents destroyed by each employee":
//! where two or more foreign keys join the same two tables (`trip.start_station_id` and
//! `trip.end_station_id`; `Destroyed_by_Employee_ID` and
//! `Destruction_Authorised_by_Employee_ID`), the words of one key's name that the others'
//! names lack are its role, and a question that says the role of exactly one of them
//! means that key. A key whose name says no role beyond the two tables' names
//! (`film.language_id` beside `film.original_language_id`) is the one meant when the
//! question says no other key's role.
//!
//! Nothing is chosen when the question says the words of two keys ("the start station and
//! the end station of each trip" needs both), when no key's role is said and none is
//! plain, or when the roles are only words of the tables' names: the plan then refuses to
//! guess, naming the keys.

use super::schema::SchemaIndex;
use crate::text::Token;

/// Words of key names that say no role.
const NO_ROLE: &[&str] = &[
    "id", "key", "code", "by", "of", "to", "the", "fk", "ref", "no",
];

/// Words that say the same role of a key between two places or two ends: where a trip,
/// a route or a flight starts, and where it ends. A key named with one (`SourceAirport`,
/// `start_station_id`, and `src_apid`, whose `src` the identifier stems spell out as
/// "source") is said by any of its group.
const ROLE_SYNONYMS: &[&[&str]] = &[
    &[
        "source",
        "origin",
        "start",
        "starting",
        "depart",
        "departing",
        "departure",
        "leave",
        "leaving",
    ],
    &[
        "destination",
        "end",
        "ending",
        "arrive",
        "arriving",
        "arrival",
    ],
];

/// `role` (stems) with the stems of every word that says the same role.
fn with_synonyms(mut role: Vec<String>) -> Vec<String> {
    for group in ROLE_SYNONYMS {
        let stems: Vec<String> = group.iter().map(|w| crate::text::stem(w)).collect();
        if role.iter().any(|w| stems.contains(w)) {
            for s in stems {
                if !role.contains(&s) {
                    role.push(s);
                }
            }
        }
    }
    role
}

/// For each group of two or more foreign keys between the same two tables (in either
/// direction), the key the question's words choose, if they choose one: the key (an
/// index into `index.foreign_keys`) and the tokens that said its role (none for the key
/// without a role).
pub(crate) fn roles_said(tokens: &[Token], index: &SchemaIndex) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    let mut seen = vec![false; index.foreign_keys.len()];
    for k in 0..index.foreign_keys.len() {
        if seen[k] {
            continue;
        }
        // The first of its group (an earlier one would have marked it seen).
        let group = index.parallel_keys(k);
        for &j in &group {
            seen[j] = true;
        }
        if group.len() >= 2
            && let Some(choice) = choose(tokens, index, &group)
        {
            out.push(choice);
        }
    }
    out
}

/// The role's words and, after one, the "by" of a key named with it
/// (`dispatched_by_clerk_id`: "shipments dispatched by the clerk …"), which then says the
/// role, not a grouping; unless "each", "every" or "per" follows ("destroyed by each
/// employee" groups by employee).
fn with_by(tokens: &[Token], index: &SchemaIndex, k: usize, at: &[usize]) -> Vec<usize> {
    let f = &index.foreign_keys[k];
    let named_with_by = f.from_columns.iter().any(|n| {
        crate::text::split_ident(n)
            .iter()
            .any(|w| w.eq_ignore_ascii_case("by"))
    });
    let mut out = at.to_vec();
    for &i in at {
        if named_with_by
            && tokens.get(i + 1).is_some_and(|t| t.is("by"))
            && !tokens
                .get(i + 2)
                .is_some_and(|t| t.is_any(&["each", "every", "per"]))
            && !out.contains(&(i + 1))
        {
            out.push(i + 1);
        }
    }
    out.sort_unstable();
    out
}

/// The stems of key `k`'s column names, without the words that say no role.
fn name_words(index: &SchemaIndex, k: usize) -> Vec<String> {
    let f = &index.foreign_keys[k];
    f.from_columns
        .iter()
        .filter_map(|name| {
            index.tables[f.from]
                .columns
                .iter()
                .find(|c| index.columns[**c].name.eq_ignore_ascii_case(name))
        })
        .flat_map(|c| index.columns[*c].stems.iter().cloned())
        // A number is no role: "Club_ID_1" and "Club_ID_2" must not be chosen by "2 wins".
        .filter(|w| !NO_ROLE.contains(&w.as_str()) && w.chars().any(char::is_alphabetic))
        .collect()
}

fn choose(tokens: &[Token], index: &SchemaIndex, group: &[usize]) -> Option<(usize, Vec<usize>)> {
    let words: Vec<Vec<String>> = group.iter().map(|k| name_words(index, *k)).collect();
    // Each key's own words: those no other key of the group has.
    let own: Vec<Vec<String>> = (0..group.len())
        .map(|g| {
            words[g]
                .iter()
                .filter(|w| (0..group.len()).all(|h| h == g || !words[h].contains(w)))
                .cloned()
                .collect()
        })
        .collect();
    let f = &index.foreign_keys[group[0]];
    let table_words =
        |w: &String| index.tables[f.from].stems.contains(w) || index.tables[f.to].stems.contains(w);
    // Its role: its own words that are not the tables' names, and the words that say
    // the same role ("departing" for `src_apid`, "arriving" for `end_station_id`).
    let roles: Vec<Vec<String>> = own
        .iter()
        .map(|ws| with_synonyms(ws.iter().filter(|w| !table_words(w)).cloned().collect()))
        .collect();
    let said = |ws: &[String]| -> Vec<usize> {
        (0..tokens.len())
            .filter(|i| ws.contains(&tokens[*i].stem))
            .collect()
    };
    // Whether a key other than `g` has its own words in the question (a table's name
    // word included: "who authorised the destruction and who destroyed the documents").
    let other_said = |g: usize| (0..group.len()).any(|h| h != g && !said(&own[h]).is_empty());
    let saying: Vec<(usize, Vec<usize>)> = (0..group.len())
        .filter_map(|g| {
            let at = said(&roles[g]);
            (!at.is_empty()).then_some((g, at))
        })
        .collect();
    match saying.as_slice() {
        [(g, at)] if !other_said(*g) => Some((group[*g], with_by(tokens, index, group[*g], at))),
        [] => {
            let plain: Vec<usize> = (0..group.len()).filter(|g| roles[*g].is_empty()).collect();
            match plain.as_slice() {
                [p] if !other_said(*p) && has_rows_of_its_own(index, group[*p], group) => {
                    Some((group[*p], Vec::new()))
                }
                _ => holder_of_pairs(tokens, index, group, &own),
            }
        }
        _ => holder_of_pairs(tokens, index, group, &own),
    }
}

/// Whether two stems are one word: equal, or one the other's start, by one letter (`liked`
/// stems to "lik", `likes` to "like") or from five letters on (`prereq`,
/// "prerequisites").
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.starts_with(short) && (short.len() >= 5 || long.len() <= short.len() + 1)
}

/// Words between "have"/"with" and the thing had that say how many or which ("at least
/// 3", "the greatest number of", "no", "any", "2 or more").
const QUANTITY_WORDS: &[&str] = &[
    "a", "an", "the", "any", "some", "no", "more", "most", "fewer", "fewest", "less", "least",
    "than", "or", "at", "exactly", "only", "many", "much", "number", "of", "greatest", "largest",
    "highest", "smallest", "lowest", "biggest", "one", "two", "three", "several", "other",
];

/// "students who have at least 3 friends", "the course with two prerequisites", "how many
/// likes does Kyle have": in a table of pairs (`Friend(student_id, friend_id)`,
/// `prereq(course_id, prereq_id)`) one key's only words are the table's own name (the
/// friend, the prerequisite: the other side) and the other key is whose pair it is. Where
/// the question says that name only as something had ("have", "has", "with", "without",
/// or "… does X have"), the rows it is about hold the pairs, so the join is by the
/// holder's key. Any other use of the name ("the friends of Kyle", "liked by someone")
/// chooses nothing.
fn holder_of_pairs(
    tokens: &[Token],
    index: &SchemaIndex,
    group: &[usize],
    own: &[Vec<String>],
) -> Option<(usize, Vec<usize>)> {
    let [a, b] = group else { return None };
    let (fa, fb) = (&index.foreign_keys[*a], &index.foreign_keys[*b]);
    if fa.from != fb.from || fa.to != fb.to || has_rows_of_its_own(index, *a, group) {
        return None;
    }
    // The other side: the key whose own words are all words of the pair table's name
    // (`friend_id` of `Friend`); the holder's are not (`student_id`).
    let of_pair_name = |g: usize| {
        !own[g].is_empty()
            && own[g]
                .iter()
                .all(|w| index.tables[fa.from].stems.iter().any(|s| same_word(s, w)))
    };
    let other = match (of_pair_name(0), of_pair_name(1)) {
        (true, false) => 0,
        (false, true) => 1,
        _ => return None,
    };
    let names = |t: &Token| own[other].iter().any(|w| same_word(&t.stem, w));
    let said: Vec<usize> = (0..tokens.len()).filter(|i| names(&tokens[*i])).collect();
    let had = |i: usize| {
        let before = tokens[..i]
            .iter()
            .rev()
            .find(|t| t.number().is_none() && !t.is_any(QUANTITY_WORDS));
        if before.is_some_and(|t| t.is_any(&["have", "has", "had", "having", "with", "without"])) {
            return true;
        }
        // "how many friends does Kyle have", "the number of likes Kyle has".
        !tokens
            .get(i + 1)
            .is_some_and(|t| t.is_any(&["of", "who", "that", "which"]))
            && tokens[i + 1..]
                .iter()
                .any(|t| t.is_any(&["have", "has", "had"]))
    };
    if said.is_empty() || !said.iter().all(|i| had(*i)) {
        return None;
    }
    // The holder's own words, where said, say its role ("students who have friends").
    let holder = 1 - other;
    let at = (0..tokens.len())
        .filter(|i| own[holder].contains(&tokens[*i].stem))
        .collect();
    Some((group[holder], at))
}

/// Whether key `k`'s table has rows of its own, a one-column primary key that none of the
/// `group`'s keys is (`film.film_id` beside `language_id` and `original_language_id`),
/// rather than being a table of pairs (`Friend(student_id, friend_id)`): in a pair the
/// key without a role is just the other side, which the question must say.
fn has_rows_of_its_own(index: &SchemaIndex, k: usize, group: &[usize]) -> bool {
    let table = index.foreign_keys[k].from;
    let mut pk = index.tables[table]
        .columns
        .iter()
        .copied()
        .filter(|c| index.columns[*c].is_pk);
    let (Some(pk), None) = (pk.next(), pk.next()) else {
        return false;
    };
    let name = &index.columns[pk].name;
    !group.iter().any(|g| {
        let f = &index.foreign_keys[*g];
        f.from == table && f.is_referencing_column(name)
    })
}
