//! Resource bombs: functions whose arguments decide how large a value the engine builds
//! (`repeat('x', 1000000000)`, `zeroblob(1e9)`, `printf('%.*c', 1e9, 'x')`). The row and
//! byte limits of an adapter apply only after the engine has built the value, so the
//! guard caps the size arguments themselves: each must be a number literal of at most
//! [`MAX_BUILT_SIZE`]. Each engine's own hard limits are the second line
//! (`docs/adapters.md`).

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator, Value,
};

use super::GuardIssue;

/// The largest size (characters, bytes, pad width, format width or precision) a query may
/// ask a function to build: 1 MiB.
pub(crate) const MAX_BUILT_SIZE: u64 = 1 << 20;

/// How a function's size is decided.
enum Sized {
    /// By the arguments at these positions (0-based).
    Args(&'static [usize]),
    /// By the widths and precisions of a printf-style format string (the first argument).
    Printf,
    /// By the widths of a `{…}`-style format string (DuckDB's `format`).
    Braces,
}

fn sized(dialect: Dialect, name: &str) -> Option<Sized> {
    Some(match name {
        "repeat" | "lpad" | "rpad" => Sized::Args(&[1]),
        "space" | "zeroblob" | "randomblob" => Sized::Args(&[0]),
        "printf" => Sized::Printf,
        // MySQL's FORMAT(x, d) formats a number with d decimals (capped at 30 by MySQL).
        "format" if dialect == Dialect::MySql => return None,
        "format" if dialect == Dialect::DuckDb => Sized::Braces,
        "format" => Sized::Printf,
        _ => return None,
    })
}

/// The issues of one call: size arguments that are not literals or exceed the cap.
pub(crate) fn check(
    dialect: Dialect,
    name: &str,
    function: &Function,
    span: Option<super::SqlSpan>,
) -> Vec<GuardIssue> {
    let Some(kind) = sized(dialect, name) else {
        return Vec::new();
    };
    let args: Vec<&Expr> = match &function.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
                | FunctionArg::Named {
                    arg: FunctionArgExpr::Expr(e),
                    ..
                }
                | FunctionArg::ExprNamed {
                    arg: FunctionArgExpr::Expr(e),
                    ..
                } => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let too_big = |what: String| {
        GuardIssue::new(
            ErrorCode::SecurityViolation,
            format!(
                "{what} of {name}() is larger than {MAX_BUILT_SIZE}; a query may not build values that large"
            ),
            span,
        )
    };
    let not_literal = |what: &str| {
        GuardIssue::new(
            ErrorCode::UnsupportedSql,
            format!(
                "the {what} of {name}() must be a literal (at most {MAX_BUILT_SIZE}) so its size is known before it runs"
            ),
            span,
        )
    };
    let mut issues = Vec::new();
    match kind {
        Sized::Args(positions) => {
            for &i in positions {
                let Some(arg) = args.get(i) else { continue };
                match number(arg) {
                    Some(n) if n > MAX_BUILT_SIZE as f64 => {
                        issues.push(too_big(format!("the size argument {n}")));
                    }
                    Some(_) => {}
                    None => issues.push(not_literal("size argument")),
                }
            }
        }
        Sized::Printf | Sized::Braces => match args.first().and_then(|a| string(a)) {
            None if args.is_empty() => {}
            None => issues.push(not_literal("format string")),
            Some(format) => {
                let widths = match kind {
                    Sized::Braces => brace_widths(format),
                    _ => printf_widths(format),
                };
                match widths {
                    Err(()) => issues.push(not_literal("width or precision (`*`)")),
                    Ok(widths) => {
                        if let Some(w) = widths.into_iter().find(|w| *w > MAX_BUILT_SIZE) {
                            issues.push(too_big(format!("the format width {w}")));
                        }
                    }
                }
            }
        },
    }
    issues
}

/// The value of a number literal, possibly negated.
fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<f64>().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => number(expr).map(|n| -n),
        Expr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        }
        | Expr::Nested(expr) => number(expr),
        _ => None,
    }
}

/// The text of a string literal.
fn string(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s)
            | Value::DoubleQuotedString(s)
            | Value::EscapedStringLiteral(s)
            | Value::NationalStringLiteral(s) => Some(s),
            _ => None,
        },
        Expr::Nested(expr) => string(expr),
        _ => None,
    }
}

/// Every width and precision written in a printf-style format (`%5s`, `%-1000c`,
/// `%.3f`, `%1$10s`); `Err` when one is taken from an argument (`*`).
fn printf_widths(format: &str) -> Result<Vec<u64>, ()> {
    let mut widths = Vec::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            continue;
        }
        // Flags, positions, widths and precisions up to the conversion letter.
        let mut digits = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphabetic() {
                break;
            }
            chars.next();
            if c == '*' {
                return Err(());
            }
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                push_number(&mut widths, &mut digits);
            }
        }
        push_number(&mut widths, &mut digits);
    }
    Ok(widths)
}

/// Every number inside the `{…}` fields of a DuckDB/fmt-style format; `Err` for a nested
/// field (a width taken from an argument).
fn brace_widths(format: &str) -> Result<Vec<u64>, ()> {
    let mut widths = Vec::new();
    let mut depth = 0usize;
    let mut digits = String::new();
    for c in format.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth > 1 {
                    return Err(());
                }
            }
            '}' if depth > 0 => {
                depth -= 1;
                push_number(&mut widths, &mut digits);
            }
            c if depth > 0 && c.is_ascii_digit() => digits.push(c),
            _ if depth > 0 => push_number(&mut widths, &mut digits),
            _ => {}
        }
    }
    Ok(widths)
}

fn push_number(widths: &mut Vec<u64>, digits: &mut String) {
    if !digits.is_empty() {
        widths.push(digits.parse().unwrap_or(u64::MAX));
        digits.clear();
    }
}
