//! `fabriclab._core`: the Rust core for the Python package (python/fabriclab).
//! Thin on purpose: config loading, runs and sweep tables are the library's;
//! this module only converts between Rust and Python values.

use fabriclab::config::{Config, ConfigError};
use fabriclab::metrics::trace::TraceRecord;
use fabriclab::metrics::MessageRecord;
use fabriclab::sim::run_stoppable;
use fabriclab::sweep::{self, expand, Point, SweepSpec, Table};
use fabriclab_repro::engine::claims::{Band, Claim, Part, Side, Tolerance};
use fabriclab_repro::engine::judge::JudgedPart;
use fabriclab_repro::engine::Measurements;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::ops::ControlFlow;
use std::path::Path;

/// `fabriclab.ConfigError` (defined in Python so that it exists without this module).
fn config_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    package_error(py, e.to_string())
}

/// `fabriclab.ConfigError` with `message`: the package's error for a bad file
/// (experiment, sweep, measurements) or a bad name.
fn package_error(py: Python<'_>, message: String) -> PyErr {
    match py.import("fabriclab._errors").and_then(|m| m.getattr("ConfigError")).and_then(|c| c.call1((message,))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// Runs one experiment with the GIL released. Every progress step (a few
/// hundred thousand events) takes the GIL to check for signals (Ctrl-C raises
/// KeyboardInterrupt there and stops the run) and to call `progress(now_ps,
/// end_ps)`. Returns the summary as JSON text (as summary.json), if
/// `messages` the per-message records as CSV text (as messages.csv), and if
/// the config asks for `output.traces` the traces as CSV text (as traces.csv).
#[pyfunction]
#[pyo3(signature = (path, overrides, progress=None, messages=true, force=false))]
fn run(
    py: Python<'_>,
    path: &str,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    messages: bool,
    force: bool,
) -> PyResult<(String, Option<String>, Option<String>)> {
    let cfg = Config::load(Path::new(path), &overrides).map_err(|e| config_error(py, &e))?;
    // As `fabriclab run`: work the machine cannot hold is refused before it starts.
    if !force {
        fabriclab::estimate::check_run(&cfg)
            .map_err(|m| pyo3::exceptions::PyMemoryError::new_err(m.replace("pass --force", "pass force=True")))?;
    }
    let mut raised: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        run_stoppable(&cfg, &mut |now, end| {
            let step = Python::with_gil(|py| {
                py.check_signals()?;
                match &progress {
                    Some(cb) => cb.call1(py, (now, end)).map(drop),
                    None => Ok(()),
                }
            });
            match step {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    raised = Some(e);
                    ControlFlow::Break(())
                }
            }
        })
    });
    let out = match result {
        Ok(Some(out)) => out,
        Ok(None) => return Err(raised.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(()))),
        Err(e) => return Err(config_error(py, &e)),
    };
    let csv =
        messages.then(|| py.allow_threads(|| to_csv(MessageRecord::CSV_HEADER, &out.messages, MessageRecord::csv_row)));
    let traces = (!cfg.output.traces.is_empty())
        .then(|| py.allow_threads(|| to_csv(TraceRecord::CSV_HEADER, &out.traces, TraceRecord::csv_row)));
    Ok((out.summary.to_json(), csv, traces))
}

fn to_csv<T>(header: &str, rows: &[T], row: impl Fn(&T, &mut String)) -> String {
    let mut s = String::with_capacity(64 * (rows.len() + 1));
    s.push_str(header);
    s.push('\n');
    for r in rows {
        row(r, &mut s);
    }
    s
}

fn load_points(py: Python<'_>, file: &str, quick: bool) -> PyResult<Vec<Point>> {
    let mut spec = SweepSpec::load(Path::new(file)).map_err(|e| config_error(py, &e))?;
    if quick {
        spec = spec.quick();
    }
    expand(&spec).map_err(|e| config_error(py, &e))
}

/// The sweep file's points in grid order: dicts with `index`, `id`, `base`
/// (resolved path) and `overrides` (`key=value` strings).
#[pyfunction]
#[pyo3(signature = (file, quick=false))]
fn expand_sweep<'py>(py: Python<'py>, file: &str, quick: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
    load_points(py, file, quick)?
        .into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("index", p.index)?;
            d.set_item("id", &p.id)?;
            d.set_item("base", p.base.to_string_lossy())?;
            d.set_item("overrides", &p.overrides)?;
            Ok(d)
        })
        .collect()
}

/// The sweep's tidy table as CSV text (the CLI's results.csv), from one
/// outcome per point in grid order: `(summary_json or None, error or None,
/// peak_rss_mb or None)`.
#[pyfunction]
#[pyo3(signature = (file, outcomes, quick=false))]
fn sweep_table(
    py: Python<'_>,
    file: &str,
    outcomes: Vec<(Option<String>, Option<String>, Option<f64>)>,
    quick: bool,
) -> PyResult<String> {
    let points = load_points(py, file, quick)?;
    if points.len() != outcomes.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "the sweep has {} points but {} outcomes were given",
            points.len(),
            outcomes.len()
        )));
    }
    let records: Vec<_> = points
        .iter()
        .zip(outcomes)
        .map(|(p, (summary, error, peak_rss_mb))| {
            let summary = summary.and_then(|t| serde_json::from_str(&t).ok());
            sweep::record(p, sweep::Outcome { summary, error, peak_rss_mb }).0
        })
        .collect();
    Ok(Table::from_records(&records).to_csv())
}

/// Why the sweep point directory `dir` is not complete, "" when it never
/// finished (nothing to report), None when it is complete: the CLI's rule
/// (`fabriclab::files::point_done`), so both resume the same points.
#[pyfunction]
fn point_incomplete(dir: &str) -> Option<String> {
    fabriclab::files::point_done(Path::new(dir)).err().map(Option::unwrap_or_default)
}

/// Saves a finished point into `dir` as the CLI does: the directory emptied
/// (manifest first), summary.json (if any) and point.json renamed into place
/// whole, then, if the point is ok, manifest.json over both, last.
#[pyfunction]
#[pyo3(signature = (dir, summary, point_json, ok))]
fn save_point(py: Python<'_>, dir: &str, summary: Option<String>, point_json: String, ok: bool) -> PyResult<()> {
    use fabriclab::files;
    let dir = Path::new(dir);
    let saved = py.allow_threads(|| {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        files::clear(dir, &[])?;
        if let Some(s) = &summary {
            files::write(&dir.join("summary.json"), s.as_bytes())?;
        }
        files::write(&dir.join("point.json"), point_json.as_bytes())?;
        if ok && summary.is_some() {
            files::seal(dir, &files::POINT_REQUIRED)?;
        }
        Ok::<(), String>(())
    });
    saved.map_err(pyo3::exceptions::PyOSError::new_err)
}

/// The papers `fabriclab repro` knows, by name.
#[pyfunction]
fn repro_papers() -> Vec<&'static str> {
    fabriclab_repro::paper_names()
}

fn repro_paper(py: Python<'_>, name: &str) -> PyResult<&'static fabriclab_repro::Paper> {
    fabriclab_repro::paper(name).map_err(|e| package_error(py, e))
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Both => "both",
        Side::AtMost => "at_most",
        Side::AtLeast => "at_least",
    }
}

/// The columns every claims row has, None where a not-simulated claim has no part.
const PART_COLUMNS: &[&str] = &[
    "part",
    "measures",
    "unit",
    "paper_lo",
    "paper_hi",
    "side",
    "headline",
    "percentile",
    "holds_lo",
    "holds_hi",
    "holds_why",
    "qualitative_lo",
    "qualitative_hi",
    "qualitative_why",
];

fn claim_dict<'py>(py: Python<'py>, c: &Claim) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("claim", &c.id)?;
    d.set_item("where", &c.location)?;
    d.set_item("statement", &c.statement)?;
    d.set_item("compares", PyList::new(py, &c.compares)?)?;
    d.set_item("notes", &c.notes)?;
    d.set_item("not_simulated", &c.not_simulated)?;
    for k in PART_COLUMNS {
        d.set_item(*k, py.None())?;
    }
    Ok(d)
}

fn set_band(d: &Bound<'_, PyDict>, key: &str, band: Band, t: &Tolerance) -> PyResult<()> {
    d.set_item(format!("{key}_lo"), band.lo)?;
    d.set_item(format!("{key}_hi"), band.hi)?;
    d.set_item(format!("{key}_why"), &t.why)
}

fn set_part(d: &Bound<'_, PyDict>, p: &Part) -> PyResult<()> {
    d.set_item("part", &p.id)?;
    d.set_item("measures", &p.measures)?;
    d.set_item("unit", p.unit.as_str())?;
    d.set_item("paper_lo", p.paper.lo())?;
    d.set_item("paper_hi", p.paper.hi())?;
    d.set_item("side", side_name(p.side))?;
    d.set_item("headline", p.headline)?;
    d.set_item("percentile", p.percentile)?;
    set_band(d, "holds", p.holds_band(), &p.holds)?;
    set_band(d, "qualitative", p.qualitative_band(), &p.qualitative_tolerance())
}

/// A paper's claims file, one dict per claim part (a not-simulated claim: one
/// dict with its reason and no part). One-sided bands have an infinite end.
#[pyfunction]
fn repro_claims<'py>(py: Python<'py>, paper: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let file = repro_paper(py, paper)?.claims_file().map_err(|e| package_error(py, e))?;
    let mut rows = Vec::new();
    for c in &file.claims {
        if c.parts.is_empty() {
            rows.push(claim_dict(py, c)?);
        }
        for p in &c.parts {
            let d = claim_dict(py, c)?;
            set_part(&d, p)?;
            rows.push(d);
        }
    }
    Ok(rows)
}

fn judged_part_dict<'py>(claim: &Bound<'py, PyDict>, j: &JudgedPart) -> PyResult<Bound<'py, PyDict>> {
    let d = claim.copy()?;
    let p = &j.part;
    d.set_item("part", &p.id)?;
    d.set_item("part_verdict", j.verdict.to_string())?;
    d.set_item("headline", p.headline)?;
    d.set_item("mean", j.estimate.map(|e| e.mean))?;
    let ci = j.estimate.and_then(|e| e.half_width.map(|h| (e.mean - h, e.mean + h)));
    d.set_item("ci_lo", ci.map(|c| c.0))?;
    d.set_item("ci_hi", ci.map(|c| c.1))?;
    d.set_item("seeds", j.seeds)?;
    d.set_item("samples", j.samples)?;
    d.set_item("unit", p.unit.as_str())?;
    d.set_item("paper_lo", p.paper.lo())?;
    d.set_item("paper_hi", p.paper.hi())?;
    d.set_item("side", side_name(p.side))?;
    d.set_item("reason", &j.reason)?;
    d.set_item("notes", j.notes.join("; "))?;
    Ok(d)
}

/// Judges a measurements file (a reproduction's measurements.toml, or values
/// transcribed in that format) under the paper's claims, needing `min_seeds`
/// seeds with a value per part. One dict per claim part; a not-simulated claim
/// gives one dict without a part, its reason in `reason`.
#[pyfunction]
#[pyo3(signature = (paper, measurements_path, min_seeds=3))]
fn repro_judge<'py>(
    py: Python<'py>,
    paper: &str,
    measurements_path: &str,
    min_seeds: usize,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let p = repro_paper(py, paper)?;
    if min_seeds == 0 {
        return Err(package_error(py, "judge: at least one seed is needed (min_seeds = 0)".into()));
    }
    let text = std::fs::read_to_string(measurements_path)
        .map_err(|e| package_error(py, format!("cannot read {measurements_path}: {e}")))?;
    let m = Measurements::parse(&text, measurements_path).map_err(|e| package_error(py, e))?;
    if m.paper != p.name {
        return Err(package_error(
            py,
            format!("{measurements_path} holds measurements of {:?}, not of {}", m.paper, p.name),
        ));
    }
    let judged =
        fabriclab_repro::judge(p, &m, min_seeds).map_err(|e| package_error(py, format!("{measurements_path}: {e}")))?;
    let mut rows = Vec::new();
    for c in &judged {
        let d = PyDict::new(py);
        d.set_item("claim", &c.claim.id)?;
        d.set_item("claim_verdict", c.verdict.to_string())?;
        d.set_item("claim_reason", &c.reason)?;
        for k in [
            "part",
            "part_verdict",
            "headline",
            "mean",
            "ci_lo",
            "ci_hi",
            "samples",
            "unit",
            "paper_lo",
            "paper_hi",
            "side",
        ] {
            d.set_item(k, py.None())?;
        }
        d.set_item("seeds", 0)?;
        d.set_item("reason", &c.reason)?;
        d.set_item("notes", "")?;
        if c.parts.is_empty() {
            rows.push(d);
            continue;
        }
        for j in &c.parts {
            rows.push(judged_part_dict(&d, j)?);
        }
    }
    Ok(rows)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(expand_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(point_incomplete, m)?)?;
    m.add_function(wrap_pyfunction!(save_point, m)?)?;
    m.add_function(wrap_pyfunction!(repro_papers, m)?)?;
    m.add_function(wrap_pyfunction!(repro_claims, m)?)?;
    m.add_function(wrap_pyfunction!(repro_judge, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
