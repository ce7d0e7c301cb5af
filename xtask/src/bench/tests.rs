//! Tests of reading criterion's JSON and writing the benchmark table.

use serde_json::json;

use super::*;

fn sample_result() -> BenchResult {
    let benchmark = json!({
        "group_id": "guard", "function_id": "check", "value_str": null,
        "throughput": { "Elements": 32 },
        "full_id": "guard/check", "directory_name": "guard/check", "title": "guard/check"
    });
    let estimates = json!({
        "mean": {
            "confidence_interval": { "confidence_level": 0.95, "lower_bound": 1_580_000.0, "upper_bound": 1_620_000.0 },
            "point_estimate": 1_600_000.0, "standard_error": 10_000.0
        },
        "median": { "point_estimate": 1_590_000.0 },
        "slope": null
    });
    parse_result(&benchmark, &estimates).unwrap()
}

#[test]
fn criterion_json_is_read() {
    assert_eq!(
        sample_result(),
        BenchResult {
            id: "guard/check".to_owned(),
            time_ns: 1_600_000.0,
            lower_ns: 1_580_000.0,
            upper_ns: 1_620_000.0,
            throughput: Some(Throughput::Elements(32)),
        }
    );
}

fn machine() -> Machine {
    Machine {
        cpus: "2".to_owned(),
        cpu_model: "Test CPU".to_owned(),
        rustc: "rustc 1.95.0".to_owned(),
        commit: "abc123".to_owned(),
        dirty: false,
        date: "2026-01-02".to_owned(),
        command: "cargo xtask bench".to_owned(),
    }
}

#[test]
fn table_row_shows_time_rate_time_per_statement_and_when() {
    let machine = machine();
    let row = row_of(&sample_result(), &measured_text(&machine));
    let text = render(&[row], &machine);
    assert!(text.contains("Last run on 2026-01-02 by `cargo xtask bench` at commit `abc123`, rustc 1.95.0, on 2 CPUs (Test CPU)."), "{text}");
    assert!(
        text.contains(
            "| `guard/check` | 1.60 ms (1.58 ms – 1.62 ms) | 20,000 statements/s | 50.0 µs | 2026-01-02, `abc123` |"
        ),
        "{text}"
    );
    let dirty = Machine {
        dirty: true,
        ..machine
    };
    assert_eq!(
        measured_text(&dirty),
        "2026-01-02, `abc123` (uncommitted changes)"
    );
    assert!(render(&[], &dirty).contains("at commit `abc123` with uncommitted changes, "));
}

#[test]
fn rendered_rows_read_back() {
    let machine = machine();
    let rows = vec![row_of(&sample_result(), &measured_text(&machine))];
    let doc = splice("# Benchmarks\n", &render(&rows, &machine));
    assert_eq!(generated_section(&doc).map(parse_rows), Some(rows));
}

#[test]
fn rows_of_a_table_without_a_measured_column_take_the_date_of_its_run() {
    let section = "\nMeasured on 2026-11-23 by `cargo xtask bench` at commit `595e2cb4b800 with uncommitted changes`, rustc 1.95.0, on 2 CPUs (AMD EPYC).\n\
        \n| benchmark | time per iteration (95% CI) | throughput | time per item |\n|---|---|---|---|\n\
        | `dag/plan/1` | 56.4 µs (54.7 µs – 58.6 µs) | 17,717 sub-queries/s | 56.4 µs |\n";
    assert_eq!(
        parse_rows(section),
        vec![Row {
            id: "dag/plan/1".to_owned(),
            time: "56.4 µs (54.7 µs – 58.6 µs)".to_owned(),
            throughput: "17,717 sub-queries/s".to_owned(),
            per_item: "56.4 µs".to_owned(),
            measured: "2026-11-23, `595e2cb4b800` (uncommitted changes)".to_owned(),
        }]
    );
}

#[test]
fn a_run_replaces_the_rows_it_measured_and_keeps_the_others() {
    let row = |id: &str, time: &str, measured: &str| Row {
        id: id.to_owned(),
        time: time.to_owned(),
        throughput: "–".to_owned(),
        per_item: "–".to_owned(),
        measured: measured.to_owned(),
    };
    let earlier = vec![
        row("guard/check", "1 ms", "2026-01-01, `old`"),
        row("planner/offline", "2 ms", "2026-01-01, `old`"),
    ];
    let fresh = vec![
        row("planner/offline", "3 ms", "2026-01-02, `new`"),
        row("orchestration/single_scan", "4 ms", "2026-01-02, `new`"),
    ];
    assert_eq!(
        merge(earlier, fresh),
        vec![
            row("guard/check", "1 ms", "2026-01-01, `old`"),
            row("orchestration/single_scan", "4 ms", "2026-01-02, `new`"),
            row("planner/offline", "3 ms", "2026-01-02, `new`"),
        ]
    );
    // Through the document: the earlier table is read back and merged.
    let machine = machine();
    let doc = splice(
        "# Benchmarks\n",
        &render(&[row("guard/check", "1 ms", "2026-01-01, `old`")], &machine),
    );
    let earlier = generated_section(&doc).map(parse_rows).unwrap_or_default();
    let fresh = vec![row_of(&sample_result(), &measured_text(&machine))]
        .into_iter()
        .map(|r| Row {
            id: "guard/parse_only".to_owned(),
            ..r
        })
        .collect();
    let text = render(&merge(earlier, fresh), &machine);
    assert!(
        text.contains(
            "| `guard/check` | 1 ms | – | – | 2026-01-01, `old` |\n| `guard/parse_only` |"
        ),
        "{text}"
    );
}

#[test]
fn a_document_without_markers_has_no_generated_section() {
    assert_eq!(generated_section("# Benchmarks\n"), None);
    assert_eq!(
        generated_section("<!-- bench:start -->\nx\n<!-- bench:end -->"),
        Some("\nx\n")
    );
}

#[test]
fn durations_and_rates_are_readable() {
    assert_eq!(format_ns(950.0), "950 ns");
    assert_eq!(format_ns(12_345.0), "12.3 µs");
    assert_eq!(format_ns(2_500_000_000.0), "2.50 s");
    assert_eq!(group_thousands(1_234_567.4), "1,234,567");
    assert_eq!(group_thousands(999.0), "999");
}

#[test]
fn splice_replaces_only_the_generated_part() {
    let doc = "# Benchmarks\n\nIntro.\n\n<!-- bench:start -->\nold\n<!-- bench:end -->\n\nOutro.\n";
    assert_eq!(
        splice(doc, "new\n"),
        "# Benchmarks\n\nIntro.\n\n<!-- bench:start -->\nnew\n<!-- bench:end -->\n\nOutro.\n"
    );
    assert_eq!(
        splice("# Benchmarks\n", "new\n"),
        "# Benchmarks\n\n<!-- bench:start -->\nnew\n<!-- bench:end -->\n"
    );
}

#[test]
fn dates_are_civil_utc() {
    assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
    assert_eq!(
        utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
        "2000-02-29"
    );
    assert_eq!(
        utc_date(UNIX_EPOCH + Duration::from_secs(1_767_225_599)),
        "2025-12-31"
    );
}

#[test]
fn slope_is_preferred_to_the_mean() {
    let benchmark = json!({ "full_id": "guard/parse_only", "throughput": null });
    let estimate = |x: f64| json!({ "confidence_interval": { "lower_bound": x - 1.0, "upper_bound": x + 1.0 }, "point_estimate": x });
    let estimates = json!({ "mean": estimate(20.0), "slope": estimate(10.0) });
    let result = parse_result(&benchmark, &estimates).unwrap();
    assert_eq!(
        (result.time_ns, result.lower_ns, result.upper_ns),
        (10.0, 9.0, 11.0)
    );
    assert_eq!(result.throughput, None);
}

#[test]
fn elements_are_counted_in_the_unit_of_their_group() {
    assert_eq!(element_unit("guard/check"), "statements");
    assert_eq!(element_unit("adapter/sqlite"), "rows");
    assert_eq!(element_unit("aggregate/join_1m_x_1m"), "rows");
    assert_eq!(element_unit("aggregate_duckdb/group_by_1m"), "rows");
    assert_eq!(element_unit("dag/plan/100"), "sub-queries");
    assert_eq!(element_unit("planner/offline"), "questions");
    assert_eq!(element_unit("artifacts/read_1m/local"), "rows");
}
