//! [`MySqlDriver`]: how a datasource registry opens MySQL and MariaDB datasources.

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_adapter::{CapabilitySet, ConnectRequest, DatasourceAdapter, Driver, ResultError};
use nl2sql_state::Engine;

use crate::MySqlAdapter;

/// The MySQL and MariaDB driver: opens `mysql://` datasources with [`MySqlAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MySqlDriver;

#[async_trait]
impl Driver for MySqlDriver {
    fn engine(&self) -> Engine {
        Engine::Mysql
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
        let adapter = MySqlAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )
        .await?;
        Ok(Arc::new(adapter))
    }
}
