//! Join paths: the foreign-key graph of a schema (petgraph, undirected for search) and the
//! smallest tree that connects the tables a plan needs, grown from the FROM table by
//! shortest paths. Among paths of as many joins, one that passes through no shared parent
//! (`A → P ← B`, rows that only share a P) wins, so a link table (`A ← L → B`) is preferred;
//! then neighbours are visited in table-name order, so the tree is deterministic.

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
        let best = search(&g, index, &present);
        // The nearest required table; among equally near ones, the one reached without
        // pairing rows through a shared parent, then the first reached.
        let Some((target, state)) = missing
            .iter()
            .flat_map(|&t| [(t, false), (t, true)])
            .filter_map(|(t, s)| best[t][usize::from(s)].map(|b| ((t, s), b)))
            .min_by_key(|(_, b)| (b.hops, b.traps, b.seen))
            .map(|(at, _)| at)
        else {
            return Err(missing);
        };
        let mut path: Vec<JoinStep> = Vec::new();
        let (mut cur, mut state) = (target, state);
        while let Some(b) = best[cur][usize::from(state)] {
            let Some((p, p_state, fk)) = b.prev else {
                break;
            };
            path.push(JoinStep {
                parent: p,
                table: cur,
                fk,
            });
            if present.contains(&p) {
                break;
            }
            (cur, state) = (p, p_state);
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

/// How a table was reached by [`search`]: in how many joins, through how many shared
/// parents, in which order, and from where (`None` for a table already present).
#[derive(Debug, Clone, Copy)]
struct Reached {
    hops: usize,
    /// Tables the path passes through as the parent of both its neighbours (`A → P ← B`):
    /// such a step pairs every A of a P with every B of the same P, rows that only share
    /// a parent, where a link table (`A ← L → B`) or a reference pairs rows that belong
    /// together.
    traps: usize,
    /// Discovery order, for a deterministic choice among equals.
    seen: usize,
    /// The table before, whether it was entered as the referenced side, and the fk.
    prev: Option<(usize, bool, usize)>,
}

/// Every table's best way from the present tables, per state: `best[t][1]` is `t`
/// entered as the referenced side of its last join (another table points at it),
/// `best[t][0]` otherwise. Breadth-first by joins; among paths of as many joins, fewer
/// shared-parent steps win, then the first found (neighbours in table-name order).
fn search(
    g: &UnGraph<usize, usize>,
    index: &SchemaIndex,
    present: &BTreeSet<usize>,
) -> Vec<[Option<Reached>; 2]> {
    let mut best: Vec<[Option<Reached>; 2]> = vec![[None, None]; index.tables.len()];
    let mut queue: VecDeque<(usize, bool)> = VecDeque::new();
    let mut seen = 0usize;
    for &p in present {
        best[p][0] = Some(Reached {
            hops: 0,
            traps: 0,
            seen,
            prev: None,
        });
        seen += 1;
        queue.push_back((p, false));
    }
    while let Some((t, entered_as_parent)) = queue.pop_front() {
        let Some(here) = best[t][usize::from(entered_as_parent)] else {
            continue;
        };
        for (n, fk) in neighbours(g, index, t) {
            if present.contains(&n) {
                continue;
            }
            let key = &index.foreign_keys[fk];
            let n_is_parent = key.to == n;
            let trap = entered_as_parent && key.from == n;
            let cost = Reached {
                hops: here.hops + 1,
                traps: here.traps + usize::from(trap),
                seen,
                prev: Some((t, entered_as_parent, fk)),
            };
            let slot = &mut best[n][usize::from(n_is_parent)];
            match slot {
                None => {
                    *slot = Some(cost);
                    seen += 1;
                    queue.push_back((n, n_is_parent));
                }
                Some(old) if (cost.hops, cost.traps) < (old.hops, old.traps) => {
                    *slot = Some(Reached {
                        seen: old.seen,
                        ..cost
                    });
                }
                Some(_) => {}
            }
        }
    }
    best
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
