//! Schema snapshots of a SQLite file: the tables of `main` with their columns and keys
//! (read through two pragmas the authorizer allows for the adapter alone), and for a
//! full snapshot row counts and column statistics within a time budget, on a sample of
//! the first rows of big tables.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nl2sql_adapter::{AdapterOptions, ColumnKind, ResultError, introspect};
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, ForeignKeyContract, SchemaContract,
    SchemaMetadata, SchemaSnapshot, TableContract, TableMetadata, TableRef,
};

use crate::{Conn, MAIN_SCHEMA, kind_of_decltype, map_err};

/// Runs an introspection query with pragmas allowed, returning rows of values.
fn internal_rows(
    conn: &Conn,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Vec<rusqlite::types::Value>>, ResultError> {
    conn.internal.store(true, Ordering::Relaxed);
    let out = (|| -> rusqlite::Result<Vec<Vec<rusqlite::types::Value>>> {
        let mut stmt = conn.conn.prepare(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(params)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(
                (0..n)
                    .map(|i| r.get(i))
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            );
        }
        Ok(out)
    })();
    conn.internal.store(false, Ordering::Relaxed);
    out.map_err(|e| map_err(&e))
}

fn text(v: &rusqlite::types::Value) -> String {
    match v {
        rusqlite::types::Value::Text(s) => s.clone(),
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

fn int(v: &rusqlite::types::Value) -> i64 {
    match v {
        rusqlite::types::Value::Integer(i) => *i,
        _ => 0,
    }
}

fn json_of(v: &rusqlite::types::Value) -> Option<serde_json::Value> {
    match v {
        rusqlite::types::Value::Null | rusqlite::types::Value::Blob(_) => None,
        rusqlite::types::Value::Integer(i) => Some(serde_json::json!(i)),
        rusqlite::types::Value::Real(f) => Some(serde_json::json!(f)),
        rusqlite::types::Value::Text(s) => Some(serde_json::json!(s)),
    }
}

/// `"name"` with embedded quotes doubled.
fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
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

/// How much work the statistics of a snapshot may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatsBudget {
    /// Columns whose turn comes after this much time get no statistics.
    pub(crate) time: Duration,
    /// Tables with more rows get statistics on their first this many rows.
    pub(crate) sample_rows: u64,
}

impl StatsBudget {
    /// The budget `options` give.
    pub(crate) fn of(options: &AdapterOptions) -> StatsBudget {
        StatsBudget {
            time: Duration::from_millis(options.schema_stats_timeout_ms),
            sample_rows: options.schema_stats_sample_rows,
        }
    }
}

pub(crate) fn snapshot_on(
    conn: &Conn,
    id: &str,
    detail: Detail,
    limits: StatsBudget,
) -> Result<SchemaSnapshot, ResultError> {
    let started = Instant::now();
    let budget = limits.time;
    let mut contract = SchemaContract::new(id, "sqlite");
    let mut metadata = SchemaMetadata {
        datasource_id: id.to_owned(),
        engine_type: "sqlite".to_owned(),
        ..SchemaMetadata::default()
    };
    let tables = internal_rows(
        conn,
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        &[],
    )?;
    for t in tables {
        let name = text(&t[0]);
        let table_ref = TableRef {
            schema_name: MAIN_SCHEMA.to_owned(),
            table_name: name.clone(),
        };
        let mut table = TableContract {
            table: table_ref.clone(),
            ..TableContract::default()
        };
        // cid, name, type, notnull, dflt_value, pk
        let cols = internal_rows(
            conn,
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid",
            &[&name],
        )?;
        for c in &cols {
            let col = text(&c[0]);
            let pk = int(&c[3]) > 0;
            table.columns.insert(
                col.clone(),
                ColumnContract {
                    name: col,
                    data_type: text(&c[1]),
                    // SQLite lets a non-INTEGER primary key hold NULL; report the truth.
                    is_nullable: int(&c[2]) == 0,
                    is_primary_key: pk,
                },
            );
        }
        // id, seq, table, from, to, ...
        let fks = internal_rows(
            conn,
            "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
            &[&name],
        )?;
        let mut by_id: Vec<(i64, ForeignKeyContract)> = Vec::new();
        for f in &fks {
            let fk_id = int(&f[0]);
            let to = text(&f[3]);
            let from = text(&f[2]);
            let referred = text(&f[1]);
            if let Some((_, fk)) = by_id.iter_mut().find(|(i, _)| *i == fk_id) {
                fk.constrained_columns.push(from);
                fk.referred_columns.push(to);
            } else {
                by_id.push((
                    fk_id,
                    ForeignKeyContract {
                        constrained_columns: vec![from],
                        referred_table: TableRef {
                            schema_name: MAIN_SCHEMA.to_owned(),
                            table_name: referred,
                        },
                        referred_columns: vec![to],
                        cardinality: nl2sql_state::Cardinality::ManyToOne,
                        business_meaning: None,
                        inferred: false,
                    },
                ));
            }
        }
        table.foreign_keys = by_id.into_iter().map(|(_, fk)| fk).collect();
        if detail == Detail::Contract {
            contract.add_table(table);
            continue;
        }

        let count = internal_rows(conn, &format!("SELECT count(*) FROM {}", quote(&name)), &[])?;
        let row_count = count.first().map(|r| int(&r[0]).max(0) as u64);
        let mut tmeta = TableMetadata {
            table: table_ref,
            row_count,
            ..TableMetadata::default()
        };
        // Statistics on a sample of the first rows of big tables, within the time budget.
        let source = if row_count.unwrap_or(0) > limits.sample_rows {
            format!(
                "(SELECT * FROM {} LIMIT {})",
                quote(&name),
                limits.sample_rows
            )
        } else {
            quote(&name)
        };
        for (col, contract_col) in &table.columns {
            let stats = if started.elapsed() < budget {
                Some(column_stats(conn, &source, col, &contract_col.data_type)?)
            } else {
                None
            };
            tmeta.columns.insert(
                col.clone(),
                ColumnMetadata {
                    statistics: stats,
                    ..ColumnMetadata::default()
                },
            );
        }
        metadata.tables.insert(table.table.full_name(), tmeta);
        contract.add_table(table);
    }
    // The undeclared keys the names spell, as every adapter's contract has them.
    contract.infer_foreign_keys();
    Ok(SchemaSnapshot {
        contract,
        metadata: (detail == Detail::Full).then_some(metadata),
    })
}

fn column_stats(
    conn: &Conn,
    source: &str,
    col: &str,
    data_type: &str,
) -> Result<ColumnStatistics, ResultError> {
    let c = quote(col);
    let row = internal_rows(
        conn,
        &format!(
            "SELECT count(*), count({c}), count(DISTINCT {c}), min({c}), max({c}) FROM {source}"
        ),
        &[],
    )?;
    let Some(r) = row.first() else {
        return Ok(ColumnStatistics::default());
    };
    let total = int(&r[0]).max(0) as f64;
    let non_null = int(&r[1]).max(0) as f64;
    let distinct = int(&r[2]).max(0) as u64;
    let mut stats = ColumnStatistics {
        null_percentage: if total > 0.0 {
            (total - non_null) / total
        } else {
            0.0
        },
        distinct_count: distinct,
        min_value: json_of(&r[3]),
        max_value: json_of(&r[4]),
        sample_values: Vec::new(),
        values: Vec::new(),
    };
    let is_text = matches!(kind_of_decltype(data_type), Some(ColumnKind::Utf8) | None);
    if is_text && introspect::lists_values(introspect::StatClass::Text, distinct) {
        let listed = internal_rows(
            conn,
            &introspect::values_sql(nl2sql_state::Dialect::Sqlite, source, col),
            &[],
        )?;
        let values = listed
            .iter()
            .filter_map(|s| json_of(&s[0]))
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        introspect::fill_values(&mut stats, values);
    }
    Ok(stats)
}
