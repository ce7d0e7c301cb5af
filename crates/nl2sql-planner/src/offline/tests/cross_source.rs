//! Decomposition across two synthetic datasources (a bus fleet and its billing system that
//! share a depot code): questions whose parts each need their own datasource, however they
//! are phrased, become two scans joined on the shared grouping attribute.

use nl2sql_plan::{CombineOperation, DatasourceResolution, DecomposerResponse};
use nl2sql_state::{SchemaContract, SchemaSnapshot};
use nl2sql_validate::validate_decomposition;

use super::{col, datasource, decompose, samples, table};

/// Depots (with their depot code) and the trips of their buses.
fn fleet() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("fleet", "sqlite");
    contract.add_table(table(
        "depots",
        vec![
            col("id", "INTEGER", true),
            col("name", "TEXT", false),
            col("depot_code", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "trips",
        vec![
            col("id", "INTEGER", true),
            col("depot_id", "INTEGER", false),
            col("status", "TEXT", false),
            col("distance_km", "REAL", false),
        ],
        vec![("depot_id", "depots")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    let mut metadata = nl2sql_state::SchemaMetadata {
        datasource_id: "fleet".into(),
        ..Default::default()
    };
    metadata.tables.insert(
        "main.trips".into(),
        nl2sql_state::TableMetadata {
            table: nl2sql_state::TableRef {
                schema_name: "main".into(),
                table_name: "trips".into(),
            },
            columns: [("status".to_owned(), samples(&["Finished", "Cancelled"]))]
                .into_iter()
                .collect(),
            ..Default::default()
        },
    );
    snapshot.metadata = Some(metadata);
    snapshot
}

/// Invoices billed to each depot, by depot code.
fn billing() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("billing", "sqlite");
    contract.add_table(table(
        "invoices",
        vec![
            col("id", "INTEGER", true),
            col("depot_code", "TEXT", false),
            col("total_amount", "REAL", false),
            col("issued_on", "DATE", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

fn ask(question: &str) -> DecomposerResponse {
    let r = decompose(
        question,
        vec![
            datasource("fleet", fleet()),
            datasource("billing", billing()),
        ],
    )
    .unwrap();
    let json = serde_json::to_string(&r).unwrap();
    let report = validate_decomposition(&json, &DatasourceResolution::permissive());
    assert!(report.is_ok(), "{question}: {:?}", report.feedback());
    r
}

/// The decomposition in one line: each scan's datasource, metrics and group-by, then each
/// combine group's operation and join keys.
fn shape(r: &DecomposerResponse) -> String {
    let scans: Vec<String> = r
        .sub_queries
        .iter()
        .map(|s| {
            let metrics: Vec<&str> = s.metrics.iter().map(|m| m.name.as_str()).collect();
            let groups: Vec<&str> = s.group_by.iter().map(|g| g.attribute.as_str()).collect();
            format!(
                "{}[{} by {}]",
                s.datasource_id,
                metrics.join(","),
                groups.join(",")
            )
        })
        .collect();
    let groups: Vec<String> = r
        .combine_groups
        .iter()
        .map(|g| {
            let keys: Vec<String> = g
                .join_keys
                .iter()
                .map(|k| format!("{}={}", k.left, k.right))
                .collect();
            format!("{:?}({})", g.operation, keys.join(","))
        })
        .collect();
    format!("{} -> {}", scans.join(" + "), groups.join(" + "))
}

const JOINED: &str = "fleet[trip_count by depot_code] + billing[total_total_amount by depot_code] -> Join(depot_code=depot_code)";

#[test]
fn a_leading_for_each_clause_is_shared_by_both_parts() {
    assert_eq!(
        shape(&ask(
            "For each depot code, show the number of trips and the total invoice amount."
        )),
        JOINED
    );
}

#[test]
fn parts_joined_by_alongside_or_as_well_as_each_keep_their_grouping() {
    assert_eq!(
        shape(&ask(
            "Number of trips per depot code alongside the total invoice amount per depot code"
        )),
        JOINED
    );
    assert_eq!(
        shape(&ask(
            "the number of trips per depot code as well as the total invoice amount per depot code"
        )),
        JOINED
    );
}

#[test]
fn a_trailing_grouping_is_shared_by_both_parts() {
    assert_eq!(
        shape(&ask(
            "Show the number of trips and the total invoice amount by depot code."
        )),
        JOINED
    );
}

#[test]
fn a_comparison_word_makes_a_compare_group() {
    let r = ask("For each depot code, compare the number of trips with the total invoice amount.");
    assert_eq!(r.combine_groups[0].operation, CombineOperation::Compare);
    assert_eq!(r.sub_queries.len(), 2);
}

#[test]
fn parts_that_one_datasource_reads_stay_one_scan() {
    let r = ask("How many trips were cancelled and how many were finished?");
    assert_eq!(r.sub_queries.len(), 1);
    assert_eq!(r.sub_queries[0].datasource_id, "fleet");
    let r = ask("List the depots and their depot code.");
    assert_eq!(shape(&r), "fleet[ by ] -> Standalone()");
}
