//! Tests of the configuration file: strict parsing, secret references, ad-hoc ids, redaction.

use std::collections::BTreeMap;

use super::*;

/// A secret source backed by a map, so tests never touch the process environment.
struct MapSecrets(BTreeMap<&'static str, &'static str>);

impl SecretSource for MapSecrets {
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String> {
        if provider != "env" {
            return Err(format!("unknown secret provider '{provider}'"));
        }
        Ok(self.0.get(key).map(|v| (*v).to_owned()))
    }
}

fn secrets() -> MapSecrets {
    MapSecrets(BTreeMap::from([
        ("PGPASSWORD", "s3cr3t"),
        (
            "WAREHOUSE_URL",
            "postgres://svc:pw@db.internal:5432/warehouse",
        ),
    ]))
}

const GOOD: &str = r#"
version = 1
policy = "policy.json"

[[datasources]]
id = "manufacturing"
description = "Factories, machines, production runs."
url = "sqlite://manufacturing.db"
row_limit = 100

[[datasources]]
id = "sales"
url = "postgres://analyst@127.0.0.1:5432/sales"
password = "${env:PGPASSWORD}"
statement_timeout_ms = 8000
tags = { env = "dev" }

[[datasources]]
id = "warehouse"
url = "${env:WAREHOUSE_URL}"
"#;

#[test]
fn parses_and_resolves_a_good_file() {
    let file = ConfigFile::from_toml_str(GOOD).unwrap();
    assert_eq!(file.policy.as_deref(), Some("policy.json"));
    assert_eq!(file.ids(), ["manufacturing", "sales", "warehouse"]);
    let all = file.resolve(&secrets()).unwrap();
    assert_eq!(all[0].engine, Engine::Sqlite);
    assert_eq!(all[0].row_limit, Some(100));
    assert_eq!(all[0].statement_timeout_ms, None);
    assert_eq!(all[1].engine, Engine::Postgres);
    assert_eq!(all[1].password.as_ref().map(Secret::expose), Some("s3cr3t"));
    assert_eq!(all[1].statement_timeout_ms, Some(8000));
    assert_eq!(all[1].tags.get("env").map(String::as_str), Some("dev"));
    assert_eq!(all[2].engine, Engine::Postgres);
    assert_eq!(
        all[2].url.expose(),
        "postgres://svc:pw@db.internal:5432/warehouse"
    );
    assert_eq!(
        all[2].redacted_url(),
        "postgres://svc:***@db.internal:5432/warehouse"
    );
}

#[test]
fn secrets_never_print() {
    let file = ConfigFile::from_toml_str(GOOD).unwrap();
    let sales = file.datasource("sales", &secrets()).unwrap();
    let debug = format!("{sales:?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    let warehouse = file.datasource("warehouse", &secrets()).unwrap();
    let debug = format!("{warehouse:?} {}", warehouse.url);
    assert!(!debug.contains("pw@"), "{debug}");
    assert!(!debug.contains("db.internal"), "{debug}");
}

#[test]
fn strict_parsing_names_the_key() {
    let cases: &[(&str, &str)] = &[
        ("version = 2", "version: unsupported version 2"),
        (
            "version = 1\n[[datasources]]\nid = \"a b\"\nurl = \"sqlite://x.db\"",
            "datasources[0].id: invalid id 'a b'",
        ),
        (
            "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://x.db\"\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://y.db\"",
            "datasources[1].id: duplicate id 'a'",
        ),
        (
            "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"oracle://x\"",
            "datasources[0].url: unknown or missing URL scheme",
        ),
        (
            "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://x.db\"\nrow_limit = 0",
            "datasources[0].row_limit: must be greater than 0",
        ),
        (
            "version = 1\n[engine]\nglobal_timeout_sec = 1e300",
            "engine.global_timeout_sec: is out of range",
        ),
        (
            "version = 1\n[engine]\nglobal_timeout_sec = -1",
            "engine.global_timeout_sec: must be a number greater than 0",
        ),
    ];
    for (text, want) in cases {
        let err = ConfigFile::from_toml_str(text).unwrap_err().to_string();
        assert!(err.starts_with(want), "{text:?}: {err}");
    }
    // Unknown keys and wrong types are parse errors that name the key.
    let err = ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://x.db\"\nrowlimit = 5",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("rowlimit"), "{err}");
    let err = ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://x.db\"\nrow_limit = \"ten\"",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("row_limit"), "{err}");
}

#[test]
fn secret_references_fail_clearly() {
    let file = ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"postgres://u@h/db\"\npassword = \"${env:MISSING}\"\n[[datasources]]\nid = \"b\"\nurl = \"postgres://u@h/db\"\npassword = \"${vault:x}\"\n[[datasources]]\nid = \"c\"\nurl = \"postgres://u@h/db\"\npassword = \"${nocolon}\"",
    )
    .unwrap();
    let err = |id| file.datasource(id, &secrets()).unwrap_err().to_string();
    assert_eq!(
        err("a"),
        "datasources[0].password: secret not found: ${env:MISSING}"
    );
    assert_eq!(
        err("b"),
        "datasources[1].password: unknown secret provider 'vault'"
    );
    assert_eq!(
        err("c"),
        "datasources[2].password: invalid secret format: expected ${provider:key}"
    );
    assert_eq!(
        file.datasource("zzz", &secrets()).unwrap_err().to_string(),
        "unknown datasource 'zzz' (configured: a, b, c)"
    );
    // Only a whole value is a reference: no interpolation inside longer strings.
    assert_eq!(
        resolve_secret("pre${env:PGPASSWORD}", "k", &secrets())
            .unwrap()
            .expose(),
        "pre${env:PGPASSWORD}"
    );
}

#[test]
fn ad_hoc_ids_come_from_the_url() {
    let id = |url: &str| DatasourceConfig::ad_hoc(url).map(|d| (d.engine, d.id));
    assert_eq!(
        id("sqlite:///data/manufacturing.db").unwrap(),
        (Engine::Sqlite, "manufacturing".to_owned())
    );
    assert_eq!(
        id("duckdb://shop.v2.duckdb").unwrap(),
        (Engine::Duckdb, "shop_v2".to_owned())
    );
    assert_eq!(
        id("duckdb://:memory:").unwrap(),
        (Engine::Duckdb, "memory".to_owned())
    );
    assert_eq!(
        id("postgres://u:p@127.0.0.1:5432/test?sslmode=disable").unwrap(),
        (Engine::Postgres, "test".to_owned())
    );
    assert_eq!(
        id("MariaDB://root@localhost/shop").unwrap(),
        (Engine::Mysql, "shop".to_owned())
    );
    assert!(
        id("ftp://x/y")
            .unwrap_err()
            .to_string()
            .starts_with("--db: unknown")
    );
    assert!(id("not a url").is_err());
    assert!(id("sqlite://").is_err());
}

#[test]
fn redaction_drops_passwords_and_queries() {
    assert_eq!(
        redact_url("postgres://u:p@h:1/db?password=x"),
        "postgres://u:***@h:1/db"
    );
    assert_eq!(redact_url("mysql://root@h/db"), "mysql://root@h/db");
    assert_eq!(redact_url("sqlite:///a/b.db"), "sqlite:///a/b.db");
    assert_eq!(redact_url("u:p@h"), "***");
    assert_eq!(
        redact_url("postgres://u:p@ss@h/db"),
        "postgres://u:***@h/db"
    );
}

#[test]
fn engines_map_to_dialects() {
    for e in Engine::ALL {
        assert_eq!(Engine::from_url(&format!("{e}://x")), Some(e));
        assert!(!e.dialect().to_string().is_empty());
    }
    assert_eq!(Engine::Postgres.dialect(), Dialect::Postgres);
    assert!(Engine::Mysql.is_server() && !Engine::Duckdb.is_server());
}

#[test]
fn artifact_durability_parses_defaults_to_atomic_and_names_a_bad_value() {
    let file = ConfigFile::from_toml_str("version = 1\n[artifacts]\nuri = \"out\"\n").unwrap();
    let section = file.artifacts.unwrap();
    assert_eq!(section.durability, ArtifactDurability::Atomic);
    let file = ConfigFile::from_toml_str(
        "version = 1\n[artifacts]\nuri = \"out\"\ndurability = \"synced\"\n",
    )
    .unwrap();
    assert_eq!(
        file.artifacts.unwrap().durability,
        ArtifactDurability::Synced
    );
    let err = ConfigFile::from_toml_str(
        "version = 1\n[artifacts]\nuri = \"out\"\ndurability = \"eventually\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("durability"), "{err}");
    assert_eq!(" Synced ".parse(), Ok(ArtifactDurability::Synced));
    assert_eq!(
        "fsync".parse::<ArtifactDurability>(),
        Err("'fsync' is not an artifact durability (expected atomic or synced)".to_owned())
    );
    for d in [ArtifactDurability::Atomic, ArtifactDurability::Synced] {
        assert_eq!(d.as_str().parse(), Ok(d));
    }
}
