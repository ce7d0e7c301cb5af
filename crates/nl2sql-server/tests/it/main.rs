//! Integration tests of the REST API: real HTTP over 127.0.0.1 against an engine over the
//! SQLite fixture.

mod admin;
mod api;
mod stream;
mod support;
