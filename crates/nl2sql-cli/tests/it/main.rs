//! The `nl2sql` binary's contract: arguments, standard input, output and exit codes.

mod ask;
mod config;
mod datasources;
mod failures;
mod plan_commands;
mod plan_dag;
mod readme;
mod validate_sql;
