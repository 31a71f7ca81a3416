//! How the CLI runs itself again in child processes (sweep points with `run`,
//! benchmark scenarios with `bench-one`): by default this executable
//! (`std::env::current_exe`); inside Python, whose executable is the
//! interpreter, the command the Python package gives [`crate::entry`]
//! (`python -m fabriclab`).

use std::ffi::OsString;
use std::process::Command;
use std::sync::OnceLock;

static GIVEN: OnceLock<Vec<OsString>> = OnceLock::new();

/// Sets the command (program and leading arguments) child processes run
/// before their subcommand; the first call wins, as for the process's lifetime.
pub fn set(cmd: Vec<OsString>) {
    if !cmd.is_empty() {
        let _ = GIVEN.set(cmd);
    }
}

/// The program and leading arguments that run this CLI.
#[derive(Clone, Debug)]
pub struct SelfCommand(Vec<OsString>);

impl SelfCommand {
    pub fn get() -> Result<SelfCommand, String> {
        match GIVEN.get() {
            Some(cmd) => Ok(SelfCommand(cmd.clone())),
            None => std::env::current_exe()
                .map(|p| SelfCommand(vec![p.into_os_string()]))
                .map_err(|e| format!("cannot find own executable: {e}")),
        }
    }

    /// A `Command` ready for the subcommand's arguments.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.0[0]);
        c.args(&self.0[1..]);
        c
    }
}

impl std::fmt::Display for SelfCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<_> = self.0.iter().map(|w| w.to_string_lossy()).collect();
        write!(f, "{}", words.join(" "))
    }
}
