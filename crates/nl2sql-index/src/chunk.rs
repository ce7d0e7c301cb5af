//! Schema chunks: the small typed documents one schema snapshot becomes in the index
//! (spec: retrieval.md §3). Ids are deterministic and embed the schema version; chunks are
//! emitted sorted by id.

use std::collections::BTreeMap;
use std::fmt;

use nl2sql_state::{ColumnMetadata, ColumnStatistics, SchemaSnapshot, TableContract};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a chunk describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ChunkType {
    /// One per datasource.
    #[serde(rename = "schema.datasource")]
    Datasource,
    /// One per table.
    #[serde(rename = "schema.table")]
    Table,
    /// One per column.
    #[serde(rename = "schema.column")]
    Column,
    /// One per foreign key.
    #[serde(rename = "schema.relationship")]
    Relationship,
    /// A business metric; defined, never emitted (no metric source exists).
    #[serde(rename = "schema.metric")]
    Metric,
}

impl ChunkType {
    /// Every chunk type, in the order of the specification's table.
    pub const ALL: &'static [ChunkType] = &[
        ChunkType::Datasource,
        ChunkType::Table,
        ChunkType::Column,
        ChunkType::Relationship,
        ChunkType::Metric,
    ];

    /// The stable name: `schema.datasource`, `schema.table`, `schema.column`,
    /// `schema.relationship` or `schema.metric`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkType::Datasource => "schema.datasource",
            ChunkType::Table => "schema.table",
            ChunkType::Column => "schema.column",
            ChunkType::Relationship => "schema.relationship",
            ChunkType::Metric => "schema.metric",
        }
    }
}

impl fmt::Display for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One document of the schema index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Deterministic id, e.g. `schema.column:main.machines:name:<version>`.
    pub id: String,
    /// What it describes.
    #[serde(rename = "type")]
    pub chunk_type: ChunkType,
    /// The datasource it belongs to.
    pub datasource_id: String,
    /// The schema version it was built from.
    pub schema_version: String,
    /// The text that is searched (and shown to a model).
    pub page_content: String,
    /// Metadata: the common keys `id`, `type`, `datasource_id`, `schema_version`, then the
    /// type's own keys (`table`, `column`, `from_table`, …).
    pub metadata: BTreeMap<String, Value>,
    /// Extra search terms that are not in the page content's wording: names, synonyms and
    /// sample values.
    #[serde(default)]
    pub keywords: Vec<String>,
}

impl Chunk {
    /// The metadata value `key` as a string, when it is one.
    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    /// The metadata value `key` as a list of strings (empty when missing).
    pub fn meta_list(&self, key: &str) -> Vec<String> {
        match self.metadata.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The tables this chunk is about: `table` for table and column chunks, both ends for
    /// a relationship, none for a datasource chunk.
    pub fn tables(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for key in ["table", "from_table", "to_table"] {
            if let Some(t) = self.meta_str(key)
                && !out.contains(&t)
            {
                out.push(t);
            }
        }
        out
    }

    fn new(
        chunk_type: ChunkType,
        id: String,
        datasource_id: &str,
        version: &str,
        page_content: String,
    ) -> Self {
        let mut metadata = BTreeMap::new();
        metadata.insert("id".to_owned(), json!(id));
        metadata.insert("type".to_owned(), json!(chunk_type.as_str()));
        metadata.insert("datasource_id".to_owned(), json!(datasource_id));
        metadata.insert("schema_version".to_owned(), json!(version));
        Chunk {
            id,
            chunk_type,
            datasource_id: datasource_id.to_owned(),
            schema_version: version.to_owned(),
            page_content,
            metadata,
            keywords: Vec::new(),
        }
    }

    fn with(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_owned(), value);
        self
    }
}

/// The id of a datasource chunk.
pub fn datasource_chunk_id(datasource_id: &str, version: &str) -> String {
    format!("{}:{datasource_id}:{version}", ChunkType::Datasource)
}

/// The id of a table chunk.
pub fn table_chunk_id(table_key: &str, version: &str) -> String {
    format!("{}:{table_key}:{version}", ChunkType::Table)
}

/// The id of a column chunk.
pub fn column_chunk_id(table_key: &str, column: &str, version: &str) -> String {
    format!("{}:{table_key}:{column}:{version}", ChunkType::Column)
}

/// The id of a relationship chunk: the reference's `<from>-><to>:<version>` with the
/// constrained columns appended, so two foreign keys between the same tables differ.
pub fn relationship_chunk_id(
    from_key: &str,
    to_key: &str,
    version: &str,
    constrained_columns: &[String],
) -> String {
    format!(
        "{}:{from_key}->{to_key}:{version}:{}",
        ChunkType::Relationship,
        constrained_columns.join(",")
    )
}

/// Builds every chunk of `snapshot` for `version`, sorted by id.
///
/// `description` is the configured datasource description (else the snapshot's, else
/// empty); `examples` are the datasource's example questions.
pub fn build_chunks(
    snapshot: &SchemaSnapshot,
    version: &str,
    description: Option<&str>,
    examples: &[String],
) -> Vec<Chunk> {
    let contract = &snapshot.contract;
    let metadata = snapshot.metadata.as_ref();
    let ds = contract.datasource_id.as_str();
    let mut chunks = Vec::new();

    let description = description
        .map(str::to_owned)
        .or_else(|| metadata.and_then(|m| m.description.clone()))
        .unwrap_or_default();
    let domains: Vec<String> = metadata.and_then(|m| m.domains.clone()).unwrap_or_default();
    let page = [
        format!("Datasource: {ds}"),
        format!("Description: {description}"),
        format!("Domains: {}", joined_or_na(&domains)),
        format!("Example questions: {}", joined_or_na(examples)),
    ]
    .join("\n");
    let mut chunk = Chunk::new(
        ChunkType::Datasource,
        datasource_chunk_id(ds, version),
        ds,
        version,
        page,
    )
    .with("description", json!(description))
    .with("domains", json!(domains))
    .with("examples", json!(examples));
    chunk.keywords = vec![ds.to_owned()];
    chunks.push(chunk);

    for (key, table) in &contract.tables {
        let table_meta = metadata.and_then(|m| m.tables.get(key));
        let table_description = table_meta.and_then(|t| t.description.clone());
        chunks.push(table_chunk(
            ds,
            version,
            key,
            table,
            table_description.as_deref(),
            table_meta.and_then(|t| t.row_count),
        ));
        for column in table.columns.values() {
            let column_meta = table_meta.and_then(|t| t.columns.get(&column.name));
            chunks.push(column_chunk(
                ds,
                version,
                key,
                &table.table.table_name,
                &column.name,
                &column.data_type,
                column_meta,
            ));
        }
        for fk in &table.foreign_keys {
            let to_key = fk.referred_table.full_name();
            let page = [
                format!("Relationship between {key} and {to_key}"),
                format!(
                    "Business meaning: {}",
                    fk.business_meaning.as_deref().unwrap_or("N/A")
                ),
            ]
            .join("\n");
            let mut chunk = Chunk::new(
                ChunkType::Relationship,
                relationship_chunk_id(key, &to_key, version, &fk.constrained_columns),
                ds,
                version,
                page,
            )
            .with("from_table", json!(key))
            .with("to_table", json!(to_key))
            .with("table", json!(key))
            .with("from_columns", json!(fk.constrained_columns))
            .with("to_columns", json!(fk.referred_columns))
            .with("cardinality", json!("unknown"));
            chunk.keywords = vec![
                table.table.table_name.clone(),
                fk.referred_table.table_name.clone(),
            ];
            chunk
                .keywords
                .extend(fk.constrained_columns.iter().cloned());
            chunk.keywords.extend(fk.referred_columns.iter().cloned());
            chunks.push(chunk);
        }
    }
    chunks.sort_by(|a, b| a.id.cmp(&b.id));
    chunks
}

fn table_chunk(
    ds: &str,
    version: &str,
    key: &str,
    table: &TableContract,
    description: Option<&str>,
    row_count: Option<u64>,
) -> Chunk {
    let primary_key: Vec<&str> = table
        .columns
        .values()
        .filter(|c| c.is_primary_key)
        .map(|c| c.name.as_str())
        .collect();
    let mut names: Vec<&str> = table.columns.keys().map(String::as_str).collect();
    names.sort_unstable();
    let pk_text = if primary_key.is_empty() {
        "None".to_owned()
    } else {
        primary_key.join(", ")
    };
    let page = [
        format!("Table: {key}"),
        format!("Description: {}", description.unwrap_or("N/A")),
        format!("Primary key: {pk_text}"),
        format!("Columns: {}", names.join(", ")),
    ]
    .join("\n");
    let foreign_keys: Vec<String> = table
        .foreign_keys
        .iter()
        .map(|fk| format!("{key} -> {}", fk.referred_table.full_name()))
        .collect();
    let mut chunk = Chunk::new(
        ChunkType::Table,
        table_chunk_id(key, version),
        ds,
        version,
        page,
    )
    .with("table", json!(key))
    .with("row_count", json!(row_count))
    .with("description", json!(description))
    .with("primary_key", json!(primary_key.join(",")))
    .with("foreign_keys", json!(foreign_keys.join(",")));
    chunk.keywords = vec![table.table.table_name.clone()];
    chunk
}

fn column_chunk(
    ds: &str,
    version: &str,
    key: &str,
    table_name: &str,
    column: &str,
    data_type: &str,
    meta: Option<&ColumnMetadata>,
) -> Chunk {
    let description = meta.and_then(|m| m.description.clone());
    let synonyms: Vec<String> = meta.and_then(|m| m.synonyms.clone()).unwrap_or_default();
    let mut lines = vec![
        format!("Table: {key}"),
        format!("Column: {column}"),
        format!("Type: {data_type}"),
        format!("Description: {}", description.as_deref().unwrap_or("N/A")),
    ];
    let statistics = meta.and_then(|m| m.statistics.as_ref());
    if let Some(stats) = statistics {
        lines.push(format!("Statistics: {}", render_statistics(stats)));
    }
    if !synonyms.is_empty() {
        lines.push(format!("Synonyms: {}", synonyms.join(", ")));
    }
    let mut chunk = Chunk::new(
        ChunkType::Column,
        column_chunk_id(key, column, version),
        ds,
        version,
        lines.join("\n"),
    )
    .with("table", json!(key))
    .with("column", json!(column))
    .with("dtype", json!(data_type))
    .with("pii", json!(meta.is_some_and(|m| m.pii)))
    .with("description", json!(description));
    chunk.keywords = vec![column.to_owned(), table_name.to_owned()];
    chunk.keywords.extend(synonyms);
    if let Some(stats) = statistics {
        chunk
            .keywords
            .extend(stats.sample_values.iter().map(render_value));
    }
    chunk
}

/// `nulls 0.0%, distinct 3, min 1, max 9, samples a, b`, leaving out what is unknown.
fn render_statistics(stats: &ColumnStatistics) -> String {
    let mut parts = vec![
        format!("nulls {:.1}%", stats.null_percentage * 100.0),
        format!("distinct {}", stats.distinct_count),
    ];
    if let Some(min) = &stats.min_value {
        parts.push(format!("min {}", render_value(min)));
    }
    if let Some(max) = &stats.max_value {
        parts.push(format!("max {}", render_value(max)));
    }
    if !stats.sample_values.is_empty() {
        let samples: Vec<String> = stats.sample_values.iter().map(render_value).collect();
        parts.push(format!("samples {}", samples.join(", ")));
    }
    parts.join(", ")
}

fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn joined_or_na(items: &[String]) -> String {
    if items.is_empty() {
        "N/A".to_owned()
    } else {
        items.join(", ")
    }
}
