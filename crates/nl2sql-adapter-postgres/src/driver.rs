//! [`PostgresDriver`]: how a datasource registry opens PostgreSQL datasources.

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_adapter::{CapabilitySet, ConnectRequest, DatasourceAdapter, Driver, ResultError};
use nl2sql_state::Engine;

use crate::PostgresAdapter;

/// The PostgreSQL driver: opens `postgres://` datasources with [`PostgresAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PostgresDriver;

#[async_trait]
impl Driver for PostgresDriver {
    fn engine(&self) -> Engine {
        Engine::Postgres
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
        let adapter = PostgresAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )
        .await?;
        Ok(Arc::new(adapter))
    }
}
