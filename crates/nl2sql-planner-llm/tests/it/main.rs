//! Integration tests of nl2sql-planner-llm, against a local HTTP server that speaks the
//! chat-completions protocol.

mod llm;
