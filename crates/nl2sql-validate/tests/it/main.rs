//! Integration tests of the SQL guard through its public API.

mod properties;
