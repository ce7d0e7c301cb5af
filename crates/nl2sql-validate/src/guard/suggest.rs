//! "Did you mean" suggestions by edit distance.

/// Up to three candidates within a small edit distance of `name`, closest first, ties in
/// name order. Comparison is case-insensitive.
pub(crate) fn closest<'a, I>(name: &str, candidates: I) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let needle = name.to_lowercase();
    let limit = if needle.chars().count() <= 4 { 1 } else { 2 };
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = strsim::levenshtein(&needle, &c.to_lowercase());
            (d <= limit && d > 0 || (d == 0 && c != name)).then_some((d, c))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Formats suggestions as " (did you mean 'a' or 'b'?)", or "" when there are none.
pub(crate) fn did_you_mean(suggestions: &[&str]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean '{one}'?"),
        many => {
            let quoted: Vec<String> = many.iter().map(|s| format!("'{s}'")).collect();
            format!("; did you mean {}?", quoted.join(" or "))
        }
    }
}
