//! Integration tests of nl2sql-planner.

mod cassette;
mod corpus;
mod llm;
