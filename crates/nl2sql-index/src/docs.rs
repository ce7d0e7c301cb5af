//! Documentation that enriches indexing beyond what a database can say about itself: a
//! schema-documentation file (table and column descriptions by datasource) and an
//! example-questions file (questions by datasource), both JSON and both named by the
//! configuration file (`schema_docs`, `questions`).
//!
//! Formats (`version` 1; other keys, such as the demo's `row_count`, are ignored):
//!
//! ```json
//! { "version": 1, "datasources": { "sales": { "description": "…", "domains": ["sales"],
//!     "tables": { "orders": { "description": "…", "columns": { "amount": "…" } } } } } }
//! ```
//!
//! ```json
//! { "version": 1, "datasources": { "sales": ["Top 10 customers by revenue"] },
//!   "cross_source": ["…"] }
//! ```
//!
//! A description from these files wins over the database's own comment: the file is what
//! the owner wrote for people asking questions. Descriptions live in the snapshot's
//! metadata, never in its contract, so they do not change the schema version.

use std::collections::BTreeMap;

use nl2sql_state::{SchemaMetadata, SchemaSnapshot, TableMetadata};
use serde::Deserialize;

/// What to index a datasource with besides its schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasourceDocs {
    /// The configured description (else the snapshot's, else empty).
    pub description: Option<String>,
    /// Business domains from the schema-documentation file (the datasource document's
    /// `Domains`, handed to the decomposer); written into the snapshot's metadata.
    pub domains: Vec<String>,
    /// Example questions from the sample-questions file.
    pub examples: Vec<String>,
    /// Table and column descriptions from the schema-documentation file, by table name;
    /// written into the snapshot's metadata before it is stored ([`crate::apply_docs`]).
    pub tables: BTreeMap<String, TableDocs>,
}

/// The documentation format version this build reads.
pub const DOCS_VERSION: u32 = 1;

/// Descriptions of one table and its columns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct TableDocs {
    /// The table's description.
    #[serde(default)]
    pub description: Option<String>,
    /// Column descriptions by column name.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct SchemaDocsFile {
    version: u32,
    #[serde(default)]
    datasources: BTreeMap<String, DatasourceSchemaDocs>,
}

#[derive(Deserialize)]
struct DatasourceSchemaDocs {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    domains: Vec<String>,
    #[serde(default)]
    tables: BTreeMap<String, TableDocs>,
}

#[derive(Deserialize)]
struct QuestionsFile {
    version: u32,
    #[serde(default)]
    datasources: BTreeMap<String, Vec<String>>,
}

fn check_version(version: u32, what: &str) -> Result<(), String> {
    if version == DOCS_VERSION {
        Ok(())
    } else {
        Err(format!(
            "{what}: unsupported version {version} (this build reads version {DOCS_VERSION})"
        ))
    }
}

/// Adds the descriptions of a schema-documentation file's text to `docs` (by datasource
/// id). A description already in `docs` (the configuration's own) is kept.
pub fn add_schema_docs(
    docs: &mut BTreeMap<String, DatasourceDocs>,
    text: &str,
) -> Result<(), String> {
    let file: SchemaDocsFile =
        serde_json::from_str(text).map_err(|e| format!("schema docs: {e}"))?;
    check_version(file.version, "schema docs")?;
    for (id, ds) in file.datasources {
        let entry = docs.entry(id).or_default();
        if entry.description.is_none() {
            entry.description = ds.description.filter(|d| !d.trim().is_empty());
        }
        for domain in ds.domains {
            let domain = domain.trim();
            if !domain.is_empty() && !entry.domains.iter().any(|d| d == domain) {
                entry.domains.push(domain.to_owned());
            }
        }
        entry.tables.extend(ds.tables);
    }
    Ok(())
}

/// Adds the example questions of an example-questions file's text to `docs` (by
/// datasource id). Cross-source questions are not tied to one datasource and are skipped.
pub fn add_questions(
    docs: &mut BTreeMap<String, DatasourceDocs>,
    text: &str,
) -> Result<(), String> {
    let file: QuestionsFile = serde_json::from_str(text).map_err(|e| format!("questions: {e}"))?;
    check_version(file.version, "questions")?;
    for (id, questions) in file.datasources {
        docs.entry(id)
            .or_default()
            .examples
            .extend(questions.into_iter().filter(|q| !q.trim().is_empty()));
    }
    Ok(())
}

/// Writes the domains and the table and column descriptions of `docs` into `snapshot`'s
/// metadata. Tables are matched by name (case-insensitively, with or without their
/// schema); a table or column the snapshot does not have is ignored. Returns how many
/// entries were set (the domains count as one).
pub fn apply_docs(snapshot: &mut SchemaSnapshot, docs: &DatasourceDocs) -> usize {
    if docs.tables.is_empty() && docs.domains.is_empty() {
        return 0;
    }
    let metadata = snapshot.metadata.get_or_insert_with(|| SchemaMetadata {
        datasource_id: snapshot.contract.datasource_id.clone(),
        engine_type: snapshot.contract.engine_type.clone(),
        ..SchemaMetadata::default()
    });
    let mut set = 0;
    if !docs.domains.is_empty() {
        metadata.domains = Some(docs.domains.clone());
        set += 1;
    }
    for (key, table) in &snapshot.contract.tables {
        let name = &table.table.table_name;
        let Some(table_docs) = docs.tables.iter().find_map(|(k, v)| {
            (k.eq_ignore_ascii_case(name) || k.eq_ignore_ascii_case(key)).then_some(v)
        }) else {
            continue;
        };
        let meta = metadata
            .tables
            .entry(key.clone())
            .or_insert_with(|| TableMetadata {
                table: table.table.clone(),
                ..TableMetadata::default()
            });
        if let Some(d) = table_docs
            .description
            .as_ref()
            .filter(|d| !d.trim().is_empty())
        {
            meta.description = Some(d.clone());
            set += 1;
        }
        for column in table.columns.keys() {
            let Some(d) = table_docs
                .columns
                .iter()
                .find_map(|(k, v)| k.eq_ignore_ascii_case(column).then_some(v))
                .filter(|d| !d.trim().is_empty())
            else {
                continue;
            };
            meta.columns.entry(column.clone()).or_default().description = Some(d.clone());
            set += 1;
        }
    }
    set
}
