//! The conformance suite every adapter crate runs from its tests (spec: adapters.md §8),
//! against the manufacturing fixture loaded into its engine
//! (`tests/data/fixtures/manufacturing.db`).
//!
//! Each check returns `Err` with a description instead of panicking, so an adapter's
//! test writes `conformance::row_limit_truncates(&adapter, &fx).await.unwrap()`.

use arrow::array::{Array, Int64Array};
use arrow::datatypes::DataType;
use nl2sql_validate::GuardedSql;

use crate::spi::{DatasourceAdapter, shape_check};
use crate::types::{
    AdapterRequest, Limits, RequestLimits, ResultErrorCode, ResultFrame, TruncatedReason,
};

/// What the suite needs to know about an engine holding the fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The schema the fixture tables live in (`main`, `public`, the MySQL database).
    pub schema: String,
    /// A statement that runs for longer than `timeout_ms`.
    pub slow_sql: String,
    /// The timeout given to `slow_sql`.
    pub timeout_ms: u64,
    /// Statements the engine sandbox must refuse (writes, file reads, ATTACH, extension
    /// loading, settings changes); they are sent without any guard check.
    pub sandbox_statements: Vec<String>,
}

/// The fixture's tables.
pub const FIXTURE_TABLES: [&str; 9] = [
    "defects",
    "factories",
    "inventory",
    "machine_types",
    "machines",
    "maintenance_logs",
    "production_runs",
    "products",
    "shifts",
];

type Check = Result<(), String>;

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(msg()) }
}

fn ok_frame(frame: &ResultFrame, what: &str) -> Check {
    ensure(frame.success, || {
        format!("{what}: expected success, got {:?}", frame.error)
    })
}

/// `sql` as the guard (without a schema) renders it for `adapter`.
fn guarded(adapter: &dyn DatasourceAdapter, sql: &str) -> Result<GuardedSql, String> {
    shape_check(adapter.id(), adapter.dialect(), sql)
        .map_err(|e| format!("the guard refused {sql}: {}", e.safe_message))
}

/// `sql` exactly as written, with no guard: only for statements the engine's own sandbox
/// or timeout must stop.
fn unguarded(adapter: &dyn DatasourceAdapter, sql: &str) -> GuardedSql {
    GuardedSql::unguarded_for_sandbox_tests(adapter.dialect(), sql)
}

fn first_int(frame: &ResultFrame) -> Option<i64> {
    let batch = frame.batches.first()?;
    let col = batch.column(0).as_any().downcast_ref::<Int64Array>()?;
    (!col.is_empty() && !col.is_null(0)).then(|| col.value(0))
}

async fn count_products(adapter: &dyn DatasourceAdapter) -> Result<i64, String> {
    let frame = adapter
        .execute(AdapterRequest::sql("SELECT COUNT(*) AS n FROM products"))
        .await;
    ok_frame(&frame, "count products")?;
    first_int(&frame).ok_or_else(|| format!("count products: not an Int64: {:?}", frame.batches))
}

/// `test_connection` succeeds.
pub async fn connection_succeeds(adapter: &dyn DatasourceAdapter) -> Check {
    adapter
        .test_connection()
        .await
        .map_err(|e| format!("test_connection failed: {e} ({:?})", e.detail))
}

/// The snapshot lists the fixture's tables with columns in table order, primary keys,
/// nullability, a foreign key and row counts.
pub async fn snapshot_describes_fixture(adapter: &dyn DatasourceAdapter, fx: &Fixture) -> Check {
    let snap = adapter
        .schema_snapshot()
        .await
        .map_err(|e| format!("schema_snapshot failed: {e} ({:?})", e.detail))?;
    for t in FIXTURE_TABLES {
        let key = format!("{}.{t}", fx.schema);
        ensure(snap.contract.tables.contains_key(&key), || {
            format!("table {key} missing from {:?}", snap.contract.tables.keys())
        })?;
    }
    let products = &snap.contract.tables[&format!("{}.products", fx.schema)];
    let cols: Vec<&str> = products.columns.keys().map(String::as_str).collect();
    ensure(cols == ["id", "sku", "name", "category"], || {
        format!("products columns {cols:?}")
    })?;
    ensure(products.columns["id"].is_primary_key, || {
        "products.id is not a primary key".to_owned()
    })?;
    ensure(!products.columns["sku"].is_primary_key, || {
        "products.sku is a primary key".to_owned()
    })?;
    ensure(!products.columns["sku"].is_nullable, || {
        "products.sku is nullable".to_owned()
    })?;
    let factories = &snap.contract.tables[&format!("{}.factories", fx.schema)];
    ensure(factories.columns["capacity_index"].is_nullable, || {
        "factories.capacity_index is not nullable".to_owned()
    })?;
    let machines = &snap.contract.tables[&format!("{}.machines", fx.schema)];
    ensure(
        machines.foreign_keys.iter().any(|fk| {
            fk.constrained_columns == ["factory_id"]
                && fk.referred_table.table_name == "factories"
                && fk.referred_columns == ["id"]
        }),
        || format!("machines foreign keys {:?}", machines.foreign_keys),
    )?;
    let meta = snap
        .metadata
        .as_ref()
        .ok_or_else(|| "snapshot has no metadata".to_owned())?;
    let pm = &meta.tables[&format!("{}.products", fx.schema)];
    ensure(pm.row_count == Some(8), || {
        format!("products row_count {:?}", pm.row_count)
    })
}

/// `schema_contract` (the cheap structure read) equals the contract of a full snapshot,
/// fingerprint included, and describes the fixture's tables.
pub async fn contract_matches_snapshot(adapter: &dyn DatasourceAdapter, fx: &Fixture) -> Check {
    let contract = adapter
        .schema_contract()
        .await
        .map_err(|e| format!("schema_contract failed: {e} ({:?})", e.detail))?;
    let snap = adapter
        .schema_snapshot()
        .await
        .map_err(|e| format!("schema_snapshot failed: {e} ({:?})", e.detail))?;
    for t in FIXTURE_TABLES {
        let key = format!("{}.{t}", fx.schema);
        ensure(contract.tables.contains_key(&key), || {
            format!("table {key} missing from {:?}", contract.tables.keys())
        })?;
    }
    ensure(contract == snap.contract, || {
        format!(
            "schema_contract differs from schema_snapshot().contract:\n{contract:?}\nvs\n{:?}",
            snap.contract
        )
    })?;
    let (cheap, full) = (contract.fingerprint(), snap.contract.fingerprint());
    ensure(cheap == full, || {
        format!("fingerprints differ: schema_contract {cheap}, schema_snapshot {full}")
    })
}

/// Column statistics of known columns: distinct count, min/max, samples for text.
pub async fn snapshot_has_column_statistics(
    adapter: &dyn DatasourceAdapter,
    fx: &Fixture,
) -> Check {
    let snap = adapter
        .schema_snapshot()
        .await
        .map_err(|e| format!("schema_snapshot failed: {e}"))?;
    let meta = snap
        .metadata
        .ok_or_else(|| "snapshot has no metadata".to_owned())?;
    let products = &meta.tables[&format!("{}.products", fx.schema)];
    let id = products.columns["id"]
        .statistics
        .as_ref()
        .ok_or_else(|| "products.id has no statistics".to_owned())?;
    ensure(id.distinct_count == 8, || {
        format!("products.id distinct {}", id.distinct_count)
    })?;
    ensure(
        id.min_value == Some(serde_json::json!(1)) && id.max_value == Some(serde_json::json!(8)),
        || format!("products.id min/max {:?}/{:?}", id.min_value, id.max_value),
    )?;
    ensure(id.null_percentage == 0.0, || {
        "products.id has nulls".to_owned()
    })?;
    let cat = products.columns["category"]
        .statistics
        .as_ref()
        .ok_or_else(|| "products.category has no statistics".to_owned())?;
    ensure(
        !cat.sample_values.is_empty() && cat.sample_values.len() <= 5,
        || format!("products.category samples {:?}", cat.sample_values),
    )?;
    ensure(cat.distinct_count >= 1, || "category distinct 0".to_owned())
}

/// A fixed query returns engine-typed columns and the fixture's values.
pub async fn query_returns_typed_values(adapter: &dyn DatasourceAdapter) -> Check {
    let frame = adapter
        .execute(AdapterRequest::sql(
            "SELECT id, sku, name FROM products ORDER BY id",
        ))
        .await;
    ok_frame(&frame, "select products")?;
    ensure(frame.row_count == 8 && !frame.truncated, || {
        format!("rows {} truncated {}", frame.row_count, frame.truncated)
    })?;
    ensure(frame.columns() == ["id", "sku", "name"], || {
        format!("columns {:?}", frame.columns())
    })?;
    let schema = frame
        .schema
        .as_ref()
        .ok_or_else(|| "no schema".to_owned())?;
    ensure(schema.field(0).data_type() == &DataType::Int64, || {
        format!("id type {:?}", schema.field(0).data_type())
    })?;
    ensure(schema.field(1).data_type() == &DataType::Utf8, || {
        format!("sku type {:?}", schema.field(1).data_type())
    })?;
    ensure(first_int(&frame) == Some(1), || {
        "first id is not 1".to_owned()
    })?;
    ensure(frame.bytes.is_some_and(|b| b > 0), || {
        "bytes unset".to_owned()
    })?;
    ensure(frame.execution_stats.execution_time_ms >= 0.0, || {
        "execution time unset".to_owned()
    })?;
    let n = count_products(adapter).await?;
    ensure(n == 8, || format!("count(*) = {n}"))
}

/// A request row limit below the result size truncates it and says why.
pub async fn row_limit_truncates(adapter: &dyn DatasourceAdapter) -> Check {
    let req =
        AdapterRequest::sql("SELECT id FROM products ORDER BY id").with_limits(RequestLimits {
            row_limit: Some(3),
            ..RequestLimits::default()
        });
    let frame = adapter.execute(req).await;
    ok_frame(&frame, "row limit")?;
    ensure(
        frame.row_count == 3
            && frame.truncated
            && frame.execution_stats.truncated_reason == Some(TruncatedReason::RowLimit),
        || {
            format!(
                "rows {} truncated {} reason {:?}",
                frame.row_count, frame.truncated, frame.execution_stats.truncated_reason
            )
        },
    )?;
    let exact = adapter
        .execute(
            AdapterRequest::sql("SELECT id FROM products").with_limits(RequestLimits {
                row_limit: Some(8),
                ..RequestLimits::default()
            }),
        )
        .await;
    ensure(exact.row_count == 8 && !exact.truncated, || {
        format!(
            "limit = size: rows {} truncated {}",
            exact.row_count, exact.truncated
        )
    })
}

/// A byte limit below the result size truncates it and says why.
pub async fn max_bytes_truncates(adapter: &dyn DatasourceAdapter) -> Check {
    let req = AdapterRequest::sql("SELECT id, sku, name FROM products ORDER BY id").with_limits(
        RequestLimits {
            max_bytes: Some(60),
            ..RequestLimits::default()
        },
    );
    let frame = adapter.execute(req).await;
    ok_frame(&frame, "max bytes")?;
    ensure(
        frame.row_count < 8
            && frame.truncated
            && frame.execution_stats.truncated_reason == Some(TruncatedReason::MaxBytes),
        || {
            format!(
                "rows {} truncated {} reason {:?}",
                frame.row_count, frame.truncated, frame.execution_stats.truncated_reason
            )
        },
    )
}

/// SQL the engine rejects yields a failed frame with `EXECUTION_FAILED`, not a panic.
pub async fn bad_sql_fails_as_frame(adapter: &dyn DatasourceAdapter) -> Check {
    let frame = adapter
        .execute(AdapterRequest::sql("SELECT no_such_column FROM products"))
        .await;
    ensure(
        !frame.success && frame.error_code() == Some(ResultErrorCode::ExecutionFailed),
        || format!("unknown column: {:?}", frame.error),
    )?;
    let frame = adapter
        .execute(AdapterRequest::sql("SELECT * FROM no_such_table"))
        .await;
    ensure(
        !frame.success && frame.error_code() == Some(ResultErrorCode::ExecutionFailed),
        || format!("unknown table: {:?}", frame.error),
    )
}

/// Non-SQL, empty and non-query requests never reach the engine.
pub async fn invalid_requests_are_refused(adapter: &dyn DatasourceAdapter) -> Check {
    let mut req = AdapterRequest::sql("SELECT 1");
    req.plan_type = "rest".to_owned();
    let f = adapter.execute(req).await;
    ensure(
        f.error_code() == Some(ResultErrorCode::CapabilityViolation),
        || format!("non-sql: {:?}", f.error),
    )?;
    let f = adapter.execute(AdapterRequest::sql("  ")).await;
    ensure(f.error_code() == Some(ResultErrorCode::MissingSql), || {
        format!("empty: {:?}", f.error)
    })?;
    let f = adapter
        .execute(AdapterRequest::sql("DELETE FROM products"))
        .await;
    ensure(
        f.error_code() == Some(ResultErrorCode::SecurityViolation),
        || format!("delete: {:?}", f.error),
    )?;
    let n = count_products(adapter).await?;
    ensure(n == 8, || {
        format!("products count after refused delete {n}")
    })
}

/// A dry run accepts a valid query, rejects an invalid one, and returns no rows.
pub async fn dry_run_checks_without_executing(adapter: &dyn DatasourceAdapter) -> Check {
    if !adapter.capabilities().supports_dry_run() {
        return Ok(());
    }
    let ok = adapter
        .dry_run(&guarded(adapter, "SELECT id FROM products WHERE id > 2")?)
        .await;
    ensure(ok.is_valid, || format!("valid query: {ok:?}"))?;
    let bad = adapter
        .dry_run(&guarded(adapter, "SELECT nope FROM products")?)
        .await;
    ensure(!bad.is_valid && bad.error_message.is_some(), || {
        format!("invalid query: {bad:?}")
    })
}

/// `cost_estimate` works exactly when the capability is advertised.
pub async fn cost_estimate_matches_capability(adapter: &dyn DatasourceAdapter) -> Check {
    let est = adapter
        .cost_estimate(&guarded(adapter, "SELECT id FROM products")?)
        .await;
    if adapter.capabilities().supports_cost_estimate() {
        let est = est.map_err(|e| format!("cost estimate failed: {e} ({:?})", e.detail))?;
        ensure(
            est.estimated_cost.is_some() || est.estimated_rows.is_some(),
            || format!("cost estimate empty: {est:?}"),
        )
    } else {
        ensure(est.is_err(), || {
            format!("unsupported estimate returned {est:?}")
        })
    }
}

/// A statement running past its timeout is cancelled with `EXECUTION_TIMEOUT`, and the
/// adapter keeps working afterwards.
pub async fn statement_timeout_cancels(adapter: &dyn DatasourceAdapter, fx: &Fixture) -> Check {
    let limits = Limits {
        statement_timeout_ms: fx.timeout_ms,
        ..adapter.limits()
    };
    let frame = adapter
        .run_sql(&unguarded(adapter, &fx.slow_sql), limits)
        .await;
    ensure(
        frame.error_code() == Some(ResultErrorCode::ExecutionTimeout),
        || {
            format!(
                "slow statement: success {} error {:?}",
                frame.success, frame.error
            )
        },
    )?;
    let n = count_products(adapter).await?;
    ensure(n == 8, || format!("after timeout count {n}"))
}

/// Every sandbox statement fails at execution although no guard ran, and the data is
/// unchanged afterwards.
pub async fn sandbox_refuses_side_effects(adapter: &dyn DatasourceAdapter, fx: &Fixture) -> Check {
    let mut failures = Vec::new();
    for sql in &fx.sandbox_statements {
        let frame = adapter
            .run_sql(&unguarded(adapter, sql), adapter.limits())
            .await;
        if frame.success {
            failures.push(format!("sandbox let through: {sql}"));
        } else if let Some(e) = &frame.error
            && e.safe_message.contains("/tmp/")
        {
            failures.push(format!("safe message leaks a path: {}", e.safe_message));
        }
    }
    let n = count_products(adapter).await?;
    if n != 8 {
        failures.push(format!("products count changed to {n}"));
    }
    ensure(failures.is_empty(), || failures.join("\n"))
}

/// Every check above, in order, on one adapter and its fixture: the whole suite an
/// adapter crate runs. The first failure is returned, prefixed with its check's name.
pub async fn run_all(adapter: &dyn DatasourceAdapter, fx: &Fixture) -> Check {
    let named = |name: &'static str| move |e: String| format!("{name}: {e}");
    connection_succeeds(adapter)
        .await
        .map_err(named("connection_succeeds"))?;
    snapshot_describes_fixture(adapter, fx)
        .await
        .map_err(named("snapshot_describes_fixture"))?;
    snapshot_has_column_statistics(adapter, fx)
        .await
        .map_err(named("snapshot_has_column_statistics"))?;
    contract_matches_snapshot(adapter, fx)
        .await
        .map_err(named("contract_matches_snapshot"))?;
    query_returns_typed_values(adapter)
        .await
        .map_err(named("query_returns_typed_values"))?;
    row_limit_truncates(adapter)
        .await
        .map_err(named("row_limit_truncates"))?;
    max_bytes_truncates(adapter)
        .await
        .map_err(named("max_bytes_truncates"))?;
    bad_sql_fails_as_frame(adapter)
        .await
        .map_err(named("bad_sql_fails_as_frame"))?;
    invalid_requests_are_refused(adapter)
        .await
        .map_err(named("invalid_requests_are_refused"))?;
    dry_run_checks_without_executing(adapter)
        .await
        .map_err(named("dry_run_checks_without_executing"))?;
    cost_estimate_matches_capability(adapter)
        .await
        .map_err(named("cost_estimate_matches_capability"))?;
    statement_timeout_cancels(adapter, fx)
        .await
        .map_err(named("statement_timeout_cancels"))?;
    sandbox_refuses_side_effects(adapter, fx)
        .await
        .map_err(named("sandbox_refuses_side_effects"))
}

/// The most memory this process has held so far (`VmHWM` of `/proc/self/status`), in
/// bytes; `None` where the file does not exist. The resource-bomb tests read it after
/// running a statement with the guard bypassed: nextest runs each test in its own
/// process, so the peak is the test's own.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// A statement that would build a value of about 1 GB, sent with no guard in front, must
/// fail or come back cut at the byte limit, with this process's peak memory staying under
/// `max_peak_bytes`. Returns the frame's error message or `truncated`, for the docs.
pub async fn value_bomb_is_bounded(
    adapter: &dyn DatasourceAdapter,
    sql: &str,
    max_peak_bytes: u64,
) -> Result<String, String> {
    let frame = adapter
        .run_sql(&unguarded(adapter, sql), adapter.limits())
        .await;
    let peak = peak_memory_bytes().unwrap_or(0);
    let outcome = match (&frame.error, frame.truncated) {
        (Some(e), _) => format!("error: {}", e.safe_message),
        (None, true) => format!("cut at the byte limit ({} rows kept)", frame.row_count),
        (None, false) => format!("{} row(s), none too large", frame.row_count),
    };
    // Printed for docs/adapters.md (`--no-capture` shows it).
    eprintln!(
        "value bomb on {}: {sql}: {outcome}; peak memory {} MiB",
        adapter.engine_type(),
        peak / (1024 * 1024)
    );
    ensure(peak <= max_peak_bytes, || {
        format!("{sql}: peak memory {peak} bytes, above {max_peak_bytes} ({outcome})")
    })?;
    Ok(outcome)
}
