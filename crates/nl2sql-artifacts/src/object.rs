//! The object-storage backend over the `object_store` crate (S3, Azure, GCS, in memory):
//! objects under `<root><prefix>/<rendered template>`, encoded in memory and uploaded in one
//! `put`, so that an object is visible only once complete.

use std::fmt;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use bytes::Bytes;
use nl2sql_state::{ArtifactRef, PipelineError, redact_url, sha256_hex};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use url::Url;

use crate::integrity::{config_error, read_error, verify_and_decode, write_error};
use crate::{
    ArtifactMeta, ArtifactStore, ArtifactTable, PathTemplate, parquet_io, run_blocking, time,
};

/// Which kind of object store, by URL scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    S3,
    Adls,
    Gcs,
    Memory,
}

impl Backend {
    /// The `backend` of an `ArtifactRef`.
    fn name(self) -> &'static str {
        match self {
            Backend::S3 => "s3",
            Backend::Adls => "adls",
            Backend::Gcs => "gcs",
            Backend::Memory => "memory",
        }
    }

    /// The name in messages ("Unsupported S3 URI: …").
    fn label(self) -> &'static str {
        match self {
            Backend::S3 => "S3",
            Backend::Adls => "ADLS",
            Backend::Gcs => "GCS",
            Backend::Memory => "memory",
        }
    }
}

/// A store's URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Location {
    backend: Backend,
    /// The URI of the store's root, ending in `/` (`memory://` for the in-memory store):
    /// an artifact's URI is the root followed by its key.
    root: String,
    /// Bucket (S3, GCS) or container (Azure); empty in memory.
    bucket: String,
    /// Azure account, when the URL names it (`abfs://container@account.dfs.core.windows.net`).
    account: Option<String>,
    /// Key prefix, no leading or trailing slash; empty for none.
    prefix: Path,
}

/// Artifacts as parquet objects in an object store (S3, Azure, GCS or in memory).
#[derive(Clone)]
pub struct ObjectArtifactStore {
    store: Arc<dyn ObjectStore>,
    location: Location,
    template: PathTemplate,
}

impl fmt::Debug for ObjectArtifactStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The inner store is shown by its `Display` (kind and bucket), never its
        // configuration, which may hold credentials.
        f.debug_struct("ObjectArtifactStore")
            .field("store", &self.store.to_string())
            .field("backend", &self.location.backend.name())
            .field("root", &self.location.root)
            .field("prefix", &self.location.prefix.as_ref())
            .field("template", &self.template.as_str())
            .finish()
    }
}

impl ObjectArtifactStore {
    /// A store for `url` with `template`, its client built from the environment (the
    /// `AWS_*`, `AZURE_*` or `GOOGLE_*` variables that `object_store` reads) and `options`
    /// (`object_store` configuration keys such as `aws_region`, `aws_endpoint`,
    /// `azure_storage_account_key`, `google_service_account`; options win over the
    /// environment; the bucket, container and account of the URL win over both). The Azure
    /// option `connection_string` takes an Azure Storage connection string.
    ///
    /// URLs: `s3://bucket[/prefix]`, `abfs[s]://container@account.dfs.core.windows.net[/prefix]`,
    /// `az://container[/prefix]` (account from the environment or options),
    /// `gs://bucket[/prefix]`, `memory://[prefix]`. A URL that carries a password or a query,
    /// an unknown scheme or option, or a missing bucket, container or account is an
    /// `INVALID_STATE` error; no network request is made here.
    pub fn from_url<I, K, V>(
        url: &str,
        template: PathTemplate,
        options: I,
    ) -> Result<Self, PipelineError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: Into<String>,
    {
        let location = parse_location(url)?;
        let options: Vec<(String, String)> = options
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_ascii_lowercase(), v.into()))
            .collect();
        let store = build_store(url, &location, options)?;
        Ok(ObjectArtifactStore {
            store,
            location,
            template,
        })
    }

    /// A store over an already configured `store` (for example an `AmazonS3` built with
    /// custom retry or client options), whose objects are addressed by `url` as in
    /// [`ObjectArtifactStore::from_url`]: the URL gives the backend, the URIs of artifacts
    /// and the key prefix; `store` must be the bucket or container the URL names.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        url: &str,
        template: PathTemplate,
    ) -> Result<Self, PipelineError> {
        Ok(ObjectArtifactStore {
            store,
            location: parse_location(url)?,
            template,
        })
    }

    /// The underlying object store.
    pub fn object_store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The key prefix (no leading or trailing slash; empty for none).
    pub fn prefix(&self) -> &str {
        self.location.prefix.as_ref()
    }

    /// The key of the object for `meta`: `<prefix>/<rendered template>`.
    fn key(&self, meta: &ArtifactMeta) -> Result<Path, PipelineError> {
        let relative = self.template.render(meta)?;
        let full = if self.location.prefix.is_root() {
            relative
        } else {
            format!("{}/{relative}", self.location.prefix.as_ref())
        };
        Path::parse(&full).map_err(|e| {
            config_error(format!(
                "path template '{}' renders the invalid object key '{full}': {e}",
                self.template.as_str()
            ))
        })
    }

    /// The key of the object `uri` names; the URI must be this store's root followed by a
    /// canonical key under the prefix.
    fn resolve(&self, uri: &str) -> Result<Path, PipelineError> {
        let unsupported = || {
            read_error(format!(
                "Unsupported {} URI: '{uri}'",
                self.location.backend.label()
            ))
        };
        let rest = uri
            .strip_prefix(&self.location.root)
            .ok_or_else(unsupported)?;
        let key = Path::parse(rest)
            .ok()
            .filter(|k| !k.is_root() && k.as_ref() == rest)
            .ok_or_else(unsupported)?;
        if !key.prefix_matches(&self.location.prefix) {
            return Err(read_error(format!("artifact '{uri}' is outside the store")));
        }
        Ok(key)
    }

    fn uri(&self, key: &Path) -> String {
        format!("{}{}", self.location.root, key.as_ref())
    }
}

#[async_trait]
impl ArtifactStore for ObjectArtifactStore {
    fn backend(&self) -> &'static str {
        self.location.backend.name()
    }

    async fn write(
        &self,
        meta: &ArtifactMeta,
        schema: SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<ArtifactRef, PipelineError> {
        let key = self.key(meta)?;
        let uri = self.uri(&key);
        let columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        let row_count: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let batches = batches.to_vec();
        let encode_uri = uri.clone();
        let (bytes, content_hash) = run_blocking(
            move || {
                let bytes = parquet_io::encode(schema, &batches).map_err(|e| {
                    write_error(&encode_uri, &format!("cannot encode parquet: {e}"))
                })?;
                let hash = sha256_hex(&bytes);
                Ok((Bytes::from(bytes), hash))
            },
            |panic| write_error(&uri, &format!("the encoder stopped: {panic}")),
        )
        .await?;
        let size = bytes.len();
        // One request with the whole object: object stores expose an object only once it is
        // complete, so a failed or cancelled upload leaves nothing under the key.
        self.store
            .put(&key, PutPayload::from(bytes))
            .await
            .map_err(|e| write_error(&uri, &e.to_string()))?;
        Ok(ArtifactRef {
            uri,
            backend: self.location.backend.name().to_owned(),
            format: "parquet".to_owned(),
            row_count: row_count as u64,
            columns,
            bytes: size as u64,
            content_hash,
            created_at: time::now_utc(),
            schema_version: meta.schema_version.clone(),
            path_template: self.template.as_str().to_owned(),
        })
    }

    async fn read(&self, artifact: &ArtifactRef) -> Result<ArtifactTable, PipelineError> {
        let key = self.resolve(&artifact.uri)?;
        let uri = artifact.uri.clone();
        let fetch_error = |e: object_store::Error| match e {
            object_store::Error::NotFound { .. } => {
                read_error(format!("artifact '{uri}' is missing: {e}"))
            }
            e => read_error(format!("cannot read artifact '{uri}': {e}")),
        };
        let bytes = match self.store.get(&key).await {
            Ok(result) => result.bytes().await.map_err(fetch_error)?,
            Err(e) => return Err(fetch_error(e)),
        };
        let expected = artifact.content_hash.clone();
        run_blocking(
            move || verify_and_decode(&uri, &expected, bytes),
            |panic| read_error(format!("the artifact reader stopped: {panic}")),
        )
        .await
    }
}

/// Takes a store URL apart (no IO).
fn parse_location(url: &str) -> Result<Location, PipelineError> {
    let shown = redact_url(url);
    let parsed = Url::parse(url)
        .map_err(|e| config_error(format!("invalid artifact store URL '{shown}': {e}")))?;
    if parsed.password().is_some() {
        return Err(config_error(format!(
            "artifact store URL '{shown}' must not carry credentials; pass them through the environment or the options"
        )));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(config_error(format!(
            "artifact store URL '{shown}' must not have a query or a fragment; pass settings through the options"
        )));
    }
    let scheme = parsed.scheme();
    let host = parsed.host_str().unwrap_or_default();
    let user = parsed.username();
    let backend = match scheme {
        "s3" => Backend::S3,
        "abfs" | "abfss" | "az" | "adl" | "azure" => Backend::Adls,
        "gs" => Backend::Gcs,
        "memory" => Backend::Memory,
        "file" => {
            return Err(config_error(format!(
                "artifact store URL '{shown}' is a local path: use the local store"
            )));
        }
        other => {
            return Err(config_error(format!(
                "artifact store URL '{shown}' has the unsupported scheme '{other}' (expected s3, abfs, abfss, az, gs or memory)"
            )));
        }
    };
    if !user.is_empty() && backend != Backend::Adls {
        return Err(config_error(format!(
            "artifact store URL '{shown}' must not carry credentials; pass them through the environment or the options"
        )));
    }
    let prefix_source = if backend == Backend::Memory {
        format!("{host}{}", parsed.path())
    } else {
        parsed.path().to_owned()
    };
    let prefix = Path::from_url_path(&prefix_source).map_err(|e| {
        config_error(format!(
            "artifact store URL '{shown}' has an invalid prefix: {e}"
        ))
    })?;
    let (root, bucket, account) = match backend {
        Backend::S3 | Backend::Gcs => {
            if host.is_empty() {
                return Err(config_error(format!(
                    "{} bucket not configured for artifact store.",
                    backend.label()
                )));
            }
            (format!("{scheme}://{host}/"), host.to_owned(), None)
        }
        Backend::Adls if user.is_empty() => {
            if host.is_empty() {
                return Err(config_error(
                    "ADLS container not configured for artifact store.".to_owned(),
                ));
            }
            (format!("{scheme}://{host}/"), host.to_owned(), None)
        }
        Backend::Adls => {
            let account = host
                .strip_suffix(".dfs.core.windows.net")
                .or_else(|| host.strip_suffix(".blob.core.windows.net"))
                .filter(|a| !a.is_empty() && !a.contains('.'))
                .ok_or_else(|| {
                    config_error(format!(
                        "artifact store URL '{shown}' must name the account as <account>.dfs.core.windows.net"
                    ))
                })?;
            (
                format!("{scheme}://{user}@{host}/"),
                user.to_owned(),
                Some(account.to_owned()),
            )
        }
        Backend::Memory => ("memory://".to_owned(), String::new(), None),
    };
    Ok(Location {
        backend,
        root,
        bucket,
        account,
        prefix,
    })
}

/// Builds the client for `location` from the environment and `options`; no IO.
fn build_store(
    url: &str,
    location: &Location,
    options: Vec<(String, String)>,
) -> Result<Arc<dyn ObjectStore>, PipelineError> {
    let label = location.backend.label();
    let unknown =
        |key: &str| config_error(format!("unknown {label} artifact store option '{key}'"));
    let failed = |e: object_store::Error| {
        config_error(format!(
            "cannot configure the {label} artifact store '{}': {e}",
            redact_url(url)
        ))
    };
    Ok(match location.backend {
        Backend::S3 => {
            let mut builder = AmazonS3Builder::from_env();
            for (key, value) in options {
                let key: AmazonS3ConfigKey = key.parse().map_err(|_| unknown(&key))?;
                builder = builder.with_config(key, value);
            }
            Arc::new(
                builder
                    .with_bucket_name(&location.bucket)
                    .build()
                    .map_err(failed)?,
            )
        }
        Backend::Adls => {
            let mut builder = MicrosoftAzureBuilder::from_env();
            for (key, value) in options {
                if matches!(
                    key.as_str(),
                    "connection_string" | "azure_storage_connection_string"
                ) {
                    for (key, value) in parse_connection_string(&value)? {
                        builder = builder.with_config(key, value);
                    }
                    continue;
                }
                let key: AzureConfigKey = key.parse().map_err(|_| unknown(&key))?;
                builder = builder.with_config(key, value);
            }
            builder = builder.with_container_name(&location.bucket);
            if let Some(account) = &location.account {
                builder = builder.with_account(account);
            }
            if builder
                .get_config_value(&AzureConfigKey::AccountName)
                .is_none_or(|a| a.is_empty())
            {
                return Err(config_error("ADLS account is not configured.".to_owned()));
            }
            Arc::new(builder.build().map_err(failed)?)
        }
        Backend::Gcs => {
            let mut builder = GoogleCloudStorageBuilder::from_env();
            for (key, value) in options {
                let key: GoogleConfigKey = key.parse().map_err(|_| unknown(&key))?;
                builder = builder.with_config(key, value);
            }
            Arc::new(
                builder
                    .with_bucket_name(&location.bucket)
                    .build()
                    .map_err(failed)?,
            )
        }
        Backend::Memory => {
            if let Some((key, _)) = options.first() {
                return Err(unknown(key));
            }
            Arc::new(InMemory::new())
        }
    })
}

/// The `object_store` settings of an Azure Storage connection string
/// (`AccountName=…;AccountKey=…;…`). Its values are secrets: errors name keys only.
fn parse_connection_string(
    connection_string: &str,
) -> Result<Vec<(AzureConfigKey, String)>, PipelineError> {
    let mut out = Vec::new();
    let mut protocol = "https".to_owned();
    let mut suffix = None;
    let mut account = None;
    let mut blob_endpoint = false;
    for part in connection_string
        .split(';')
        .filter(|p| !p.trim().is_empty())
    {
        let Some((key, value)) = part.split_once('=') else {
            return Err(config_error(
                "the ADLS connection string has a part without '='".to_owned(),
            ));
        };
        let value = value.trim().to_owned();
        match key.trim() {
            "AccountName" => {
                account = Some(value.clone());
                out.push((AzureConfigKey::AccountName, value));
            }
            "AccountKey" => out.push((AzureConfigKey::AccessKey, value)),
            "SharedAccessSignature" => out.push((AzureConfigKey::SasKey, value)),
            "BlobEndpoint" => {
                blob_endpoint = true;
                out.push((AzureConfigKey::Endpoint, value));
            }
            "DefaultEndpointsProtocol" => protocol = value,
            "EndpointSuffix" => suffix = Some(value),
            // Endpoints of the other Azure Storage services do not concern blobs.
            "QueueEndpoint" | "TableEndpoint" | "FileEndpoint" => {}
            other => {
                return Err(config_error(format!(
                    "the ADLS connection string has the unsupported key '{other}'"
                )));
            }
        }
    }
    if let (Some(suffix), Some(account), false) = (suffix, account, blob_endpoint)
        && suffix != "core.windows.net"
    {
        out.push((
            AzureConfigKey::Endpoint,
            format!("{protocol}://{account}.blob.{suffix}"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! Unit tests of URL parsing and connection strings (no store involved).

    use super::*;

    #[test]
    fn locations_follow_the_spec_layout() {
        let s3 = parse_location("s3://bucket/team/prod/").expect("s3");
        assert_eq!(s3.backend, Backend::S3);
        assert_eq!(s3.root, "s3://bucket/");
        assert_eq!(s3.bucket, "bucket");
        assert_eq!(s3.prefix.as_ref(), "team/prod");
        let bare = parse_location("s3://bucket").expect("no prefix");
        assert!(bare.prefix.is_root());
        let adls = parse_location("abfs://data@acct.dfs.core.windows.net/nl2sql").expect("abfs");
        assert_eq!(adls.backend, Backend::Adls);
        assert_eq!(adls.root, "abfs://data@acct.dfs.core.windows.net/");
        assert_eq!(adls.bucket, "data");
        assert_eq!(adls.account.as_deref(), Some("acct"));
        assert_eq!(adls.prefix.as_ref(), "nl2sql");
        let az = parse_location("az://data/x").expect("az");
        assert_eq!((az.root.as_str(), az.account), ("az://data/", None));
        let gs = parse_location("gs://b/p").expect("gs");
        assert_eq!((gs.backend, gs.root.as_str()), (Backend::Gcs, "gs://b/"));
        let memory = parse_location("memory://runs/today").expect("memory");
        assert_eq!(memory.root, "memory://");
        assert_eq!(memory.prefix.as_ref(), "runs/today");
        assert!(parse_location("memory://").expect("empty").prefix.is_root());
    }

    #[test]
    fn bad_urls_are_configuration_errors_that_hide_secrets() {
        let cases = [
            ("s3://key:hunter2@bucket/p", "must not carry credentials"),
            ("s3://key@bucket/p", "must not carry credentials"),
            ("s3://bucket/p?X-Amz-Signature=hunter2", "query"),
            ("ftp://host/p", "unsupported scheme 'ftp'"),
            ("file:///tmp/a", "local path"),
            ("s3:///p", "S3 bucket not configured for artifact store."),
            ("gs:///p", "GCS bucket not configured for artifact store."),
            (
                "az:///p",
                "ADLS container not configured for artifact store.",
            ),
            (
                "abfs://c@acct.example.com/p",
                "<account>.dfs.core.windows.net",
            ),
            ("s3://bucket/a%01b", "invalid prefix"),
            ("not a url", "invalid artifact store URL"),
        ];
        for (url, want) in cases {
            let err = parse_location(url).expect_err(url);
            assert_eq!(err.code, nl2sql_state::ErrorCode::InvalidState, "{url}");
            assert!(err.message.contains(want), "{url}: {}", err.message);
            assert!(!err.message.contains("hunter2"), "{url}: {}", err.message);
        }
    }

    #[test]
    fn connection_strings_map_to_azure_settings() {
        let settings = parse_connection_string(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0;EndpointSuffix=core.chinacloudapi.cn",
        )
        .expect("parsed");
        assert_eq!(
            settings,
            vec![
                (AzureConfigKey::AccountName, "acct".to_owned()),
                (AzureConfigKey::AccessKey, "c2VjcmV0".to_owned()),
                (
                    AzureConfigKey::Endpoint,
                    "https://acct.blob.core.chinacloudapi.cn".to_owned()
                ),
            ]
        );
        let err = parse_connection_string("AccountName=a;Password=hunter2").expect_err("bad");
        assert!(err.message.contains("'Password'"), "{}", err.message);
        assert!(!err.message.contains("hunter2"));
    }
}
