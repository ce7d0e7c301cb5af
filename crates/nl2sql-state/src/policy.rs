//! The RBAC policy file and its evaluation for one caller (spec: config-and-security.md
//! §3.3, §5 and §6, validators.md §2.7). Every decision fails closed.
//!
//! Tenancy: a file with a `tenants` section scopes datasources by tenant as well as by
//! role. A caller then uses a datasource only when one of their roles allows it AND their
//! tenant does; a tenant the section does not name uses nothing. Without the section
//! (single-tenant mode) only roles decide. The resolver, the schema retrieval behind it
//! and both validators go through the same [`AccessPolicy`], so another tenant's
//! datasources are never proposed, described or queried.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::names::norm_parts;

/// The policy file: roles by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// Format version (1).
    pub version: u32,
    /// Roles by name.
    pub roles: BTreeMap<String, RolePolicy>,
    /// Datasources by tenant; empty (the default) is single-tenant mode.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tenants: BTreeMap<String, TenantPolicy>,
}

/// The datasources one tenant may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantPolicy {
    /// Who the tenant is.
    #[serde(default)]
    pub description: String,
    /// Datasource ids, or `*`.
    #[serde(default)]
    pub allowed_datasources: Vec<String>,
}

/// What one role may read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolePolicy {
    /// What the role is for.
    pub description: String,
    /// Role id used in logs.
    pub role: String,
    /// Datasource ids, or `*`.
    #[serde(default)]
    pub allowed_datasources: Vec<String>,
    /// `*`, `<ds>.*`, `<ds>.<table>` or `<ds>.<schema>.<table>`.
    #[serde(default)]
    pub allowed_tables: Vec<String>,
    /// `<ds>.<table>.<column>` or `<ds>.<schema>.<table>.<column>`; overrides allowances.
    #[serde(default)]
    pub denied_columns: Vec<String>,
    /// Lets the SQL guard accept system catalogs (`information_schema`, `pg_catalog`, …).
    #[serde(default)]
    pub allow_system_catalogs: bool,
    /// Lets the SQL guard accept `WITH RECURSIVE`.
    #[serde(default)]
    pub allow_recursive_cte: bool,
    /// Table functions the SQL guard accepts (e.g. `unnest`).
    #[serde(default)]
    pub allowed_table_functions: Vec<String>,
}

/// Why a policy file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not valid JSON for the policy shape.
    #[error("policy file is malformed at line {line}, column {column}: {message}")]
    Parse {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A table entry without an explicit datasource.
    #[error(
        "invalid table '{entry}' in role '{role}': policy requires explicit 'datasource.table' format to prevent ambiguity"
    )]
    InvalidTable {
        /// Role name.
        role: String,
        /// The entry.
        entry: String,
    },
    /// A denied column entry without datasource, table and column.
    #[error("invalid denied column '{entry}' in role '{role}': expected 'datasource.table.column'")]
    InvalidDeniedColumn {
        /// Role name.
        role: String,
        /// The entry.
        entry: String,
    },
}

impl PolicyFile {
    /// Parses and checks a policy file.
    pub fn from_json_str(s: &str) -> Result<PolicyFile, PolicyError> {
        let file: PolicyFile = serde_json::from_str(s).map_err(|e| PolicyError::Parse {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        for (name, role) in &file.roles {
            for entry in &role.allowed_tables {
                let entry = entry.trim();
                if entry != "*" && norm_parts(entry).len() < 2 {
                    return Err(PolicyError::InvalidTable {
                        role: name.clone(),
                        entry: entry.to_owned(),
                    });
                }
            }
            for entry in &role.denied_columns {
                if norm_parts(entry).len() < 3 {
                    return Err(PolicyError::InvalidDeniedColumn {
                        role: name.clone(),
                        entry: entry.clone(),
                    });
                }
            }
        }
        Ok(file)
    }

    /// The access of a caller holding `roles`: the union over the roles the file knows;
    /// unknown roles add nothing, and no roles allow nothing.
    pub fn access_for(&self, roles: &[String]) -> AccessPolicy {
        let mut access = AccessPolicy {
            roles: roles.to_vec(),
            ..AccessPolicy::default()
        };
        for name in roles {
            let Some(role) = self.roles.get(name).or_else(|| {
                self.roles
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v)
            }) else {
                continue;
            };
            access.datasources.extend(
                role.allowed_datasources
                    .iter()
                    .map(|d| d.trim().to_lowercase()),
            );
            access
                .tables
                .extend(role.allowed_tables.iter().map(|t| norm_parts(t)));
            access
                .denied
                .extend(role.denied_columns.iter().map(|c| norm_parts(c)));
            access.system_catalogs |= role.allow_system_catalogs;
            access.recursive_cte |= role.allow_recursive_cte;
            access.table_functions.extend(
                role.allowed_table_functions
                    .iter()
                    .map(|f| f.trim().to_lowercase()),
            );
        }
        access
    }

    /// The access of a caller holding `roles` in `tenant`: [`PolicyFile::access_for`],
    /// restricted to the tenant's datasources when the file has a `tenants` section (a
    /// tenant it does not name gets none).
    pub fn access_for_tenant(&self, roles: &[String], tenant: &str) -> AccessPolicy {
        let mut access = self.access_for(roles);
        if !self.tenants.is_empty() {
            let allowed = self
                .tenants
                .get(tenant)
                .map(|t| {
                    t.allowed_datasources
                        .iter()
                        .map(|d| d.trim().to_lowercase())
                        .collect()
                })
                .unwrap_or_default();
            access.tenant_datasources = Some(allowed);
        }
        access
    }

    /// Whether the file scopes datasources by tenant.
    pub fn is_multi_tenant(&self) -> bool {
        !self.tenants.is_empty()
    }
}

/// What one caller may read, resolved from a policy file and the caller's roles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessPolicy {
    roles: Vec<String>,
    all: bool,
    datasources: Vec<String>,
    tables: Vec<Vec<String>>,
    denied: Vec<Vec<String>>,
    system_catalogs: bool,
    recursive_cte: bool,
    table_functions: Vec<String>,
    /// The caller's tenant's datasources (`None`: single-tenant mode, no restriction).
    tenant_datasources: Option<Vec<String>>,
}

impl AccessPolicy {
    /// Everything allowed: for callers with no policy configured.
    pub fn allow_all() -> Self {
        AccessPolicy {
            all: true,
            ..AccessPolicy::default()
        }
    }

    /// The caller's roles, as given.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// Whether datasource `ds` may be used: the roles allow it and, in multi-tenant
    /// mode, so does the caller's tenant.
    pub fn datasource_allowed(&self, ds: &str) -> bool {
        let ds = ds.trim().to_lowercase();
        self.tenant_allows(&ds)
            && (self.all || self.datasources.iter().any(|d| d == "*" || *d == ds))
    }

    fn tenant_allows(&self, ds: &str) -> bool {
        self.tenant_datasources
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|d| d == "*" || d == ds))
    }

    /// Whether table `table` (in `schema`, when known) of datasource `ds` may be read.
    pub fn table_allowed(&self, ds: &str, schema: Option<&str>, table: &str) -> bool {
        let ds = ds.to_lowercase();
        if !self.tenant_allows(ds.trim()) {
            return false;
        }
        if self.all {
            return true;
        }
        let table = table.to_lowercase();
        let schema = schema.map(str::to_lowercase);
        self.tables.iter().any(|entry| match entry.as_slice() {
            [star] => star == "*",
            [d, t] => *d == ds && (t == "*" || *t == table),
            [d, s, t] => *d == ds && Some(s) == schema.as_ref() && (t == "*" || *t == table),
            _ => false,
        })
    }

    /// Whether column `column` of `table` in datasource `ds` is denied.
    pub fn column_denied(&self, ds: &str, table: &str, column: &str) -> bool {
        let (ds, table, column) = (
            ds.to_lowercase(),
            table.to_lowercase(),
            column.to_lowercase(),
        );
        self.denied.iter().any(|entry| match entry.as_slice() {
            [d, t, c] | [d, _, t, c] => *d == ds && *t == table && *c == column,
            _ => false,
        })
    }

    /// Whether system catalogs may be queried.
    pub fn allows_system_catalogs(&self) -> bool {
        self.system_catalogs
    }

    /// Whether recursive CTEs may be used.
    pub fn allows_recursive_cte(&self) -> bool {
        self.recursive_cte
    }

    /// Whether table function `name` may be used.
    pub fn table_function_allowed(&self, name: &str) -> bool {
        let name = name.to_lowercase();
        self.table_functions.contains(&name)
    }
}
