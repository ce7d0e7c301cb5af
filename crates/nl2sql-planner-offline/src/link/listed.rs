//! Values a column's description lists: documentation often enumerates the values of a
//! categorical column ("Completed, Aborted or Rework", "Kind of machine (CNC Mill, Lathe,
//! ...)"), including the ones too rare to be among the sampled values. An item counts when
//! every word of it is capitalised (or a code such as `DET`), it has at most four words,
//! and the description lists at least two such items.

/// The values `description` lists, in order.
pub(super) fn listed_values(description: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for part in description.split([',', '(', ')', ':', ';']) {
        for item in part.split(" or ").flat_map(|p| p.split(" and ")) {
            let item = item.trim().trim_end_matches('.').trim();
            let words: Vec<&str> = item.split_whitespace().collect();
            let capitalised = |w: &&str| {
                w.chars()
                    .next()
                    .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
                    && w.chars().any(char::is_alphanumeric)
            };
            if (1..=4).contains(&words.len())
                && words.iter().all(capitalised)
                && !items.iter().any(|x| x == item)
            {
                items.push(item.to_owned());
            }
        }
    }
    if items.len() >= 2 {
        return items;
    }
    // "Damaged in transit, Defective, Wrong item or No longer needed": a description that
    // is nothing but a list of at least three short items, each starting with a capital
    // letter, lists values even when their other words are lower case.
    let mut list: Vec<String> = Vec::new();
    for item in description
        .split(',')
        .flat_map(|p| p.split(" or "))
        .map(|i| i.trim().trim_end_matches('.').trim())
    {
        let words = item.split_whitespace().count();
        let starts_capital = item.chars().next().is_some_and(char::is_uppercase);
        if !(1..=4).contains(&words) || !starts_capital || item.contains(['(', ')', ':', ';']) {
            return Vec::new();
        }
        list.push(item.to_owned());
    }
    if list.len() >= 3 { list } else { Vec::new() }
}
