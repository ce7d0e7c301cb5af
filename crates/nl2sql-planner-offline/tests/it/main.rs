//! Integration tests of nl2sql-planner-offline: the question corpora, answered through the
//! planner, the validator, the generator and the real SQLite adapter.

mod corpus;
