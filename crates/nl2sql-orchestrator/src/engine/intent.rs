//! The intent guard: a question that asks to change data ("Delete the cancelled orders",
//! "Please update the price of Widget A to 5") is refused with `INTENT_VIOLATION` before
//! any planner sees it (spec: errors-and-recovery.md §2). Plans can only read, and the
//! adapters' sandboxes refuse writes anyway; this says so plainly instead of answering
//! some read-only question the user did not ask.
//!
//! The rule is about English only, and errs towards answering: the question must be a
//! command whose verb changes data. Its first words, after polite openers ("please",
//! "can you", "I want to", …), are a write verb ("delete", "drop", "truncate", "insert",
//! "update", "remove", "erase", "wipe", "purge", "overwrite", "alter", "rename", "grant",
//! "revoke"), or "change"/"modify"/"set" followed later by "to" (a new value), or
//! "create"/"add" followed by a database object ("create a table", "add a column", "add a
//! new customer"). "How many orders were deleted?", "Which prices changed?", "Create a
//! list of the top customers" and "Add up the revenue" are questions, not commands.

/// Verbs that always change data when they open a command.
const WRITE_VERBS: &[&str] = &[
    "delete",
    "drop",
    "truncate",
    "insert",
    "update",
    "remove",
    "erase",
    "wipe",
    "purge",
    "overwrite",
    "alter",
    "rename",
    "grant",
    "revoke",
    "upsert",
];

/// Verbs that change data when a new value follows ("… to 5").
const SET_VERBS: &[&str] = &[
    "change", "modify", "set", "edit", "correct", "increase", "decrease", "raise", "lower",
];

/// Verbs that change data when a database object or a new record follows.
const CREATE_VERBS: &[&str] = &[
    "create", "add", "make", "register", "record", "store", "save",
];

/// What `create`/`add` must be followed by (within the next three words) to be a write.
const OBJECTS: &[&str] = &[
    "table", "tables", "column", "columns", "index", "view", "database", "schema", "row", "rows",
    "record", "records", "entry", "entries", "new", "trigger", "user",
];

/// Polite or indirect openers skipped before the verb.
const OPENERS: &[&str] = &[
    "please",
    "pls",
    "kindly",
    "can",
    "could",
    "would",
    "will",
    "you",
    "i",
    "we",
    "want",
    "wanna",
    "need",
    "to",
    "like",
    "go",
    "ahead",
    "and",
    "now",
    "just",
    "let's",
    "lets",
    "us",
    "me",
    "help",
    "quickly",
    "immediately",
    "then",
];

/// The write verb when `question` is a command that changes data.
pub(crate) fn write_intent(question: &str) -> Option<String> {
    let words: Vec<String> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let start = words.iter().position(|w| !OPENERS.contains(&w.as_str()))?;
    let verb = words[start].as_str();
    let rest = &words[start + 1..];
    if WRITE_VERBS.contains(&verb) {
        return Some(verb.to_owned());
    }
    if SET_VERBS.contains(&verb) && rest.iter().any(|w| w == "to") {
        return Some(verb.to_owned());
    }
    if CREATE_VERBS.contains(&verb)
        && rest.first().is_none_or(|w| w != "up")
        && rest.iter().take(3).any(|w| OBJECTS.contains(&w.as_str()))
    {
        return Some(verb.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::write_intent;

    #[test]
    fn commands_that_change_data_are_caught() {
        for (q, verb) in [
            ("Delete all orders from 2023", "delete"),
            ("please DROP the customers table", "drop"),
            ("Can you update the price of Widget A to 5?", "update"),
            ("I want to remove the inactive suppliers.", "remove"),
            ("Go ahead and truncate production_runs", "truncate"),
            ("Change the status of machine 4 to Offline", "change"),
            ("Set every order's status to shipped", "set"),
            ("Create a table of bonuses", "create"),
            ("Add a new customer called Acme", "add"),
            ("Insert a row into orders", "insert"),
            ("Could you rename the factories table?", "rename"),
            ("Grant the analyst role access to sales", "grant"),
        ] {
            assert_eq!(write_intent(q).as_deref(), Some(verb), "{q}");
        }
    }

    #[test]
    fn questions_about_changes_are_not_commands() {
        for q in [
            "How many orders were deleted in 2024?",
            "Which products had their price changed?",
            "Create a list of the top 5 customers by revenue",
            "Add up the revenue per month",
            "Show the machines updated last week",
            "List the dropped shipments per carrier",
            "What share of deliveries were removed from inventory?",
            "Make a summary of downtime per factory",
            "Merge the sales and supply figures per factory",
            "Change over time of units produced per year",
            "Which suppliers were added in 2024?",
            "",
            "please",
        ] {
            assert_eq!(write_intent(q), None, "{q}");
        }
    }
}
