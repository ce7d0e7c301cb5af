//! [`SqliteDriver`]: how a datasource registry opens SQLite datasources.

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_adapter::{CapabilitySet, ConnectRequest, DatasourceAdapter, Driver, ResultError};
use nl2sql_state::Engine;

use crate::SqliteAdapter;

/// The SQLite driver: opens `sqlite://` datasources with [`SqliteAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteDriver;

#[async_trait]
impl Driver for SqliteDriver {
    fn engine(&self) -> Engine {
        Engine::Sqlite
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
        let adapter = SqliteAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )?;
        Ok(Arc::new(adapter))
    }
}
