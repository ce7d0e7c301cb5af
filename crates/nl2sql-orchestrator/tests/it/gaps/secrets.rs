//! GAP-40: a password in a datasource URL: percent-encoded, never shown.

use super::*;

// ---------------------------------------------------------------------------------------
// GAP-40

fn server_config(url: &str, password: &str) -> DatasourceConfig {
    let mut config = DatasourceConfig::ad_hoc(url).unwrap();
    config.password = Some(Secret::new(password));
    config
}

/// Passwords with every character that means something in a URL, and non-ASCII text.
const HARD_PASSWORDS: [&str; 6] = [
    "p@ss:w/rd",
    "100%#?&=+",
    "a b;c,d[e]f",
    "ünïcødé-密码-🔑",
    "../../etc/passwd?x=1#frag",
    "user@other-host:5432/db",
];

#[test]
fn gap40_a_separate_password_is_percent_encoded_and_round_trips() {
    for password in HARD_PASSWORDS {
        for (url, port, db) in [
            (
                "postgres://alice@db.internal:5433/sales?sslmode=disable",
                5433,
                "sales",
            ),
            ("mysql://alice@db.internal:3307/sales", 3307, "sales"),
        ] {
            let config = server_config(url, password);
            let effective = effective_url(&config, Path::new("/nowhere"));
            // Nothing but unreserved characters and escapes in the user info.
            let rest = effective.split_once("://").unwrap().1;
            let userinfo = rest.rsplit_once('@').unwrap().0;
            assert!(
                userinfo.bytes().all(|b| b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%' | b':')),
                "{effective}"
            );
            assert_eq!(userinfo.matches(':').count(), 1, "{effective}");
            // A URL parser reads back the same user, password, host, port and path.
            let parsed = url::Url::parse(&effective).unwrap();
            assert_eq!(parsed.username(), "alice");
            assert_eq!(parsed.host_str(), Some("db.internal"));
            assert_eq!(parsed.port(), Some(port));
            assert_eq!(parsed.path(), format!("/{db}"));
            let decoded = percent_decode(parsed.password().unwrap());
            assert_eq!(decoded, password, "{effective}");
            // And so do the drivers' own parsers, the ones the adapters call.
            if url.starts_with("postgres") {
                assert_eq!(parsed.query(), Some("sslmode=disable"));
                let pg: tokio_postgres::Config = effective.parse().unwrap();
                assert_eq!(pg.get_password(), Some(password.as_bytes()), "{effective}");
                assert_eq!(pg.get_user(), Some("alice"));
                assert_eq!(pg.get_ports(), [port]);
                assert_eq!(pg.get_dbname(), Some(db));
            } else {
                let my = mysql_async::Opts::from_url(&effective).unwrap();
                assert_eq!(my.pass(), Some(password), "{effective}");
                assert_eq!(my.user(), Some("alice"));
                assert_eq!(my.ip_or_hostname(), "db.internal");
                assert_eq!(my.tcp_port(), port);
                assert_eq!(my.db_name(), Some(db));
            }
        }
    }
}

/// Decodes `%XX` escapes (UTF-8).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn gap40_a_password_in_the_url_wins_and_file_urls_are_left_alone() {
    // The URL's own password is kept (the separate one is not added twice).
    let config = server_config("postgres://alice:own@db:5432/sales", "p@ss");
    assert_eq!(
        effective_url(&config, Path::new("/x")),
        "postgres://alice:own@db:5432/sales"
    );
    // File engines have no password; a relative path is made absolute.
    let config = DatasourceConfig::ad_hoc("sqlite://data/plant.db").unwrap();
    assert_eq!(
        effective_url(&config, Path::new("/srv/nl2sql")),
        "sqlite:///srv/nl2sql/data/plant.db"
    );
}

#[test]
fn gap40_no_secret_appears_in_debug_or_display_output() {
    let password = "s3cr3t-p@ss:w/rd";
    let url_password = "url-s3cr3t";
    let toml = format!(
        "version = 1\n\n[[datasources]]\nid = \"sales\"\nurl = \"postgres://alice:{url_password}@db:5432/sales\"\n\n[[datasources]]\nid = \"shop\"\nurl = \"mysql://bob@db:3306/shop\"\npassword = \"${{env:NL2SQL_GAP40_TEST_PASSWORD}}\"\n"
    );
    let file = ConfigFile::from_toml_str(&toml).unwrap();
    let secrets = |key: &str| (key == "NL2SQL_GAP40_TEST_PASSWORD").then(|| password.to_owned());
    let configs = file.resolve(&FnSecrets(&secrets)).unwrap();
    let shop = configs.iter().find(|c| c.id == "shop").unwrap();
    assert_eq!(shop.password.as_ref().map(Secret::expose), Some(password));
    let registry = DatasourceRegistry::from_config(
        &file,
        Path::new("/x"),
        &FnSecrets(&secrets),
        crate::support::drivers(),
    )
    .unwrap();
    let texts = [
        format!("{configs:?}"),
        format!("{configs:#?}"),
        format!("{registry:?}"),
        format!("{}", shop.password.as_ref().unwrap()),
        format!("{:?}", shop.password.as_ref().unwrap()),
        shop.redacted_url(),
        configs[0].redacted_url(),
        format!("{}", configs[0].url),
    ];
    for text in &texts {
        for secret in [password, url_password, "s3cr3t"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
    assert!(texts[0].contains("Secret(***)"), "{}", texts[0]);
}

/// A secret source backed by a function.
struct FnSecrets<'a>(&'a dyn Fn(&str) -> Option<String>);

impl nl2sql_state::SecretSource for FnSecrets<'_> {
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String> {
        if provider == "env" {
            Ok((self.0)(key))
        } else {
            Err(format!("unknown secret provider '{provider}'"))
        }
    }
}
