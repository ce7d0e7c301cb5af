//! Integration tests of the orchestrator: the `Engine` over the real fixture database.

/// `impl DatasourceAdapter for $ty` with the given `execute` (and any other items) and
/// every other method forwarded to `self.inner`: for test adapters that wrap a real one
/// and change only how statements execute. With `own schema_snapshot`, `own dry_run` or
/// `own schema_snapshot dry_run`, the items also give those methods.
macro_rules! wrapping_adapter {
    ($ty:ty { $($items:tt)* }) => {
        wrapping_adapter!($ty, own schema_snapshot {
            $($items)*
            async fn schema_snapshot(
                &self,
            ) -> Result<nl2sql_state::SchemaSnapshot, nl2sql_adapter::ResultError> {
                self.inner.schema_snapshot().await
            }
        });
    };
    ($ty:ty, own schema_snapshot { $($items:tt)* }) => {
        wrapping_adapter!($ty, own schema_snapshot dry_run {
            $($items)*
            async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> nl2sql_adapter::DryRunResult {
                self.inner.dry_run(sql).await
            }
        });
    };
    ($ty:ty, own dry_run { $($items:tt)* }) => {
        wrapping_adapter!($ty, own schema_snapshot dry_run {
            $($items)*
            async fn schema_snapshot(
                &self,
            ) -> Result<nl2sql_state::SchemaSnapshot, nl2sql_adapter::ResultError> {
                self.inner.schema_snapshot().await
            }
        });
    };
    ($ty:ty, own schema_snapshot dry_run { $($items:tt)* }) => {
        #[async_trait::async_trait]
        impl nl2sql_adapter::DatasourceAdapter for $ty {
            $($items)*
            fn id(&self) -> &str {
                self.inner.id()
            }
            fn engine_type(&self) -> &str {
                self.inner.engine_type()
            }
            fn dialect(&self) -> nl2sql_state::Dialect {
                self.inner.dialect()
            }
            fn capabilities(&self) -> &nl2sql_adapter::CapabilitySet {
                self.inner.capabilities()
            }
            fn limits(&self) -> nl2sql_adapter::Limits {
                self.inner.limits()
            }
            async fn test_connection(&self) -> Result<(), nl2sql_adapter::ResultError> {
                self.inner.test_connection().await
            }
            async fn schema_contract(
                &self,
            ) -> Result<nl2sql_state::SchemaContract, nl2sql_adapter::ResultError> {
                self.inner.schema_contract().await
            }
            async fn run_sql(
                &self,
                sql: &nl2sql_validate::GuardedSql,
                limits: nl2sql_adapter::Limits,
            ) -> nl2sql_adapter::ResultFrame {
                self.inner.run_sql(sql, limits).await
            }
            async fn cost_estimate(
                &self,
                sql: &nl2sql_validate::GuardedSql,
            ) -> Result<nl2sql_adapter::CostEstimate, nl2sql_adapter::ResultError> {
                self.inner.cost_estimate(sql).await
            }
            async fn explain(
                &self,
                sql: &nl2sql_validate::GuardedSql,
            ) -> Result<nl2sql_adapter::QueryPlan, nl2sql_adapter::ResultError> {
                self.inner.explain(sql).await
            }
            fn details(&self) -> serde_json::Value {
                self.inner.details()
            }
        }
    };
}

mod custom_adapter;
mod gaps;
mod observability;
mod pipeline;
mod pool;
mod schema;
mod support;
mod timeout;
