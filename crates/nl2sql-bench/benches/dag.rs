//! DAG planning time: what a request does with the decomposer's answer, for 1, 10 and 100
//! sub-queries. One iteration is `validate_decomposition` on the JSON text: parsing, static
//! checks, normalisation with content-hashed ids, building the `ExecutionDag` (layers, node
//! schemas, DAG hash) and the data-flow checks.
//!
//! The decompositions are generated (`nl2sql_bench::decomposition`): the sub-queries in
//! compare, join and union groups in turn (a standalone group for a last single one), each
//! group followed by two or three post ops. Run with `cargo xtask bench dag/`. Before
//! timing, each decomposition must be valid and plan to the expected number of nodes.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};

/// Sub-queries per decomposition.
const SIZES: [usize; 3] = [1, 10, 100];

fn dag(c: &mut Criterion) {
    let resolution = nl2sql_bench::dag_resolution();
    let mut group = c.benchmark_group("dag");
    for n in SIZES {
        let json = nl2sql_bench::decomposition_json(n);
        let report = nl2sql_bench::plan_dag(&json, &resolution);
        assert!(
            report.is_ok() && report.warnings.is_empty(),
            "the decomposition of {n} sub-queries is not valid: {}",
            report.feedback().unwrap_or_default()
        );
        let nodes = report.dag.as_ref().map_or(0, |d| d.nodes.len());
        assert!(
            nodes == nl2sql_bench::expected_node_count(n),
            "{n} sub-queries planned to {nodes} nodes"
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("plan", n), &json, |b, json| {
            b.iter(|| black_box(nl2sql_bench::plan_dag(black_box(json), &resolution)));
        });
    }
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    dag(&mut criterion);
    criterion.final_summary();
}
