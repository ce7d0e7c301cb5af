//! What a configuration file names besides its datasources: the documentation files
//! (`schema_docs`, `questions`) and the artifact store (`[artifacts]`). Paths are relative
//! to the configuration file's directory. Errors say which file or key is at fault.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use nl2sql_artifacts::{ArtifactStore, DEFAULT_PATH_TEMPLATE, PathTemplate, open_artifact_store};
use nl2sql_index::{DatasourceDocs, add_questions, add_schema_docs};
use nl2sql_state::{
    ArtifactsSection, ConfigError, ConfigFile, ErrorCode, PipelineError, Secret, Severity,
};

/// The descriptions and example questions of the configuration's documentation files, by
/// datasource id (empty when it names none). A file that cannot be read or parsed is an
/// error naming its key and path.
pub fn load_docs(
    file: &ConfigFile,
    base_dir: &Path,
) -> Result<BTreeMap<String, DatasourceDocs>, ConfigError> {
    let mut docs = BTreeMap::new();
    type Add = fn(&mut BTreeMap<String, DatasourceDocs>, &str) -> Result<(), String>;
    let files: [(&str, Option<&String>, Add); 2] = [
        ("schema_docs", file.schema_docs.as_ref(), add_schema_docs),
        ("questions", file.questions.as_ref(), add_questions),
    ];
    for (key, rel, add) in files {
        let Some(rel) = rel else { continue };
        let path = base_dir.join(rel);
        let invalid = |message: String| ConfigError::Invalid {
            key: key.to_owned(),
            message: format!("'{}': {message}", path.display()),
        };
        let text = std::fs::read_to_string(&path).map_err(|e| invalid(e.to_string()))?;
        add(&mut docs, &text).map_err(invalid)?;
    }
    Ok(docs)
}

/// The artifact store of an `[artifacts]` section: a directory (relative to `base_dir`)
/// or `file://` URL gives a local store, `s3://`, `az://`, `abfss://`, `gs://` or
/// `memory://` an object store. Object-store credentials come from the environment
/// (`AWS_*`, `AZURE_*`, `GOOGLE_*`, as the object_store crate reads them) and `options`
/// (object_store configuration keys such as `azure_storage_account_name`, or
/// `connection_string` for an Azure Storage connection string; the settings
/// `RESULT_ARTIFACT_ADLS_*` become these), never from the file. Errors are `INVALID_STATE`.
pub fn artifact_store(
    section: &ArtifactsSection,
    base_dir: &Path,
    options: &[(String, Secret)],
) -> Result<Arc<dyn ArtifactStore>, PipelineError> {
    let template = PathTemplate::parse(
        section
            .path_template
            .as_deref()
            .unwrap_or(DEFAULT_PATH_TEMPLATE),
    )?;
    let uri = section.uri.trim();
    let uri = if uri.contains("://") || Path::new(uri).is_absolute() {
        uri.to_owned()
    } else {
        base_dir.join(uri).to_string_lossy().into_owned()
    };
    // The object-store builders read their credentials from the environment themselves;
    // `options` win over it.
    let options = options
        .iter()
        .map(|(k, v)| (k.as_str(), v.expose().to_owned()));
    open_artifact_store(&uri, template, section.durability, options).map_err(|e| {
        PipelineError::new(
            "config",
            ErrorCode::InvalidState,
            Severity::Error,
            format!("artifacts.uri: {}", e.message),
        )
    })
}
