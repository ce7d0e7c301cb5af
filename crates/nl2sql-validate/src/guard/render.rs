//! The guard's side of "execute what was validated": executable comments are refused
//! before parsing, and an approved tree is rendered to the text the engine will run,
//! which must parse back to the same tree.

use std::ops::ControlFlow;

use nl2sql_state::{Dialect, ErrorCode};
use rustc_hash::FxHashSet;
use sqlparser::ast::{Expr, Statement, Value, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer, Whitespace};

use super::{GuardIssue, SqlSpan, parser_dialect};

/// Comments whose text an engine of the MySQL family executes: `/*! … */` and
/// `/*!50000 … */` (MySQL and MariaDB), `/*M! … */` and `/*M!100000 … */` (MariaDB).
///
/// In the `mysql` and `generic` dialects sqlparser already reads `/*! … */` as code (so
/// the checks see it); what is left as a comment here is refused in every dialect. The
/// engine never receives comments anyway (the rendering drops them); refusing them says
/// so to the caller instead of silently running less than was written.
pub(crate) fn executable_comments(tokens: &[TokenWithSpan]) -> Vec<GuardIssue> {
    tokens
        .iter()
        .filter_map(|t| match &t.token {
            Token::Whitespace(Whitespace::MultiLineComment(body)) => {
                let marker = if body.starts_with('!') {
                    Some("/*! … */: MySQL and MariaDB run the text inside it")
                } else if body.starts_with("M!") || body.starts_with("m!") {
                    Some("/*M! … */: MariaDB runs the text inside it")
                } else {
                    None
                };
                marker.map(|what| {
                    GuardIssue::new(
                        ErrorCode::SecurityViolation,
                        format!(
                            "executable comment {what}; write the SQL without executable comments"
                        ),
                        SqlSpan::from_parser(t.span),
                    )
                })
            }
            _ => None,
        })
        .collect()
}

/// The caller's statement: its text and the tokens the guard parsed it from.
#[derive(Clone, Copy)]
pub(crate) struct Original<'a> {
    pub(crate) text: &'a str,
    pub(crate) tokens: &'a [TokenWithSpan],
}

/// Renders `statement` to the text the engine will run, and proves that the text reads
/// back as the same tree in `dialect`.
///
/// The proof, cheapest first: the rendering is the caller's text (nothing to prove); or
/// the tree is the one parsed from the caller's tokens, unchanged, and the rendering is
/// the caller's text respaced where no tokenizer can tell ([`respaced`]: it tokenizes to
/// the caller's tokens without being tokenized again); or, the same tree, the rendering
/// tokenizes to the same tokens ([`same_reading`]: the parser, a function of the tokens,
/// reads both the same); or the rendering parses to a tree equal to the checked one.
///
/// The tree is changed in place, not copied (the guard is done with it): double-quoted
/// names the guard read as strings (SQLite) become string literals for good, since that
/// is the tree that must read back; string values are swapped for markers while the tree
/// is printed, then put back.
pub(crate) fn render(
    dialect: Dialect,
    statement: &mut Statement,
    original: Original<'_>,
    strings: &FxHashSet<(u64, u64)>,
) -> Result<String, GuardIssue> {
    let parser_dialect = parser_dialect(dialect);
    let unchanged = strings.is_empty();
    if !unchanged {
        let _ = statement.visit(&mut SpellStrings(strings));
    }
    let text = print(
        statement,
        parser_dialect.supports_string_literal_backslash_escape(),
    );
    let statement = &*statement;
    if text == original.text.trim() {
        return Ok(text);
    }
    let query = unchanged && matches!(statement, Statement::Query(_));
    if query && respaced(original, &text) {
        return Ok(text);
    }
    let reparsed = Tokenizer::new(parser_dialect.as_ref(), &text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(ParserError::from)
        .and_then(|tokens| {
            if query && same_reading(original.tokens, &tokens) {
                return Ok(None);
            }
            Parser::new(parser_dialect.as_ref())
                .with_tokens_with_locations(tokens)
                .parse_statements()
                .map(Some)
        });
    match reparsed {
        Ok(None) => Ok(text),
        Ok(Some(statements)) if statements.len() == 1 && statements[0] == *statement => Ok(text),
        _ => Err(GuardIssue::new(
            ErrorCode::UnsupportedSql,
            format!(
                "the statement cannot be rendered in the {dialect} dialect so that it reads back the same; write it more plainly (no unusual literals or escapes)"
            ),
            None,
        )),
    }
}

/// Whether the parser reads `a` and `b` the same: the same tokens in the same order (a
/// trailing `;` aside), with whitespace in the same places wherever the parser looks for
/// it ([`whitespace_read`]). Comments never compare equal: a dialect may read them (MySQL's
/// optimizer hints).
pub(crate) fn same_reading(a: &[TokenWithSpan], b: &[TokenWithSpan]) -> bool {
    match (significant(a), significant(b)) {
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(&b)
                    .enumerate()
                    .all(|(i, ((sa, ta), (sb, tb)))| {
                        ta == tb
                            && (sa == sb || !whitespace_read(i.checked_sub(1).map(|p| a[p].1), ta))
                    })
        }
        _ => false,
    }
}

/// Whether the parser can tell whether whitespace comes before `token` (after `prev`).
/// It skips whitespace everywhere but in the places where sqlparser 0.63 reads the next
/// raw token (`next_token_no_skip`, `peek_token_no_skip`): a placeholder's name right
/// after `:` or `@`, and BigQuery's hyphenated names (`a-1`), on either side of a `-`.
/// Everywhere else the amount of whitespace, and whether there is any, is the tokenizer's
/// business only, and the tokens already compare equal. (A test pins the sqlparser version
/// this list was read from.)
fn whitespace_read(prev: Option<&Token>, token: &Token) -> bool {
    matches!(token, Token::Minus)
        || matches!(
            prev,
            None | Some(Token::Colon | Token::AtSign | Token::Minus)
        )
}

/// Whether `rendering` is the caller's text with only the whitespace between its tokens
/// changed, in ways that leave every token as it was and whitespace wherever the parser
/// reads it: then `rendering` tokenizes to the caller's tokens up to whitespace, as
/// [`same_reading`] asks, without being tokenized.
///
/// Each of the caller's tokens must appear in `rendering` as the same text, in order;
/// between two of them, a run of ASCII whitespace (space, tab, line break) may become one
/// space, or nothing after `(` or before `)` and `,` where the parser does not read
/// whitespace ([`whitespace_read`]); a trailing `;` and the whitespace around the
/// statement may go. And every token must be a [`plain`] one, in an ASCII text (so the
/// whitespace is ASCII too). Why that is enough, from
/// sqlparser 0.63's tokenizer (`next_token`): a plain token's lexing looks at most at the
/// character after it, and only asks whether it is one of some punctuation or operator
/// characters, a digit, an identifier character or any whitespace — never which ASCII
/// whitespace it is, and none of those classes holds `)`, `,` or ASCII whitespace (a test
/// checks the identifier and operator classes of every dialect). The only previous token a
/// lexing asks about is a word or a period, never whitespace or `(`. So the same tokens are
/// read, each with the same text; the parser reads whitespace only where
/// [`whitespace_read`] says, where it is kept. (Whitespace the tokenizer does tell apart,
/// `#`, `@`, `@@` before a space and comments ending at a line break, comes after tokens
/// that are not plain.)
pub(crate) fn respaced(original: Original<'_>, rendering: &str) -> bool {
    let Some(mut caller) = Cursor::new(original.text) else {
        return false;
    };
    let mut rest = rendering;
    let mut prev: Option<&Token> = None;
    let mut gap = false;
    let mut tokens = original.tokens.iter();
    while let Some(t) = tokens.next() {
        if matches!(t.token, Token::EOF) {
            break;
        }
        let Some(text) = caller.take(t.span.start, t.span.end) else {
            return false;
        };
        match &t.token {
            token if blank(token) => {
                if !text
                    .bytes()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                {
                    return false;
                }
                gap = true;
            }
            Token::SemiColon
                if tokens
                    .clone()
                    .all(|t| matches!(t.token, Token::EOF) || blank(&t.token)) =>
            {
                break;
            }
            token if plain(token) => {
                if let Some(prev) = prev
                    && gap
                {
                    match rest.strip_prefix(' ') {
                        Some(after) => rest = after,
                        None if (matches!(prev, Token::LParen)
                            || matches!(token, Token::RParen | Token::Comma))
                            && !whitespace_read(Some(prev), token) => {}
                        None => return false,
                    }
                }
                match rest.strip_prefix(text) {
                    Some(after) => rest = after,
                    None => return false,
                }
                prev = Some(token);
                gap = false;
            }
            _ => return false,
        }
    }
    rest.is_empty()
}

/// Spaces, tabs and line breaks: whitespace that is not a comment.
fn blank(token: &Token) -> bool {
    matches!(
        token,
        Token::Whitespace(Whitespace::Space | Whitespace::Tab | Whitespace::Newline)
    )
}

/// Tokens whose lexing no change of the whitespace after them can alter ([`respaced`]):
/// words (quoted or not), numbers, single-quoted strings, parentheses, commas, periods,
/// and arithmetic, comparison and concatenation operators.
fn plain(token: &Token) -> bool {
    matches!(
        token,
        Token::Word(_)
            | Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::Comma
            | Token::LParen
            | Token::RParen
            | Token::Period
            | Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::StringConcat
    )
}

/// Walks an ASCII text by the tokenizer's locations (lines from 1, columns from 1, a new
/// line after each `\n`): in ASCII a column is a byte, so a token within one line is as
/// long as its columns, and only tokens across lines are scanned.
struct Cursor<'a> {
    text: &'a str,
    /// Where the last token ended, as a byte offset and as a location.
    at: usize,
    line: u64,
    column: u64,
}

impl<'a> Cursor<'a> {
    /// `None` when `text` is not ASCII.
    fn new(text: &'a str) -> Option<Self> {
        text.is_ascii().then_some(Cursor {
            text,
            at: 0,
            line: 1,
            column: 1,
        })
    }

    /// The text of the token from `start` to `end`, which must start where the last one
    /// ended and not be empty.
    fn take(&mut self, start: Location, end: Location) -> Option<&'a str> {
        if (start.line, start.column) != (self.line, self.column) {
            return None;
        }
        let from = self.at;
        if end.line == self.line {
            let len = usize::try_from(end.column.checked_sub(self.column)?).ok()?;
            self.at = self.at.checked_add(len)?;
            self.column = end.column;
        } else {
            let bytes = self.text.as_bytes();
            while (self.line, self.column) != (end.line, end.column) {
                let b = *bytes.get(self.at)?;
                self.at += 1;
                if b == b'\n' {
                    self.line += 1;
                    self.column = 1;
                } else {
                    self.column += 1;
                }
            }
        }
        (self.at > from)
            .then(|| self.text.get(from..self.at))
            .flatten()
    }
}

/// The tokens the parser acts on, each with whether whitespace came before it, a
/// trailing `;` left out; `None` when there is a comment.
fn significant(tokens: &[TokenWithSpan]) -> Option<Vec<(bool, &Token)>> {
    let mut out: Vec<(bool, &Token)> = Vec::with_capacity(tokens.len());
    let mut space = false;
    for t in tokens {
        match &t.token {
            token if blank(token) => {
                // Leading whitespace is no token's business.
                space = !out.is_empty();
            }
            Token::Whitespace(_) => return None,
            Token::EOF => break,
            token => {
                out.push((space, token));
                space = false;
            }
        }
    }
    if matches!(out.last(), Some((_, Token::SemiColon))) {
        out.pop();
    }
    Some(out)
}

/// Turns the double-quoted names starting at the given positions into string literals.
struct SpellStrings<'a>(&'a FxHashSet<(u64, u64)>);

impl VisitorMut for SpellStrings<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::Identifier(ident) = expr
            && ident.quote_style == Some('"')
            && self
                .0
                .contains(&(ident.span.start.line, ident.span.start.column))
        {
            *expr =
                Expr::Value(Value::SingleQuotedString(ident.value.clone()).with_span(ident.span));
        }
        ControlFlow::Continue(())
    }
}

/// Prints `statement`, writing its quoted string values itself.
///
/// sqlparser's printer takes a doubled quote inside a value for an escape already made
/// and leaves it alone, so the value `''` would print as `''''`, which reads back as
/// `'`; and it prints backslashes as they are, which an engine that reads `\` as an
/// escape (MySQL, MariaDB) reads differently. Each string value is swapped for a marker,
/// the tree is printed, and every marker is replaced by the value quoted as the engine
/// reads it. The caller still proves that the result reads back as the same tree.
fn print(statement: &mut Statement, backslash_escapes: bool) -> String {
    // Values sqlparser prints right need none of this: those without their own quote
    // (and without a backslash where the engine reads it as an escape).
    if Visit::visit(&*statement, &mut PrintedRight { backslash_escapes }).is_continue() {
        return to_text(statement);
    }
    let mut strings = MarkStrings {
        backslash_escapes,
        literals: Vec::new(),
        values: Vec::new(),
    };
    let _ = statement.visit(&mut strings);
    if strings.literals.is_empty() {
        return statement.to_string();
    }
    let printed = statement.to_string();
    let _ = statement.visit(&mut Unmark(&mut strings.values));
    // Markers are NUL-delimited; a text with NULs of its own is printed plainly (and then
    // most likely fails the read-back proof, which is the safe way to fail).
    if printed.matches(MARK).count() != 2 * strings.literals.len() {
        return statement.to_string();
    }
    let mut out = String::with_capacity(printed.len());
    let mut parts = printed.split(MARK);
    out.push_str(parts.next().unwrap_or_default());
    while let (Some(index), Some(rest)) = (parts.next(), parts.next()) {
        match index
            .parse::<usize>()
            .ok()
            .and_then(|i| strings.literals.get(i))
        {
            Some(literal) => out.push_str(literal),
            None => return statement.to_string(),
        }
        out.push_str(rest);
    }
    out
}

/// `statement` printed, into a buffer sized for a usual rendering.
fn to_text(statement: &Statement) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(256);
    let _ = write!(out, "{statement}");
    out
}

/// Stops at the first quoted string value sqlparser's printer would get wrong: one that
/// holds its own quote, or a backslash where the engine reads it as an escape.
struct PrintedRight {
    backslash_escapes: bool,
}

impl Visitor for PrintedRight {
    type Break = ();

    fn pre_visit_value(&mut self, value: &ValueWithSpan) -> ControlFlow<()> {
        let wrong =
            |s: &str, quote: char| s.chars().any(|c| doubled(c, quote, self.backslash_escapes));
        match &value.value {
            Value::SingleQuotedString(s) if wrong(s, '\'') => ControlFlow::Break(()),
            Value::DoubleQuotedString(s) if wrong(s, '"') => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }
}

/// Whether `c` is written twice inside a string quoted with `quote`: the quote itself, and
/// a backslash where the engine reads it as an escape. What sqlparser's printer gets
/// wrong ([`PrintedRight`]) is what [`MarkStrings`] writes this way.
fn doubled(c: char, quote: char, backslash_escapes: bool) -> bool {
    c == quote || (c == '\\' && backslash_escapes)
}

/// Delimits the markers [`MarkStrings`] leaves in the tree.
const MARK: char = '\u{0}';

/// Swaps single- and double-quoted string values for numbered markers, keeping each
/// value quoted as the engine reads it, and the value itself to put back ([`Unmark`]).
struct MarkStrings {
    backslash_escapes: bool,
    literals: Vec<String>,
    values: Vec<Option<Value>>,
}

impl MarkStrings {
    fn quote(&self, value: &str, quote: char) -> String {
        let mut out = String::with_capacity(value.len() + 2);
        out.push(quote);
        for c in value.chars() {
            if doubled(c, quote, self.backslash_escapes) {
                out.push(c);
            }
            out.push(c);
        }
        out.push(quote);
        out
    }
}

impl VisitorMut for MarkStrings {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        let literal = match &value.value {
            Value::SingleQuotedString(s) => self.quote(s, '\''),
            Value::DoubleQuotedString(s) => self.quote(s, '"'),
            _ => return ControlFlow::Continue(()),
        };
        let marker = format!("{MARK}{}{MARK}", self.literals.len());
        self.literals.push(literal);
        let original = std::mem::replace(&mut value.value, Value::Placeholder(marker));
        self.values.push(Some(original));
        ControlFlow::Continue(())
    }
}

/// Puts back the values [`MarkStrings`] swapped for markers.
struct Unmark<'a>(&'a mut Vec<Option<Value>>);

impl VisitorMut for Unmark<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        if let Value::Placeholder(marker) = &value.value
            && let Some(index) = marker
                .strip_prefix(MARK)
                .and_then(|m| m.strip_suffix(MARK))
                .and_then(|m| m.parse::<usize>().ok())
            && let Some(original) = self.0.get_mut(index).and_then(Option::take)
        {
            value.value = original;
        }
        ControlFlow::Continue(())
    }
}
