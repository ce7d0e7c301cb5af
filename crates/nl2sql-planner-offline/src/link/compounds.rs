//! Words the schema writes as one: "the last name of each band member" over
//! `Band.Lastname`, "high schoolers" over `Highschooler`, "post code" over `postcode`. A
//! pair of adjacent question words whose concatenation is a word of a table's or a
//! column's name, where the schema does not name both words alone, is read as that one
//! word: otherwise neither word links ("last" would even read as a ranking in time).

use super::schema::SchemaIndex;
use crate::text::{Token, TokenKind, canonical, tokenize};

/// The tokens of `question`, with each such pair joined into one word token spanning
/// both: what the analysis and the coverage read.
pub(crate) fn question_tokens(question: &str, index: &SchemaIndex) -> Vec<Token> {
    let tokens = tokenize(question);
    let named = |stem: &str| index.name_stems.contains(stem);
    let chars: Vec<char> = question.chars().collect();
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter().peekable();
    while let Some(a) = tokens.next() {
        let joined = tokens.peek().and_then(|b| {
            let apart = chars.get(a.pos.1..b.pos.0)?;
            let words = a.kind == TokenKind::Word
                && b.kind == TokenKind::Word
                && a.lower.chars().all(char::is_alphabetic)
                && b.lower.chars().all(char::is_alphabetic)
                && a.lower.len() >= 2
                && b.lower.len() >= 2;
            let lower = format!("{}{}", a.lower, b.lower);
            let stem = canonical(&lower);
            // The stem keeps the second word ("code ED" stems to `code`: no compound),
            // and neither word is a code in capitals.
            let whole = stem.len() >= a.lower.len() + b.lower.len().min(3);
            let capitals = |t: &Token| t.raw.chars().all(|c| c.is_ascii_uppercase());
            (words
                && whole
                && !capitals(&a)
                && !capitals(b)
                && matches!(apart, [' '] | ['-'])
                && named(&stem)
                && !(named(&a.stem) && named(&b.stem)))
            .then(|| Token {
                raw: chars[a.pos.0..b.pos.1].iter().collect(),
                lower,
                stem,
                kind: TokenKind::Word,
                pos: (a.pos.0, b.pos.1),
            })
        });
        match joined {
            Some(t) => {
                tokens.next();
                out.push(t);
            }
            None => out.push(a),
        }
    }
    out
}
