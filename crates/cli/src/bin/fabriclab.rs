//! The `fabriclab` binary: the CLI library's entry (crates/cli/src/main.rs) with
//! this process's arguments. The Python package's `fabriclab` console script
//! calls the same entry (crates/python, `fabriclab._core.cli`).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(fabriclab_cli::entry(std::env::args_os(), None))
}
