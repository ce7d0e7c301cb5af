//! The demo's integration tests: the accuracy corpora asked through the whole engine.

mod demo_corpus;
