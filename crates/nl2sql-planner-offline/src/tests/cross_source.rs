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
fn side_by_side_and_next_to_each_other_are_a_comparison() {
    const COMPARED: &str = "fleet[trip_count by depot_code] + billing[total_total_amount by depot_code] -> Compare(depot_code=depot_code)";
    for q in [
        "Per depot code, put the number of trips side by side with the total invoice amount.",
        "For each depot code, show the number of trips and the total invoice amount side by side.",
        "Show the number of trips and the total invoice amount next to each other, by depot code.",
        "For each depot code, put the number of trips side-by-side with the total invoice amount.",
    ] {
        assert_eq!(shape(&ask(q)), COMPARED, "{q}");
    }
}

#[test]
fn an_entity_grouped_in_both_parts_is_grouped_by_the_code_they_share() {
    for q in [
        "For each depot, show the number of trips and the total invoice amount.",
        "Show the number of trips and the total invoice amount per depot.",
        // A leading "By depot," shared by two parts laid "next to" each other.
        "By depot, show the number of trips next to the total invoice amount of that depot.",
    ] {
        let r = ask(q);
        assert_eq!(shape(&r), JOINED, "{q}");
        // The fleet scan's plan groups by the depot code too, though its text reads "per
        // depot".
        let fleet_sq = r
            .sub_queries
            .iter()
            .find(|s| s.datasource_id == "fleet")
            .unwrap();
        let plan = super::super::OfflinePlanner::new()
            .plan_sync(&nl2sql_planner::PlanRequest {
                question: q.into(),
                sub_query: fleet_sq.clone(),
                dialect: nl2sql_state::Dialect::Sqlite,
                schema: fleet(),
                feedback: None,
                today: Some("2024-05-15".into()),
            })
            .unwrap();
        assert_eq!(
            plan.group_by[0].expr.column_name.as_deref(),
            Some("depot_code"),
            "{q}: {plan:?}"
        );
    }
}

#[test]
fn parts_that_one_datasource_reads_stay_one_scan() {
    let r = ask("How many trips were cancelled and how many were finished?");
    assert_eq!(r.sub_queries.len(), 1);
    assert_eq!(r.sub_queries[0].datasource_id, "fleet");
    let r = ask("List the depots and their depot code.");
    assert_eq!(shape(&r), "fleet[ by ] -> Standalone()");
}

/// A mill: lines that make one article type, at sites with a site code and a name, and
/// the batches run on them.
fn mill() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("mill", "sqlite");
    contract.add_table(table(
        "sites",
        vec![
            col("id", "INTEGER", true),
            col("site_code", "TEXT", false),
            col("name", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "lines",
        vec![
            col("id", "INTEGER", true),
            col("site_id", "INTEGER", false),
            col("name", "TEXT", false),
            col("article_type", "TEXT", false),
        ],
        vec![("site_id", "sites")],
    ));
    contract.add_table(table(
        "batches",
        vec![
            col("id", "INTEGER", true),
            col("line_id", "INTEGER", false),
            col("article_code", "TEXT", false),
            col("units_planned", "INTEGER", false),
            col("units_produced", "INTEGER", false),
            col("units_wasted", "INTEGER", false),
        ],
        vec![("line_id", "lines")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    super::rules::describe(
        &mut snapshot,
        "lines",
        "article_type",
        super::rules::described("Rugs, Mats or Throws"),
    );
    snapshot
}

/// A store: articles (with their type, code and the site that makes them), buyers, their
/// orders of articles and the articles sent back.
fn store() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("store", "sqlite");
    contract.add_table(table(
        "articles",
        vec![
            col("id", "INTEGER", true),
            col("article_code", "TEXT", false),
            col("name", "TEXT", false),
            col("article_type", "TEXT", false),
            col("made_at_site_code", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "buyers",
        vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "buyer_orders",
        vec![
            col("id", "INTEGER", true),
            col("buyer_id", "INTEGER", false),
            col("bought_on", "DATE", false),
            col("sent_from_site_code", "TEXT", false),
            col("total_amount", "REAL", false),
        ],
        vec![("buyer_id", "buyers")],
    ));
    contract.add_table(table(
        "buyer_order_lines",
        vec![
            col("id", "INTEGER", true),
            col("buyer_order_id", "INTEGER", false),
            col("article_id", "INTEGER", false),
            col("quantity", "INTEGER", false),
        ],
        vec![("purchase_id", "buyer_orders"), ("article_id", "articles")],
    ));
    contract.add_table(table(
        "sendbacks",
        vec![
            col("id", "INTEGER", true),
            col("buyer_order_line_id", "INTEGER", false),
            col("quantity", "INTEGER", false),
        ],
        vec![("buyer_order_line_id", "buyer_order_lines")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    super::rules::describe(
        &mut snapshot,
        "buyer_order_lines",
        "quantity",
        super::rules::described("Units bought"),
    );
    super::rules::describe(
        &mut snapshot,
        "sendbacks",
        "quantity",
        super::rules::described("Units sent back"),
    );
    super::rules::describe(
        &mut snapshot,
        "articles",
        "article_type",
        super::rules::described("Rugs, Mats or Throws"),
    );
    snapshot
}

fn ask_two(question: &str) -> DecomposerResponse {
    let r = decompose(
        question,
        vec![datasource("mill", mill()), datasource("store", store())],
    )
    .unwrap();
    let json = serde_json::to_string(&r).unwrap();
    let report = validate_decomposition(&json, &DatasourceResolution::permissive());
    assert!(report.is_ok(), "{question}: {:?}", report.feedback());
    r
}

#[test]
fn each_part_takes_its_own_measure_in_its_own_datasource() {
    // "how many units" is the units column nearest the part's tables (the units bought,
    // not a price per unit or a count of buyers); "produce" is not `made_at_site_code`
    // (a synonym reaches only a name's head word); a leading "By article type," is shared
    // as "per article type", so "order per article type" is not a sort.
    assert_eq!(
        shape(&ask_two(
            "By article type, how many units did we produce, and how many units did buyers order?"
        )),
        "mill[total_units_produced by article_type] + store[total_quantity by article_type] -> Join(article_type=article_type)"
    );
    // "returned": the units column whose description says so.
    assert_eq!(
        shape(&ask_two(
            "For each article code, how many units did we produce and how many units did buyers send back?"
        )),
        "mill[total_units_produced by article_code] + store[total_quantity by article_code] -> Join(article_code=article_code)"
    );
}
