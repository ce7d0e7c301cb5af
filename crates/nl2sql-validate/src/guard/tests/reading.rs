//! The cheap proofs of the rendering: two token streams the parser reads the same
//! (`render::same_reading`), and a rendering that is the caller's text respaced where no
//! tokenizer can tell (`render::respaced`), which needs no second tokenization. Checked
//! against the full proof (parse the rendering, compare the trees) on Spider dev's 1,034
//! gold queries, respaced at random, and on the places where sqlparser does read
//! whitespace.

use nl2sql_state::Dialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{TokenWithSpan, Tokenizer};

use crate::guard::parser_dialect;
use crate::guard::render::{Original, respaced, same_reading};

fn tokens(dialect: Dialect, sql: &str) -> Vec<TokenWithSpan> {
    let d = parser_dialect(dialect);
    Tokenizer::new(d.as_ref(), sql)
        .with_unescape(true)
        .tokenize_with_location()
        .expect("tokenize")
}

fn same(dialect: Dialect, a: &str, b: &str) -> bool {
    same_reading(&tokens(dialect, a), &tokens(dialect, b))
}

#[test]
fn whitespace_the_parser_skips_is_ignored_and_everything_else_compared() {
    let d = Dialect::Sqlite;
    assert!(same(
        d,
        "SELECT a ,  b FROM t WHERE x  >  1;",
        "SELECT a, b FROM t WHERE x > 1"
    ));
    assert!(same(
        d,
        "  SELECT count( * ) FROM t ;  ",
        "SELECT count(*) FROM t"
    ));
    assert!(same(d, "SELECT a\n\tFROM t", "SELECT a FROM t"));
    // Another word, a keyword's case, another literal, a quote: not the same tokens.
    assert!(!same(d, "SELECT a FROM t", "SELECT b FROM t"));
    assert!(!same(d, "select a from t", "SELECT a FROM t"));
    assert!(!same(d, "SELECT 'a' FROM t", "SELECT 'b' FROM t"));
    assert!(!same(d, "SELECT \"a\" FROM t", "SELECT a FROM t"));
    // A statement more, or a comment (a dialect may read comments): never the same.
    assert!(!same(d, "SELECT a FROM t; SELECT 1", "SELECT a FROM t"));
    assert!(!same(d, "SELECT a /* x */ FROM t", "SELECT a FROM t"));
    assert!(!same(d, "SELECT a -- x\nFROM t", "SELECT a FROM t"));
}

#[test]
fn whitespace_the_parser_reads_is_compared() {
    // A placeholder's name must follow ':' or '@' at once; sqlparser reads the raw token.
    assert!(!same(
        Dialect::Sqlite,
        "SELECT a FROM t WHERE b = :x",
        "SELECT a FROM t WHERE b = : x"
    ));
    assert!(!same(
        Dialect::MySql,
        "SELECT a FROM t WHERE b = @x",
        "SELECT a FROM t WHERE b = @ x"
    ));
    // Hyphenated names (`a-1`) are read around a '-' without skipping whitespace.
    assert!(!same(
        Dialect::Generic,
        "SELECT a-1 FROM t",
        "SELECT a - 1 FROM t"
    ));
    assert!(!same(
        Dialect::Generic,
        "SELECT a -1 FROM t",
        "SELECT a - 1 FROM t"
    ));
    assert!(same(
        Dialect::Generic,
        "SELECT a - 1 FROM t",
        "SELECT a  -  1 FROM t"
    ));
}

/// Wherever the cheap proof says "the same", the full proof agrees: the rendering parses
/// to the tree parsed from the original. And the cheap proof does apply to most of the
/// corpus (Spider writes `a ,  b`; sqlparser prints `a, b`).
#[test]
fn the_cheap_proof_agrees_with_the_full_one_on_spider_dev() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/spider/dev_gold.sql");
    let text = std::fs::read_to_string(path).expect("dev_gold.sql");
    let d = parser_dialect(Dialect::Sqlite);
    let (mut statements, mut cheap) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (sql, _) = line.rsplit_once('\t').expect("SQL<TAB>db_id");
        let Ok(original) = Parser::parse_sql(d.as_ref(), sql) else {
            continue;
        };
        let [tree] = original.as_slice() else {
            continue;
        };
        statements += 1;
        let rendered = tree.to_string();
        if same(Dialect::Sqlite, sql, &rendered) {
            cheap += 1;
            let reparsed = Parser::parse_sql(d.as_ref(), &rendered).expect("the rendering parses");
            assert_eq!(
                reparsed.as_slice(),
                original.as_slice(),
                "{sql}\n{rendered}"
            );
        }
    }
    assert_eq!(statements, 1034);
    assert!(
        cheap > 600,
        "the cheap proof applied to {cheap} of {statements}"
    );
}

/// `render::whitespace_read` lists the places sqlparser reads whitespace, read from
/// sqlparser 0.63's parser (`next_token_no_skip`, `peek_token_no_skip`). Another version
/// may read it elsewhere: re-read the parser, update the list, then this pin.
#[test]
fn the_whitespace_rule_was_read_from_this_sqlparser() {
    let lock = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
    )
    .expect("Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"sqlparser\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_owned());
    assert_eq!(version.as_deref(), Some("0.63.0"));
}

/// The caller's text, its tree's rendering, and whether `respaced` proves the rendering.
fn respaced_rendering(dialect: Dialect, sql: &str) -> (String, bool) {
    let d = parser_dialect(dialect);
    let tree = Parser::parse_sql(d.as_ref(), sql).expect("parses");
    let rendering = tree[0].to_string();
    let tokens = tokens(dialect, sql);
    let proved = respaced(
        Original {
            text: sql,
            tokens: &tokens,
        },
        &rendering,
    );
    (rendering, proved)
}

#[test]
fn respacing_between_plain_tokens_is_proved_without_tokenizing() {
    for (sql, proved) in [
        ("SELECT a, b FROM t", true),
        ("SELECT a ,  b\n  FROM t\r\n\tWHERE x  >  1 ;  ", true),
        ("  SELECT count( * ) FROM t", true),
        (
            "SELECT ( a + 1 ) * 2 FROM t WHERE b IN ( 'x' , 'y''z' )",
            true,
        ),
        (
            "SELECT T1.a FROM t AS T1 JOIN u AS T2 ON T1.id  =  T2.id",
            true,
        ),
        // Another spelling than the printer's: not a respacing, left to the other proofs.
        ("select a from t", false),
        ("SELECT a FROM t WHERE b != 1", false),
        // Whitespace the parser reads: kept, so not removed before a '-' after '('.
        ("SELECT a - ( -1) FROM t", false),
        // A comment, or whitespace other than ASCII: never.
        ("SELECT a /* x */ FROM t", false),
        ("SELECT a -- x\nFROM t", false),
        ("SELECT a,\u{3000}b FROM t", false),
    ] {
        let (rendering, got) = respaced_rendering(Dialect::Generic, sql);
        assert_eq!(got, proved, "{sql:?} rendered as {rendering:?}");
    }
    // Tokens whose lexing the whitespace after them can change are not plain: `#` before
    // a space is an operator at once, before anything else sqlparser reads on (a longer
    // operator, or a name in dialects where `#` starts one).
    let (rendering, got) = respaced_rendering(Dialect::Postgres, "SELECT a  #  b FROM t");
    assert!(!got, "{rendering}");
    // A MySQL `@` before a line break starts a name holding the line break: whitespace
    // inside a token is the token's, kept as it is, so that name is compared whole.
    let (rendering, got) = respaced_rendering(Dialect::MySql, "SELECT a  FROM t WHERE b = @x");
    assert!(got, "{rendering}");
}

/// The classes of characters a plain token's lexing asks about never hold ASCII
/// whitespace, `)` or `,` in any dialect the guard reads; and no such dialect reads a
/// line break between string literals (sqlparser's Redshift does).
#[test]
fn respacing_characters_belong_to_no_token_in_any_dialect() {
    for dialect in Dialect::ALL {
        let d = parser_dialect(dialect);
        for c in [' ', '\t', '\n', '\r', ')', ','] {
            assert!(!d.is_identifier_part(c), "{dialect}: {c:?}");
            assert!(!d.is_identifier_start(c), "{dialect}: {c:?}");
            assert!(!d.is_custom_operator_part(c), "{dialect}: {c:?}");
        }
        assert!(!d.supports_string_literal_concatenation_with_newline());
    }
}

/// The caller's text with its whitespace changed at random outside quotes: runs become
/// other runs of spaces, tabs and line breaks, and a space may appear after `(` and
/// before `)` and `,`.
fn respace(sql: &str, seed: &mut u64) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let runs = [" ", "  ", "\n", "\n    ", "\t", " \r\n\t "];
    let mut out = String::with_capacity(sql.len() * 2);
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c.is_ascii_whitespace() => {
                while chars.peek().is_some_and(char::is_ascii_whitespace) {
                    chars.next();
                }
                out.push_str(runs[(next() % runs.len() as u64) as usize]);
            }
            None => {
                if matches!(c, ')' | ',') && next() % 3 == 0 {
                    out.push(' ');
                }
                out.push(c);
                if matches!(c, '\'' | '"' | '`') {
                    quote = Some(c);
                }
                if c == '(' && next() % 3 == 0 {
                    out.push(' ');
                }
            }
        }
    }
    out
}

/// Wherever `respaced` proves a rendering, the tokenizer and the full proof agree: the
/// rendering tokenizes to tokens the parser reads as the caller's, and parses to the
/// caller's tree. Over Spider dev's gold queries as written and respaced at random.
#[test]
fn respacing_agrees_with_the_full_proof_on_spider_dev_respaced() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/spider/dev_gold.sql");
    let text = std::fs::read_to_string(path).expect("dev_gold.sql");
    let d = parser_dialect(Dialect::Sqlite);
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let (mut statements, mut proved) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (gold, _) = line.rsplit_once('\t').expect("SQL<TAB>db_id");
        for variant in 0..4 {
            let sql = if variant == 0 {
                gold.to_owned()
            } else {
                respace(gold, &mut seed)
            };
            let Ok(original) = Parser::parse_sql(d.as_ref(), &sql) else {
                continue;
            };
            let [tree] = original.as_slice() else {
                continue;
            };
            statements += 1;
            let rendering = tree.to_string();
            let caller = tokens(Dialect::Sqlite, &sql);
            let original_text = Original {
                text: &sql,
                tokens: &caller,
            };
            if respaced(original_text, &rendering) {
                proved += 1;
                assert!(
                    same_reading(&caller, &tokens(Dialect::Sqlite, &rendering)),
                    "{sql:?}\n{rendering:?}"
                );
                let reparsed =
                    Parser::parse_sql(d.as_ref(), &rendering).expect("the rendering parses");
                assert_eq!(reparsed.as_slice(), original.as_slice(), "{sql:?}");
            }
        }
    }
    assert!(
        statements >= 4 * 1034 - 40,
        "{statements} statements parsed"
    );
    assert!(
        proved * 4 > statements * 3,
        "respacing proved {proved} of {statements}"
    );
}
