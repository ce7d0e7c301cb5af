//! [`DuckDbDriver`]: how a datasource registry opens DuckDB datasources.

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_adapter::{CapabilitySet, ConnectRequest, DatasourceAdapter, Driver, ResultError};
use nl2sql_state::Engine;

use crate::DuckDbAdapter;

/// The DuckDB driver: opens `duckdb://` datasources with [`DuckDbAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DuckDbDriver;

#[async_trait]
impl Driver for DuckDbDriver {
    fn engine(&self) -> Engine {
        Engine::Duckdb
    }

    fn implementation(&self) -> &'static str {
        env!("CARGO_PKG_NAME")
    }

    fn capabilities(&self) -> CapabilitySet {
        crate::capabilities()
    }

    async fn connect(
        &self,
        request: &ConnectRequest<'_>,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let adapter = DuckDbAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )?;
        Ok(Arc::new(adapter))
    }
}
