//! Experiments by name, as the Python package's `fl.run("sird/balanced-wkc")`:
//! `fabriclab run sird/balanced-wkc` runs `experiments/sird/balanced-wkc.toml`
//! when no file of that name exists. The experiments directory is
//! `$FABRICLAB_ROOT/experiments` (the Python package sets `FABRICLAB_ROOT` to
//! its own directory, which carries the experiments as package data), else the
//! repository's the binary was built from.

use std::path::{Path, PathBuf};

/// The directory bundled experiment names resolve against.
pub fn experiments_dir() -> PathBuf {
    let root = std::env::var_os("FABRICLAB_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let dir = root.join("experiments");
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// `given` itself if it exists; else the bundled experiment of that name
/// (relative, `.toml` optional); else an error naming both places and the
/// close names.
pub fn resolve(given: &Path) -> Result<PathBuf, String> {
    if given.exists() {
        return Ok(given.to_path_buf());
    }
    let dir = experiments_dir();
    let name = given.to_string_lossy().replace('\\', "/");
    let base = name.strip_suffix(".toml").unwrap_or(&name);
    let plain = !base.is_empty() && given.is_relative() && !base.split('/').any(|p| p == ".." || p.is_empty());
    if plain {
        let file = dir.join(format!("{base}.toml"));
        if file.is_file() {
            return Ok(file);
        }
    }
    let close = close_names(&dir, base);
    let hint = if close.is_empty() { String::new() } else { format!("; close names: {}", close.join(", ")) };
    Err(format!(
        "{} is neither a file nor an experiment shipped with fabriclab (in {}){hint}",
        given.display(),
        dir.display()
    ))
}

/// Bundled names (without `.toml`) that contain the last part of `base`, at most 8.
fn close_names(dir: &Path, base: &str) -> Vec<String> {
    let tail = base.rsplit('/').next().unwrap_or(base);
    if tail.is_empty() {
        return vec![];
    }
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(rel) = p.strip_prefix(dir).ok().and_then(|r| r.to_str()) {
                if let Some(n) = rel.strip_suffix(".toml").filter(|n| n.contains(tail)) {
                    found.push(n.replace('\\', "/"));
                }
            }
        }
    }
    found.sort();
    found.truncate(8);
    found
}
