//! Server settings ([`ServerConfig`]) and the API-keys file ([`ApiKeys`]): which key maps to
//! which caller (user id, tenant, roles, whether it may manage datasources and indexes).
//!
//! The keys file is TOML (spec: config-and-security.md §5, documented in
//! `docs/rest-api.md`):
//!
//! ```toml
//! version = 1
//!
//! [[keys]]
//! key = "${env:NL2SQL_KEY_ALICE}"   # a secret reference, or the key itself (≥ 16 chars)
//! user_id = "alice"
//! tenant_id = "acme"                # optional: the default tenant otherwise
//! roles = ["analyst"]
//!
//! [[keys]]
//! key_sha256 = "9f86d0…"            # or only the key's SHA-256 (64 hex digits)
//! user_id = "ops"
//! roles = ["admin"]
//! admin = true                      # may add/remove datasources and (re)index
//! ```
//!
//! Keys are held only as SHA-256 digests and compared in constant time.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use nl2sql_state::{ConfigError, SecretSource, UserContext, resolve_secret, sha256_hex};
use serde::{Deserialize, Serialize};

/// The body size limit when none is configured (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// The tenant of callers whose key names none, when `TENANT_ID` is not set.
pub const DEFAULT_TENANT_ID: &str = "default_tenant";

/// The shortest key accepted in clear in the keys file.
pub const MIN_KEY_LEN: usize = 16;

/// The `Host` values `/mcp` accepts by default.
pub const DEFAULT_MCP_ALLOWED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Settings of the REST server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where `nl2sql serve` listens (the library's [`crate::serve`] takes a bound listener).
    pub bind: SocketAddr,
    /// The API keys; a request without a known key is refused (401).
    pub api_keys: ApiKeys,
    /// Origins allowed by CORS (`https://app.example.com`); empty = CORS closed (no
    /// `Access-Control-Allow-*` header is ever sent).
    pub cors_origins: Vec<String>,
    /// Development mode: a `user_context` in the body of `POST /query` replaces the key's
    /// identity. Off by default: the body's context is then ignored (with a warning).
    pub dev_trust_user_context: bool,
    /// The largest request body accepted (413 above).
    pub max_body_bytes: usize,
    /// The tenant of callers whose key sets none (`TENANT_ID`).
    pub default_tenant_id: String,
    /// `Host` values `/mcp` accepts (DNS-rebinding protection): `localhost`,
    /// `127.0.0.1` and `::1` by default; a server reached by another name lists it.
    pub mcp_allowed_hosts: Vec<String>,
}

impl ServerConfig {
    /// Settings with `api_keys`, bound to 127.0.0.1:8000, CORS closed, no dev mode.
    pub fn new(api_keys: ApiKeys) -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8000)),
            api_keys,
            cors_origins: Vec::new(),
            dev_trust_user_context: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            default_tenant_id: DEFAULT_TENANT_ID.to_owned(),
            mcp_allowed_hosts: DEFAULT_MCP_ALLOWED_HOSTS
                .iter()
                .map(|h| (*h).to_owned())
                .collect(),
        }
    }
}

/// Who a key belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The user id (also the owner of the runs the key starts).
    pub user_id: String,
    /// The tenant; `None` means the server's default tenant.
    pub tenant_id: Option<String>,
    /// Roles, for RBAC (the engine's policy file decides what they may read).
    pub roles: Vec<String>,
    /// May add and remove datasources and (re)index them.
    pub admin: bool,
}

impl Identity {
    /// The user context of this identity, the tenant defaulting to `default_tenant`.
    pub fn user_context(&self, default_tenant: &str) -> UserContext {
        UserContext {
            user_id: Some(self.user_id.clone()),
            tenant_id: Some(
                self.tenant_id
                    .clone()
                    .unwrap_or_else(|| default_tenant.to_owned()),
            ),
            roles: self.roles.clone(),
        }
    }
}

/// One `[[keys]]` entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyEntry {
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    key_sha256: Option<String>,
    user_id: String,
    #[serde(default)]
    tenant_id: Option<String>,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    admin: bool,
}

/// The keys file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysFile {
    version: u32,
    #[serde(default)]
    keys: Vec<KeyEntry>,
}

/// API keys by SHA-256 digest. `Debug` shows only the user ids.
#[derive(Clone, Default)]
pub struct ApiKeys {
    entries: Vec<([u8; 32], Identity)>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field(
                "users",
                &self
                    .entries
                    .iter()
                    .map(|(_, i)| &i.user_id)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

/// The digest of `key`.
fn digest(key: &str) -> [u8; 32] {
    decode_hex(&sha256_hex(key.as_bytes())).unwrap_or([0; 32])
}

fn decode_hex(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Equality that takes the same time wherever the first difference is.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl ApiKeys {
    /// No key: every request is refused.
    pub fn empty() -> Self {
        ApiKeys::default()
    }

    /// The same keys with `key` (in clear) mapped to `identity`.
    #[must_use]
    pub fn with_key(mut self, key: &str, identity: Identity) -> Self {
        self.entries.push((digest(key), identity));
        self
    }

    /// Parses a keys file; secret references (`${env:NAME}`) are resolved from `secrets`.
    /// Errors name the key at fault (`keys[1].key`); they never contain a key.
    pub fn from_toml_str(text: &str, secrets: &dyn SecretSource) -> Result<Self, ConfigError> {
        let file: KeysFile =
            toml::from_str(text).map_err(|e| ConfigError::Parse(e.message().to_owned()))?;
        if file.version != 1 {
            return Err(invalid(
                "version",
                format!(
                    "unsupported version {} (this build reads version 1)",
                    file.version
                ),
            ));
        }
        let mut keys = ApiKeys::empty();
        let mut seen = BTreeSet::new();
        for (i, entry) in file.keys.into_iter().enumerate() {
            let at = |k: &str| format!("keys[{i}].{k}");
            let hash = match (&entry.key, &entry.key_sha256) {
                (Some(key), None) => {
                    let secret = resolve_secret(key, &at("key"), secrets)?;
                    let key = secret.expose().trim();
                    if key.chars().count() < MIN_KEY_LEN {
                        return Err(invalid(
                            at("key"),
                            format!("too short: use at least {MIN_KEY_LEN} characters"),
                        ));
                    }
                    digest(key)
                }
                (None, Some(hex)) => decode_hex(hex)
                    .ok_or_else(|| invalid(at("key_sha256"), "expected 64 hexadecimal digits"))?,
                _ => {
                    return Err(invalid(
                        format!("keys[{i}]"),
                        "set exactly one of 'key' and 'key_sha256'",
                    ));
                }
            };
            if entry.user_id.trim().is_empty() {
                return Err(invalid(at("user_id"), "must not be empty"));
            }
            if !seen.insert(hash) {
                return Err(invalid(at("key"), "the same key is listed twice"));
            }
            keys.entries.push((
                hash,
                Identity {
                    user_id: entry.user_id,
                    tenant_id: entry.tenant_id.filter(|t| !t.trim().is_empty()),
                    roles: entry.roles,
                    admin: entry.admin,
                },
            ));
        }
        Ok(keys)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The identity of `key`, if it is a known key. Every entry is compared, in constant
    /// time, whatever matches.
    pub fn identify(&self, key: &str) -> Option<&Identity> {
        let d = digest(key.trim());
        let mut found = None;
        for (hash, identity) in &self.entries {
            if same(hash, &d) && found.is_none() {
                found = Some(identity);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nl2sql_state::EnvSecrets;

    #[test]
    fn parses_keys_in_clear_and_as_digests() {
        let text = format!(
            "version = 1\n[[keys]]\nkey = \"alice-secret-key-0001\"\nuser_id = \"alice\"\ntenant_id = \"acme\"\nroles = [\"analyst\"]\n\n[[keys]]\nkey_sha256 = \"{}\"\nuser_id = \"ops\"\nadmin = true\n",
            sha256_hex(b"ops-secret-key-000002")
        );
        let keys = ApiKeys::from_toml_str(&text, &EnvSecrets).unwrap();
        assert_eq!(keys.len(), 2);
        let alice = keys.identify("alice-secret-key-0001").unwrap();
        assert_eq!(alice.user_id, "alice");
        assert_eq!(alice.tenant_id.as_deref(), Some("acme"));
        assert_eq!(alice.roles, vec!["analyst".to_owned()]);
        assert!(!alice.admin);
        let ops = keys.identify("ops-secret-key-000002").unwrap();
        assert!(ops.admin);
        assert_eq!(
            ops.user_context("default_tenant").tenant_id.as_deref(),
            Some("default_tenant")
        );
        assert!(keys.identify("unknown-key-unknown").is_none());
        assert!(!format!("{keys:?}").contains("secret-key"));
    }

    #[test]
    fn rejects_short_duplicate_and_ambiguous_keys() {
        let short = "version = 1\n[[keys]]\nkey = \"short\"\nuser_id = \"a\"\n";
        let e = ApiKeys::from_toml_str(short, &EnvSecrets).unwrap_err();
        assert!(e.to_string().starts_with("keys[0].key: too short"), "{e}");
        assert!(!e.to_string().contains("short\""), "{e}");
        let dup = "version = 1\n[[keys]]\nkey = \"aaaaaaaaaaaaaaaaaaaa\"\nuser_id = \"a\"\n[[keys]]\nkey = \"aaaaaaaaaaaaaaaaaaaa\"\nuser_id = \"b\"\n";
        let e = ApiKeys::from_toml_str(dup, &EnvSecrets).unwrap_err();
        assert!(e.to_string().contains("keys[1].key"), "{e}");
        let both = format!(
            "version = 1\n[[keys]]\nkey = \"aaaaaaaaaaaaaaaaaaaa\"\nkey_sha256 = \"{}\"\nuser_id = \"a\"\n",
            sha256_hex(b"x")
        );
        let e = ApiKeys::from_toml_str(&both, &EnvSecrets).unwrap_err();
        assert!(e.to_string().contains("exactly one"), "{e}");
        let unknown = "version = 1\n[[keys]]\nkey = \"aaaaaaaaaaaaaaaaaaaa\"\nuser_id = \"a\"\nrole = \"x\"\n";
        assert!(ApiKeys::from_toml_str(unknown, &EnvSecrets).is_err());
        let missing_env = "version = 1\n[[keys]]\nkey = \"${env:NL2SQL_SERVER_TEST_UNSET_VAR}\"\nuser_id = \"a\"\n";
        let e = ApiKeys::from_toml_str(missing_env, &EnvSecrets).unwrap_err();
        assert!(e.to_string().contains("secret not found"), "{e}");
    }
}
