//! Import cycles between the files of one crate.
//!
//! A file imports another when it names a path into it: `use crate::a::b`, `super::x`,
//! `self::x`, or (in any file) a child module's `child::item`. Declaring a module
//! (`mod x;`) is not an import, and neither are comments or a file's `#[cfg(test)] mod
//! tests`. Two files that reach each other through such imports form a cycle: following
//! one means going back and forth between them (issue 21). The check lists each cycle as
//! the strongly connected set of its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside a crate (`[]` for `lib.rs`/`main.rs`, `["engine"]` for
/// `engine/mod.rs` or `engine.rs`).
type ModPath = Vec<String>;

/// Cycles tolerated for now, as `crate: files` with the files sorted and joined by `, `
/// as [`cycles`] prints them (the twelve found when the check was written are all
/// removed). A cycle not listed fails tidy, and so does a listed one that is gone.
pub(crate) const KNOWN_CYCLES: &[&str] = &[];

/// The import cycles among `paths` (the crate's `.rs` files under `src`), each as its
/// sorted file paths (relative to `src`); sorted.
pub(crate) fn cycles(src: &Path, paths: &[PathBuf]) -> Vec<Vec<String>> {
    let mut files: BTreeMap<ModPath, String> = BTreeMap::new();
    let mut texts: BTreeMap<ModPath, String> = BTreeMap::new();
    for path in paths {
        let Ok(rel) = path.strip_prefix(src) else {
            continue;
        };
        if rel.starts_with("bin") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let module = module_path(rel);
        files.insert(module.clone(), rel.to_string_lossy().replace('\\', "/"));
        texts.insert(module, text);
    }
    let known: BTreeSet<&ModPath> = files.keys().collect();
    let graph: BTreeMap<&ModPath, BTreeSet<ModPath>> = texts
        .iter()
        .map(|(module, text)| (module, imports(module, text, &known)))
        .collect();
    let mut out: Vec<Vec<String>> = strongly_connected(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|m| files[*m].clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// The module path of the file at `rel` (relative to the crate's `src`).
fn module_path(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) {
        parts.pop();
    }
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    }
    parts
}

/// The file modules `module`'s text imports (itself excluded).
fn imports(module: &ModPath, text: &str, files: &BTreeSet<&ModPath>) -> BTreeSet<ModPath> {
    let code = code_of(text);
    let mut out = BTreeSet::new();
    let mut add = |path: ModPath| {
        if let Some(target) = longest_file_prefix(&path, files)
            && &target != module
        {
            out.insert(target);
        }
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        if !starts_word || !is_ident(bytes[i]) {
            i += 1;
            continue;
        }
        let (segments, group, end) = path_at(&code, i);
        i = end.max(i + 1);
        let Some(first) = segments.first() else {
            continue;
        };
        let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (module.clone(), &segments[1..]),
            "super" => {
                let mut base = module.clone();
                let mut n = 0;
                while segments.get(n).is_some_and(|s| s == "super") {
                    base.pop();
                    n += 1;
                }
                (base, &segments[n..])
            }
            // A child module's item (`run::run`, `pub use result::X`).
            _ if segments.len() > 1 || !group.is_empty() => (module.clone(), &segments[..]),
            _ => continue,
        };
        base.extend(rest.iter().cloned());
        if group.is_empty() {
            add(base);
        } else {
            for name in &group {
                let mut path = base.clone();
                path.push(name.clone());
                add(path);
            }
        }
    }
    out
}

/// The path starting at byte `i` of `code`: its `::`-separated segments (a glob `::*`
/// ends them: the module itself), the names of a trailing `::{…}` group, and where it
/// ends. A single segment not followed by `::` is
/// no path (an ordinary identifier).
fn path_at(code: &str, i: usize) -> (Vec<String>, Vec<String>, usize) {
    let bytes = code.as_bytes();
    let mut segments = Vec::new();
    let mut j = i;
    loop {
        let start = j;
        while j < bytes.len() && is_ident(bytes[j]) {
            j += 1;
        }
        segments.push(code[start..j].to_owned());
        if !code[j..].starts_with("::") {
            break;
        }
        j += 2;
        if code[j..].starts_with('*') {
            // A glob import names the module itself.
            return (segments, Vec::new(), j + 1);
        }
        if code[j..].starts_with('{') {
            let close = matching_brace(code, j).unwrap_or(code.len());
            let group = code[j + 1..close]
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty() && *w != "self" && *w != "as")
                .map(str::to_owned)
                .collect();
            return (segments, group, close);
        }
        if j >= bytes.len() || !is_ident(bytes[j]) {
            break;
        }
    }
    if segments.len() == 1 {
        segments.clear();
    }
    (segments, Vec::new(), j)
}

fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The longest prefix of `path` that is a file module.
fn longest_file_prefix(path: &[String], files: &BTreeSet<&ModPath>) -> Option<ModPath> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| files.contains(p))
}

/// The text without comments and without the file's `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        let code = line.find("//").map_or(line, |k| &line[..k]);
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Tarjan's strongly connected components.
fn strongly_connected<'a>(
    graph: &BTreeMap<&'a ModPath, BTreeSet<ModPath>>,
) -> Vec<Vec<&'a ModPath>> {
    struct Walk<'a, 'g> {
        graph: &'g BTreeMap<&'a ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, (usize, usize)>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        next: usize,
        out: Vec<Vec<&'a ModPath>>,
    }
    impl<'a> Walk<'a, '_> {
        fn visit(&mut self, v: &'a ModPath) {
            self.index.insert(v, (self.next, self.next));
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            let targets: Vec<&'a ModPath> = self.graph[v]
                .iter()
                .filter_map(|w| self.graph.get_key_value(w).map(|(k, _)| *k))
                .collect();
            for w in targets {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.entry(v).and_modify(|e| e.1 = low);
                } else if self.on_stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.entry(v).and_modify(|e| e.1 = low);
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.out.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(*v) {
            walk.visit(v);
        }
    }
    walk.out
}
