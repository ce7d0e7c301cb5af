//! The corpus of the guard/engine differential tests (issue: the guard and the engine
//! must read the same statement), over the manufacturing fixture: hand-written
//! statements that exercise every scoping rule the guard resolves, and deterministic
//! generated ones (join paths, projections, filters, groupings, subqueries).
//!
//! Each adapter crate's tests check every statement with the guard, ask their engine what
//! the guard's rendering reads (SQLite's authorizer, PostgreSQL's `EXPLAIN (VERBOSE)`,
//! DuckDB's and MySQL's JSON plans) and compare with [`unseen`]: the engine may read
//! less than the guard resolved (an optimizer skips what it need not read), never more.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_validate::GuardReport;

/// Lower-cased `table -> columns` a statement reads.
pub type Reads = BTreeMap<String, BTreeSet<String>>;

/// The tables and columns the guard resolved for an accepted statement, lower-cased.
pub fn guard_reads(report: &GuardReport) -> Reads {
    report
        .reads
        .iter()
        .map(|r| {
            (
                r.table.to_lowercase(),
                r.columns.iter().map(|c| c.to_lowercase()).collect(),
            )
        })
        .collect()
}

/// What `engine` reads that `guard` did not resolve: `table` or `table.column`.
pub fn unseen(engine: &Reads, guard: &Reads) -> Vec<String> {
    let mut out = Vec::new();
    for (table, columns) in engine {
        match guard.get(table) {
            None => out.push(table.clone()),
            Some(seen) => out.extend(columns.difference(seen).map(|c| format!("{table}.{c}"))),
        }
    }
    out
}

/// Hand-written statements: aliases, `*` and `t.*`, joins (`USING` too), correlated and
/// uncorrelated subqueries, CTEs, derived tables, set operations, grouping, ordering by
/// select aliases, `CASE`, `EXISTS`, `IN`, outer joins. Portable across the four engines.
pub const HAND_WRITTEN: &[&str] = &[
    "SELECT * FROM factories",
    "SELECT f.* FROM factories AS f WHERE f.capacity_index > 2",
    "SELECT m.name, f.name AS factory FROM machines AS m JOIN factories AS f ON f.id = m.factory_id",
    "SELECT m.*, f.location FROM machines AS m LEFT JOIN factories AS f ON f.id = m.factory_id",
    "SELECT name FROM products WHERE id IN (SELECT product_id FROM inventory WHERE on_hand > 100)",
    "SELECT p.name FROM products AS p WHERE EXISTS (SELECT 1 FROM production_runs AS r WHERE r.product_id = p.id AND r.scrap_count > 3)",
    "SELECT operator, SUM(quantity_produced) AS total FROM production_runs GROUP BY operator ORDER BY total DESC",
    "SELECT shift, COUNT(*) AS n FROM production_runs GROUP BY shift HAVING COUNT(*) > 1",
    "WITH busy AS (SELECT machine_id, COUNT(*) AS runs FROM production_runs GROUP BY machine_id) SELECT m.name, b.runs FROM machines AS m JOIN busy AS b ON b.machine_id = m.id",
    "SELECT d.defect_type, d.total FROM (SELECT defect_type, SUM(defect_count) AS total FROM defects GROUP BY defect_type) AS d WHERE d.total > 2",
    "SELECT name FROM machines UNION SELECT name FROM factories",
    "SELECT name FROM products EXCEPT SELECT p.name FROM products AS p JOIN inventory AS i ON i.product_id = p.id",
    "SELECT m.name, (SELECT MAX(l.downtime_minutes) FROM maintenance_logs AS l WHERE l.machine_id = m.id) AS worst FROM machines AS m",
    "SELECT CASE WHEN scrap_count > 2 THEN 'high' ELSE 'low' END AS band, COUNT(*) AS n FROM production_runs GROUP BY CASE WHEN scrap_count > 2 THEN 'high' ELSE 'low' END",
    "SELECT f.name, COUNT(DISTINCT m.line) AS line_count FROM factories AS f JOIN machines AS m ON m.factory_id = f.id GROUP BY f.name",
    "SELECT r.operator, p.category FROM production_runs AS r JOIN products AS p ON p.id = r.product_id JOIN machines AS m ON m.id = r.machine_id WHERE m.line = 'A' ORDER BY r.operator",
    "SELECT model_name, manufacturer FROM machine_types ORDER BY model_name",
    "SELECT s.name FROM shifts AS s WHERE s.name IN (SELECT shift FROM production_runs)",
    "SELECT warehouse, AVG(on_hand) AS avg_on_hand FROM inventory GROUP BY warehouse",
    "SELECT l.maintenance_type, m.serial_number FROM maintenance_logs AS l JOIN machines AS m ON m.id = l.machine_id WHERE l.downtime_minutes >= 30",
    "SELECT COUNT(*) FROM defects",
    "SELECT severity FROM defects AS d WHERE NOT EXISTS (SELECT 1 FROM production_runs AS r WHERE r.id = d.production_run_id AND r.operator = 'nobody')",
    "SELECT p.sku, x.on_hand FROM products AS p JOIN (SELECT product_id, on_hand FROM inventory) AS x ON x.product_id = p.id",
    "WITH a AS (SELECT id, factory_id FROM machines), b AS (SELECT id, name FROM factories) SELECT b.name FROM a JOIN b ON b.id = a.factory_id",
];

/// One step of a join path of the fixture: table, alias, a few columns, and how it joins
/// the previous step (`(own column, previous alias, previous column)`).
struct Step {
    table: &'static str,
    alias: &'static str,
    columns: &'static [&'static str],
    join: Option<(&'static str, &'static str, &'static str)>,
}

const RUNS: Step = Step {
    table: "production_runs",
    alias: "r",
    columns: &["operator", "shift", "quantity_produced", "scrap_count"],
    join: None,
};
const PATHS: &[&[Step]] = &[
    &[RUNS],
    &[
        RUNS,
        Step {
            table: "machines",
            alias: "m",
            columns: &["name", "line", "serial_number"],
            join: Some(("id", "r", "machine_id")),
        },
    ],
    &[
        RUNS,
        Step {
            table: "machines",
            alias: "m",
            columns: &["name", "line"],
            join: Some(("id", "r", "machine_id")),
        },
        Step {
            table: "factories",
            alias: "f",
            columns: &["name", "location", "capacity_index"],
            join: Some(("id", "m", "factory_id")),
        },
    ],
    &[
        RUNS,
        Step {
            table: "products",
            alias: "p",
            columns: &["sku", "name", "category"],
            join: Some(("id", "r", "product_id")),
        },
    ],
    &[
        Step {
            table: "defects",
            alias: "d",
            columns: &["defect_type", "severity", "defect_count"],
            join: None,
        },
        Step {
            table: "production_runs",
            alias: "r",
            columns: &["operator", "shift"],
            join: Some(("id", "d", "production_run_id")),
        },
    ],
];

/// A small deterministic generator (a linear congruential sequence).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

/// `count` generated statements, the same on every run: a join path of the fixture, a
/// projection of its columns, maybe a filter, a grouping with a count, an `IN` subquery
/// and an ordering.
pub fn generated(count: usize) -> Vec<String> {
    let mut rng = Lcg(20_261_125);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let path = PATHS[rng.below(PATHS.len())];
        let mut from = format!("{} AS {}", path[0].table, path[0].alias);
        for step in &path[1..] {
            if let Some((own, prev, prev_col)) = step.join {
                let kind = if rng.below(3) == 0 {
                    "LEFT JOIN"
                } else {
                    "JOIN"
                };
                from.push_str(&format!(
                    " {kind} {} AS {} ON {}.{own} = {prev}.{prev_col}",
                    step.table, step.alias, step.alias
                ));
            }
        }
        let pick = |rng: &mut Lcg| {
            let step = &path[rng.below(path.len())];
            format!(
                "{}.{}",
                step.alias,
                step.columns[rng.below(step.columns.len())]
            )
        };
        let mut columns: Vec<String> = (0..1 + rng.below(3)).map(|_| pick(&mut rng)).collect();
        columns.dedup();
        let grouped = rng.below(3) == 0;
        let mut sql = if grouped {
            format!("SELECT {}, COUNT(*) AS n FROM {from}", columns.join(", "))
        } else {
            format!("SELECT {} FROM {from}", columns.join(", "))
        };
        match rng.below(4) {
            0 => sql.push_str(&format!(" WHERE {} IS NOT NULL", pick(&mut rng))),
            1 => sql.push_str(&format!(
                " WHERE {}.id IN (SELECT id FROM {} WHERE id > {})",
                path[0].alias,
                path[0].table,
                rng.below(5)
            )),
            _ => {}
        }
        if grouped {
            sql.push_str(&format!(" GROUP BY {}", columns.join(", ")));
        }
        if rng.below(2) == 0 {
            sql.push_str(&format!(" ORDER BY {}", columns[0]));
        }
        out.push(sql);
    }
    out
}

/// The whole corpus: [`HAND_WRITTEN`] then 200 [`generated`] statements.
pub fn corpus() -> Vec<String> {
    HAND_WRITTEN
        .iter()
        .map(|s| (*s).to_owned())
        .chain(generated(200))
        .collect()
}
