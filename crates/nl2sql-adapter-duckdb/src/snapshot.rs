//! Schema snapshots from DuckDB's catalog functions (`duckdb_columns()`,
//! `duckdb_constraints()`, `duckdb_tables()`): the tables of the opened database with
//! keys, row counts and sampled column statistics, or (for [`Detail::Contract`]) the
//! tables, columns and keys alone.

use std::time::{Duration, Instant};

use duckdb::Connection;
use nl2sql_adapter::introspect::{
    self, CatalogColumn, CatalogForeignKey, StatClass, assemble_contract,
};
use nl2sql_adapter::{AdapterOptions, ResultError};
use nl2sql_state::{
    ColumnMetadata, ColumnStatistics, Dialect, SchemaMetadata, SchemaSnapshot, TableMetadata,
    TableRef,
};

use crate::error::map_err;

type Row = Vec<Option<String>>;

/// Runs `sql` and returns every value as text.
fn text_rows(conn: &Connection, sql: &str, width: usize) -> Result<Vec<Row>, ResultError> {
    let mut stmt = conn.prepare(sql).map_err(|e| map_err(&e))?;
    let mut rows = stmt.query([]).map_err(|e| map_err(&e))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(|e| map_err(&e))? {
        let mut row = Vec::with_capacity(width);
        for i in 0..width {
            row.push(r.get::<_, Option<String>>(i).map_err(|e| map_err(&e))?);
        }
        out.push(row);
    }
    Ok(out)
}

fn s(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

fn int(v: &Option<String>) -> i64 {
    v.as_deref().and_then(|x| x.parse().ok()).unwrap_or(0)
}

/// How much of the schema a snapshot reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Tables, columns and keys only: catalog reads, no row counts, statistics or
    /// samples; the snapshot has no metadata.
    Contract,
    /// The contract plus row counts and column statistics within the time budget.
    Full,
}

pub(crate) fn snapshot(
    conn: &Connection,
    id: &str,
    options: &AdapterOptions,
    detail: Detail,
) -> Result<SchemaSnapshot, ResultError> {
    let started = Instant::now();
    let budget = Duration::from_millis(options.schema_stats_timeout_ms);
    let sample_rows = options.schema_stats_sample_rows;
    let columns: Vec<CatalogColumn> = text_rows(
        conn,
        "SELECT schema_name, table_name, column_name, data_type, CAST(is_nullable AS VARCHAR) \
         FROM duckdb_columns() \
         WHERE NOT internal AND database_name = current_database() \
         ORDER BY schema_name, table_name, column_index",
        5,
    )?
    .iter()
    .map(|r| CatalogColumn {
        schema: s(&r[0]),
        table: s(&r[1]),
        column: s(&r[2]),
        data_type: s(&r[3]),
        nullable: r[4].as_deref() == Some("true"),
    })
    .collect();
    let primary_keys: Vec<(TableRef, String)> = text_rows(
        conn,
        "SELECT schema_name, table_name, unnest(constraint_column_names) \
         FROM duckdb_constraints() \
         WHERE constraint_type = 'PRIMARY KEY' AND database_name = current_database()",
        3,
    )?
    .iter()
    .map(|r| {
        (
            TableRef {
                schema_name: s(&r[0]),
                table_name: s(&r[1]),
            },
            s(&r[2]),
        )
    })
    .collect();
    let foreign_keys: Vec<CatalogForeignKey> = text_rows(
        conn,
        "SELECT CAST(constraint_index AS VARCHAR), schema_name, table_name, \
                unnest(constraint_column_names), referenced_table, \
                unnest(referenced_column_names) \
         FROM duckdb_constraints() \
         WHERE constraint_type = 'FOREIGN KEY' AND database_name = current_database() \
           AND referenced_table IS NOT NULL \
         ORDER BY schema_name, table_name, constraint_index",
        6,
    )?
    .iter()
    .map(|r| CatalogForeignKey {
        name: s(&r[0]),
        table: TableRef {
            schema_name: s(&r[1]),
            table_name: s(&r[2]),
        },
        column: s(&r[3]),
        // DuckDB foreign keys stay within a schema.
        referred_table: TableRef {
            schema_name: s(&r[1]),
            table_name: s(&r[4]),
        },
        referred_column: s(&r[5]),
    })
    .collect();
    let contract = assemble_contract(id, "duckdb", &columns, &primary_keys, &foreign_keys);
    if detail == Detail::Contract {
        return Ok(SchemaSnapshot {
            contract,
            metadata: None,
        });
    }
    let estimates = text_rows(
        conn,
        "SELECT schema_name, table_name, CAST(estimated_size AS VARCHAR) FROM duckdb_tables() \
         WHERE database_name = current_database()",
        3,
    )?;
    let mut metadata = SchemaMetadata {
        datasource_id: id.to_owned(),
        engine_type: "duckdb".to_owned(),
        ..SchemaMetadata::default()
    };
    let dialect = Dialect::DuckDb;
    for (key, table) in &contract.tables {
        let t = &table.table;
        let estimate = estimates
            .iter()
            .find(|r| s(&r[0]) == t.schema_name && s(&r[1]) == t.table_name)
            .map(|r| int(&r[2]).max(0) as u64);
        let row_count = match estimate {
            Some(e) if e > sample_rows => Some(e),
            _ => {
                let sql = format!(
                    "SELECT CAST(count(*) AS VARCHAR) FROM {}.{}",
                    introspect::quote_ident(dialect, &t.schema_name),
                    introspect::quote_ident(dialect, &t.table_name)
                );
                text_rows(conn, &sql, 1)?
                    .first()
                    .map(|r| int(&r[0]).max(0) as u64)
            }
        };
        let mut tmeta = TableMetadata {
            table: t.clone(),
            row_count,
            ..TableMetadata::default()
        };
        let source = introspect::stats_source(
            dialect,
            &t.schema_name,
            &t.table_name,
            row_count,
            sample_rows,
        );
        for (name, col) in &table.columns {
            let class = introspect::stat_class(&col.data_type);
            let stats = if started.elapsed() < budget {
                column_stats(conn, &source, name, class)?
            } else {
                None
            };
            tmeta.columns.insert(
                name.clone(),
                ColumnMetadata {
                    statistics: stats,
                    ..ColumnMetadata::default()
                },
            );
        }
        metadata.tables.insert(key.clone(), tmeta);
    }
    Ok(SchemaSnapshot {
        contract,
        metadata: Some(metadata),
    })
}

fn column_stats(
    conn: &Connection,
    source: &str,
    column: &str,
    class: StatClass,
) -> Result<Option<ColumnStatistics>, ResultError> {
    let Some(sql) = introspect::stats_sql(Dialect::DuckDb, source, column, class) else {
        return Ok(None);
    };
    // Counts as text too, so one reader serves every column; min and max as well, since a
    // BOOLEAN column's are untyped NULLs, which the driver cannot read as text.
    let sql = format!(
        "SELECT CAST(c0 AS VARCHAR), CAST(c1 AS VARCHAR), CAST(c2 AS VARCHAR), \
         CAST(c3 AS VARCHAR), CAST(c4 AS VARCHAR) \
         FROM ({sql}) AS s(c0, c1, c2, c3, c4)"
    );
    let rows = text_rows(conn, &sql, 5)?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let mut stats = introspect::statistics(
        class,
        int(&r[0]),
        int(&r[1]),
        int(&r[2]),
        r[3].clone(),
        r[4].clone(),
    );
    if introspect::lists_values(class, stats.distinct_count) {
        let listed = text_rows(
            conn,
            &introspect::values_sql(Dialect::DuckDb, source, column),
            1,
        )?;
        let values = listed
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        introspect::fill_values(&mut stats, values);
    }
    Ok(Some(stats))
}
