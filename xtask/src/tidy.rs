//! `cargo xtask tidy`: fast checks on the tree that neither rustc nor clippy make.
//!
//! Each check returns its findings as lines of text; [`check`] gathers them all, so one
//! run reports every problem. The `tidy_is_clean` test in `tidy/tests.rs` runs the same
//! checks under `cargo test`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::codegen;

mod imports;

/// Fixture files above this size fail tidy (apache/datafusion caps them at 1.5 MB too).
pub(crate) const MAX_FIXTURE_BYTES: u64 = 1_500_000;

/// Attributes that tests must not use. Built with `concat!` so that this file does not
/// contain them verbatim and trip its own check.
const BANNED_ATTRIBUTES: [(&str, &str); 2] = [
    (
        concat!("#[", "should_panic"),
        "check the `Err` and its code instead (ARCHITECTURE.md, \"Testing\")",
    ),
    (
        concat!("#[", "ignore"),
        "assert today's behaviour with a FIXME instead (ARCHITECTURE.md, \"Testing\")",
    ),
];

/// Runs every check and prints the findings.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let problems = check(root);
    if problems.is_empty() {
        println!("tidy: ok");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("tidy: {problem}");
    }
    bail!("tidy found {} problem(s)", problems.len())
}

/// Every finding of every check, as lines of text (empty when the tree is tidy).
pub(crate) fn check(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    problems.extend(check_doc_headers(root));
    problems.extend(check_manifests(root));
    problems.extend(check_test_attributes(root));
    problems.extend(leftover_snapshot_files(root).iter().map(|p| {
        format!(
            "{}: leftover snapshot file; review it (`cargo xtask snapshots`) and delete it",
            rel(root, p)
        )
    }));
    problems.extend(check_fixture_sizes(root));
    problems.extend(check_error_code_docs(root));
    problems.extend(check_unguarded_calls(root));
    problems.extend(check_architecture_map(root));
    problems.extend(check_import_cycles(root));
    problems
}

/// No two files of one crate import each other, directly or through others
/// ([`imports::cycles`]); the cycles that predate the check are listed in
/// [`imports::KNOWN_CYCLES`] until they are removed.
fn check_import_cycles(root: &Path) -> Vec<String> {
    let mut found = BTreeSet::new();
    let mut crates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    crates.push(root.join("xtask"));
    crates.sort();
    for dir in crates {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let src = dir.join("src");
        for cycle in imports::cycles(&src, &rust_files(&src)) {
            found.insert(format!("{name}: {}", cycle.join(", ")));
        }
    }
    let known: BTreeSet<String> = imports::KNOWN_CYCLES
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut problems: Vec<String> = found
        .difference(&known)
        .map(|c| {
            format!(
                "import cycle between files of one crate: {c} (move what they share into a file both import, ARCHITECTURE.md)"
            )
        })
        .collect();
    problems.extend(known.difference(&found).map(|c| {
        format!(
            "the import cycle '{c}' is gone: delete it from xtask/src/tidy/imports.rs KNOWN_CYCLES"
        )
    }));
    problems
}

/// `ARCHITECTURE.md` is the map a newcomer starts from: it names every workspace crate in a
/// section heading and every `nl2sql` command in its command table, and points only at
/// files of this repository.
fn check_architecture_map(root: &Path) -> Vec<String> {
    let map = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap_or_default();
    let crates: Vec<String> = member_manifests(root)
        .iter()
        .filter_map(|m| fs::read_to_string(m).ok())
        .filter_map(|text| package_name(&text))
        .collect();
    let main = fs::read_to_string(root.join("crates/nl2sql-cli/src/main.rs")).unwrap_or_default();
    architecture_problems(&map, &crates, &cli_commands(&main), &|path| {
        root.join(path).exists()
    })
}

/// What the map lacks or points at wrongly.
pub(crate) fn architecture_problems(
    map: &str,
    crates: &[String],
    commands: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    let headings: Vec<&str> = map.lines().filter(|l| l.starts_with("### ")).collect();
    for name in crates {
        let quoted = format!("`{name}`");
        if !headings.iter().any(|h| h.contains(&quoted)) {
            problems.push(format!(
                "ARCHITECTURE.md: crate `{name}` has no section (a `### ` heading naming it)"
            ));
        }
    }
    for command in commands {
        if !map.contains(&format!("| `nl2sql {command}`")) {
            problems.push(format!(
                "ARCHITECTURE.md: command `nl2sql {command}` is missing from the command table"
            ));
        }
    }
    for (i, line) in map.lines().enumerate() {
        for outside in ["../", "STYLE.md"] {
            if line.contains(outside) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: points outside the repository ({outside})",
                    i + 1
                ));
            }
        }
        // Repository paths in backquotes must exist.
        for path in line.split('`').skip(1).step_by(2) {
            let is_path = ["docs/", "crates/", "xtask/", "tests/", "examples/"]
                .iter()
                .any(|p| path.starts_with(p))
                && !path.contains(['*', ' ', '<']);
            if is_path && !exists(path) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: `{path}` does not exist",
                    i + 1
                ));
            }
        }
    }
    problems
}

/// `name = "…"` of a manifest's `[package]`.
fn package_name(manifest: &str) -> Option<String> {
    let package = manifest.split("[package]").nth(1)?;
    package
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "name").then(|| value.trim().trim_matches('"').to_owned())
        })
}

/// The `nl2sql` subcommands: the variants of `enum Command` in the CLI's `main.rs`, in
/// kebab case as clap spells them.
pub(crate) fn cli_commands(main_rs: &str) -> Vec<String> {
    let Some(body) = main_rs
        .split("enum Command {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
    else {
        return Vec::new();
    };
    body.lines()
        .filter_map(|l| {
            let l = l.strip_prefix("    ")?;
            let name: String = l.chars().take_while(char::is_ascii_alphanumeric).collect();
            (name.starts_with(|c: char| c.is_ascii_uppercase())
                && l[name.len()..].starts_with(['(', ',', ' ', '{']))
            .then_some(name)
        })
        .map(|name| {
            let mut kebab = String::new();
            for (i, c) in name.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            kebab
        })
        .collect()
}

/// The guard's bypass (`GuardedSql::unguarded_for_sandbox_tests`) is only for tests: a
/// call is allowed in a crate's `tests/` folder, a `tests.rs` or `tests/` module, and in
/// the adapter conformance suite (itself compiled only for tests), nowhere else.
/// Built with `concat!` so that this file does not name it verbatim.
fn check_unguarded_calls(root: &Path) -> Vec<String> {
    const BYPASS: &str = concat!("unguarded_for_", "sandbox_tests");
    rust_files(&root.join("crates"))
        .into_iter()
        .filter(|path| !is_test_only_file(root, path))
        .filter_map(|path| {
            let text = fs::read_to_string(&path).ok()?;
            let calls = text
                .lines()
                .filter(|l| l.contains(BYPASS) && !l.contains("pub fn"))
                .count();
            (calls > 0).then(|| {
                format!(
                    "{}: calls the guard bypass `{BYPASS}` outside tests; run statements through the guard",
                    rel(root, &path)
                )
            })
        })
        .collect()
}

/// Files that only tests compile: under a `tests` folder, named `tests.rs`, or the
/// adapter conformance suite.
pub(crate) fn is_test_only_file(root: &Path, path: &Path) -> bool {
    let rel = rel(root, path);
    rel.split('/').any(|part| part == "tests")
        || rel.ends_with("/tests.rs")
        || rel == "crates/nl2sql-adapter/src/conformance.rs"
        || rel == "crates/nl2sql-adapter/src/differential.rs"
}

/// Every `.rs` file under `crates/` starts with a `//!` doc comment.
fn check_doc_headers(root: &Path) -> Vec<String> {
    rust_files(&root.join("crates"))
        .into_iter()
        .filter_map(|path| match fs::read_to_string(&path) {
            Ok(text) if starts_with_inner_doc(&text) => None,
            Ok(_) => Some(format!(
                "{}: does not start with a `//!` comment saying what the file holds",
                rel(root, &path)
            )),
            Err(err) => Some(format!("{}: cannot read: {err}", rel(root, &path))),
        })
        .collect()
}

/// True when the first line of `text` (after a byte-order mark) is a `//!` comment.
pub(crate) fn starts_with_inner_doc(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').starts_with("//!")
}

/// Every member manifest has `[lints] workspace = true` and takes its dependencies from
/// `[workspace.dependencies]`.
fn check_manifests(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for manifest in member_manifests(root) {
        let name = rel(root, &manifest);
        let text = match fs::read_to_string(&manifest) {
            Ok(text) => text,
            Err(err) => {
                problems.push(format!("{name}: cannot read: {err}"));
                continue;
            }
        };
        if !has_workspace_lints(&text) {
            problems.push(format!("{name}: missing `[lints]` with `workspace = true`"));
        }
        problems.extend(
            dependency_problems(&text)
                .into_iter()
                .map(|p| format!("{name}: {p}")),
        );
    }
    problems
}

/// The manifests of the workspace members: the root manifest's `members` entries, with a
/// trailing `/*` expanded to every sub-folder that holds a `Cargo.toml`.
fn member_manifests(root: &Path) -> Vec<PathBuf> {
    let text = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut manifests = Vec::new();
    for member in workspace_members(&text) {
        if let Some(parent) = member.strip_suffix("/*") {
            let mut dirs: Vec<PathBuf> = fs::read_dir(root.join(parent))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect();
            dirs.sort();
            manifests.extend(dirs.into_iter().map(|d| d.join("Cargo.toml")));
        } else {
            let manifest = root.join(&member).join("Cargo.toml");
            if manifest.is_file() {
                manifests.push(manifest);
            }
        }
    }
    manifests
}

/// The strings in `members = [...]` of `[workspace]` (on one or several lines).
pub(crate) fn workspace_members(manifest: &str) -> Vec<String> {
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    if close < open {
        return Vec::new();
    }
    rest[open + 1..close]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// True when the manifest has `[lints]` followed by `workspace = true`, or
/// `lints.workspace = true`.
pub(crate) fn has_workspace_lints(manifest: &str) -> bool {
    let mut in_lints = false;
    for line in manifest.lines().map(strip_comment) {
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            in_lints = line == "[lints]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if value == "true" && ((in_lints && key == "workspace") || key == "lints.workspace") {
            return true;
        }
    }
    false
}

/// Dependencies in a member manifest that are not `name.workspace = true` (or an inline
/// table with `workspace = true`), and any `path` dependency.
pub(crate) fn dependency_problems(manifest: &str) -> Vec<String> {
    let mut problems = Vec::new();
    // The current section: a dependency table (`[dependencies]`), one dependency written
    // as a table (`[dependencies.foo]`, holding whether `workspace = true` was seen), or
    // anything else.
    enum Section {
        Deps(String),
        OneDep {
            section: String,
            name: String,
            workspace: bool,
        },
        Other,
    }
    let finish = |section: &Section, problems: &mut Vec<String>| {
        if let Section::OneDep {
            section,
            name,
            workspace: false,
        } = section
        {
            problems.push(format!(
                "[{section}] `{name}` does not use `workspace = true` (declare it once in the root [workspace.dependencies])"
            ));
        }
    };
    let mut section = Section::Other;
    for line in manifest.lines().map(strip_comment) {
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            finish(&section, &mut problems);
            let header = header.trim();
            section = match header.rsplit_once('.') {
                _ if is_dependency_table(header) => Section::Deps(header.to_owned()),
                Some((table, name)) if is_dependency_table(table) => Section::OneDep {
                    section: header.to_owned(),
                    name: name.trim().trim_matches('"').to_owned(),
                    workspace: false,
                },
                _ => Section::Other,
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match &mut section {
            Section::Deps(table) => {
                let name = key.trim_end_matches(".workspace").trim_matches('"');
                let through_workspace = if key.ends_with(".workspace") {
                    value == "true"
                } else {
                    inline_table_has(value, "workspace", "true")
                };
                if inline_table_key(value, "path") {
                    problems.push(format!(
                        "[{table}] `{name}` is a `path` dependency (use `{name}.workspace = true`)"
                    ));
                } else if !through_workspace {
                    problems.push(format!(
                        "[{table}] `{name}` does not use `workspace = true` (declare it once in the root [workspace.dependencies])"
                    ));
                }
            }
            Section::OneDep {
                section: table,
                name,
                workspace,
            } => {
                if key == "path" {
                    problems.push(format!(
                        "[{table}] `{name}` is a `path` dependency (use `{name}.workspace = true`)"
                    ));
                    *workspace = true; // Reported already.
                } else if key == "workspace" && value == "true" {
                    *workspace = true;
                }
            }
            Section::Other => {}
        }
    }
    finish(&section, &mut problems);
    problems
}

/// `dependencies`, `dev-dependencies`, `build-dependencies`, also under `target.<cfg>.`.
fn is_dependency_table(header: &str) -> bool {
    let last = header.rsplit('.').next().unwrap_or(header).trim();
    matches!(
        last,
        "dependencies" | "dev-dependencies" | "build-dependencies"
    ) && (header == last || header.starts_with("target."))
}

/// True when `value` is an inline table with `key = expected`.
fn inline_table_has(value: &str, key: &str, expected: &str) -> bool {
    inline_table_entries(value).any(|(k, v)| k == key && v == expected)
}

/// True when `value` is an inline table with an entry `key`.
fn inline_table_key(value: &str, key: &str) -> bool {
    inline_table_entries(value).any(|(k, _)| k == key)
}

/// The top-level `key = value` entries of an inline table (`{ a = 1, b = [2, 3] }`).
fn inline_table_entries(value: &str) -> impl Iterator<Item = (&str, &str)> {
    let inner = value
        .trim()
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .unwrap_or("");
    let mut entries = Vec::new();
    let (mut depth, mut start, mut in_string) = (0_i32, 0, false);
    for (i, c) in inner.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '[' | '{' if !in_string => depth += 1,
            ']' | '}' if !in_string => depth -= 1,
            ',' if !in_string && depth == 0 => {
                entries.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push(&inner[start..]);
    entries
        .into_iter()
        .filter_map(|e| e.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
}

/// The line without a trailing `#` comment (outside strings), trimmed.
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return line[..i].trim(),
            _ => {}
        }
    }
    line.trim()
}

/// No test attribute from [`BANNED_ATTRIBUTES`] under `crates/`, `tests/` or `xtask/`.
fn check_test_attributes(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for dir in ["crates", "tests", "xtask"] {
        for path in rust_files(&root.join(dir)) {
            let Ok(text) = fs::read_to_string(&path) else {
                continue;
            };
            for (line, attribute, advice) in banned_attributes(&text) {
                problems.push(format!(
                    "{}:{line}: `{attribute}]`: {advice}",
                    rel(root, &path)
                ));
            }
        }
    }
    problems
}

/// `(line number, attribute, advice)` for each banned attribute in `text`.
pub(crate) fn banned_attributes(text: &str) -> Vec<(usize, &'static str, &'static str)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        for (attribute, advice) in BANNED_ATTRIBUTES {
            let hit = code.match_indices(attribute).any(|(at, _)| {
                let next = code[at + attribute.len()..].chars().next();
                matches!(next, None | Some(']' | '(' | '=' | ' '))
            });
            if hit {
                found.push((index + 1, attribute, advice));
            }
        }
    }
    found
}

/// `*.snap.new` and `*.pending-snap` files anywhere in the tree (insta leaves them when a
/// snapshot changed and was not reviewed).
pub(crate) fn leftover_snapshot_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(root, &mut |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            found.push(path.to_path_buf());
        }
    });
    found
}

/// Fixture files stay small: everything under `tests/`, `crates/*/tests/` and
/// `crates/*/data/`.
fn check_fixture_sizes(root: &Path) -> Vec<String> {
    let mut dirs = vec![root.join("tests")];
    for krate in fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        dirs.push(krate.path().join("tests"));
        dirs.push(krate.path().join("data"));
    }
    let mut problems = Vec::new();
    for dir in dirs {
        walk(&dir, &mut |path| {
            let size = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if size > MAX_FIXTURE_BYTES {
                problems.push(format!(
                    "{}: {size} bytes, over the {MAX_FIXTURE_BYTES}-byte limit for fixtures (make it smaller or generate it)",
                    rel(root, path)
                ));
            }
        });
    }
    problems
}

/// Every `ErrorCode` appears, in backticks, in `docs/error-codes.md`.
fn check_error_code_docs(root: &Path) -> Vec<String> {
    let path = root.join(codegen::ERROR_CODES_DOC);
    let Ok(doc) = fs::read_to_string(&path) else {
        return vec![format!(
            "{}: missing; run `cargo xtask codegen`",
            codegen::ERROR_CODES_DOC
        )];
    };
    codegen::error_codes()
        .iter()
        .filter(|row| !doc.contains(&format!("`{}`", row.code)))
        .map(|row| {
            format!(
                "{}: error code `{}` is not documented; run `cargo xtask codegen`",
                codegen::ERROR_CODES_DOC,
                row.code
            )
        })
        .collect()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    walk(dir, &mut |path| {
        if path.extension().is_some_and(|e| e == "rs") {
            files.push(path.to_path_buf());
        }
    });
    files.sort();
    files
}

/// Calls `visit` on every file under `dir` (symlinks not followed), skipping `.git`,
/// `target` and `.nl2sql` folders. A missing `dir` has no files.
pub(crate) fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            let name = entry.file_name();
            if !matches!(name.to_str(), Some(".git" | "target" | ".nl2sql")) {
                walk(&path, visit);
            }
        } else if kind.is_file() {
            visit(&path);
        }
    }
}

/// `path` relative to `root`, for messages.
pub(crate) fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests;
