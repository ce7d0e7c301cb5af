//! `nl2sql list-adapters`: the adapters compiled into this binary, with their URL schemes,
//! dialect and capabilities (spec: interfaces.md §3.1).

use serde_json::{Value, json};

use crate::validate_sql::Format;

/// Arguments of `list-adapters`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Prints the compiled-in adapters; always exit 0.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let adapters: Vec<Value> = nl2sql_drivers::compiled_adapters()
        .iter()
        .map(|a| {
            json!({
                "engine": a.engine.as_str(),
                "implementation": a.implementation,
                "schemes": a.schemes,
                "kind": if a.engine.is_server() { "server" } else { "embedded" },
                "dialect": a.dialect.as_str(),
                "capabilities": a.capabilities.as_strings(),
            })
        })
        .collect();
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "adapters": adapters }))?
        ),
        Format::Text => print!("{}", text(&adapters)),
    }
    Ok(0)
}

/// One aligned line per adapter under a header.
fn text(adapters: &[Value]) -> String {
    let join = |v: &Value| {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let mut rows = vec![[
        "ENGINE".to_owned(),
        "SCHEMES".to_owned(),
        "KIND".to_owned(),
        "DIALECT".to_owned(),
        "CAPABILITIES".to_owned(),
    ]];
    for a in adapters {
        let s = |k: &str| a[k].as_str().unwrap_or_default().to_owned();
        rows.push([
            s("engine"),
            join(&a["schemes"]),
            s("kind"),
            s("dialect"),
            join(&a["capabilities"]),
        ]);
    }
    crate::columns::aligned(&rows)
}
