//! Text helpers of the offline planner: tokenising a question, splitting identifiers
//! (`snake_case`, `camelCase`), light stemming, stop words and a small built-in synonym list
//! for analytical words. Everything is pure and deterministic. The word lists are data,
//! in `words.rs`.

mod words;

use words::{
    ABBREVIATIONS, AGENT_ENDINGS, ANTONYMS, FUNCTION_WORDS, IRREGULAR_PAST, IRREGULAR_PLURAL,
    MONEY_WORDS, PHRASAL, RATE_UNITS, STOP_WORDS, SYNONYMS,
};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// Letters (and digits mixed in): a word.
    Word,
    /// An integer or decimal number.
    Number,
    /// An ISO date `YYYY-MM-DD` (optionally with a time).
    Date,
    /// Text between quotes, kept whole.
    Quoted,
}

/// One token of a question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// The text as written (without quotes for quoted tokens).
    pub(crate) raw: String,
    /// Lower case.
    pub(crate) lower: String,
    /// Lower case, stemmed and mapped through the synonym list.
    pub(crate) stem: String,
    /// The kind.
    pub(crate) kind: TokenKind,
    /// Character offsets `[start, end)` in the text.
    pub(crate) pos: (usize, usize),
}

impl Token {
    /// The numeric value of a number token.
    pub(crate) fn number(&self) -> Option<f64> {
        if self.kind == TokenKind::Number {
            self.raw.replace(',', "").parse().ok()
        } else {
            None
        }
    }

    /// True when the token is this word (lower case).
    pub(crate) fn is(&self, word: &str) -> bool {
        self.kind == TokenKind::Word && self.lower == word
    }

    /// Whether the token, stemmed as names are (with or without the synonym list), is
    /// the stem `w` of a name word.
    pub(crate) fn has_stem(&self, w: &str) -> bool {
        self.stem == w || stem(&self.lower) == w
    }

    /// True when the token is one of `words`.
    pub(crate) fn is_any(&self, words: &[&str]) -> bool {
        self.kind == TokenKind::Word && words.contains(&self.lower.as_str())
    }
}

/// Splits a question into tokens: words, numbers (`1,200`, `3.5`), ISO dates and quoted
/// strings. Punctuation separates tokens and is dropped; apostrophes inside a word (`'s`)
/// end it.
pub(crate) fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Typographic quotes open and close apart (“dar”, ‘Donor’).
        let close = match c {
            '“' => Some('”'),
            '‘' => Some('’'),
            '"' => Some('"'),
            '\'' if i == 0 || !chars[i - 1].is_alphanumeric() => Some('\''),
            _ => None,
        };
        if let Some(close) = close {
            if let Some(end) = chars[i + 1..].iter().position(|d| *d == close) {
                let raw: String = chars[i + 1..i + 1 + end].iter().collect();
                if !raw.trim().is_empty() {
                    out.push(Token {
                        lower: raw.to_lowercase(),
                        stem: raw.to_lowercase(),
                        raw,
                        kind: TokenKind::Quoted,
                        pos: (i + 1, i + 1 + end),
                    });
                }
                i += end + 2;
                continue;
            }
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], '.' | ',' | '-' | ':' | 'T')
                        && i + 1 < chars.len()
                        && chars[i + 1].is_ascii_digit()))
            {
                i += 1;
            }
            // A trailing letter run (`5th`, `2nd`) stays with the number.
            let raw: String = chars[start..i].iter().collect();
            let kind = if is_iso_date_prefix(&raw) {
                TokenKind::Date
            } else if raw.contains('-') || raw.contains(':') || raw.contains('T') {
                TokenKind::Word
            } else {
                TokenKind::Number
            };
            let raw = if kind == TokenKind::Number && raw.contains(',') && !thousands(&raw) {
                // `1,2` is a list, not a number: keep the first part.
                raw.split(',').next().unwrap_or_default().to_owned()
            } else {
                raw
            };
            let end = start + raw.chars().count();
            while i < chars.len() && chars[i].is_alphabetic() {
                i += 1;
            }
            out.push(Token {
                lower: raw.to_lowercase(),
                stem: raw.to_lowercase(),
                raw,
                kind,
                pos: (start, end),
            });
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let raw: String = chars[start..i].iter().collect();
            let lower = raw.to_lowercase();
            let pos = (start, i);
            // `'s` after a word: skip it.
            if i + 1 < chars.len() && chars[i] == '\'' && chars[i + 1] == 's' {
                i += 2;
            }
            // "SKUs", "IDs": the plural of an upper-case acronym.
            let acronym = raw
                .strip_suffix('s')
                .filter(|a| a.chars().count() >= 2 && a.chars().all(|c| c.is_ascii_uppercase()));
            out.push(Token {
                stem: match acronym {
                    Some(a) => a.to_lowercase(),
                    None => canonical(&lower),
                },
                lower,
                raw,
                kind: TokenKind::Word,
                pos,
            });
            continue;
        }
        if matches!(c, '<' | '>' | '=' | '!') {
            let start = i;
            while i < chars.len() && matches!(chars[i], '<' | '>' | '=' | '!') {
                i += 1;
            }
            let raw: String = chars[start..i].iter().collect();
            out.push(Token {
                lower: raw.clone(),
                stem: raw.clone(),
                raw,
                kind: TokenKind::Word,
                pos: (start, i),
            });
            continue;
        }
        i += 1;
    }
    phrasal_verbs(&mut out);
    ages(&mut out);
    out
}

/// "20 years old" and "how old" say an age: "years old" becomes one token, and it and
/// the "old" of "how old" stem to `age` (the word alone, "old", is left to its other
/// senses: "from old to young", "the old name").
fn ages(tokens: &mut Vec<Token>) {
    let mut i = 1;
    while i < tokens.len() {
        if tokens[i].lower == "old" {
            if tokens[i - 1].is_any(&["years", "year"]) {
                let years = tokens.remove(i - 1);
                i -= 1;
                let old = &mut tokens[i];
                old.raw = format!("{} {}", years.raw, old.raw);
                old.lower = format!("{} old", years.lower);
                old.pos.0 = years.pos.0;
                old.stem = "age".to_owned();
            } else if tokens[i - 1].is("how") {
                tokens[i].stem = "age".to_owned();
            }
        }
        i += 1;
    }
}

/// Gives the first word of a phrasal verb the stem of the verb it means.
fn phrasal_verbs(tokens: &mut [Token]) {
    for i in 1..tokens.len() {
        let to = PHRASAL
            .iter()
            .find(|(x, y, _)| *x == tokens[i - 1].lower && *y == tokens[i].lower)
            .map(|(_, _, to)| canonical(to));
        if let Some(to) = to {
            tokens[i - 1].stem = to;
        }
    }
}

/// The original text of tokens `[from, to)`.
pub(crate) fn source_text(text: &str, tokens: &[Token], from: usize, to: usize) -> String {
    let (Some(a), Some(b)) = (tokens.get(from), tokens.get(to.saturating_sub(1))) else {
        return String::new();
    };
    text.chars()
        .skip(a.pos.0)
        .take(b.pos.1.saturating_sub(a.pos.0))
        .collect()
}

fn thousands(raw: &str) -> bool {
    raw.split(',').skip(1).all(|g| g.len() == 3)
}

fn is_iso_date_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

pub(crate) use nl2sql_state::ident_words as split_ident;

/// Whether something besides one space (a comma, a parenthesis, a quote) stands between
/// token `i` and the token before it: commas are not tokens, so "ids, names" and "ids
/// names" differ only here.
pub(crate) fn punctuated_before(tokens: &[Token], i: usize) -> bool {
    i > 0 && i < tokens.len() && tokens[i].pos.0 > tokens[i - 1].pos.1 + 1
}

/// Where the words that hold a value start when "in" and maybe a possessive stand at
/// `j` ("'dar' in their names", "'Oil' in its medium", "in the title"): the token after
/// them.
pub(crate) fn holder_after(tokens: &[Token], j: usize) -> Option<usize> {
    if !tokens.get(j)?.is("in") {
        return None;
    }
    let possessive = tokens
        .get(j + 1)
        .is_some_and(|t| t.is_any(&["their", "its", "the", "his", "her"]));
    Some(j + 1 + usize::from(possessive))
}

/// Whether token `i` is the "or" of a pronoun pair ("he or she", "his or her", "him or
/// her"): one person of either gender, not a choice between two conditions.
pub(crate) fn pronoun_or(tokens: &[Token], i: usize) -> bool {
    const PRONOUNS: &[&str] = &["he", "she", "his", "her", "hers", "him"];
    i > 0
        && tokens[i].is("or")
        && tokens[i - 1].is_any(PRONOUNS)
        && tokens.get(i + 1).is_some_and(|t| t.is_any(PRONOUNS))
}

/// Light stemming: plural to singular, `-ing`/`-ed`, a final `e`; the same rules on both
/// sides make `machines`/`machine`, `produced`/`produce` and `categories`/`category` meet.
pub(crate) fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    // Irregular past forms meet their verbs: "still sold" is what "we still sell".
    if let Some((_, verb)) = IRREGULAR_PAST.iter().find(|(past, _)| *past == w) {
        return (*verb).to_owned();
    }
    // Irregular plurals meet their singulars: "each person" asks about `people`.
    if let Some((_, one)) = IRREGULAR_PLURAL.iter().find(|(many, _)| *many == w) {
        return (*one).to_owned();
    }
    if w.len() == 3
        && w.ends_with('s')
        && ![
            "has", "was", "its", "his", "yes", "bus", "gas", "ups", "ads", "les",
        ]
        .contains(&w.as_str())
    {
        return w[..2].to_owned();
    }
    if w.len() <= 3 || !w.chars().all(|c| c.is_alphabetic()) {
        return w;
    }
    // A plural gerund noun meets its singular: "buildings" is what `Building` holds
    // ("building" loses its "-ing" below, so the plural must too).
    if let Some(b) = w.strip_suffix("ings")
        && b.len() >= 3
    {
        return stem(&format!("{b}ing"));
    }
    let mut s = if let Some(b) = w.strip_suffix("ies") {
        ie_singular(b)
    } else if let Some(b) = w.strip_suffix("sses") {
        format!("{b}ss")
    } else if w.ends_with("ses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes")
    {
        w[..w.len() - 2].to_owned()
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w[..w.len() - 1].to_owned()
    } else if let Some(b) = w.strip_suffix("ied") {
        format!("{b}y")
    } else if let Some(b) = w.strip_suffix("ing").filter(|b| b.len() >= 3) {
        // "operating temperature" is not the operator: a gerund keeps its ending where the
        // agent-noun rule below would make it meet `-or` nouns.
        let b = undouble(b);
        if b.len() >= 5 && AGENT_ENDINGS.iter().any(|e| b.ends_with(e)) {
            w.clone()
        } else {
            b
        }
    } else if let Some(b) = w.strip_suffix("ed").filter(|b| b.len() >= 3) {
        undouble(b)
    } else if let Some(b) = w.strip_suffix("er").filter(|b| b.len() >= 5) {
        b.to_owned()
    } else {
        w.clone()
    };
    if s.len() >= 7 && s.ends_with("er") && w.ends_with("ers") {
        s.truncate(s.len() - 2);
    }
    // Agent nouns in `-or` meet their verbs: `operator`/`operated`, `inspector`/`inspected`,
    // `supervisor`/`supervised`. (`-ier` nouns are left alone: `supplier` → `supply`
    // would make "supplier" a word of a datasource named `supply`.)
    if let Some(b) = s
        .strip_suffix("or")
        .filter(|b| b.len() >= 5 && AGENT_ENDINGS.iter().any(|e| b.ends_with(e)))
    {
        s = b.to_owned();
    }
    if s.len() > 4 && s.ends_with('e') {
        s.pop();
    }
    s
}

/// The singular of a plural in `-ies` whose stem is `b`: `-y` (`categories`), or `-ie`
/// for the nouns that end so (`movies`, `cookies`, `calories`).
fn ie_singular(b: &str) -> String {
    const IE_NOUNS: &[&str] = &[
        "movie", "cookie", "calorie", "rookie", "goalie", "prairie", "zombie", "selfie", "brownie",
        "hoodie", "sortie", "freebie", "pixie", "genie", "lie", "tie", "pie", "die",
    ];
    let ie = format!("{b}ie");
    if IE_NOUNS.iter().any(|n| n.eq_ignore_ascii_case(&ie)) {
        ie
    } else {
        format!("{b}y")
    }
}

fn undouble(b: &str) -> String {
    let bytes = b.as_bytes();
    let n = bytes.len();
    if n >= 2 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z') {
        b[..n - 1].to_owned()
    } else {
        b.to_owned()
    }
}

/// The stem of `word` after the synonym list.
pub(crate) fn canonical(word: &str) -> String {
    let lower = word.to_lowercase();
    match SYNONYMS.iter().find(|(w, _)| *w == lower) {
        Some((_, to)) => stem(to),
        None => stem(&lower),
    }
}

/// True for a word that names an amount of money ("revenue", "spend").
pub(crate) fn is_money_word(word: &str) -> bool {
    MONEY_WORDS.contains(&word)
}

/// The adjective phrase `word` is the negation of, if listed.
pub(crate) fn antonym_of(word: &str) -> Option<&'static str> {
    ANTONYMS.iter().find(|(w, _)| *w == word).map(|(_, a)| *a)
}

/// Verbs that relate two things without a past-tense `-ed` ending ("products made by",
/// "students who belong to").
const RELATING_VERBS: &[&str] = &[
    "made",
    "took",
    "taken",
    "written",
    "wrote",
    "won",
    "held",
    "sold",
    "bought",
    "built",
    "given",
    "belong",
    "belongs",
    "involve",
    "involves",
    "contain",
    "contains",
    "use",
    "uses",
    "own",
    "owns",
    "teach",
    "teaches",
    "taught",
    "used",
    "correspond",
    "corresponds",
    "serve",
    "serves",
];

/// True for a verb that may only relate two things the question names: a past participle
/// in `-ed` ("hosted", "directed"), or one of a short list of others ("made", "belongs").
pub(crate) fn is_relating_verb(word: &str) -> bool {
    is_ed_participle(word) || RELATING_VERBS.contains(&word)
}

/// True for a past participle in `-ed` ("hosted", "climbed"; not "red" or "bed").
pub(crate) fn is_ed_participle(word: &str) -> bool {
    word.len() > 4 && word.ends_with("ed")
}

/// Words that put a date after a verb ("made before 2000", "produced in 2008").
const DATE_PREPOSITIONS: &[&str] = &["in", "before", "after", "since", "during", "between"];

/// The year or ISO date that dates the word at `i`: a date preposition right after it,
/// then within four words ("in the year of 2010" allowed) a year or a date ("reported
/// before 1978-06-26", "produced in 2008").
pub(crate) fn dated_after(tokens: &[Token], i: usize) -> Option<&Token> {
    if !tokens
        .get(i + 1)
        .is_some_and(|t| t.is_any(DATE_PREPOSITIONS))
    {
        return None;
    }
    tokens
        .iter()
        .skip(i + 2)
        .take(4)
        .take_while(|t| t.kind != TokenKind::Word || t.is_any(&["the", "year", "of"]))
        .find(|t| match t.kind {
            TokenKind::Number => t
                .number()
                .is_some_and(|y| y.fract() == 0.0 && (1000.0..3000.0).contains(&y)),
            TokenKind::Date => true,
            _ => false,
        })
}

/// True for a grammar word that never links to the schema.
pub(crate) fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// True for a word that carries no schema meaning on its own (grammar and intent words);
/// such words may still link when they spell a whole table or column name.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word) || month_number(word).is_some() || number_word(word).is_some()
}

/// Month names and abbreviations → 1..12.
pub(crate) fn month_number(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let w = word.to_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() == 3 && w != "may" && m.starts_with(&w)))
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// Small number words → value (`five` → 5).
pub(crate) fn number_word(word: &str) -> Option<i64> {
    const WORDS: [&str; 12] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "twenty",
    ];
    let w = word.to_lowercase();
    match WORDS.iter().position(|x| *x == w) {
        Some(11) => Some(20),
        Some(i) => i64::try_from(i).ok(),
        None => match w.as_str() {
            "dozen" => Some(12),
            "fifteen" => Some(15),
            "hundred" => Some(100),
            _ => None,
        },
    }
}

/// An English singular of a plural table-like name (`factories` → `factory`), for answers
/// and aliases.
pub(crate) fn singular(word: &str) -> String {
    if let Some((_, one)) = IRREGULAR_PLURAL
        .iter()
        .find(|(many, _)| many.eq_ignore_ascii_case(word))
    {
        (*one).to_owned()
    } else if let Some(b) = word.strip_suffix("ies") {
        ie_singular(b)
    } else if word.ends_with("sses")
        || word.ends_with("xes")
        || word.ends_with("ches")
        || word.ends_with("shes")
    {
        word[..word.len() - 2].to_owned()
    } else if word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        word[..word.len() - 1].to_owned()
    } else {
        word.to_owned()
    }
}

/// An English plural of a singular noun (`factory` → `factories`).
pub(crate) fn plural(word: &str) -> String {
    if let Some((many, _)) = IRREGULAR_PLURAL
        .iter()
        .find(|(many, one)| *many != "persons" && one.eq_ignore_ascii_case(word))
    {
        (*many).to_owned()
    } else if word.ends_with('s') {
        word.to_owned()
    } else if let Some(b) = word.strip_suffix('y')
        && !b.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{b}ies")
    } else if word.ends_with("ch") || word.ends_with("sh") || word.ends_with('x') {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

/// The unit of a rate adjective: an `-ly` adjective of a unit of time is "per" that unit
/// ("hourly" → "hour", "daily" → "day", "quarterly" → "quarter"); "annual" and "yearly"
/// are per year.
pub(crate) fn rate_unit(word: &str) -> Option<&'static str> {
    let w = word.to_lowercase();
    if matches!(w.as_str(), "annual" | "annually" | "yearly") {
        return Some("year");
    }
    let base = w.strip_suffix("ly")?;
    let base = match base.strip_suffix('i') {
        Some(b) => format!("{b}y"),
        None => base.to_owned(),
    };
    RATE_UNITS.iter().find(|u| **u == base).copied()
}

/// An identifier's words with conventional abbreviations spelt out, also where the case
/// split an abbreviation's first letter off (`LName` → `l name` → `last name`).
fn spelt_out(name: &str) -> Vec<String> {
    let abbreviation = |w: &str| {
        ABBREVIATIONS
            .iter()
            .find(|(a, _)| *a == w)
            .map(|(_, ws)| *ws)
    };
    let words = split_ident(name);
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let joined = (w.len() == 1)
            .then(|| words.get(i + 1))
            .flatten()
            .and_then(|next| abbreviation(&format!("{w}{next}")));
        if let Some(spelt) = joined {
            out.extend(spelt.iter().map(|s| (*s).to_owned()));
            i += 2;
            continue;
        }
        match abbreviation(w) {
            Some(spelt) => out.extend(spelt.iter().map(|s| (*s).to_owned())),
            None => out.push(w.clone()),
        }
        i += 1;
    }
    out
}

/// The stems of an identifier's words (`quantity_produced` → `quantity produc`;
/// abbreviations spelt out: `Fname` → `first name`).
pub(crate) fn ident_stems(name: &str) -> Vec<String> {
    spelt_out(name).iter().map(|w| canonical(w)).collect()
}

/// The stems of an identifier's words without the synonym list (`unit_cost` → `unit cost`).
pub(crate) fn plain_stems(name: &str) -> Vec<String> {
    spelt_out(name).iter().map(|w| stem(w)).collect()
}

/// The stems of a free text's words, stop words removed.
pub(crate) fn text_stems(text: &str) -> Vec<String> {
    tokenize(text)
        .into_iter()
        .filter(|t| t.kind == TokenKind::Word && !is_stop_word(&t.lower))
        .map(|t| t.stem)
        .collect()
}
