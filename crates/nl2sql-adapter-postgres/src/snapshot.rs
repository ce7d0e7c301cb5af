//! Schema snapshots from PostgreSQL's catalogs: every table and view the role may read
//! outside the system schemas, with keys, row counts and sampled column statistics, or
//! (for [`Detail::Contract`]) the tables, columns and keys alone.

use std::time::{Duration, Instant};

use nl2sql_adapter::introspect::{
    self, CatalogColumn, CatalogForeignKey, StatClass, assemble_contract,
};
use nl2sql_adapter::{AdapterOptions, ResultError};
use nl2sql_state::{
    ColumnMetadata, Dialect, SchemaMetadata, SchemaSnapshot, TableMetadata, TableRef,
};
use tokio_postgres::Transaction;

use crate::error::map_err;

/// The tables and views the current role may read, outside system schemas.
const READABLE: &str = "c.relkind IN ('r', 'p', 'v', 'm', 'f') \
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
     AND n.nspname NOT LIKE 'pg\\_%' \
     AND has_schema_privilege(n.oid, 'USAGE') \
     AND has_table_privilege(c.oid, 'SELECT')";

async fn rows(tx: &Transaction<'_>, sql: &str) -> Result<Vec<tokio_postgres::Row>, ResultError> {
    tx.query(sql, &[]).await.map_err(|e| map_err(&e))
}

fn text(row: &tokio_postgres::Row, i: usize) -> String {
    row.try_get::<_, Option<String>>(i)
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn table_ref(row: &tokio_postgres::Row, i: usize) -> TableRef {
    TableRef {
        schema_name: text(row, i),
        table_name: text(row, i + 1),
    }
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
    tx: &Transaction<'_>,
    id: &str,
    options: &AdapterOptions,
    detail: Detail,
) -> Result<SchemaSnapshot, ResultError> {
    let started = Instant::now();
    let budget = Duration::from_millis(options.schema_stats_timeout_ms);
    let sample_rows = options.schema_stats_sample_rows;
    let columns: Vec<CatalogColumn> = rows(
        tx,
        &format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, \
                    format_type(a.atttypid, a.atttypmod), NOT a.attnotnull \
             FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND {READABLE} \
             ORDER BY 1, 2, a.attnum"
        ),
    )
    .await?
    .iter()
    .map(|r| CatalogColumn {
        schema: text(r, 0),
        table: text(r, 1),
        column: text(r, 2),
        data_type: text(r, 3),
        nullable: r.try_get(4).unwrap_or(true),
    })
    .collect();
    let primary_keys: Vec<(TableRef, String)> = rows(
        tx,
        &format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text \
             FROM pg_constraint k \
             JOIN pg_class c ON c.oid = k.conrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             JOIN LATERAL unnest(k.conkey) AS u(attnum) ON true \
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = u.attnum \
             WHERE k.contype = 'p' AND {READABLE}"
        ),
    )
    .await?
    .iter()
    .map(|r| (table_ref(r, 0), text(r, 2)))
    .collect();
    let foreign_keys: Vec<CatalogForeignKey> = rows(
        tx,
        &format!(
            "SELECT k.conname::text, n.nspname::text, c.relname::text, a.attname::text, \
                    rn.nspname::text, rc.relname::text, ra.attname::text \
             FROM pg_constraint k \
             JOIN pg_class c ON c.oid = k.conrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_class rc ON rc.oid = k.confrelid \
             JOIN pg_namespace rn ON rn.oid = rc.relnamespace \
             JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY AS u(a1, a2, ord) ON true \
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.a1 \
             JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = u.a2 \
             WHERE k.contype = 'f' AND {READABLE} \
             ORDER BY 2, 3, 1, u.ord"
        ),
    )
    .await?
    .iter()
    .map(|r| CatalogForeignKey {
        name: text(r, 0),
        table: table_ref(r, 1),
        column: text(r, 3),
        referred_table: table_ref(r, 4),
        referred_column: text(r, 6),
    })
    .collect();
    let contract = assemble_contract(id, "postgres", &columns, &primary_keys, &foreign_keys);
    if detail == Detail::Contract {
        return Ok(SchemaSnapshot {
            contract,
            metadata: None,
        });
    }
    let estimates = rows(
        tx,
        &format!(
            "SELECT n.nspname::text, c.relname::text, c.reltuples::float8 \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {READABLE}"
        ),
    )
    .await?;
    let mut metadata = SchemaMetadata {
        datasource_id: id.to_owned(),
        engine_type: "postgres".to_owned(),
        ..SchemaMetadata::default()
    };
    for (key, table) in &contract.tables {
        let t = &table.table;
        let estimate = estimates
            .iter()
            .find(|r| table_ref(r, 0) == *t)
            .and_then(|r| r.try_get::<_, f64>(2).ok())
            .filter(|e| *e >= 0.0);
        // Other sessions may drop a table between the catalog reads above and the reads
        // of its rows: each table is read under a savepoint, and a table that no longer
        // exists keeps its catalogued columns without statistics instead of failing the
        // whole snapshot (an error after the savepoint would abort the transaction).
        savepoint(tx, "SAVEPOINT nl2sql_snapshot_table").await?;
        let read = table_metadata(tx, t, table, estimate, sample_rows, started, budget).await;
        let tmeta = match read {
            Ok(tmeta) => {
                savepoint(tx, "RELEASE SAVEPOINT nl2sql_snapshot_table").await?;
                tmeta
            }
            Err(err) => {
                savepoint(tx, "ROLLBACK TO SAVEPOINT nl2sql_snapshot_table").await?;
                if exists(tx, t).await? {
                    return Err(err);
                }
                TableMetadata {
                    table: t.clone(),
                    row_count: None,
                    columns: table
                        .columns
                        .keys()
                        .map(|name| (name.clone(), ColumnMetadata::default()))
                        .collect(),
                    ..TableMetadata::default()
                }
            }
        };
        metadata.tables.insert(key.clone(), tmeta);
    }
    Ok(SchemaSnapshot {
        contract,
        metadata: Some(metadata),
    })
}

async fn savepoint(tx: &Transaction<'_>, sql: &str) -> Result<(), ResultError> {
    tx.batch_execute(sql).await.map_err(|e| map_err(&e))
}

/// Whether the table `t` exists now (as other sessions' committed changes show it).
async fn exists(tx: &Transaction<'_>, t: &TableRef) -> Result<bool, ResultError> {
    tx.query_one(
        "SELECT to_regclass(format('%I.%I', $1::text, $2::text)) IS NOT NULL",
        &[&t.schema_name, &t.table_name],
    )
    .await
    .and_then(|r| r.try_get::<_, bool>(0))
    .map_err(|e| map_err(&e))
}

/// The row count and column statistics of one table (within the snapshot's time budget).
async fn table_metadata(
    tx: &Transaction<'_>,
    t: &TableRef,
    table: &nl2sql_state::TableContract,
    estimate: Option<f64>,
    sample_rows: u64,
    started: Instant,
    budget: Duration,
) -> Result<TableMetadata, ResultError> {
    let dialect = Dialect::Postgres;
    // Count exactly unless the planner's estimate says the table is big.
    let row_count = match estimate {
        Some(e) if e > sample_rows as f64 => Some(e.round() as u64),
        _ => {
            let sql = format!(
                "SELECT count(*) FROM {}.{}",
                introspect::quote_ident(dialect, &t.schema_name),
                introspect::quote_ident(dialect, &t.table_name)
            );
            let r = rows(tx, &sql).await?;
            r.first()
                .and_then(|r| r.try_get::<_, i64>(0).ok())
                .map(|n| n.max(0) as u64)
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
            column_stats(tx, &source, name, class).await?
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
    Ok(tmeta)
}

async fn column_stats(
    tx: &Transaction<'_>,
    source: &str,
    column: &str,
    class: StatClass,
) -> Result<Option<nl2sql_state::ColumnStatistics>, ResultError> {
    let Some(sql) = introspect::stats_sql(Dialect::Postgres, source, column, class) else {
        return Ok(None);
    };
    let r = rows(tx, &sql).await?;
    let Some(r) = r.first() else {
        return Ok(None);
    };
    let int = |i: usize| r.try_get::<_, i64>(i).unwrap_or(0);
    let opt = |i: usize| r.try_get::<_, Option<String>>(i).ok().flatten();
    let mut stats = introspect::statistics(class, int(0), int(1), int(2), opt(3), opt(4));
    if introspect::lists_values(class, stats.distinct_count) {
        let listed = rows(
            tx,
            &introspect::values_sql(Dialect::Postgres, source, column),
        )
        .await?;
        let values = listed
            .iter()
            .filter_map(|s| s.try_get::<_, Option<String>>(0).ok().flatten())
            .collect();
        introspect::fill_values(&mut stats, values);
    }
    Ok(Some(stats))
}
