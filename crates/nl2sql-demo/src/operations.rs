//! `operations.duckdb`: factories, production lines, machines, shifts, production runs
//! (the largest table) and downtime events.

use nl2sql_adapter::dataset::days_from_civil;
use nl2sql_adapter::{
    DatasetColumn as Col, DatasetForeignKey as Fk, DatasetSpec, DatasetTable, DatasetType as T,
    DatasetValue,
};

use super::catalog::{
    CATEGORIES, DAYS, FACTORIES, LINES_PER_FACTORY, Product, SEED, at, boolean, date, first_day,
    id, int, person, real, text, ts,
};
use super::rng::{Rng, round1};

/// Rows of `production_runs`.
pub(crate) const PRODUCTION_RUNS: usize = 120_000;

const MACHINE_TYPES: &[&str] = &[
    "CNC Mill",
    "Lathe",
    "Injection Molder",
    "Stamping Press",
    "Robotic Welder",
    "Assembly Robot",
    "Paint Booth",
    "Test Bench",
];
const MANUFACTURERS: &[&str] = &[
    "Fanuc",
    "Siemens",
    "Haas",
    "DMG Mori",
    "ABB",
    "KUKA",
    "Okuma",
    "Bosch Rexroth",
];
const STATUSES: &[&str] = &["Running", "Idle", "Maintenance", "Offline"];
const SHIFTS: &[(&str, i64)] = &[
    ("Morning", 6 * 60),
    ("Afternoon", 14 * 60),
    ("Night", 22 * 60),
];
const RUN_STATUSES: &[&str] = &["Completed", "Aborted", "Rework"];
const REASONS: &[(&str, bool)] = &[
    ("Planned Maintenance", true),
    ("Changeover", true),
    ("Breakdown", false),
    ("Material Shortage", false),
    ("Quality Hold", false),
    ("Power Outage", false),
];

/// A machine, as later tables need it.
struct Machine {
    factory: usize,
    category: usize,
}

/// The operations database.
pub(crate) fn spec(products: &[Product]) -> DatasetSpec {
    let mut rng = Rng::new(SEED, "operations");
    let factories = factories();
    let (lines, line_category) = lines(&mut rng);
    let (machines, machine_rows) = machines(&mut rng, &line_category);
    let shifts = shifts(&mut rng);
    let (runs, run_info) = production_runs(&mut rng, &machines, products);
    let downtime = downtime_events(&mut rng, &run_info, machines.len());
    DatasetSpec {
        tables: vec![factories, lines, machine_rows, shifts, runs, downtime],
    }
}

fn factories() -> DatasetTable {
    DatasetTable {
        name: "factories".to_owned(),
        description: "Manufacturing plants. factory_code is the plant key shared with the supply and sales databases.".to_owned(),
        columns: vec![
            Col::key("factory_id", "Surrogate key of the plant"),
            Col::new("factory_code", T::Text, "Three-letter plant code (DET, MTY, LYO, STR, PNQ, NGO), shared across datasources"),
            Col::new("name", T::Text, "Plant name"),
            Col::new("city", T::Text, "City the plant is in"),
            Col::new("country", T::Text, "Country the plant is in"),
            Col::new("opened_on", T::Date, "Date the plant started production"),
        ],
        foreign_keys: vec![],
        rows: FACTORIES
            .iter()
            .enumerate()
            .map(|(i, f)| {
                vec![
                    id(i + 1),
                    text(f.code),
                    text(f.name),
                    text(f.city),
                    text(f.country),
                    date(days_from_civil(f.opened.0, f.opened.1, f.opened.2)),
                ]
            })
            .collect(),
    }
}

fn lines(rng: &mut Rng) -> (DatasetTable, Vec<(usize, usize)>) {
    let mut rows = Vec::new();
    let mut info = Vec::new();
    for (f, factory) in FACTORIES.iter().enumerate() {
        for j in 0..LINES_PER_FACTORY {
            let c = (f + j) % CATEGORIES.len();
            info.push((f, c));
            rows.push(vec![
                id(rows.len() + 1),
                id(f + 1),
                text(format!(
                    "{} Line {} ({})",
                    factory.code,
                    j + 1,
                    CATEGORIES[c].name
                )),
                text(CATEGORIES[c].name),
                int(rng.range(40, 160)),
                date(days_from_civil(
                    2014 + rng.range(0, 8) as i32,
                    1 + rng.below(12) as u32,
                    1,
                )),
            ]);
        }
    }
    let table = DatasetTable {
        name: "production_lines".to_owned(),
        description: "Assembly and machining lines; each line makes one product category."
            .to_owned(),
        columns: vec![
            Col::key("line_id", "Surrogate key of the line"),
            Col::new("factory_id", T::Integer, "Plant the line belongs to"),
            Col::new("name", T::Text, "Line name"),
            Col::new(
                "product_category",
                T::Text,
                "Product category the line makes (Pumps, Valves, Motors, Gearboxes, Sensors, Bearings)",
            ),
            Col::new("capacity_per_hour", T::Integer, "Nominal units per hour"),
            Col::new("commissioned_on", T::Date, "Date the line was commissioned"),
        ],
        foreign_keys: vec![Fk::new("factory_id", "factories", "factory_id")],
        rows,
    };
    (table, info)
}

fn machines(rng: &mut Rng, lines: &[(usize, usize)]) -> (Vec<Machine>, DatasetTable) {
    let mut machines = Vec::new();
    let mut rows = Vec::new();
    for (l, &(factory, category)) in lines.iter().enumerate() {
        let count = rng.range(5, 8);
        for m in 0..count {
            let last_service = rng.chance(0.9).then(|| {
                at(
                    first_day() + rng.range(400, i64::from(DAYS) - 1) as i32,
                    rng.range(0, 1439),
                )
            });
            let machine_type = *rng.pick(MACHINE_TYPES);
            rows.push(vec![
                id(rows.len() + 1),
                id(l + 1),
                text(format!(
                    "{}-L{}-M{:02}",
                    FACTORIES[factory].code,
                    l % LINES_PER_FACTORY + 1,
                    m + 1
                )),
                text(format!("{machine_type} #{}", rows.len() + 1)),
                text(machine_type),
                text(*rng.pick(MANUFACTURERS)),
                text(STATUSES[rng.weighted(&[70, 15, 8, 7])]),
                date(days_from_civil(
                    2015 + rng.range(0, 7) as i32,
                    1 + rng.below(12) as u32,
                    1 + rng.below(28) as u32,
                )),
                last_service.map_or(DatasetValue::Null, ts),
            ]);
            machines.push(Machine { factory, category });
        }
    }
    let table = DatasetTable {
        name: "machines".to_owned(),
        description: "Machines on the production lines, with their current status.".to_owned(),
        columns: vec![
            Col::key("machine_id", "Surrogate key of the machine"),
            Col::new("line_id", T::Integer, "Production line the machine is on"),
            Col::new(
                "asset_tag",
                T::Text,
                "Asset tag painted on the machine (plant-line-machine)",
            ),
            Col::new("name", T::Text, "Machine name"),
            Col::new(
                "machine_type",
                T::Text,
                "Kind of machine (CNC Mill, Lathe, Robotic Welder, ...)",
            ),
            Col::new("manufacturer", T::Text, "Machine vendor"),
            Col::new(
                "status",
                T::Text,
                "Current status: Running, Idle, Maintenance or Offline",
            ),
            Col::new("installed_on", T::Date, "Installation date"),
            Col::new(
                "last_serviced_at",
                T::Timestamp,
                "Last service; NULL when never serviced",
            )
            .nullable(),
        ],
        foreign_keys: vec![Fk::new("line_id", "production_lines", "line_id")],
        rows,
    };
    (machines, table)
}

/// Shift `s` is factory `s / (DAYS * 3)`, day `(s / 3) % DAYS`, shift `s % 3`.
fn shift_of(s: usize) -> (usize, i32, usize) {
    let per_factory = DAYS as usize * SHIFTS.len();
    (
        s / per_factory,
        ((s % per_factory) / SHIFTS.len()) as i32,
        s % SHIFTS.len(),
    )
}

fn shift_count() -> usize {
    FACTORIES.len() * DAYS as usize * SHIFTS.len()
}

fn shifts(rng: &mut Rng) -> DatasetTable {
    let rows = (0..shift_count())
        .map(|s| {
            let (f, day, k) = shift_of(s);
            vec![
                id(s + 1),
                id(f + 1),
                date(first_day() + day),
                text(SHIFTS[k].0),
                text(person(rng)),
                int(rng.range(18, 45)),
            ]
        })
        .collect();
    DatasetTable {
        name: "shifts".to_owned(),
        description:
            "Work shifts: three per plant per day (Morning 06-14, Afternoon 14-22, Night 22-06)."
                .to_owned(),
        columns: vec![
            Col::key("shift_id", "Surrogate key of the shift"),
            Col::new("factory_id", T::Integer, "Plant the shift works at"),
            Col::new("shift_date", T::Date, "Calendar day the shift starts"),
            Col::new("shift_name", T::Text, "Morning, Afternoon or Night"),
            Col::new("supervisor", T::Text, "Shift supervisor"),
            Col::new("headcount", T::Integer, "Workers on the shift"),
        ],
        foreign_keys: vec![Fk::new("factory_id", "factories", "factory_id")],
        rows,
    }
}

/// A run, as downtime events need it: machine index and start/end in seconds.
struct RunInfo {
    machine: usize,
    start: i64,
    end: i64,
}

fn production_runs(
    rng: &mut Rng,
    machines: &[Machine],
    products: &[Product],
) -> (DatasetTable, Vec<RunInfo>) {
    let by_factory: Vec<Vec<usize>> = (0..FACTORIES.len())
        .map(|f| {
            (0..machines.len())
                .filter(|m| machines[*m].factory == f)
                .collect()
        })
        .collect();
    let by_category: Vec<Vec<usize>> = (0..CATEGORIES.len())
        .map(|c| {
            (0..products.len())
                .filter(|p| products[*p].category == c)
                .collect()
        })
        .collect();
    let shifts = shift_count();
    let mut rows = Vec::with_capacity(PRODUCTION_RUNS);
    let mut info = Vec::with_capacity(PRODUCTION_RUNS);
    // Runs are spread evenly over the shifts, in time order within each plant.
    for s in 0..shifts {
        let (f, day, k) = shift_of(s);
        let n = PRODUCTION_RUNS * (s + 1) / shifts - PRODUCTION_RUNS * s / shifts;
        for _ in 0..n {
            let m = *rng.pick(&by_factory[f]);
            let p = *rng.pick(&by_category[machines[m].category]);
            let start = at(first_day() + day, SHIFTS[k].1 + rng.range(0, 300));
            let minutes = rng.range(30, 240);
            let end = start + minutes * 60;
            let planned = rng.range(5, 60) * 10;
            let status = RUN_STATUSES[rng.weighted(&[92, 5, 3])];
            let yield_ = if status == "Aborted" {
                rng.between(0.1, 0.6)
            } else {
                rng.between(0.86, 1.02)
            };
            let produced = (planned as f64 * yield_).round() as i64;
            let scrapped = (produced as f64 * rng.between(0.0, 0.06)).round() as i64;
            rows.push(vec![
                id(rows.len() + 1),
                id(m + 1),
                id(s + 1),
                text(products[p].sku.as_str()),
                ts(start),
                ts(end),
                int(planned),
                int(produced),
                int(scrapped),
                text(status),
                real(round1(minutes as f64 * rng.between(0.8, 2.6))),
            ]);
            info.push(RunInfo {
                machine: m,
                start,
                end,
            });
        }
    }
    let table = DatasetTable {
        name: "production_runs".to_owned(),
        description: "Production runs: one batch of one product on one machine during one shift."
            .to_owned(),
        columns: vec![
            Col::key("run_id", "Surrogate key of the run"),
            Col::new("machine_id", T::Integer, "Machine the run used"),
            Col::new("shift_id", T::Integer, "Shift the run started in"),
            Col::new(
                "product_sku",
                T::Text,
                "SKU of the product made; matches products.sku in the sales database",
            ),
            Col::new("started_at", T::Timestamp, "Run start"),
            Col::new("ended_at", T::Timestamp, "Run end"),
            Col::new("units_planned", T::Integer, "Units scheduled"),
            Col::new("units_produced", T::Integer, "Good and bad units produced"),
            Col::new("units_scrapped", T::Integer, "Units scrapped for quality"),
            Col::new("status", T::Text, "Completed, Aborted or Rework"),
            Col::new("energy_kwh", T::Real, "Energy used by the run in kWh"),
        ],
        foreign_keys: vec![
            Fk::new("machine_id", "machines", "machine_id"),
            Fk::new("shift_id", "shifts", "shift_id"),
        ],
        rows,
    };
    (table, info)
}

fn downtime_events(rng: &mut Rng, runs: &[RunInfo], machines: usize) -> DatasetTable {
    let mut rows = Vec::new();
    for e in 0..8_000usize {
        let r = rng.weighted(&[80, 20]);
        let reason = REASONS[rng.weighted(&[20, 14, 26, 16, 14, 10])];
        let minutes = if reason.1 {
            rng.range(15, 240)
        } else {
            rng.range(5, 480)
        };
        let (machine, run, start) = if r == 0 {
            let i = rng.below(runs.len());
            let run = &runs[i];
            let start = run.start + rng.range(0, (run.end - run.start) / 60) * 60;
            (run.machine, Some(i), start)
        } else {
            let start = at(
                first_day() + rng.below(DAYS as usize) as i32,
                rng.range(0, 1439),
            );
            (rng.below(machines), None, start)
        };
        rows.push(vec![
            id(e + 1),
            id(machine + 1),
            run.map_or(DatasetValue::Null, |i| id(i + 1)),
            ts(start),
            int(minutes),
            text(reason.0),
            boolean(reason.1),
        ]);
    }
    DatasetTable {
        name: "downtime_events".to_owned(),
        description: "Machine stoppages, planned and unplanned, with their reason and length."
            .to_owned(),
        columns: vec![
            Col::key("event_id", "Surrogate key of the event"),
            Col::new("machine_id", T::Integer, "Machine that stopped"),
            Col::new(
                "run_id",
                T::Integer,
                "Run interrupted, NULL when the machine was between runs",
            )
            .nullable(),
            Col::new("started_at", T::Timestamp, "When the stoppage began"),
            Col::new(
                "duration_minutes",
                T::Integer,
                "Length of the stoppage in minutes",
            ),
            Col::new(
                "reason",
                T::Text,
                "Planned Maintenance, Changeover, Breakdown, Material Shortage, Quality Hold or Power Outage",
            ),
            Col::new(
                "is_planned",
                T::Boolean,
                "True for planned maintenance and changeovers",
            ),
        ],
        foreign_keys: vec![
            Fk::new("machine_id", "machines", "machine_id"),
            Fk::new("run_id", "production_runs", "run_id"),
        ],
        rows,
    }
}
