//! Schema snapshot shapes (spec: adapters.md §5.1).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::{canonical_json, sha256_hex};

/// A table's schema and name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TableRef {
    /// Schema (`main`, `public`, the MySQL database name).
    pub schema_name: String,
    /// Table name.
    pub table_name: String,
}

impl TableRef {
    /// The table key `schema.table`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.schema_name, self.table_name)
    }
}

fn yes() -> bool {
    true
}

/// The class of a column's engine type, as every crate reads it (the logical validator's
/// type checks, the offline planner's linking): by keyword, case-insensitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeClass {
    /// Integers and decimals (`INT…`, `REAL`, `FLOAT`, `DOUBLE`, `NUMERIC`, `DECIMAL`, `NUMBER`).
    Numeric,
    /// Calendar dates (`DATE` exactly).
    Date,
    /// Timestamps (`DATETIME`, `TIMESTAMP…`).
    DateTime,
    /// Times of day (`TIME` exactly).
    Time,
    /// Booleans (`BOOL…`).
    Boolean,
    /// Anything else.
    Text,
}

impl TypeClass {
    /// The class of an engine type string.
    pub fn of(data_type: &str) -> TypeClass {
        let t = data_type.trim().to_ascii_uppercase();
        if [
            "INT", "REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL", "NUMBER",
        ]
        .iter()
        .any(|k| t.contains(k))
        {
            TypeClass::Numeric
        } else if t.contains("DATETIME") || t.contains("TIMESTAMP") {
            TypeClass::DateTime
        } else if t == "DATE" {
            TypeClass::Date
        } else if t == "TIME" {
            TypeClass::Time
        } else if t.contains("BOOL") {
            TypeClass::Boolean
        } else {
            TypeClass::Text
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnContract {
    /// Column name as the engine reports it.
    pub name: String,
    /// Engine type string.
    pub data_type: String,
    /// Whether it may hold NULL.
    #[serde(default = "yes")]
    pub is_nullable: bool,
    /// Whether it belongs to the primary key.
    #[serde(default)]
    pub is_primary_key: bool,
}

/// Cardinality of a foreign key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cardinality {
    /// One to one.
    OneToOne,
    /// One to many.
    OneToMany,
    /// Many to one.
    ManyToOne,
    /// Many to many.
    ManyToMany,
    /// Not known.
    #[default]
    Unknown,
}

/// A foreign key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyContract {
    /// Local columns.
    pub constrained_columns: Vec<String>,
    /// The referenced table.
    pub referred_table: TableRef,
    /// Referenced columns.
    pub referred_columns: Vec<String>,
    /// Cardinality, when known.
    #[serde(default)]
    pub cardinality: Cardinality,
    /// What the relationship means, when described.
    #[serde(default)]
    pub business_meaning: Option<String>,
    /// Not declared by the database: read from the names
    /// ([`SchemaContract::infer_foreign_keys`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
}

/// A table: its name, columns in table order and foreign keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableContract {
    /// Name.
    pub table: TableRef,
    /// Columns by name, in table order.
    #[serde(default)]
    pub columns: IndexMap<String, ColumnContract>,
    /// Foreign keys.
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKeyContract>,
}

/// The contract of a datasource: its tables by key `schema.table`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaContract {
    /// Datasource id.
    pub datasource_id: String,
    /// Engine type (`sqlite`, `duckdb`, `postgres`, `mysql`, …).
    pub engine_type: String,
    /// Tables by key.
    #[serde(default)]
    pub tables: BTreeMap<String, TableContract>,
}

impl SchemaContract {
    /// An empty contract.
    pub fn new(datasource_id: impl Into<String>, engine_type: impl Into<String>) -> Self {
        SchemaContract {
            datasource_id: datasource_id.into(),
            engine_type: engine_type.into(),
            tables: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a table under its key.
    pub fn add_table(&mut self, table: TableContract) {
        self.tables.insert(table.table.full_name(), table);
    }

    /// SHA-256 of the canonical JSON of the contract, with each table's foreign keys
    /// sorted by referred table key, then columns, so that their order does not matter.
    pub fn fingerprint(&self) -> String {
        let mut normalised = self.clone();
        for table in normalised.tables.values_mut() {
            table.foreign_keys.sort_by(|a, b| {
                (
                    a.referred_table.full_name(),
                    &a.constrained_columns,
                    &a.referred_columns,
                )
                    .cmp(&(
                        b.referred_table.full_name(),
                        &b.constrained_columns,
                        &b.referred_columns,
                    ))
            });
        }
        let value = serde_json::to_value(&normalised).unwrap_or(Value::Null);
        sha256_hex(canonical_json(&value).as_bytes())
    }
}

/// Statistics of one column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnStatistics {
    /// Share of NULLs, 0..1.
    #[serde(default)]
    pub null_percentage: f64,
    /// Number of distinct values.
    #[serde(default)]
    pub distinct_count: u64,
    /// Smallest value.
    #[serde(default)]
    pub min_value: Option<Value>,
    /// Largest value.
    #[serde(default)]
    pub max_value: Option<Value>,
    /// Most frequent values.
    #[serde(default)]
    pub sample_values: Vec<Value>,
    /// Every distinct value of a text column, most frequent first, when it has few enough
    /// of them to list (the adapters list at most 200, of bounded total size): what the
    /// offline planner links a question's words to. Empty when the column has more values,
    /// or longer ones, or was not profiled; `sample_values` is what the retrieved context
    /// shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Value>,
}

/// Descriptive metadata of one column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnMetadata {
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Statistics.
    #[serde(default)]
    pub statistics: Option<ColumnStatistics>,
    /// Synonyms.
    #[serde(default)]
    pub synonyms: Option<Vec<String>>,
    /// Personal data.
    #[serde(default)]
    pub pii: bool,
}

/// Descriptive metadata of one table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableMetadata {
    /// Name.
    pub table: TableRef,
    /// Column metadata by name.
    #[serde(default)]
    pub columns: IndexMap<String, ColumnMetadata>,
    /// Row count.
    #[serde(default)]
    pub row_count: Option<u64>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
}

/// Descriptive metadata of a datasource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SchemaMetadata {
    /// Datasource id.
    #[serde(default)]
    pub datasource_id: String,
    /// Engine type.
    #[serde(default)]
    pub engine_type: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Business domains.
    #[serde(default)]
    pub domains: Option<Vec<String>>,
    /// Table metadata by key.
    #[serde(default)]
    pub tables: BTreeMap<String, TableMetadata>,
}

/// A schema snapshot: contract plus metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SchemaSnapshot {
    /// The contract.
    pub contract: SchemaContract,
    /// The metadata, when collected.
    #[serde(default)]
    pub metadata: Option<SchemaMetadata>,
}
