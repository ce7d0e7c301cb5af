//! The datasource's tables, indexed for name lookup in one dialect.

use std::collections::HashMap;

use nl2sql_state::{Dialect, SchemaContract};

use super::ident::stored_key;

/// One table of the catalog.
#[derive(Debug, Clone)]
pub(crate) struct CatalogTable {
    /// Schema name as stored (e.g. `main`, `public`).
    pub(crate) schema: String,
    /// Table name as stored.
    pub(crate) name: String,
    /// Columns in table order: (lookup key, stored name).
    pub(crate) columns: Vec<(String, String)>,
}

/// Result of looking a table name up.
pub(crate) enum TableLookup<'a> {
    Found(usize, &'a CatalogTable),
    Ambiguous(Vec<String>),
    Missing,
}

/// The tables of one datasource, keyed by dialect-aware names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    tables: Vec<CatalogTable>,
    by_name: HashMap<String, Vec<usize>>,
    by_qualified: HashMap<(String, String), usize>,
    /// No schema was given: any name may be a table, with unknown columns.
    pub(crate) open: bool,
}

impl Catalog {
    pub(crate) fn new(contract: &SchemaContract, dialect: Dialect) -> Self {
        let mut catalog = Catalog::default();
        for table in contract.tables.values() {
            let idx = catalog.tables.len();
            let name_key = stored_key(dialect, &table.table.table_name);
            let schema_key = stored_key(dialect, &table.table.schema_name);
            catalog
                .by_name
                .entry(name_key.clone())
                .or_default()
                .push(idx);
            catalog.by_qualified.insert((schema_key, name_key), idx);
            catalog.tables.push(CatalogTable {
                schema: table.table.schema_name.clone(),
                name: table.table.table_name.clone(),
                columns: table
                    .columns
                    .values()
                    .map(|c| (stored_key(dialect, &c.name), c.name.clone()))
                    .collect(),
            });
        }
        catalog
    }

    /// A catalog for checks without a schema: tables and columns cannot be verified.
    pub(crate) fn open() -> Self {
        Catalog {
            open: true,
            ..Catalog::default()
        }
    }

    pub(crate) fn table(&self, idx: usize) -> &CatalogTable {
        &self.tables[idx]
    }

    /// Looks a table up by (optional schema key, name key).
    pub(crate) fn lookup(&self, schema: Option<&str>, name: &str) -> TableLookup<'_> {
        if let Some(schema) = schema {
            return match self.by_qualified.get(&(schema.to_owned(), name.to_owned())) {
                Some(&idx) => TableLookup::Found(idx, &self.tables[idx]),
                None => TableLookup::Missing,
            };
        }
        match self.by_name.get(name).map(Vec::as_slice) {
            Some([idx]) => TableLookup::Found(*idx, &self.tables[*idx]),
            Some(many) if !many.is_empty() => TableLookup::Ambiguous(
                many.iter()
                    .map(|&i| format!("{}.{}", self.tables[i].schema, self.tables[i].name))
                    .collect(),
            ),
            _ => TableLookup::Missing,
        }
    }

    /// True when `name` (a lookup key) is the name of some table, in any schema.
    pub(crate) fn has_table_named(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Stored names of every table, for suggestions.
    pub(crate) fn table_names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|t| t.name.as_str())
    }
}
