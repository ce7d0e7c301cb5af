//! The README's examples are run as written: every `$ nl2sql …` line of a `console` block
//! runs the binary from the repository root, and its standard output must match the text
//! shown under it (a line `...` ends the comparison early). `$ echo $?` checks the exit
//! status of the command before it.

use crate::support::{nl2sql, repo};

/// Splits a command line into words: whitespace separates, double and single quotes group.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    assert!(
        quote.is_none(),
        "unbalanced quotes in README command: {line}"
    );
    if in_word {
        out.push(cur);
    }
    out
}

/// One `$ command` with the output shown under it.
struct Example {
    command: String,
    expected: Vec<String>,
}

fn console_examples(readme: &str) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut continuing = false;
    for line in readme.lines() {
        if !in_console {
            in_console = line.trim() == "```console";
            continue;
        }
        if line.trim() == "```" {
            in_console = false;
            continue;
        }
        if continuing {
            let last = examples
                .last_mut()
                .expect("a command precedes its continuation");
            continuing = line.ends_with('\\');
            last.command.push(' ');
            last.command.push_str(line.trim_end_matches('\\').trim());
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            continuing = cmd.ends_with('\\');
            examples.push(Example {
                command: cmd.trim_end_matches('\\').trim().to_owned(),
                expected: Vec::new(),
            });
        } else if let Some(last) = examples.last_mut() {
            last.expected.push(line.to_owned());
        }
    }
    examples
}

#[test]
fn readme_console_examples_hold() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README");
    let examples = console_examples(&readme);
    assert!(
        examples.len() >= 5,
        "found only {} examples",
        examples.len()
    );
    let mut last_status: Option<i32> = None;
    for ex in &examples {
        let argv = words(&ex.command);
        if argv == ["echo", "$?"] {
            let shown: i32 = ex.expected[0].trim().parse().expect("a status");
            assert_eq!(
                last_status,
                Some(shown),
                "exit status shown after `echo $?`"
            );
            continue;
        }
        assert_eq!(argv[0], "nl2sql", "README runs only nl2sql: {}", ex.command);
        let out = nl2sql()
            .args(&argv[1..])
            .current_dir(repo())
            .output()
            .expect("binary runs");
        last_status = out.status.code();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: Vec<&str> = stdout.lines().collect();
        let cut = ex.expected.iter().position(|l| l.trim() == "...");
        let want = &ex.expected[..cut.unwrap_or(ex.expected.len())];
        let got_cmp = if cut.is_some() {
            &got[..want.len().min(got.len())]
        } else {
            &got[..]
        };
        assert_eq!(
            got_cmp,
            want,
            "README example `{}` printed:\n{stdout}\nstderr:\n{}",
            ex.command,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
