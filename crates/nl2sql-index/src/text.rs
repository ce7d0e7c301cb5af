//! The tokeniser of the lexical index (spec: retrieval.md §5.3): identifiers are split on
//! `_`, `.`, digits and case changes, lower-cased, stop words dropped, and each term is
//! lightly stemmed (plural to singular).

/// Words too common in questions and chunk labels to help ranking.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "did", "do", "does",
    "each", "for", "from", "get", "give", "had", "has", "have", "how", "in", "into", "is", "it",
    "its", "list", "many", "me", "much", "my", "of", "on", "or", "our", "per", "show", "that",
    "the", "their", "there", "these", "this", "those", "to", "was", "were", "what", "when",
    "where", "which", "who", "whose", "why", "with",
];

/// The terms of `text`, in order, with repeats: words are split on every character that is
/// not a letter or digit (so on `_`, `.`, spaces and punctuation), then at letter/digit
/// boundaries and case changes (`camelCase`, `HTTPServer`); each piece is lower-cased and
/// stemmed; stop words and single letters are dropped. Digit runs are kept as terms.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        for piece in split_identifier(word) {
            let lower = piece.to_lowercase();
            let is_letter = lower.chars().all(char::is_alphabetic);
            if is_letter && lower.chars().count() < 2 {
                continue;
            }
            if STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
                continue;
            }
            terms.push(stem(&lower));
        }
    }
    terms
}

/// The light stemmer: plural endings become singular (`categories` → `category`,
/// `batches` → `batch`, `processes` → `process`, `machines` → `machine`); words ending in
/// `ss`, `us` or `is`, and words of three letters or fewer, are kept as they are.
pub fn stem(word: &str) -> String {
    let len = word.chars().count();
    if len <= 3 || !word.is_ascii() {
        return word.to_owned();
    }
    if let Some(base) = word.strip_suffix("ies")
        && len > 4
    {
        return format!("{base}y");
    }
    if word.ends_with("sses") {
        return word[..word.len() - 2].to_owned();
    }
    for suffix in ["xes", "ches", "shes"] {
        if word.ends_with(suffix) {
            return word[..word.len() - 2].to_owned();
        }
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return word.to_owned();
    }
    match word.strip_suffix('s') {
        Some(base) => base.to_owned(),
        None => word.to_owned(),
    }
}

/// Splits one alphanumeric word at letter/digit boundaries and case changes.
fn split_identifier(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let boundary = (prev.is_ascii_digit() != c.is_ascii_digit())
            || (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            pieces.push(&word[start..pos]);
            start = pos;
        }
    }
    if start < word.len() {
        pieces.push(&word[start..]);
    }
    pieces
}
