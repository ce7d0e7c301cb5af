//! Access-policy checks made while binding: tables the caller's roles may not read
//! (G9) and denied columns, including those reached through `*` or USING.

use nl2sql_state::ErrorCode;
use sqlparser::tokenizer::Span;

use super::{RangeVar, Resolver};

impl<'g> Resolver<'g> {
    pub(super) fn check_table_policy(&mut self, idx: usize, span: Span) {
        let Some(policy) = &self.ctx.policy else {
            return;
        };
        let table = self.ctx.catalog.table(idx);
        if !policy.table_allowed(&self.ctx.datasource_id, Some(&table.schema), &table.name) {
            let message = format!(
                "role(s) '{}' may not read table '{}.{}'; the policy requires an explicit 'datasource.table' allow",
                policy.roles().join(", "),
                self.ctx.datasource_id,
                table.name
            );
            self.issue(ErrorCode::SecurityViolation, message, span);
        }
    }

    pub(super) fn check_denied(&mut self, rel: &RangeVar, key: &str, span: Span) {
        let (Some(policy), Some(idx)) = (&self.ctx.policy, rel.table) else {
            return;
        };
        let table = self.ctx.catalog.table(idx);
        let Some((_, column)) = table.columns.iter().find(|(k, _)| k == key) else {
            return;
        };
        if policy.column_denied(&self.ctx.datasource_id, &table.name, column) {
            let message = format!(
                "column '{}.{}.{}' is denied to role(s) '{}' and may not be read, including through '*'",
                self.ctx.datasource_id,
                table.name,
                column,
                policy.roles().join(", ")
            );
            self.issue(ErrorCode::SecurityViolation, message, span);
        }
    }
}
