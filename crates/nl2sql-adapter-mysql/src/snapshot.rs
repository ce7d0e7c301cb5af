//! Schema snapshots from `information_schema`: the tables and views of the connection's
//! database (or of every non-system database when the URL names none) that the account
//! may see, with keys, row counts and sampled column statistics, or (for
//! [`Detail::Contract`]) the tables, columns and keys alone.

use std::time::{Duration, Instant};

use mysql_async::Conn;
use mysql_async::prelude::Queryable as _;
use nl2sql_adapter::introspect::{
    self, CatalogColumn, CatalogForeignKey, StatClass, assemble_contract,
};
use nl2sql_adapter::{AdapterOptions, ResultError};
use nl2sql_state::{
    ColumnMetadata, ColumnStatistics, Dialect, SchemaMetadata, SchemaSnapshot, TableMetadata,
    TableRef,
};

use crate::error::map_err;

/// The schemas described: the current database, or every non-system one.
const SCHEMAS: &str = "(TABLE_SCHEMA = DATABASE() OR (DATABASE() IS NULL AND TABLE_SCHEMA NOT IN \
     ('mysql', 'information_schema', 'performance_schema', 'sys')))";

type Text = Option<String>;

fn s(v: Text) -> String {
    v.unwrap_or_default()
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

pub(crate) async fn snapshot(
    conn: &mut Conn,
    id: &str,
    options: &AdapterOptions,
    detail: Detail,
) -> Result<SchemaSnapshot, ResultError> {
    let started = Instant::now();
    let budget = Duration::from_millis(options.schema_stats_timeout_ms);
    let sample_rows = options.schema_stats_sample_rows;
    let rows: Vec<(Text, Text, Text, Text, Text)> = conn
        .query(format!(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE \
             FROM information_schema.COLUMNS WHERE {SCHEMAS} \
             ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION"
        ))
        .await
        .map_err(|e| map_err(&e))?;
    let columns: Vec<CatalogColumn> = rows
        .into_iter()
        .map(|(schema, table, column, ty, nullable)| CatalogColumn {
            schema: s(schema),
            table: s(table),
            column: s(column),
            data_type: s(ty),
            nullable: nullable.as_deref() == Some("YES"),
        })
        .collect();
    let keys: Vec<(Text, Text, Text, Text, Text, Text, Text)> = conn
        .query(format!(
            "SELECT CONSTRAINT_NAME, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, \
                    REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE WHERE {SCHEMAS} \
               AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL) \
             ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION"
        ))
        .await
        .map_err(|e| map_err(&e))?;
    let mut primary_keys = Vec::new();
    let mut foreign_keys = Vec::new();
    for (name, schema, table, column, rschema, rtable, rcolumn) in keys {
        let table = TableRef {
            schema_name: s(schema),
            table_name: s(table),
        };
        if name.as_deref() == Some("PRIMARY") {
            primary_keys.push((table, s(column)));
        } else {
            foreign_keys.push(CatalogForeignKey {
                name: s(name),
                table,
                column: s(column),
                referred_table: TableRef {
                    schema_name: s(rschema),
                    table_name: s(rtable),
                },
                referred_column: s(rcolumn),
            });
        }
    }
    let contract = assemble_contract(id, "mysql", &columns, &primary_keys, &foreign_keys);
    if detail == Detail::Contract {
        return Ok(SchemaSnapshot {
            contract,
            metadata: None,
        });
    }
    let estimates: Vec<(Text, Text, Option<u64>)> = conn
        .query(format!(
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE {SCHEMAS}"
        ))
        .await
        .map_err(|e| map_err(&e))?;
    let mut metadata = SchemaMetadata {
        datasource_id: id.to_owned(),
        engine_type: "mysql".to_owned(),
        ..SchemaMetadata::default()
    };
    let dialect = Dialect::MySql;
    for (key, table) in &contract.tables {
        let t = &table.table;
        let estimate = estimates
            .iter()
            .find(|(sc, tb, _)| {
                sc.as_deref() == Some(&t.schema_name) && tb.as_deref() == Some(&t.table_name)
            })
            .and_then(|(_, _, n)| *n);
        // InnoDB's TABLE_ROWS is an estimate: count exactly unless the table is big.
        let row_count = match estimate {
            Some(e) if e > sample_rows => Some(e),
            _ => conn
                .query_first::<u64, _>(format!(
                    "SELECT count(*) FROM {}.{}",
                    introspect::quote_ident(dialect, &t.schema_name),
                    introspect::quote_ident(dialect, &t.table_name)
                ))
                .await
                .map_err(|e| map_err(&e))?,
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
                column_stats(conn, &source, name, class).await?
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

async fn column_stats(
    conn: &mut Conn,
    source: &str,
    column: &str,
    class: StatClass,
) -> Result<Option<ColumnStatistics>, ResultError> {
    let Some(sql) = introspect::stats_sql(Dialect::MySql, source, column, class) else {
        return Ok(None);
    };
    let row: Option<(i64, i64, i64, Text, Text)> =
        conn.query_first(sql).await.map_err(|e| map_err(&e))?;
    let Some((total, non_null, distinct, min, max)) = row else {
        return Ok(None);
    };
    let mut stats = introspect::statistics(class, total, non_null, distinct, min, max);
    if introspect::lists_values(class, stats.distinct_count) {
        let listed: Vec<Text> = conn
            .query(introspect::values_sql(Dialect::MySql, source, column))
            .await
            .map_err(|e| map_err(&e))?;
        let values = listed.into_iter().flatten().collect();
        introspect::fill_values(&mut stats, values);
    }
    Ok(Some(stats))
}
