//! `GuardedSql`: the only SQL an adapter runs, and the guard's rendering of the syntax tree
//! it approved.
//!
//! An engine reads a statement its own way: MariaDB runs the text inside `/*M! … */`,
//! MySQL inside `/*! … */`, a server's `sql_mode` decides what `"x"` and `\'` mean. Where
//! the guard's reading and the engine's differ, a statement the guard approved could do
//! something it never saw. So the engine never receives the caller's text: the guard
//! renders the tree it checked (comments, hints and the caller's spelling gone), parses
//! the rendering again in the same dialect, and hands it out only when the two trees are
//! equal. The adapters pin the session modes this reading assumes (`docs/adapters.md`).

use std::fmt;
use std::sync::Arc;

use nl2sql_state::Dialect;

/// A statement the SQL guard approved, as the guard rendered it.
///
/// Only the guard makes one ([`crate::GuardReport::guarded`], [`crate::SqlGuard::guard`]):
/// the type has no public constructor, so an adapter that takes a `GuardedSql` cannot be
/// handed unchecked text. Cloning is cheap.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GuardedSql {
    text: Arc<str>,
    dialect: Dialect,
}

impl GuardedSql {
    pub(crate) fn new(text: String, dialect: Dialect) -> Self {
        GuardedSql {
            text: text.into(),
            dialect,
        }
    }

    /// The statement to send to the engine.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The dialect it was checked and rendered in; an adapter refuses any other.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Wraps `text` without any check, for the sandbox tests that prove an engine refuses
    /// side effects on its own. Compiled only with the `unguarded` feature, which only
    /// test builds turn on; `cargo xtask tidy` refuses a call outside tests.
    #[cfg(feature = "unguarded")]
    pub fn unguarded_for_sandbox_tests(dialect: Dialect, text: &str) -> Self {
        GuardedSql::new(text.to_owned(), dialect)
    }
}

impl fmt::Debug for GuardedSql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedSql")
            .field("dialect", &self.dialect)
            .field("text", &&*self.text)
            .finish()
    }
}

impl fmt::Display for GuardedSql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
