//! `nl2sql mcp`: the Model Context Protocol server (`nl2sql-server`'s `mcp` module,
//! documented in `docs/mcp.md`) over standard input and output, for desktop agents and
//! editors that start it as a command. The same server is mounted at `/mcp` by
//! `nl2sql serve` for clients that speak streamable HTTP.
//!
//! The caller is fixed when the server starts: `--role` (repeatable), `--user` and
//! `--tenant`; a client cannot change them. Standard output carries only MCP messages;
//! what the server says (indexing, warnings) goes to standard error.

use anyhow::Context as _;
use nl2sql_server::mcp::{McpServer, serve_stdio};
use nl2sql_server::{ApiKeys, Caller, Identity, ServerConfig};

use crate::serve::{EngineArgs, app_state, default_tenant, index_stale, shutdown_signal};

/// Arguments of `mcp`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    engine: EngineArgs,
    /// A role of the caller (repeatable): the policy decides what the roles may read.
    #[arg(long = "role", value_name = "R")]
    roles: Vec<String>,
    /// The caller's user id (recorded as the owner of its runs).
    #[arg(long, value_name = "ID", default_value = "mcp")]
    user: String,
    /// The caller's tenant (default: `$TENANT_ID`, else `default`).
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
}

/// Runs the command; returns the exit code (0 when the client closes the connection).
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let config = ServerConfig {
        default_tenant_id: default_tenant(),
        ..ServerConfig::new(ApiKeys::empty())
    };
    let identity = Identity {
        user_id: args.user.clone(),
        tenant_id: args.tenant.clone(),
        roles: args.roles.clone(),
        admin: false,
    };
    let caller = Caller::of(identity, &config.default_tenant_id);
    let state = app_state(&args.engine, config)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = rt.block_on(async {
        index_stale(&state).await?;
        let datasources = state.engine().registry().ids().len();
        eprintln!("MCP on standard input and output ({datasources} datasources)");
        let shutdown = state.shutdown_token();
        let signal = shutdown.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            signal.cancel();
        });
        serve_stdio(McpServer::for_caller(state, caller), shutdown)
            .await
            .context("the MCP server failed")
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    served?;
    Ok(0)
}
