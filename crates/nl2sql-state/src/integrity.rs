//! The policy integrity check of `nl2sql policy validate` (spec: config-and-security.md
//! §5): every rule of every role checked against the configured datasources and, where
//! known, their schemas. Names compare case-insensitively, as in [`crate::AccessPolicy`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::names::norm_parts;
use crate::policy::PolicyFile;
use crate::schema::SchemaContract;

/// Which list of a role a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// An `allowed_datasources` entry.
    Datasource,
    /// An `allowed_tables` entry.
    Table,
    /// A `denied_columns` entry.
    DeniedColumn,
}

impl RuleKind {
    /// `datasource`, `table` or `denied_column`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Datasource => "datasource",
            RuleKind::Table => "table",
            RuleKind::DeniedColumn => "denied_column",
        }
    }
}

/// The outcome of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IntegrityStatus {
    /// The rule names what exists (or `*`).
    Ok,
    /// An allowed datasource that the configuration does not define (an error).
    Missing,
    /// A table or column rule whose datasource part the configuration does not define
    /// (an error).
    InvalidDs,
    /// A table or column rule naming a table absent from the datasource's schema (a
    /// warning).
    UnknownTable,
    /// A denied column absent from its table (a warning).
    UnknownColumn,
    /// No configuration to check datasources against (a warning).
    Unverified,
}

impl IntegrityStatus {
    /// `OK`, `MISSING`, `INVALID_DS`, `UNKNOWN_TABLE`, `UNKNOWN_COLUMN` or `UNVERIFIED`.
    pub fn as_str(self) -> &'static str {
        match self {
            IntegrityStatus::Ok => "OK",
            IntegrityStatus::Missing => "MISSING",
            IntegrityStatus::InvalidDs => "INVALID_DS",
            IntegrityStatus::UnknownTable => "UNKNOWN_TABLE",
            IntegrityStatus::UnknownColumn => "UNKNOWN_COLUMN",
            IntegrityStatus::Unverified => "UNVERIFIED",
        }
    }

    /// Whether the status makes the report fail.
    pub fn is_error(self) -> bool {
        matches!(self, IntegrityStatus::Missing | IntegrityStatus::InvalidDs)
    }

    /// Whether the status is a warning (reported, but the report still passes).
    pub fn is_warning(self) -> bool {
        matches!(
            self,
            IntegrityStatus::UnknownTable
                | IntegrityStatus::UnknownColumn
                | IntegrityStatus::Unverified
        )
    }
}

/// One rule of one role and what the check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrityRow {
    /// The role's name (its key in the file).
    pub role: String,
    /// Which list the rule comes from.
    pub rule: RuleKind,
    /// The rule as written.
    pub target: String,
    /// The outcome.
    pub status: IntegrityStatus,
    /// Why, in words.
    pub details: String,
}

/// Every rule of every role, in file order within a role and role-name order overall.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrityReport {
    /// One row per rule.
    pub rows: Vec<IntegrityRow>,
}

impl IntegrityReport {
    /// True when no row is an error (warnings allowed).
    pub fn is_ok(&self) -> bool {
        self.errors() == 0
    }

    /// How many rows are errors.
    pub fn errors(&self) -> usize {
        self.rows.iter().filter(|r| r.status.is_error()).count()
    }

    /// How many rows are warnings.
    pub fn warnings(&self) -> usize {
        self.rows.iter().filter(|r| r.status.is_warning()).count()
    }
}

/// What the rules are checked against.
struct Known<'a> {
    /// Configured datasource ids, lower-cased; `None` when there is no configuration.
    datasources: Option<BTreeSet<String>>,
    /// Schemas by lower-cased datasource id.
    schemas: BTreeMap<String, &'a SchemaContract>,
}

impl PolicyFile {
    /// The integrity report of the file against `datasources` (the configured ids; `None`
    /// when no configuration is known, which leaves datasource parts unverified) and
    /// `schemas` (the contracts of the datasources that could be read, by id; a
    /// datasource without one has its table and column names left unchecked).
    ///
    /// Per the spec, an allowed datasource is `*` (OK, "Global Access"), configured (OK,
    /// "Verified") or not (MISSING, an error); a table rule is `*` (OK) or has a configured
    /// datasource part (OK, "DS Verified") or not (INVALID_DS, an error). Denied columns
    /// are checked like table rules; a table or column absent from a known schema is a
    /// warning (UNKNOWN_TABLE, UNKNOWN_COLUMN).
    pub fn integrity_report(
        &self,
        datasources: Option<&[String]>,
        schemas: &BTreeMap<String, SchemaContract>,
    ) -> IntegrityReport {
        let known = Known {
            datasources: datasources
                .map(|ids| ids.iter().map(|id| id.trim().to_lowercase()).collect()),
            schemas: schemas
                .iter()
                .map(|(id, c)| (id.trim().to_lowercase(), c))
                .collect(),
        };
        let mut rows = Vec::new();
        for (name, role) in &self.roles {
            let mut row =
                |rule: RuleKind, target: &str, (status, details): (IntegrityStatus, String)| {
                    rows.push(IntegrityRow {
                        role: name.clone(),
                        rule,
                        target: target.to_owned(),
                        status,
                        details,
                    });
                };
            for ds in &role.allowed_datasources {
                row(RuleKind::Datasource, ds, known.datasource(ds));
            }
            for table in &role.allowed_tables {
                row(RuleKind::Table, table, known.table(table));
            }
            for column in &role.denied_columns {
                row(RuleKind::DeniedColumn, column, known.column(column));
            }
        }
        // A tenant's datasources are checked like a role's; the row names `tenant:<id>`.
        for (name, tenant) in &self.tenants {
            for ds in &tenant.allowed_datasources {
                let (status, details) = known.datasource(ds);
                rows.push(IntegrityRow {
                    role: format!("tenant:{name}"),
                    rule: RuleKind::Datasource,
                    target: ds.clone(),
                    status,
                    details,
                });
            }
        }
        IntegrityReport { rows }
    }
}

impl Known<'_> {
    fn datasource(&self, entry: &str) -> (IntegrityStatus, String) {
        let ds = entry.trim().to_lowercase();
        if ds == "*" {
            return (IntegrityStatus::Ok, "Global Access".to_owned());
        }
        match &self.datasources {
            None => unverified(),
            Some(ids) if ids.contains(&ds) => (IntegrityStatus::Ok, "Verified".to_owned()),
            Some(_) => (
                IntegrityStatus::Missing,
                "Datasource not defined in config".to_owned(),
            ),
        }
    }

    /// The datasource part of a table or column rule: `Err` with the row when it is not
    /// configured (or cannot be checked), else the schema when one is known.
    fn datasource_part(
        &self,
        ds: &str,
    ) -> Result<Option<&SchemaContract>, (IntegrityStatus, String)> {
        match &self.datasources {
            None => Err(unverified()),
            Some(ids) if ids.contains(ds) => Ok(self.schemas.get(ds).copied()),
            Some(_) => Err((
                IntegrityStatus::InvalidDs,
                format!("Datasource '{ds}' unknown"),
            )),
        }
    }

    fn table(&self, entry: &str) -> (IntegrityStatus, String) {
        let parts = norm_parts(entry);
        let (ds, schema, table) = match parts.as_slice() {
            [star] if star == "*" => return (IntegrityStatus::Ok, "Global Access".to_owned()),
            [ds, table] => (ds, None, table),
            [ds, schema, table] => (ds, Some(schema.as_str()), table),
            _ => {
                return match parts.first().map(|ds| self.datasource_part(ds)) {
                    Some(Err(row)) => row,
                    _ => (
                        IntegrityStatus::UnknownTable,
                        "Too many name parts: the rule matches no table".to_owned(),
                    ),
                };
            }
        };
        let contract = match self.datasource_part(ds) {
            Err(row) => return row,
            Ok(None) => {
                let note = if table == "*" {
                    ""
                } else {
                    " (no schema: table not checked)"
                };
                return (IntegrityStatus::Ok, format!("DS Verified{note}"));
            }
            Ok(Some(contract)) => contract,
        };
        let in_schema = |t: &&crate::schema::TableContract| {
            schema.is_none_or(|s| t.table.schema_name.to_lowercase() == s)
        };
        let found = contract
            .tables
            .values()
            .filter(in_schema)
            .any(|t| table == "*" || t.table.table_name.to_lowercase() == *table);
        match (found, table.as_str(), schema) {
            (true, _, _) => (IntegrityStatus::Ok, "DS Verified".to_owned()),
            (false, "*", Some(s)) => (
                IntegrityStatus::UnknownTable,
                format!("No table in schema '{s}' of '{ds}'"),
            ),
            (false, _, _) => (
                IntegrityStatus::UnknownTable,
                format!(
                    "Table '{}' not in the schema of '{ds}'",
                    qualified(schema, table)
                ),
            ),
        }
    }

    fn column(&self, entry: &str) -> (IntegrityStatus, String) {
        let parts = norm_parts(entry);
        let (ds, schema, table, column) = match parts.as_slice() {
            [ds, table, column] => (ds, None, table, column),
            [ds, schema, table, column] => (ds, Some(schema.as_str()), table, column),
            _ => {
                return match parts.first().map(|ds| self.datasource_part(ds)) {
                    Some(Err(row)) => row,
                    _ => (
                        IntegrityStatus::UnknownColumn,
                        "Too many name parts: the rule matches no column".to_owned(),
                    ),
                };
            }
        };
        let contract = match self.datasource_part(ds) {
            Err(row) => return row,
            Ok(None) => {
                return (
                    IntegrityStatus::Ok,
                    "DS Verified (no schema: column not checked)".to_owned(),
                );
            }
            Ok(Some(contract)) => contract,
        };
        let tables: Vec<_> = contract
            .tables
            .values()
            .filter(|t| {
                t.table.table_name.to_lowercase() == *table
                    && schema.is_none_or(|s| t.table.schema_name.to_lowercase() == s)
            })
            .collect();
        if tables.is_empty() {
            return (
                IntegrityStatus::UnknownTable,
                format!(
                    "Table '{}' not in the schema of '{ds}'",
                    qualified(schema, table)
                ),
            );
        }
        let found = tables
            .iter()
            .any(|t| t.columns.keys().any(|c| c.to_lowercase() == *column));
        if found {
            (IntegrityStatus::Ok, "Verified".to_owned())
        } else {
            (
                IntegrityStatus::UnknownColumn,
                format!(
                    "Column '{column}' not in table '{}' of '{ds}'",
                    qualified(schema, table)
                ),
            )
        }
    }
}

fn unverified() -> (IntegrityStatus, String) {
    (
        IntegrityStatus::Unverified,
        "No configuration: datasource not checked".to_owned(),
    )
}

fn qualified(schema: Option<&str>, table: &str) -> String {
    match schema {
        Some(s) => format!("{s}.{table}"),
        None => table.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnContract, TableContract, TableRef};

    fn schema() -> SchemaContract {
        let mut c = SchemaContract::new("m", "sqlite");
        let mut columns = indexmap::IndexMap::new();
        for name in ["id", "serial_number"] {
            columns.insert(
                name.to_owned(),
                ColumnContract {
                    name: name.into(),
                    data_type: "TEXT".into(),
                    is_nullable: true,
                    is_primary_key: false,
                },
            );
        }
        c.add_table(TableContract {
            table: TableRef {
                schema_name: "main".into(),
                table_name: "Machines".into(),
            },
            columns,
            foreign_keys: Vec::new(),
        });
        c
    }

    fn policy() -> PolicyFile {
        PolicyFile::from_json_str(
            r#"{"version": 1, "roles": {"r": {"description": "d", "role": "r",
                "allowed_datasources": ["*", "M", "ghost"],
                "allowed_tables": ["*", "m.*", "m.machines", "m.main.machines", "m.other.*",
                                   "m.nope", "ghost.t", "x.y.z.w", "n.t"],
                "denied_columns": ["m.machines.serial_number", "m.machines.nope",
                                   "m.nope.c", "ghost.t.c", "n.t.c"]}}}"#,
        )
        .unwrap()
    }

    fn statuses(report: &IntegrityReport) -> Vec<(&str, &str, &str)> {
        report
            .rows
            .iter()
            .map(|r| (r.target.as_str(), r.status.as_str(), r.details.as_str()))
            .collect()
    }

    #[test]
    fn a_tenant_s_datasources_are_checked_like_a_role_s() {
        let file = PolicyFile::from_json_str(
            r#"{"version": 1, "roles": {},
                "tenants": {"acme": {"allowed_datasources": ["m", "ghost", "*"]}}}"#,
        )
        .unwrap();
        let report = file.integrity_report(Some(&["m".to_owned()]), &BTreeMap::new());
        assert_eq!(
            statuses(&report),
            vec![
                ("m", "OK", "Verified"),
                ("ghost", "MISSING", "Datasource not defined in config"),
                ("*", "OK", "Global Access"),
            ]
        );
        assert!(report.rows.iter().all(|r| r.role == "tenant:acme"));
        assert!(!report.is_ok());
    }

    #[test]
    fn every_rule_is_checked_against_config_and_schema() {
        let ids = vec!["m".to_owned(), "n".to_owned()];
        let schemas = BTreeMap::from([("m".to_owned(), schema())]);
        let report = policy().integrity_report(Some(&ids), &schemas);
        assert_eq!(
            statuses(&report),
            vec![
                ("*", "OK", "Global Access"),
                ("M", "OK", "Verified"),
                ("ghost", "MISSING", "Datasource not defined in config"),
                ("*", "OK", "Global Access"),
                ("m.*", "OK", "DS Verified"),
                ("m.machines", "OK", "DS Verified"),
                ("m.main.machines", "OK", "DS Verified"),
                (
                    "m.other.*",
                    "UNKNOWN_TABLE",
                    "No table in schema 'other' of 'm'"
                ),
                (
                    "m.nope",
                    "UNKNOWN_TABLE",
                    "Table 'nope' not in the schema of 'm'"
                ),
                ("ghost.t", "INVALID_DS", "Datasource 'ghost' unknown"),
                ("x.y.z.w", "INVALID_DS", "Datasource 'x' unknown"),
                ("n.t", "OK", "DS Verified (no schema: table not checked)"),
                ("m.machines.serial_number", "OK", "Verified"),
                (
                    "m.machines.nope",
                    "UNKNOWN_COLUMN",
                    "Column 'nope' not in table 'machines' of 'm'"
                ),
                (
                    "m.nope.c",
                    "UNKNOWN_TABLE",
                    "Table 'nope' not in the schema of 'm'"
                ),
                ("ghost.t.c", "INVALID_DS", "Datasource 'ghost' unknown"),
                ("n.t.c", "OK", "DS Verified (no schema: column not checked)"),
            ]
        );
        assert_eq!((report.errors(), report.warnings()), (4, 4));
        assert!(!report.is_ok());
    }

    #[test]
    fn without_configuration_datasources_are_unverified() {
        let report = policy().integrity_report(None, &BTreeMap::new());
        assert_eq!(report.errors(), 0);
        assert!(report.is_ok());
        assert_eq!(report.rows[1].status, IntegrityStatus::Unverified);
        assert_eq!(report.rows[0].status, IntegrityStatus::Ok);
    }
}
