//! Name normalisation shared by the validators (spec: validators.md, shared helpers).

/// Splits a possibly qualified name into its parts, honouring quotes (`"…"`, `` `…` ``,
/// `[…]`), and strips one pair of enclosing quotes from each part; parts are trimmed and
/// lower-cased.
pub fn norm_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut close: Option<char> = None;
    for c in name.trim().chars() {
        match close {
            Some(q) if c == q => {
                close = None;
                current.push(c);
            }
            Some(_) => current.push(c),
            None => match c {
                '"' => {
                    close = Some('"');
                    current.push(c);
                }
                '`' => {
                    close = Some('`');
                    current.push(c);
                }
                '[' => {
                    close = Some(']');
                    current.push(c);
                }
                '.' => parts.push(std::mem::take(&mut current)),
                _ => current.push(c),
            },
        }
    }
    parts.push(current);
    parts
        .iter()
        .map(|p| strip_quotes(p.trim()).to_lowercase())
        .collect()
}

/// The last part of [`norm_parts`]: `[main].[orders]`, `"main"."orders"`, `main.orders`
/// and `ORDERS` all give `orders`.
pub fn norm(name: &str) -> String {
    norm_parts(name).pop().unwrap_or_default()
}

fn strip_quotes(part: &str) -> &str {
    for (open, close) in [('"', '"'), ('`', '`'), ('[', ']')] {
        if part.len() >= 2 && part.starts_with(open) && part.ends_with(close) {
            return &part[1..part.len() - 1];
        }
    }
    part
}
