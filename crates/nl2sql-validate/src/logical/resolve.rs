//! T: table resolution and the alias → columns map (spec: validators.md §2.2).

use std::collections::BTreeMap;

use nl2sql_plan::PlanModel;
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ErrorCode, PipelineError, Severity, TableContract, norm,
};

use super::context::{LogicalContext, finding};

pub(crate) use nl2sql_state::TypeClass;

/// A plan table resolved to a schema table.
#[derive(Debug)]
pub(crate) struct Resolved<'a> {
    pub(crate) table: &'a TableContract,
    /// Columns by lower-cased last name part.
    pub(crate) columns: BTreeMap<String, &'a ColumnContract>,
}

/// A column reference resolved to its table.
pub(crate) struct ColumnRef<'a> {
    pub(crate) table: &'a TableContract,
    pub(crate) column: &'a ColumnContract,
}

/// The aliases of a plan and what they resolved to.
pub(crate) struct Resolver<'a> {
    /// Every plan alias, in plan order.
    pub(crate) aliases: Vec<String>,
    /// Aliases whose table resolved.
    pub(crate) resolved: BTreeMap<String, Resolved<'a>>,
    metadata: Option<&'a nl2sql_state::SchemaMetadata>,
}

impl<'a> Resolver<'a> {
    /// Resolves every plan table, appending T findings.
    pub(crate) fn new(
        plan: &PlanModel,
        ctx: &LogicalContext<'a>,
        out: &mut Vec<PipelineError>,
    ) -> Self {
        let mut simple: BTreeMap<String, Vec<&'a TableContract>> = BTreeMap::new();
        let mut full: BTreeMap<String, &'a TableContract> = BTreeMap::new();
        for t in ctx.contract.tables.values() {
            simple.entry(norm(&t.table.table_name)).or_default().push(t);
            full.insert(t.table.full_name().to_lowercase(), t);
        }
        let mut resolved = BTreeMap::new();
        for (i, t) in plan.tables.iter().enumerate() {
            let candidates: Vec<&TableContract> = if t.schema_name.is_some() || t.database.is_some()
            {
                let key = [
                    t.database.as_deref(),
                    t.schema_name.as_deref(),
                    Some(&t.name),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(".")
                .to_lowercase();
                match full.get(&key) {
                    Some(found) => vec![*found],
                    None => simple.get(&norm(&t.name)).cloned().unwrap_or_default(),
                }
            } else {
                simple.get(&norm(&t.name)).cloned().unwrap_or_default()
            };
            let path = format!("$.tables[{i}].name");
            match candidates.as_slice() {
                [one] => {
                    let columns = one.columns.values().map(|c| (norm(&c.name), c)).collect();
                    resolved.insert(
                        t.alias.clone(),
                        Resolved {
                            table: one,
                            columns,
                        },
                    );
                }
                [] => out.push(finding(
                    ErrorCode::TableNotFound,
                    Severity::Error,
                    format!("Table '{}' not found in relevant tables.", t.name),
                    &path,
                )),
                _ => out.push(finding(
                    ErrorCode::TableNotFound,
                    Severity::Error,
                    format!(
                        "Ambiguous table '{}' across schemas; plan must specify schema.",
                        t.name
                    ),
                    &path,
                )),
            }
        }
        Resolver {
            aliases: plan.tables.iter().map(|t| t.alias.clone()).collect(),
            resolved,
            metadata: ctx.metadata,
        }
    }

    /// True when `alias` is a plan alias.
    pub(crate) fn is_plan_alias(&self, alias: &str) -> bool {
        self.aliases.iter().any(|a| a == alias)
    }

    /// Resolves a column reference: by alias, or the only resolved alias holding it.
    pub(crate) fn column(&self, alias: Option<&str>, name: &str) -> Option<ColumnRef<'a>> {
        let name = norm(name);
        let hit = |r: &Resolved<'a>| {
            r.columns.get(&name).map(|c| ColumnRef {
                table: r.table,
                column: c,
            })
        };
        match alias {
            Some(a) => self.resolved.get(a).and_then(hit),
            None => {
                let mut hits = self.resolved.values().filter_map(hit);
                let first = hits.next()?;
                hits.next().is_none().then_some(first)
            }
        }
    }

    /// The metadata (statistics, synonyms) of a resolved column.
    pub(crate) fn column_metadata(&self, col: &ColumnRef<'_>) -> Option<&'a ColumnMetadata> {
        let tables = &self.metadata?.tables;
        let table = tables.get(&col.table.table.full_name()).or_else(|| {
            tables
                .values()
                .find(|t| norm(&t.table.table_name) == norm(&col.table.table.table_name))
        })?;
        table.columns.get(&col.column.name).or_else(|| {
            table
                .columns
                .iter()
                .find(|(k, _)| norm(k) == norm(&col.column.name))
                .map(|(_, v)| v)
        })
    }
}
