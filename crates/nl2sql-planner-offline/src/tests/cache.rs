//! The planner's schema indexes are built once per snapshot: an equal snapshot reuses
//! the index, a changed one (a column added) gets its own, and only the most recently
//! used snapshots are kept.

use std::sync::Arc;

use super::literals::gallery;
use super::rules::request_over;
use super::{col, table};
use crate::OfflinePlanner;
use crate::link::IndexCache;

#[test]
fn an_equal_snapshot_reuses_its_index_and_a_changed_one_does_not() {
    let cache = IndexCache::default();
    let g = gallery();
    let first = cache.index(&g);
    assert!(Arc::ptr_eq(&first, &cache.index(&g.clone())));
    let mut changed = g.clone();
    changed.contract.add_table(table(
        "frame",
        vec![col("frame_id", "INTEGER", true), col("wood", "TEXT", false)],
        vec![],
    ));
    let second = cache.index(&changed);
    assert!(!Arc::ptr_eq(&first, &second));
    assert!(second.tables.iter().any(|t| t.name == "frame"));
    assert!(!first.tables.iter().any(|t| t.name == "frame"));
    assert_eq!(cache.len(), 2);
    // Many snapshots: only the most recent are kept.
    for i in 0..40 {
        let mut s = g.clone();
        s.contract.datasource_id = format!("gallery_{i}");
        cache.index(&s);
    }
    assert_eq!(cache.len(), 16);
}

#[test]
fn one_planner_plans_over_a_changed_schema_with_the_new_index() {
    // The same planner, asked over a schema and then over the schema with a table added,
    // reads the new table (a stale index would refuse the question).
    let planner = OfflinePlanner::lenient();
    let g = gallery();
    assert!(
        planner
            .plan_sync(&request_over(&g, "List the woods of all frames."))
            .is_err()
    );
    let mut changed = g.clone();
    changed.contract.add_table(table(
        "frame",
        vec![col("frame_id", "INTEGER", true), col("wood", "TEXT", false)],
        vec![],
    ));
    let plan = planner
        .plan_sync(&request_over(&changed, "List the woods of all frames."))
        .expect("the new table is read");
    assert_eq!(plan.tables[0].name, "frame");
}
