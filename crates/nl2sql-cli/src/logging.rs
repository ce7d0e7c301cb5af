//! Log output of the binary (spec: config-and-security.md §8): `tracing` records go to
//! standard error, filtered by `NL2SQL_LOG` (`off`, a level such as `warn`, or targets
//! such as `nl2sql::node=debug,resilience=warn`). `OBSERVABILITY_EXPORTER` picks the
//! format: `none` (the default: no logs unless `NL2SQL_LOG` asks, so a command's output
//! is only its result), `console` (human-readable, `info` unless `NL2SQL_LOG` says
//! otherwise) or `otlp` (one JSON object per record, `info` by default; this binary has
//! no OTLP network exporter, so the records go to standard error for a collector to
//! read). Every record of a run carries its `trace_id` and `tenant_id` (the run's span).

use std::str::FromStr as _;

use anyhow::anyhow;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Installs the global subscriber from the environment; a value that does not parse is a
/// configuration error naming the variable.
pub(crate) fn init() -> anyhow::Result<()> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let exporter = var("OBSERVABILITY_EXPORTER").unwrap_or_else(|| "none".to_owned());
    let (default_filter, json) = match exporter.trim().to_ascii_lowercase().as_str() {
        "none" => ("off", false),
        "console" => ("info", false),
        "otlp" => ("info", true),
        other => {
            return Err(anyhow!(
                "OBSERVABILITY_EXPORTER: '{other}': expected none, console or otlp"
            ));
        }
    };
    let filter = var("NL2SQL_LOG").unwrap_or_else(|| default_filter.to_owned());
    let targets = Targets::from_str(filter.trim())
        .map_err(|e| anyhow!("NL2SQL_LOG: '{filter}': {e}"))?
        // The run's span (`trace_id`, `tenant_id`) stays on whatever the filter
        // selects, so every record that is written names its run.
        .with_target("nl2sql::span", tracing::Level::INFO);
    let registry = tracing_subscriber::registry().with(targets);
    let installed = if json {
        registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_current_span(true)
                    .with_span_list(false)
                    .with_writer(std::io::stderr),
            )
            .try_init()
    } else {
        registry
            .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
            .try_init()
    };
    // Already installed (only possible in tests): keep the first.
    let _ = installed;
    Ok(())
}
