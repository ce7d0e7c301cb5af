//! Unit tests of the env file: which file applies and how its lines parse.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use nl2sql_test_support::temp_dir;

use super::{locate, parse};

fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| (*v).to_owned())
    }
}

fn check(text: &str, expect: &[(&str, &str)]) {
    let got = parse(text).unwrap();
    let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, expect, "{text:?}");
}

#[test]
fn lines_parse_with_quotes_comments_and_export() {
    check(
        "# settings\n\nA=1\nexport B = two words \nC='single # kept'\nD=\"x\\ny\\\"z\" # comment\nE=bare # comment\nF=\nG=a=b\n",
        &[
            ("A", "1"),
            ("B", "two words"),
            ("C", "single # kept"),
            ("D", "x\ny\"z"),
            ("E", "bare"),
            ("F", ""),
            ("G", "a=b"),
        ],
    );
}

#[test]
fn malformed_lines_are_errors_naming_the_line() {
    for (text, want) in [
        ("A=1\nnot a setting\n", "line 2: expected KEY=VALUE"),
        ("1A=x", "line 1: '1A' is not a variable name"),
        ("A-B=x", "line 1: 'A-B' is not a variable name"),
        ("A=\"open", "line 1: A: the \" quote is not closed"),
        (
            "A='x' y",
            "line 1: A: unexpected text after the closing quote",
        ),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.starts_with(want), "{text:?}: {err}");
    }
}

#[test]
fn the_file_comes_from_env_file_path_then_env_then_app_env_then_dot_env() {
    let dir = temp_dir("locate");
    // Nothing there: no file, no error.
    assert_eq!(locate(&lookup(&[]), &dir).unwrap(), None);
    assert_eq!(locate(&lookup(&[("ENV", "prod")]), &dir).unwrap(), None);
    std::fs::write(dir.join(".env"), "A=1").unwrap();
    std::fs::write(dir.join(".env.prod"), "A=2").unwrap();
    std::fs::write(dir.join(".env.test"), "A=3").unwrap();
    std::fs::write(dir.join("custom.env"), "A=4").unwrap();
    assert_eq!(locate(&lookup(&[]), &dir).unwrap(), Some(dir.join(".env")));
    assert_eq!(
        locate(&lookup(&[("ENV", "prod")]), &dir).unwrap(),
        Some(dir.join(".env.prod"))
    );
    assert_eq!(
        locate(&lookup(&[("APP_ENV", "test")]), &dir).unwrap(),
        Some(dir.join(".env.test"))
    );
    assert_eq!(
        locate(&lookup(&[("ENV", "prod"), ("APP_ENV", "test")]), &dir).unwrap(),
        Some(dir.join(".env.prod")),
        "ENV wins over APP_ENV"
    );
    assert_eq!(
        locate(
            &lookup(&[("ENV_FILE_PATH", "custom.env"), ("ENV", "prod")]),
            &dir
        )
        .unwrap(),
        Some(dir.join("custom.env")),
        "ENV_FILE_PATH wins"
    );
    // A named file that is missing, or an ENV that cannot name a file, is an error.
    let err = locate(&lookup(&[("ENV_FILE_PATH", "missing.env")]), &dir).unwrap_err();
    assert!(err.to_string().starts_with("ENV_FILE_PATH: "), "{err}");
    let err = locate(&lookup(&[("ENV", "../etc")]), &dir).unwrap_err();
    assert!(err.to_string().starts_with("ENV: '../etc'"), "{err}");
    let err = locate(&lookup(&[("APP_ENV", "a/b")]), &dir).unwrap_err();
    assert!(err.to_string().starts_with("APP_ENV: "), "{err}");
}
