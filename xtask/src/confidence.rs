//! `cargo xtask learn-confidence --from RESULTS.json`: learns the offline planner's
//! confidence model from a lenient benchmark run over the Spider train split (the same
//! run `learn-fillers` reads).
//!
//! 1. run `nl2sql benchmark --spider train_spider.json --db-dir DB --lenient --format
//!    json > RESULTS.json`;
//! 2. keep the answered questions whose plans placed every word (those the strict
//!    planner would answer), each with its `signals` (schema-free traits of the question
//!    and plan, see the planner's `confidence.rs`) and whether the answer was right;
//! 3. keep the traits seen in at least [`MIN_SUPPORT`] of them over at least
//!    [`MIN_DATABASES`] databases (so that no one schema's habit is learned);
//! 4. fit an L2-regularised logistic regression (right = 1), choosing the regularisation
//!    by cross-validation grouped by database (a database's questions are all in one
//!    fold, as a new user's database is unseen);
//! 5. from the held-out probabilities, choose the lowest threshold whose answers reach
//!    [`TARGET_PRECISION`], and write the model fitted on everything with that threshold
//!    to `crates/nl2sql-planner-offline/src/data/confidence.txt`.
//!
//! Deterministic: same input, same file. Never run it on the dev set.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

/// A trait must be seen in this many kept questions …
const MIN_SUPPORT: usize = 12;
/// … over this many databases.
const MIN_DATABASES: usize = 5;
/// The precision the threshold aims at on held-out databases.
const TARGET_PRECISION: f64 = 0.85;
/// Cross-validation folds (by database).
const FOLDS: usize = 5;
/// The L2 strengths tried.
const LAMBDAS: [f64; 5] = [0.3, 1.0, 3.0, 10.0, 30.0];
/// Gradient steps per fit.
const STEPS: usize = 1500;

/// Where the model lives.
const OUT: &str = "crates/nl2sql-planner-offline/src/data/confidence.txt";

/// One kept question: its trait indices, label and database.
struct Sample {
    features: Vec<usize>,
    right: bool,
    fold: usize,
}

pub(crate) fn run(root: &Path, from: &Path) -> anyhow::Result<()> {
    let results = crate::fillers::spider_results(from)?;
    let strs = |r: &serde_json::Value, k: &str| -> Vec<String> {
        r.get(k)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    // The questions the strict planner would answer.
    let mut raw: Vec<(Vec<String>, bool, String)> = Vec::new();
    for r in &results {
        let outcome = r.get("outcome").and_then(serde_json::Value::as_str);
        if !matches!(outcome, Some("correct" | "wrong")) || !strs(r, "unplaced").is_empty() {
            continue;
        }
        let signals = strs(r, "signals");
        if signals.is_empty() {
            continue;
        }
        let db = r
            .get("db_id")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned();
        raw.push((signals, outcome == Some("correct"), db));
    }
    if raw.len() < 100 {
        bail!(
            "only {} answered questions with signals in {}: is it a lenient run over Spider train?",
            raw.len(),
            from.display()
        );
    }
    // Traits with enough support over enough databases.
    let mut seen: BTreeMap<&str, (usize, BTreeSet<&str>)> = BTreeMap::new();
    for (signals, _, db) in &raw {
        for s in signals {
            let e = seen.entry(s.as_str()).or_default();
            e.0 += 1;
            e.1.insert(db.as_str());
        }
    }
    let names: Vec<String> = seen
        .iter()
        .filter(|(_, (n, dbs))| *n >= MIN_SUPPORT && dbs.len() >= MIN_DATABASES)
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let databases: BTreeSet<&str> = raw.iter().map(|(_, _, db)| db.as_str()).collect();
    let fold_of: BTreeMap<&str, usize> = databases
        .iter()
        .enumerate()
        .map(|(i, db)| (*db, i % FOLDS))
        .collect();
    let samples: Vec<Sample> = raw
        .iter()
        .map(|(signals, right, db)| Sample {
            features: signals
                .iter()
                .filter_map(|s| index.get(s.as_str()).copied())
                .collect(),
            right: *right,
            fold: fold_of[db.as_str()],
        })
        .collect();
    let right = samples.iter().filter(|s| s.right).count();
    // The regularisation with the best held-out log-likelihood.
    let mut best: Option<(f64, f64, Vec<f64>)> = None;
    for lambda in LAMBDAS {
        let held_out = cross_validate(&samples, names.len(), lambda);
        let ll: f64 = samples
            .iter()
            .zip(&held_out)
            .map(|(s, p)| {
                let p = p.clamp(1e-9, 1.0 - 1e-9);
                if s.right { p.ln() } else { (1.0 - p).ln() }
            })
            .sum::<f64>()
            / samples.len() as f64;
        println!("learn-confidence: lambda {lambda}: held-out log-likelihood {ll:.4}");
        if best.as_ref().is_none_or(|(_, b, _)| ll > *b) {
            best = Some((lambda, ll, held_out));
        }
    }
    let Some((lambda, ll, held_out)) = best else {
        bail!("no regularisation tried");
    };
    // The trade, held out: what each precision costs in right answers.
    for target in [0.80, 0.85, 0.875, 0.90, 0.925, 0.95] {
        let (t, k, r) = choose_threshold(&samples, &held_out, target);
        println!(
            "learn-confidence: held out, precision >= {target}: threshold {t:.3} keeps {k} \
             answers, {r} right (of {right} right without a threshold)"
        );
    }
    let (threshold, kept, kept_right) = choose_threshold(&samples, &held_out, TARGET_PRECISION);
    let (bias, weights) = fit(&samples, names.len(), lambda, |_| true);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The offline planner's confidence model: learned by `cargo xtask learn-confidence`\n\
         # from a lenient benchmark run over the Spider train split. {n} answered questions\n\
         # with every word placed ({right} right, {pct:.1} %) over {dbs} databases; traits seen\n\
         # >= {MIN_SUPPORT} times over >= {MIN_DATABASES} databases ({k} of {all}); L2 {lambda}\n\
         # chosen by {FOLDS}-fold cross-validation grouped by database (held-out\n\
         # log-likelihood {ll:.4}). At the threshold, held-out answers keep {kept} of {n}\n\
         # questions, {kept_right} right ({kp:.1} %). Regenerate, do not edit.",
        n = samples.len(),
        pct = 100.0 * right as f64 / samples.len() as f64,
        dbs = databases.len(),
        k = names.len(),
        all = seen.len(),
        kp = 100.0 * kept_right as f64 / kept.max(1) as f64,
    );
    let _ = writeln!(out, "bias {bias:.4}");
    let _ = writeln!(out, "threshold {threshold:.4}");
    for (name, w) in names.iter().zip(&weights) {
        if w.abs() >= 0.005 {
            let _ = writeln!(out, "{name} {w:.4}");
        }
    }
    let path = root.join(OUT);
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "learn-confidence: {} questions ({right} right), {} traits, threshold {threshold:.3}: \
         held out, {kept} kept, {kept_right} right ({:.1} %); written to {OUT}",
        samples.len(),
        names.len(),
        100.0 * kept_right as f64 / kept.max(1) as f64,
    );
    Ok(())
}

/// Held-out probabilities: each fold's from a model fitted on the others.
fn cross_validate(samples: &[Sample], width: usize, lambda: f64) -> Vec<f64> {
    let mut p = vec![0.0; samples.len()];
    for fold in 0..FOLDS {
        let (bias, w) = fit(samples, width, lambda, |s| s.fold != fold);
        for (i, s) in samples.iter().enumerate() {
            if s.fold == fold {
                p[i] = predict(bias, &w, s);
            }
        }
    }
    p
}

fn predict(bias: f64, w: &[f64], s: &Sample) -> f64 {
    let z = bias + s.features.iter().map(|&f| w[f]).sum::<f64>();
    1.0 / (1.0 + (-z).exp())
}

/// Fits the samples `train` keeps: full-batch gradient descent with Adam on the mean
/// log-loss plus `lambda / n` times half the squared weights (the bias is not
/// regularised).
fn fit(
    samples: &[Sample],
    width: usize,
    lambda: f64,
    train: impl Fn(&Sample) -> bool,
) -> (f64, Vec<f64>) {
    let rows: Vec<&Sample> = samples.iter().filter(|s| train(s)).collect();
    let n = rows.len().max(1) as f64;
    let mut w = vec![0.0; width + 1]; // the bias last
    let (mut m, mut v) = (vec![0.0; width + 1], vec![0.0; width + 1]);
    let (rate, b1, b2, eps) = (0.05, 0.9, 0.999, 1e-8);
    let mut grad = vec![0.0; width + 1];
    for step in 1..=STEPS {
        grad.iter_mut().for_each(|g| *g = 0.0);
        for s in &rows {
            let p = predict(w[width], &w[..width], s);
            let err = p - f64::from(u8::from(s.right));
            for &f in &s.features {
                grad[f] += err / n;
            }
            grad[width] += err / n;
        }
        for (g, wi) in grad.iter_mut().zip(&w).take(width) {
            *g += lambda / n * wi;
        }
        let t = step as i32;
        for i in 0..=width {
            m[i] = b1 * m[i] + (1.0 - b1) * grad[i];
            v[i] = b2 * v[i] + (1.0 - b2) * grad[i] * grad[i];
            let mh = m[i] / (1.0 - b1.powi(t));
            let vh = v[i] / (1.0 - b2.powi(t));
            w[i] -= rate * mh / (vh.sqrt() + eps);
        }
    }
    let bias = w[width];
    w.truncate(width);
    (bias, w)
}

/// The lowest held-out probability `t` such that the answers with probability ≥ `t` are
/// right at least `target` of the time, with how many they are and how many
/// right; 1 (refuse everything) when none reaches it.
fn choose_threshold(samples: &[Sample], held_out: &[f64], target: f64) -> (f64, usize, usize) {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by(|&a, &b| held_out[b].total_cmp(&held_out[a]).then(a.cmp(&b)));
    let mut best = (1.0, 0, 0);
    let (mut kept, mut right) = (0, 0);
    for (k, &i) in order.iter().enumerate() {
        kept += 1;
        right += usize::from(samples[i].right);
        // Only cut between distinct probabilities.
        let next_differs = order.get(k + 1).is_none_or(|&j| held_out[j] < held_out[i]);
        if next_differs && right as f64 >= target * kept as f64 {
            best = (held_out[i], kept, right);
        }
    }
    best
}
