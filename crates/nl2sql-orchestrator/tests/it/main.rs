//! Integration tests of the orchestrator: the `Engine` over the real fixture database.

mod custom_adapter;
mod demo_corpus;
mod pipeline;
mod schema;
