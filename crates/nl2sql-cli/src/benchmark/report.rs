//! The benchmark's metrics (accuracy, routing, latency percentiles) and its text and
//! CSV reports.

use super::*;

/// `correct` of `total`, and their ratio (none when `total` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Ratio {
    pub(super) correct: u64,
    pub(super) total: u64,
    pub(super) rate: Option<f64>,
}

impl Ratio {
    pub(super) fn of(values: impl Iterator<Item = Option<bool>>) -> Ratio {
        let (mut correct, mut total) = (0u64, 0u64);
        for v in values.flatten() {
            total += 1;
            correct += u64::from(v);
        }
        Ratio {
            correct,
            total,
            rate: (total > 0).then(|| correct as f64 / total as f64),
        }
    }

    pub(super) fn text(&self) -> String {
        match self.rate {
            Some(r) => format!("{:.4} ({}/{})", r, self.correct, self.total),
            None => "n/a".to_owned(),
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct Latency {
    pub(super) p50: f64,
    pub(super) p95: f64,
}

/// The metrics of one planner configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Metrics {
    pub(super) runs: usize,
    pub(super) routing_accuracy: Ratio,
    /// `None` with `--routing-only`.
    pub(super) execution_accuracy: Option<Ratio>,
    /// `None` with `--routing-only`.
    pub(super) semantic_sql_accuracy: Option<Ratio>,
    /// `None` with `--routing-only`.
    pub(super) valid_sql_rate: Option<Ratio>,
    pub(super) routing_layers: BTreeMap<String, u64>,
    pub(super) latency_ms: Latency,
}

/// The nearest-rank percentile `p` of sorted `values` (0 when empty).
pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Metrics {
    pub(super) fn of(records: &[RunRecord], routing_only: bool) -> Metrics {
        let mut layers = BTreeMap::new();
        for r in records {
            *layers.entry(r.routing_layer.clone()).or_insert(0) += 1;
        }
        let mut latencies: Vec<f64> = records.iter().map(|r| r.latency_ms).collect();
        latencies.sort_by(f64::total_cmp);
        Metrics {
            runs: records.len(),
            routing_accuracy: Ratio::of(records.iter().map(|r| Some(r.routing_correct))),
            execution_accuracy: (!routing_only)
                .then(|| Ratio::of(records.iter().map(|r| r.execution_correct))),
            semantic_sql_accuracy: (!routing_only)
                .then(|| Ratio::of(records.iter().map(|r| r.semantic_correct))),
            valid_sql_rate: (!routing_only).then(|| Ratio::of(records.iter().map(|r| r.valid_sql))),
            routing_layers: layers,
            latency_ms: Latency {
                p50: percentile(&latencies, 50.0),
                p95: percentile(&latencies, 95.0),
            },
        }
    }
}

/// The results and metrics of one planner configuration.
#[derive(Debug, Clone, Serialize)]
pub(super) struct PlannerReport {
    pub(super) planner: String,
    pub(super) metrics: Metrics,
    pub(super) results: Vec<RunRecord>,
}

/// The whole benchmark.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Report {
    pub(super) dataset: String,
    pub(super) cases: usize,
    pub(super) iterations: u32,
    pub(super) routing_only: bool,
    pub(super) planners: Vec<PlannerReport>,
}

pub(super) fn verdict(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "ok",
        Some(false) => "FAIL",
        None => "-",
    }
}

/// The `--format table` report.
pub(super) fn text_report(report: &Report) -> String {
    let mut out = format!(
        "benchmark of {}: {} case{} × {} iteration{}{}\n",
        report.dataset,
        report.cases,
        plural(report.cases),
        report.iterations,
        plural(report.iterations as usize),
        if report.routing_only {
            " (routing only)"
        } else {
            ""
        }
    );
    for p in &report.planners {
        let _ = writeln!(out, "\nplanner {}", p.planner);
        let mut rows = vec![[
            "case".to_owned(),
            "iter".to_owned(),
            "status".to_owned(),
            "routing".to_owned(),
            "layer".to_owned(),
            "valid sql".to_owned(),
            "execution".to_owned(),
            "semantic".to_owned(),
            "ms".to_owned(),
            "detail".to_owned(),
        ]];
        for r in &p.results {
            let mut detail = Vec::new();
            if !r.routing_correct {
                detail.push(format!(
                    "used [{}], expected [{}]",
                    r.used_datasources.join(", "),
                    r.expected_datasources.join(", ")
                ));
            }
            if let Some(d) = &r.execution_detail {
                detail.push(d.clone());
            }
            rows.push([
                r.case_id.clone(),
                r.iteration.to_string(),
                r.status.as_str().unwrap_or("").to_owned(),
                verdict(Some(r.routing_correct)).to_owned(),
                r.routing_layer.clone(),
                verdict(r.valid_sql).to_owned(),
                verdict(r.execution_correct).to_owned(),
                verdict(r.semantic_correct).to_owned(),
                format!("{:.1}", r.latency_ms),
                detail.join("; "),
            ]);
        }
        out.push_str(&crate::columns::aligned(&rows));
        let m = &p.metrics;
        let optional = |r: &Option<Ratio>| r.as_ref().map_or_else(|| "n/a".to_owned(), Ratio::text);
        let layers: Vec<String> = m
            .routing_layers
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(
            out,
            "\nmetrics ({}, {} run{}):\n  routing accuracy:      {}\n  execution accuracy:    {}\n  semantic SQL accuracy: {}\n  valid SQL rate:        {}\n  routing layers:        {}\n  latency p50 / p95:     {:.1} ms / {:.1} ms\n",
            p.planner,
            m.runs,
            plural(m.runs),
            m.routing_accuracy.text(),
            optional(&m.execution_accuracy),
            optional(&m.semantic_sql_accuracy),
            optional(&m.valid_sql_rate),
            layers.join(", "),
            m.latency_ms.p50,
            m.latency_ms.p95,
        );
    }
    out
}

/// The CSV export: a header, then one row per run (RFC 4180, CRLF line ends); lists are
/// joined with `;`, unknown values are empty.
pub(super) fn csv_report(report: &Report) -> String {
    let field = |s: String| {
        if s.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    };
    let opt = |v: Option<bool>| v.map(|b| b.to_string()).unwrap_or_default();
    let mut out = String::from(
        "planner,case_id,iteration,difficulty,status,expected_datasources,resolved_datasources,used_datasources,routing_correct,routing_layer,expected_routing_layer,valid_sql,execution_correct,semantic_correct,latency_ms,trace_id,sql,execution_detail\r\n",
    );
    for p in &report.planners {
        for r in &p.results {
            let cells = [
                r.planner.clone(),
                r.case_id.clone(),
                r.iteration.to_string(),
                r.difficulty.clone().unwrap_or_default(),
                r.status.as_str().unwrap_or("").to_owned(),
                r.expected_datasources.join(";"),
                r.resolved_datasources.join(";"),
                r.used_datasources.join(";"),
                r.routing_correct.to_string(),
                r.routing_layer.clone(),
                r.expected_routing_layer.clone().unwrap_or_default(),
                opt(r.valid_sql),
                opt(r.execution_correct),
                opt(r.semantic_correct),
                format!("{:.3}", r.latency_ms),
                r.trace_id.clone(),
                r.sql.join(";\n"),
                r.execution_detail.clone().unwrap_or_default(),
            ];
            let cells: Vec<String> = cells.into_iter().map(field).collect();
            let _ = write!(out, "{}\r\n", cells.join(","));
        }
    }
    out
}
