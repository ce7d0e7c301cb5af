//! Building a [`SchemaContract`] from `CREATE TABLE` statements.

use indexmap::IndexMap;
use nl2sql_state::{
    ColumnContract, Dialect, ForeignKeyContract, SchemaContract, TableContract, TableRef,
};
use sqlparser::ast::{
    ColumnOption, CreateTable, Expr, ForeignKeyConstraint, Ident, ObjectName, Statement,
    TableConstraint,
};
use sqlparser::parser::Parser;

use crate::guard::parser_dialect;

/// Why a DDL text could not be turned into a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaLoadError {
    /// The DDL does not parse in the dialect.
    #[error("schema DDL does not parse as {dialect}: {message}")]
    Parse {
        /// Dialect used for parsing.
        dialect: Dialect,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The DDL holds no `CREATE TABLE` statement.
    #[error("schema DDL defines no table (expected CREATE TABLE statements)")]
    NoTables,
    /// The JSON schema is malformed.
    #[error("schema JSON is malformed: {0}")]
    Json(String),
    /// Two `CREATE TABLE` statements define the same table.
    #[error("schema DDL defines table '{0}' twice")]
    DuplicateTable(String),
}

/// The schema name an engine reports for tables created without one.
fn default_schema(dialect: Dialect, datasource_id: &str) -> String {
    match dialect {
        Dialect::Postgres => "public".to_owned(),
        Dialect::MySql => datasource_id.to_owned(),
        Dialect::DuckDb | Dialect::Sqlite | Dialect::Generic => "main".to_owned(),
    }
}

/// Stored form of an identifier from DDL: unquoted names fold to lower case where the
/// dialect folds them; quoted names keep their case.
fn stored_name(dialect: Dialect, ident: &Ident) -> String {
    match dialect {
        // SQLite and MySQL keep the case as written (and compare case-insensitively).
        Dialect::Sqlite | Dialect::MySql => ident.value.clone(),
        Dialect::DuckDb | Dialect::Postgres | Dialect::Generic => {
            if ident.quote_style.is_some() {
                ident.value.clone()
            } else {
                ident.value.to_lowercase()
            }
        }
    }
}

fn name_parts(dialect: Dialect, name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|part| match part.as_ident() {
            Some(ident) => stored_name(dialect, ident),
            None => part.to_string(),
        })
        .collect()
}

fn table_ref(dialect: Dialect, name: &ObjectName, default: &str) -> TableRef {
    let parts = name_parts(dialect, name);
    let (schema, table) = match parts.as_slice() {
        [.., schema, table] => (schema.clone(), table.clone()),
        [table] => (default.to_owned(), table.clone()),
        [] => (default.to_owned(), String::new()),
    };
    TableRef {
        schema_name: schema,
        table_name: table,
    }
}

fn index_column_name(dialect: Dialect, expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(stored_name(dialect, ident)),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| stored_name(dialect, i)),
        _ => None,
    }
}

/// Parses `CREATE TABLE` statements (other statements, such as `CREATE INDEX` or
/// `INSERT`, are skipped) into a schema contract for `datasource_id`.
///
/// Tables without a schema get the engine's default (`main` for SQLite, DuckDB and
/// generic; `public` for PostgreSQL; the datasource id for MySQL). Column types are kept
/// as written; primary keys and foreign keys come from column options and table
/// constraints.
pub fn schema_from_ddl(
    ddl: &str,
    dialect: Dialect,
    datasource_id: &str,
) -> Result<SchemaContract, SchemaLoadError> {
    let parser_dialect = parser_dialect(dialect);
    let statements =
        Parser::parse_sql(parser_dialect.as_ref(), ddl).map_err(|e| SchemaLoadError::Parse {
            dialect,
            message: e.to_string(),
        })?;
    let default = default_schema(dialect, datasource_id);
    let mut contract = SchemaContract::new(datasource_id, dialect.as_str());
    for statement in &statements {
        let Statement::CreateTable(create) = statement else {
            continue;
        };
        let table = table_contract(dialect, create, &default);
        let key = table.table.full_name();
        if contract.tables.contains_key(&key) {
            return Err(SchemaLoadError::DuplicateTable(key));
        }
        contract.add_table(table);
    }
    if contract.tables.is_empty() {
        return Err(SchemaLoadError::NoTables);
    }
    Ok(contract)
}

fn foreign_key(
    dialect: Dialect,
    constrained_columns: Vec<String>,
    fk: &ForeignKeyConstraint,
    default: &str,
) -> ForeignKeyContract {
    ForeignKeyContract {
        constrained_columns,
        referred_table: table_ref(dialect, &fk.foreign_table, default),
        referred_columns: fk
            .referred_columns
            .iter()
            .map(|c| stored_name(dialect, c))
            .collect(),
        cardinality: Default::default(),
        business_meaning: None,
        inferred: false,
    }
}

fn table_contract(dialect: Dialect, create: &CreateTable, default: &str) -> TableContract {
    let table = table_ref(dialect, &create.name, default);
    let mut columns: IndexMap<String, ColumnContract> = IndexMap::new();
    let mut foreign_keys = Vec::new();
    for def in &create.columns {
        let name = stored_name(dialect, &def.name);
        let mut column = ColumnContract {
            name: name.clone(),
            data_type: def.data_type.to_string(),
            is_nullable: true,
            is_primary_key: false,
        };
        for option in &def.options {
            match &option.option {
                ColumnOption::NotNull => column.is_nullable = false,
                ColumnOption::PrimaryKey(_) => {
                    column.is_primary_key = true;
                    column.is_nullable = false;
                }
                ColumnOption::ForeignKey(fk) => {
                    foreign_keys.push(foreign_key(dialect, vec![name.clone()], fk, default));
                }
                _ => {}
            }
        }
        columns.insert(name, column);
    }
    for constraint in &create.constraints {
        match constraint {
            TableConstraint::PrimaryKey(pk) => {
                for col in &pk.columns {
                    if let Some(name) = index_column_name(dialect, &col.column.expr)
                        && let Some(column) = columns
                            .values_mut()
                            .find(|c| c.name.eq_ignore_ascii_case(&name))
                    {
                        column.is_primary_key = true;
                        column.is_nullable = false;
                    }
                }
            }
            TableConstraint::ForeignKey(fk) => {
                let constrained = fk.columns.iter().map(|c| stored_name(dialect, c)).collect();
                foreign_keys.push(foreign_key(dialect, constrained, fk, default));
            }
            _ => {}
        }
    }
    TableContract {
        table,
        columns,
        foreign_keys,
    }
}

/// Reads a schema from JSON: either a full schema snapshot (`{"contract": …,
/// "metadata": …}`) or a bare schema contract (`{"datasource_id", "engine_type",
/// "tables"}`), as documented in `docs/schema-json.md`.
pub fn schema_from_json(json: &str) -> Result<SchemaContract, SchemaLoadError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| SchemaLoadError::Json(e.to_string()))?;
    let contract = if value.get("contract").is_some() {
        serde_json::from_value::<nl2sql_state::SchemaSnapshot>(value).map(|s| s.contract)
    } else {
        serde_json::from_value::<SchemaContract>(value)
    }
    .map_err(|e| SchemaLoadError::Json(e.to_string()))?;
    if contract.tables.is_empty() {
        return Err(SchemaLoadError::NoTables);
    }
    Ok(contract)
}
