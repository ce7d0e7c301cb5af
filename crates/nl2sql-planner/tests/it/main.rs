//! Integration tests of nl2sql-planner: the record/replay wrapper.

mod cassette;
