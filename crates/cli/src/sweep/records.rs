//! Point records: one compact JSON file per finished point, kept in a folder
//! that lives in the repository (a reproduction's `experiments/repro/PAPER/
//! points/SWEEP/`), so that a run lost with its machine resumes from a fresh
//! clone instead of from nothing.
//!
//! A record holds what the sweep's table reads (the whole summary.json) and
//! its key: the resolved config's identity (`Config::identity`: the SHA-256
//! of its TOML with each input file named by its content, so a clone in
//! another folder finds its records) and [`fabriclab::MODEL`], the
//! version of the model's results. A record is reused only if both match what
//! this build resolves and simulates; a default, a queue accounting or a base
//! file that changed alters the first, an engine or protocol change that moves
//! any result must bump the second (tests/fidelity.rs refuses to re-record
//! changed results under an unchanged MODEL). The per-message CSVs stay out:
//! a record is a few kilobytes.

use fabriclab::files;
use fabriclab::sweep::Point;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A finished point as its record keeps it.
pub struct Kept {
    pub summary: Value,
    pub peak_rss_mb: Option<f64>,
}

/// Why a point's record was not reused (printed once, when it is run again).
pub enum Miss {
    /// No record: nothing to say.
    Absent,
    /// A record of another model or config, or one that does not parse.
    Stale(String),
}

/// The folder of a sweep's records.
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn open(dir: &Path) -> Result<Store, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the records folder {}: {e}", dir.display()))?;
        Ok(Store { dir: dir.to_path_buf() })
    }

    fn path(&self, p: &Point) -> PathBuf {
        self.dir.join(format!("{}.json", p.id))
    }

    /// The point's record, if it was made from this config (`hash`) by this model.
    pub fn find(&self, p: &Point, hash: &str) -> Result<Kept, Miss> {
        let path = self.path(p);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
            Err(e) => return Err(Miss::Stale(format!("cannot read {}: {e}", path.display()))),
        };
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| Miss::Stale(format!("{} is not a record ({e})", path.display())))?;
        let model = v["model"].as_str().unwrap_or("?");
        if model != fabriclab::MODEL {
            return Err(Miss::Stale(format!("its record is of model {model}, this build's is {}", fabriclab::MODEL)));
        }
        if v["config_sha256"].as_str() != Some(hash) {
            return Err(Miss::Stale(
                "its record is of another resolved config (a default, its base or an input file changed)".into(),
            ));
        }
        match &v["summary"] {
            s @ Value::Object(_) => Ok(Kept { summary: s.clone(), peak_rss_mb: v["peak_rss_mb"].as_f64() }),
            _ => Err(Miss::Stale(format!("{} has no summary", path.display()))),
        }
    }

    /// Writes the point's record (whole or not at all), from its summary.
    /// `commit` is the one that built the binary that ran it.
    pub fn keep(
        &self,
        p: &Point,
        hash: &str,
        summary: &Value,
        peak_rss_mb: Option<f64>,
        commit: &str,
    ) -> Result<(), String> {
        let v = serde_json::json!({
            "point": p.id,
            "overrides": p.overrides,
            "model": fabriclab::MODEL,
            "config_sha256": hash,
            "fabriclab_version": env!("CARGO_PKG_VERSION"),
            "git_commit": commit,
            "peak_rss_mb": peak_rss_mb,
            "summary": summary,
        });
        // One line: the record is read by programs, and a folder of them diffs by file.
        files::write(&self.path(p), format!("{v}\n").as_bytes())
    }
}
