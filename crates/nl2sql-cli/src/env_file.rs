//! The env file (spec: config-and-security.md §2): settings may also come from a file of
//! `KEY=VALUE` lines. Which file: `ENV_FILE_PATH` if set (it must exist); else, if `ENV`
//! (or, when `ENV` is unset, `APP_ENV`) is set, `.env.<value>` in the working directory;
//! else `.env` there. The last two are optional: a missing one is skipped, as the
//! reference did. Real environment variables win over the file's values.
//!
//! The file's variables have to be seen by everything that reads the environment: every
//! setting, `${env:NAME}` secret references, the LLM planner's API key and the cloud
//! credentials the object-store clients read themselves. This crate forbids `unsafe`, so
//! it cannot call `std::env::set_var`; instead, when the file adds a variable the process
//! does not have, the binary runs itself again (on Unix, `exec`: the same process id,
//! signals and exit code) with those variables added and [`APPLIED`] set, and that run
//! skips the file.
//!
//! Format: one `KEY=VALUE` per line; blank lines and lines starting with `#` are skipped;
//! an optional `export ` prefix; keys are letters, digits and `_`, not starting with a
//! digit; a value may be single-quoted (taken as is), double-quoted (`\n`, `\t`, `\"`,
//! `\\` escapes) or bare (trimmed; ` #` starts a comment). Anything else is an error naming
//! the file and the line.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::settings::Lookup;

/// Set (to the file's path) in the environment of the run that has the env file applied;
/// that run reads no env file.
pub(crate) const APPLIED: &str = "NL2SQL_ENV_FILE_APPLIED";

/// The env file to read under `cwd`, if any: `ENV_FILE_PATH` (an error when it does not
/// exist), else `.env.<ENV or APP_ENV>`, else `.env`, each only when it exists.
pub(crate) fn locate(lookup: Lookup<'_>, cwd: &Path) -> anyhow::Result<Option<PathBuf>> {
    if let Some(path) = lookup("ENV_FILE_PATH") {
        let path = cwd.join(path.trim());
        if !path.is_file() {
            bail!(
                "ENV_FILE_PATH: '{}' does not exist or is not a file",
                path.display()
            );
        }
        return Ok(Some(path));
    }
    let (key, env) = match (lookup("ENV"), lookup("APP_ENV")) {
        (Some(v), _) => ("ENV", Some(v)),
        (None, Some(v)) => ("APP_ENV", Some(v)),
        (None, None) => ("ENV", None),
    };
    let name = match env {
        Some(v) => {
            let v = v.trim();
            if !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                || v.starts_with('.')
            {
                bail!(
                    "{key}: '{v}' cannot name an env file (.env.<{key}>): use letters, digits, '_', '-' and '.'"
                );
            }
            format!(".env.{v}")
        }
        None => ".env".to_owned(),
    };
    let path = cwd.join(name);
    Ok(path.is_file().then_some(path))
}

/// The `(key, value)` pairs of an env file's text, in order; errors say which line.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {line_no}: expected KEY=VALUE"));
        };
        let key = key.trim();
        let valid_key = !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !key.starts_with(|c: char| c.is_ascii_digit());
        if !valid_key {
            return Err(format!(
                "line {line_no}: '{key}' is not a variable name (letters, digits and '_')"
            ));
        }
        let value = value.trim().to_owned();
        let value = unquote(&value).map_err(|e| format!("line {line_no}: {key}: {e}"))?;
        out.push((key.to_owned(), value));
    }
    Ok(out)
}

/// The quoted text at the start of `value` (which starts with `quote`) and what follows
/// the closing quote; in double quotes a backslash escapes the next character.
fn split_quoted(value: &str, quote: char) -> Result<(&str, &str), String> {
    let rest = &value[quote.len_utf8()..];
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        if quote == '"' && c == '\\' && !escaped {
            escaped = true;
            continue;
        }
        if c == quote && !escaped {
            return Ok((&rest[..i], &rest[i + c.len_utf8()..]));
        }
        escaped = false;
    }
    Err(format!("the {quote} quote is not closed"))
}

/// A value without its quotes (and escapes, in double quotes) or its trailing comment.
fn unquote(value: &str) -> Result<String, String> {
    let (inner, after) = match value.chars().next() {
        Some('\'') => {
            let (inner, after) = split_quoted(value, '\'')?;
            (inner.to_owned(), after)
        }
        Some('"') => {
            let (inner, after) = split_quoted(value, '"')?;
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                }
            }
            (out, after)
        }
        _ => {
            let bare = match value.find(" #") {
                Some(i) => &value[..i],
                None => value,
            };
            return Ok(bare.trim_end().to_owned());
        }
    };
    let after = after.trim();
    if !(after.is_empty() || after.starts_with('#')) {
        return Err(format!(
            "unexpected text after the closing quote: '{after}'"
        ));
    }
    Ok(inner)
}

/// Applies the env file before anything else reads the environment: returns when there is
/// no file, when it adds nothing, or when this run already has it applied; otherwise runs
/// the binary again with the file's new variables (and returns that run's exit code where
/// the platform cannot replace the process).
pub(crate) fn apply() -> anyhow::Result<Option<u8>> {
    if std::env::var_os(APPLIED).is_some() {
        return Ok(None);
    }
    let lookup = crate::settings::process_env;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let Some(path) = locate(&lookup, &cwd)? else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the env file '{}'", path.display()))?;
    let vars =
        parse(&text).map_err(|e| anyhow::anyhow!("invalid env file '{}': {e}", path.display()))?;
    // Real environment variables win, even when set to an empty value.
    let added: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, _)| std::env::var_os(k).is_none())
        .collect();
    if added.is_empty() {
        return Ok(None);
    }
    let exe = std::env::current_exe().context("cannot find this program to apply the env file")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .envs(added)
        .env(APPLIED, &path);
    run_again(cmd, &path)
}

#[cfg(unix)]
fn run_again(mut cmd: std::process::Command, path: &Path) -> anyhow::Result<Option<u8>> {
    use std::os::unix::process::CommandExt as _;
    // Returns only when the program could not be started.
    let err = cmd.exec();
    Err(anyhow::anyhow!(
        "cannot apply the env file '{}': {err}",
        path.display()
    ))
}

#[cfg(not(unix))]
fn run_again(mut cmd: std::process::Command, path: &Path) -> anyhow::Result<Option<u8>> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot apply the env file '{}'", path.display()))?;
    Ok(Some(
        status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1),
    ))
}

#[cfg(test)]
mod tests;
