//! Tests of the tidy checks, and tidy itself run over the workspace.

use super::*;

#[test]
fn tidy_is_clean() {
    let problems = check(&crate::project_root());
    assert!(
        problems.is_empty(),
        "tidy found problems (run `cargo xtask tidy`):\n{}",
        problems.join("\n")
    );
}

#[test]
fn doc_header_must_open_the_file() {
    assert!(starts_with_inner_doc("//! The guard.\nmod x;\n"));
    assert!(starts_with_inner_doc("\u{feff}//! With a BOM.\n"));
    assert!(!starts_with_inner_doc(
        "#![allow(missing_docs)]\n//! Late.\n"
    ));
    assert!(!starts_with_inner_doc("/// Outer doc.\nfn f() {}\n"));
    assert!(!starts_with_inner_doc(""));
}

#[test]
fn workspace_lints_are_found() {
    assert!(has_workspace_lints(
        "[package]\nname = \"a\"\n\n[lints]\nworkspace = true\n"
    ));
    assert!(has_workspace_lints(
        "[lints]\n# inherited\nworkspace = true # yes\n"
    ));
    assert!(has_workspace_lints("lints.workspace = true\n"));
    assert!(!has_workspace_lints(
        "[lints]\n\n[dependencies]\nworkspace = true\n"
    ));
    assert!(!has_workspace_lints(
        "[lints.rust]\nunsafe_code = \"forbid\"\n"
    ));
    assert!(!has_workspace_lints("[package]\nname = \"a\"\n"));
}

#[test]
fn dependencies_must_come_from_the_workspace() {
    let manifest = r#"
[package]
name = "nl2sql-x"

[lib]
path = "lib.rs"

[dependencies]
nl2sql-state.workspace = true
serde = { workspace = true, features = ["rc"] }
nl2sql-plan = { path = "../nl2sql-plan" }
regex = "1"

[dev-dependencies.insta]
workspace = true

[dev-dependencies.proptest]
version = "1"

[target.'cfg(unix)'.dependencies]
libc = { version = "0.2", default-features = false }

[[test]]
name = "it"
path = "it/main.rs"
"#;
    let problems = dependency_problems(manifest);
    assert_eq!(
        problems,
        [
            "[dependencies] `nl2sql-plan` is a `path` dependency (use `nl2sql-plan.workspace = true`)",
            "[dependencies] `regex` does not use `workspace = true` (declare it once in the root [workspace.dependencies])",
            "[dev-dependencies.proptest] `proptest` does not use `workspace = true` (declare it once in the root [workspace.dependencies])",
            "[target.'cfg(unix)'.dependencies] `libc` does not use `workspace = true` (declare it once in the root [workspace.dependencies])",
        ]
    );
}

#[test]
fn members_are_read_from_the_root_manifest() {
    let root =
        "[workspace]\nresolver = \"3\"\nmembers = [\n  \"crates/*\",\n  \"xtask\", \"tests\",\n]\n";
    assert_eq!(workspace_members(root), ["crates/*", "xtask", "tests"]);
}

#[test]
fn banned_attributes_are_found_outside_comments() {
    let should_panic = concat!("#[", "should_panic");
    let ignore = concat!("#[", "ignore");
    let text = format!(
        "#[test]\n{should_panic}]\nfn a() {{}}\n\n// {ignore}] in a comment is fine\n    {ignore} = \"slow\"]\nfn b() {{}}\n{should_panic}(expected = \"x\")]\n#[ignored_by_nothing]\n"
    );
    let lines: Vec<(usize, &str)> = banned_attributes(&text)
        .into_iter()
        .map(|(line, attribute, _)| (line, attribute))
        .collect();
    assert_eq!(lines, [(2, should_panic), (6, ignore), (8, should_panic)]);
}

#[test]
fn the_architecture_map_names_every_crate_and_command() {
    let map = "## Commands\n| `nl2sql ask` | ask.rs |\n### `nl2sql-state`\nSee `docs/a.md` and `docs/gone.md`.\nAnd ../shared/spec.\n";
    let crates = vec!["nl2sql-state".to_owned(), "nl2sql-new".to_owned()];
    let commands = vec!["ask".to_owned(), "validate-sql".to_owned()];
    let problems = architecture_problems(map, &crates, &commands, &|p| p == "docs/a.md");
    assert_eq!(
        problems,
        [
            "ARCHITECTURE.md: crate `nl2sql-new` has no section (a `### ` heading naming it)",
            "ARCHITECTURE.md: command `nl2sql validate-sql` is missing from the command table",
            "ARCHITECTURE.md:4: `docs/gone.md` does not exist",
            "ARCHITECTURE.md:5: points outside the repository (../)",
        ]
    );
}

#[test]
fn cli_commands_are_the_command_enum_in_kebab_case() {
    let main = "enum Command {\n    /// Asks.\n    #[command(visible_alias = \"run\")]\n    Ask(ask::Args),\n    ValidateSql(validate_sql::Args),\n    ListAdapters,\n}\n";
    assert_eq!(cli_commands(main), ["ask", "validate-sql", "list-adapters"]);
}

/// Writes `files` (path relative to `src`, text) under a fresh directory; its `src`.
fn crate_src(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().expect("a parent")).expect("dirs");
        fs::write(p, text).expect("write");
    }
    dir
}

#[test]
fn files_that_import_each_other_are_a_cycle_and_declarations_are_not_imports() {
    let dir = crate_src(&[
        ("lib.rs", "//! x\nmod engine;\npub use engine::Engine;\n"),
        (
            "engine/mod.rs",
            "//! x\nmod run;\nmod ctx;\nmod glob;\nuse ctx::Shared;\npub use glob::G;\npub struct Engine;\nfn f() { run::run() }\n",
        ),
        ("engine/run.rs", "//! x\npub fn run() {}\n"),
        // ctx imports an item of its parent: engine/mod.rs <-> ctx.rs.
        (
            "engine/ctx.rs",
            "//! x\nuse super::{Engine};\npub struct Shared;\n// use crate::x; comments are not imports\n",
        ),
        // A glob import of the parent is an import of it.
        ("engine/glob.rs", "//! x\nuse super::*;\npub struct G;\n"),
        (
            "util.rs",
            "//! x\nuse std::collections::BTreeMap;\n#[cfg(test)]\nmod tests {\n    use crate::engine::Engine;\n}\n",
        ),
    ]);
    let cycles = imports::cycles(dir.path(), &rust_files(dir.path()));
    assert_eq!(
        cycles,
        vec![vec![
            "engine/ctx.rs".to_owned(),
            "engine/glob.rs".to_owned(),
            "engine/mod.rs".to_owned()
        ]]
    );
}

#[test]
fn a_crate_whose_files_import_downward_only_has_no_cycle() {
    let dir = crate_src(&[
        (
            "lib.rs",
            "//! x\nmod a;\nmod b;\npub use a::A;\npub use b::{B, self};\n",
        ),
        ("a.rs", "//! x\nuse crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "//! x\npub struct B;\nimpl B { fn new() -> Self { Self::default() } }\n",
        ),
        ("c.rs", "//! x\nuse crate::a::*;\n"),
    ]);
    assert!(imports::cycles(dir.path(), &rust_files(dir.path())).is_empty());
}
