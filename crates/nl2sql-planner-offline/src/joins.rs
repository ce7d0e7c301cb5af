//! Join paths: the foreign-key graph of a schema (petgraph, undirected for search) and the
//! smallest tree that connects the tables a plan needs, grown from the FROM table by
//! shortest paths. Neighbours are visited in table-name order, so the tree is deterministic.

use std::collections::{BTreeSet, VecDeque};

use petgraph::graph::{NodeIndex, UnGraph};

use super::link::SchemaIndex;

/// One join of the tree: `table` enters through foreign key `fk` from `parent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JoinStep {
    /// The table already in the plan.
    pub(crate) parent: usize,
    /// The table joined in.
    pub(crate) table: usize,
    /// Index into `SchemaIndex::foreign_keys`.
    pub(crate) fk: usize,
}

/// The foreign-key graph: one node per table, one edge per foreign key (weight = fk index).
fn graph(index: &SchemaIndex) -> UnGraph<usize, usize> {
    let mut g: UnGraph<usize, usize> = UnGraph::default();
    for t in 0..index.tables.len() {
        g.add_node(t);
    }
    for (k, fk) in index.foreign_keys.iter().enumerate() {
        if fk.from != fk.to {
            g.add_edge(NodeIndex::new(fk.from), NodeIndex::new(fk.to), k);
        }
    }
    g
}

/// Neighbours of `t` with the connecting fk, sorted by (table name, fk index).
fn neighbours(g: &UnGraph<usize, usize>, index: &SchemaIndex, t: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = g
        .edges(NodeIndex::new(t))
        .map(|e| {
            let other = if e.source().index() == t {
                e.target().index()
            } else {
                e.source().index()
            };
            (other, *e.weight())
        })
        .collect();
    out.sort_by(|a, b| (&index.tables[a.0].name, a.1).cmp(&(&index.tables[b.0].name, b.1)));
    out
}

use petgraph::visit::EdgeRef;

/// The join steps connecting `required` to `base`, or the tables that cannot be reached.
/// Tables are added nearest first; each step joins a new table to one already present.
pub(crate) fn join_tree(
    index: &SchemaIndex,
    base: usize,
    required: &BTreeSet<usize>,
) -> Result<Vec<JoinStep>, Vec<usize>> {
    let g = graph(index);
    let mut present: BTreeSet<usize> = BTreeSet::from([base]);
    let mut steps: Vec<JoinStep> = Vec::new();
    let mut missing: Vec<usize> = required
        .iter()
        .copied()
        .filter(|t| !present.contains(t))
        .collect();
    while !missing.is_empty() {
        // Multi-source BFS from every present table; the first required table reached is
        // the nearest.
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; index.tables.len()];
        let mut seen: Vec<bool> = vec![false; index.tables.len()];
        let mut queue: VecDeque<usize> = VecDeque::new();
        for &p in &present {
            seen[p] = true;
            queue.push_back(p);
        }
        let mut reached: Option<usize> = None;
        while let Some(t) = queue.pop_front() {
            if missing.contains(&t) {
                reached = Some(t);
                break;
            }
            for (n, fk) in neighbours(&g, index, t) {
                if !seen[n] {
                    seen[n] = true;
                    prev[n] = Some((t, fk));
                    queue.push_back(n);
                }
            }
        }
        let Some(target) = reached else {
            return Err(missing);
        };
        let mut path: Vec<JoinStep> = Vec::new();
        let mut cur = target;
        while let Some((p, fk)) = prev[cur] {
            path.push(JoinStep {
                parent: p,
                table: cur,
                fk,
            });
            if present.contains(&p) {
                break;
            }
            cur = p;
        }
        path.reverse();
        for step in path {
            present.insert(step.table);
            steps.push(step);
        }
        missing.retain(|t| !present.contains(t));
    }
    Ok(steps)
}

/// Number of foreign-key hops between two tables (`None` when unconnected).
pub(crate) fn distance(index: &SchemaIndex, from: usize, to: usize) -> Option<usize> {
    if from == to {
        return Some(0);
    }
    let g = graph(index);
    let mut dist: Vec<Option<usize>> = vec![None; index.tables.len()];
    dist[from] = Some(0);
    let mut queue = VecDeque::from([from]);
    while let Some(t) = queue.pop_front() {
        let d = dist[t].unwrap_or(0);
        for (n, _) in neighbours(&g, index, t) {
            if dist[n].is_none() {
                dist[n] = Some(d + 1);
                if n == to {
                    return dist[n];
                }
                queue.push_back(n);
            }
        }
    }
    None
}
