//! [`WorkerDriver`]: how a datasource registry opens `isolation = "process"` datasources.

use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_adapter::{
    ConnectRequest, DatasourceAdapter, ProcessDriver, ResultError, WorkerCommand,
};

use crate::{ProcessAdapter, WorkerArgs, WorkerOptions};

/// Serves a datasource from a pool of worker processes ([`ProcessAdapter`]), each started
/// as the [`WorkerCommand`] followed by the worker arguments ([`WorkerArgs`]: engine, id,
/// URL, limits, adapter options).
#[derive(Debug, Clone, Default)]
pub struct WorkerDriver {
    options: WorkerOptions,
}

impl WorkerDriver {
    /// A driver starting pools with `options` (pool size, handshake deadline).
    pub fn with_options(options: WorkerOptions) -> Self {
        WorkerDriver { options }
    }
}

#[async_trait]
impl ProcessDriver for WorkerDriver {
    async fn connect(
        &self,
        request: &ConnectRequest<'_>,
        command: &WorkerCommand,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let args = WorkerArgs {
            engine: request.engine,
            id: request.id.to_owned(),
            url: request.url.to_owned(),
            limits: request.limits,
            options: request.options,
        };
        let mut process = std::process::Command::new(&command.program);
        process.args(&command.args).args(args.to_args());
        let adapter = ProcessAdapter::spawn(process, self.options.clone()).await?;
        Ok(Arc::new(adapter))
    }
}
