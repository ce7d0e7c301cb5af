//! Who is asking, and which run this is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The caller's identity (spec: config-and-security.md §5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserContext {
    /// User id.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Tenant id.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Roles, for RBAC.
    #[serde(default)]
    pub roles: Vec<String>,
}

/// A run's trace id: a lower-case, hyphenated UUID v4.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TraceId(String);

/// A string that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid trace id '{0}': expected a UUID such as 3f2b8c1e-0d4a-4b6f-9a51-2c7e8d9f0a1b")]
pub struct InvalidTraceId(pub String);

impl TraceId {
    /// A fresh random trace id.
    #[allow(clippy::new_without_default)] // reason: a default trace id would be misleading
    pub fn new() -> Self {
        TraceId(uuid::Uuid::new_v4().hyphenated().to_string())
    }

    /// Accepts a caller-supplied id when it is a UUID (normalised to lower case).
    pub fn parse(s: &str) -> Result<Self, InvalidTraceId> {
        uuid::Uuid::parse_str(s.trim())
            .map(|u| TraceId(u.hyphenated().to_string()))
            .map_err(|_| InvalidTraceId(s.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
