//! A command line that can be run and also printed as a shell command that reproduces it.

use std::fmt;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// A program, its arguments and the environment variables set for it.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    program: String,
    args: Vec<String>,
    envs: Vec<(String, String)>,
}

impl Cmd {
    /// `program args...`.
    pub(crate) fn new(program: &str, args: &[&str]) -> Self {
        Cmd {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            envs: Vec::new(),
        }
    }

    /// `cargo args...` (the `cargo` on `PATH`: the rustup proxy honours `rust-toolchain.toml`).
    pub(crate) fn cargo(args: &[&str]) -> Self {
        Cmd::new("cargo", args)
    }

    /// Appends one argument.
    pub(crate) fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_owned());
        self
    }

    /// Sets an environment variable for the child (shown in the printed command).
    pub(crate) fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The `std::process::Command`, run from `dir`.
    pub(crate) fn command(&self, dir: &Path) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(dir);
        for (key, value) in &self.envs {
            command.env(key, value);
        }
        command
    }

    /// Runs with inherited stdio; fails unless the exit status is success.
    pub(crate) fn run(&self, dir: &Path) -> anyhow::Result<()> {
        let status = self
            .command(dir)
            .status()
            .with_context(|| format!("cannot start `{self}`"))?;
        if !status.success() {
            bail!("`{self}` failed ({status})");
        }
        Ok(())
    }

    /// Runs and returns stdout (stderr is inherited); fails unless the exit status is success.
    pub(crate) fn read(&self, dir: &Path) -> anyhow::Result<String> {
        let output = self
            .command(dir)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("cannot start `{self}`"))?;
        if !output.status.success() {
            bail!("`{self}` failed ({})", output.status);
        }
        String::from_utf8(output.stdout).with_context(|| format!("`{self}` printed non-UTF-8"))
    }

    /// True when the command starts and exits with success (its output is discarded).
    pub(crate) fn succeeds_quietly(&self, dir: &Path) -> bool {
        self.command(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl fmt::Display for Cmd {
    /// The command as one line of POSIX shell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, value) in &self.envs {
            write!(f, "{key}={} ", shell_quote(value))?;
        }
        f.write_str(&shell_quote(&self.program))?;
        for arg in &self.args {
            write!(f, " {}", shell_quote(arg))?;
        }
        Ok(())
    }
}

/// Quotes `word` for a POSIX shell when it holds anything but plain characters.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
