//! `fabriclab sweep --dask ADDRESS`: hands the sweep over to the Python
//! package (`python3 -m fabriclab._sweep_cli`), which submits each point to the
//! Dask cluster and writes the same results.csv and results.parquet.
//! (`python3 -m fabriclab` is this CLI itself, so the hand-over names the
//! package's sweep module.)

use super::Options;
use std::path::Path;
use std::process::Command;

fn python() -> Command {
    Command::new(std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()))
}

/// Fails early, saying what to install, if the package or dask's `distributed` is missing.
fn check_installed() -> Result<(), String> {
    let o = python()
        .args(["-c", "import fabriclab._core, distributed"])
        .output()
        .map_err(|e| format!("--dask needs Python 3 with the fabriclab package, but python3 cannot run: {e}"))?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    Err(format!(
        "--dask needs the fabriclab Python package and dask's distributed: run `pip install . distributed` \
         from the repository root ({last})"
    ))
}

pub fn command(file: &Path, quick: bool, address: &str, opts: &Options) -> Result<(), String> {
    check_installed()?;
    let mut c = python();
    c.args(["-m", "fabriclab._sweep_cli"]).arg(file).args(["--dask", address]).arg("--out").arg(&opts.out);
    if quick {
        c.arg("--quick");
    }
    if opts.quiet {
        c.arg("--quiet");
    }
    let status = c.status().map_err(|e| format!("cannot run python3 -m fabriclab._sweep_cli: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the Dask sweep failed ({status}; see above)"))
    }
}
