//! The `nl2sql` binary's contract: arguments, standard input, output and exit codes.

mod ask;
mod benchmark;
mod config;
mod datasources;
mod doctor;
mod env_settings;
mod failures;
mod faults;
mod grounding;
mod list_adapters;
mod mcp;
mod plan_commands;
mod plan_dag;
mod policy;
mod readme;
mod serve;
mod spider;
mod support;
mod validate_sql;
