//! Engine-neutral parts of schema snapshots (spec: adapters.md §5): assembling the
//! contract from catalog rows, and the SQL and arithmetic of cheap column statistics.
//! Each adapter reads its own catalog and runs these statements in its sandbox.

use indexmap::IndexMap;
use nl2sql_state::{
    Cardinality, ColumnContract, ColumnStatistics, Dialect, ForeignKeyContract, SchemaContract,
    TableContract, TableRef,
};

/// Text columns with at most this many distinct values get sample values.
pub const LOW_CARDINALITY: u64 = 20;

/// How many sample values a low-cardinality column gets.
pub const SAMPLE_VALUES: usize = 5;

/// Text columns with at most this many distinct values have them all listed
/// (`ColumnStatistics::values`).
pub const VALUE_LIST_LIMIT: u64 = 200;

/// The most characters a column's listed values may take together; a column whose
/// values take more is not listed (its list would not be complete).
pub const VALUE_LIST_CHARS: usize = 8_192;

/// One column as read from a catalog, in table order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogColumn {
    /// Schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Column.
    pub column: String,
    /// The engine's type name.
    pub data_type: String,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

/// One column of a foreign key, as read from a catalog; columns of one key share `name`
/// and come in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogForeignKey {
    /// The constraint's name (or any id unique within the table).
    pub name: String,
    /// The constrained table.
    pub table: TableRef,
    /// The constrained column.
    pub column: String,
    /// The referenced table.
    pub referred_table: TableRef,
    /// The referenced column.
    pub referred_column: String,
}

/// Builds the contract: tables in the order of `columns`, primary keys from
/// `primary_keys` (table, column), foreign keys grouped by constraint name, then the
/// undeclared keys the names spell ([`SchemaContract::infer_foreign_keys`]).
pub fn assemble_contract(
    datasource_id: &str,
    engine_type: &str,
    columns: &[CatalogColumn],
    primary_keys: &[(TableRef, String)],
    foreign_keys: &[CatalogForeignKey],
) -> SchemaContract {
    let mut tables: IndexMap<TableRef, TableContract> = IndexMap::new();
    for c in columns {
        let key = TableRef {
            schema_name: c.schema.clone(),
            table_name: c.table.clone(),
        };
        let table = tables.entry(key.clone()).or_insert_with(|| TableContract {
            table: key.clone(),
            ..TableContract::default()
        });
        let is_primary_key = primary_keys
            .iter()
            .any(|(t, col)| t == &key && col == &c.column);
        table.columns.insert(
            c.column.clone(),
            ColumnContract {
                name: c.column.clone(),
                data_type: c.data_type.clone(),
                is_nullable: c.nullable,
                is_primary_key,
            },
        );
    }
    for fk in foreign_keys {
        let Some(table) = tables.get_mut(&fk.table) else {
            continue;
        };
        // Keys are grouped by name; a new name or a new referred table starts a key.
        let existing = table.foreign_keys.iter().position(|k| {
            k.business_meaning.as_deref() == Some(fk.name.as_str())
                && k.referred_table == fk.referred_table
        });
        match existing {
            Some(i) => {
                table.foreign_keys[i]
                    .constrained_columns
                    .push(fk.column.clone());
                table.foreign_keys[i]
                    .referred_columns
                    .push(fk.referred_column.clone());
            }
            None => table.foreign_keys.push(ForeignKeyContract {
                constrained_columns: vec![fk.column.clone()],
                referred_table: fk.referred_table.clone(),
                referred_columns: vec![fk.referred_column.clone()],
                cardinality: Cardinality::ManyToOne,
                // Temporarily holds the constraint name for grouping; cleared below.
                business_meaning: Some(fk.name.clone()),
                inferred: false,
            }),
        }
    }
    let mut contract = SchemaContract::new(datasource_id, engine_type);
    for (_, mut table) in tables {
        for fk in &mut table.foreign_keys {
            fk.business_meaning = None;
        }
        contract.add_table(table);
    }
    contract.infer_foreign_keys();
    contract
}

/// How a column's statistics are computed, from its engine type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatClass {
    /// Integers: min/max as JSON integers.
    Integer,
    /// Other numbers: min/max as JSON numbers.
    Number,
    /// Text: min/max as strings, samples when the cardinality is low.
    Text,
    /// Dates and times: min/max as strings.
    Temporal,
    /// Booleans: distinct count only.
    Boolean,
    /// Types without a reliable order or equality (JSON, binary, arrays, …): none.
    Skip,
}

/// The statistics class of an engine type name (`bigint`, `VARCHAR(255)`,
/// `timestamp without time zone`, `DECIMAL(10,2)`, …).
pub fn stat_class(data_type: &str) -> StatClass {
    let lower = data_type.trim().to_ascii_lowercase();
    let word = lower
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    const INTEGER: &[&str] = &[
        "smallint",
        "integer",
        "int",
        "bigint",
        "tinyint",
        "mediumint",
        "hugeint",
        "int2",
        "int4",
        "int8",
        "ubigint",
        "uinteger",
        "usmallint",
        "utinyint",
        "uhugeint",
        "serial",
        "bigserial",
        "smallserial",
    ];
    const NUMBER: &[&str] = &[
        "numeric", "decimal", "real", "float", "double", "float4", "float8",
    ];
    const TEXT: &[&str] = &[
        "text",
        "varchar",
        "char",
        "character",
        "bpchar",
        "string",
        "name",
        "citext",
        "tinytext",
        "mediumtext",
        "longtext",
        "enum",
        "uuid",
        "nvarchar",
        "nchar",
        "clob",
    ];
    const TEMPORAL: &[&str] = &[
        "date",
        "time",
        "timetz",
        "timestamp",
        "timestamptz",
        "datetime",
        "year",
    ];
    if INTEGER.contains(&word) {
        StatClass::Integer
    } else if NUMBER.contains(&word) {
        StatClass::Number
    } else if TEXT.contains(&word) {
        StatClass::Text
    } else if TEMPORAL.contains(&word) {
        StatClass::Temporal
    } else if word == "bool" || word == "boolean" {
        StatClass::Boolean
    } else {
        StatClass::Skip
    }
}

/// Quotes an identifier for `dialect`.
pub fn quote_ident(dialect: Dialect, ident: &str) -> String {
    match dialect {
        Dialect::MySql => format!("`{}`", ident.replace('`', "``")),
        _ => format!("\"{}\"", ident.replace('"', "\"\"")),
    }
}

/// The text cast of `expr` in `dialect`.
fn as_text(dialect: Dialect, expr: &str) -> String {
    match dialect {
        Dialect::MySql => format!("CAST({expr} AS CHAR)"),
        _ => format!("CAST({expr} AS VARCHAR)"),
    }
}

/// The source of statistics for a table: the table itself, or its first `sample_rows`
/// rows when it has more.
pub fn stats_source(
    dialect: Dialect,
    schema: &str,
    table: &str,
    row_count: Option<u64>,
    sample_rows: u64,
) -> String {
    let name = format!(
        "{}.{}",
        quote_ident(dialect, schema),
        quote_ident(dialect, table)
    );
    if row_count.unwrap_or(u64::MAX) > sample_rows {
        format!("(SELECT * FROM {name} LIMIT {sample_rows}) AS nl2sql_sample")
    } else {
        name
    }
}

/// `SELECT count(*), count(c), count(DISTINCT c), min(c), max(c)` over `source`, with
/// min and max cast to text (NULLs for booleans), or `None` for a [`StatClass::Skip`]
/// column.
pub fn stats_sql(dialect: Dialect, source: &str, column: &str, class: StatClass) -> Option<String> {
    let c = quote_ident(dialect, column);
    let (min, max) = match class {
        StatClass::Skip => return None,
        StatClass::Boolean => ("NULL".to_owned(), "NULL".to_owned()),
        _ => (
            as_text(dialect, &format!("min({c})")),
            as_text(dialect, &format!("max({c})")),
        ),
    };
    Some(format!(
        "SELECT count(*), count({c}), count(DISTINCT {c}), {min}, {max} FROM {source}"
    ))
}

/// The distinct values of a text column with few of them ([`lists_values`]), as text,
/// most frequent first (ties by the value itself).
pub fn values_sql(dialect: Dialect, source: &str, column: &str) -> String {
    let c = quote_ident(dialect, column);
    format!(
        "SELECT {} FROM {source} WHERE {c} IS NOT NULL GROUP BY {c} ORDER BY count(*) DESC, {c} LIMIT {VALUE_LIST_LIMIT}",
        as_text(dialect, &c)
    )
}

/// Puts the values [`values_sql`] read into `stats`: all of them in `values` when they
/// are all there and fit in [`VALUE_LIST_CHARS`], and the first [`SAMPLE_VALUES`] in
/// `sample_values` when the column has at most [`LOW_CARDINALITY`] values.
pub fn fill_values(stats: &mut ColumnStatistics, values: Vec<String>) {
    let all = u64::try_from(values.len()).is_ok_and(|n| n == stats.distinct_count);
    if stats.distinct_count <= LOW_CARDINALITY {
        stats.sample_values = values
            .iter()
            .take(SAMPLE_VALUES)
            .cloned()
            .map(serde_json::Value::String)
            .collect();
    }
    let chars: usize = values.iter().map(|v| v.chars().count()).sum();
    if all && chars <= VALUE_LIST_CHARS {
        stats.values = values.into_iter().map(serde_json::Value::String).collect();
    }
}

/// A min or max read as text, as JSON of the column's class.
pub fn stat_value(class: StatClass, text: Option<String>) -> Option<serde_json::Value> {
    let text = text?;
    match class {
        StatClass::Integer => text
            .parse::<i64>()
            .ok()
            .map(serde_json::Value::from)
            .or(Some(serde_json::Value::String(text))),
        StatClass::Number => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(serde_json::Value::Number)
            .or(Some(serde_json::Value::String(text))),
        StatClass::Boolean | StatClass::Skip => None,
        StatClass::Text | StatClass::Temporal => Some(serde_json::Value::String(text)),
    }
}

/// The statistics from the counts of [`stats_sql`].
pub fn statistics(
    class: StatClass,
    total: i64,
    non_null: i64,
    distinct: i64,
    min: Option<String>,
    max: Option<String>,
) -> ColumnStatistics {
    let total = total.max(0) as f64;
    let non_null = non_null.max(0) as f64;
    ColumnStatistics {
        null_percentage: if total > 0.0 {
            (total - non_null) / total
        } else {
            0.0
        },
        distinct_count: distinct.max(0) as u64,
        min_value: stat_value(class, min),
        max_value: stat_value(class, max),
        sample_values: Vec::new(),
        values: Vec::new(),
    }
}

/// Whether a column of `class` with `distinct` values has its values read
/// ([`values_sql`], [`fill_values`]).
pub fn lists_values(class: StatClass, distinct: u64) -> bool {
    class == StatClass::Text && distinct > 0 && distinct <= VALUE_LIST_LIMIT
}
