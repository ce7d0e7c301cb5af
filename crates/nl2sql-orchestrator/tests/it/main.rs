//! Integration tests of the orchestrator: the `Engine` over the real fixture database.

mod custom_adapter;
mod demo_corpus;
mod gaps;
mod observability;
mod pipeline;
mod schema;
