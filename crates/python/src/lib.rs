//! `fabriclab._core`: the Rust core for the Python package (python/fabriclab).
//! Thin on purpose: config loading, runs and sweep tables are the library's;
//! this module only converts between Rust and Python values.

use fabriclab::config::{Config, ConfigError};
use fabriclab::metrics::trace::TraceRecord;
use fabriclab::metrics::MessageRecord;
use fabriclab::sim::run_stoppable;
use fabriclab::sweep::{self, expand, Point, SweepSpec, Table};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ops::ControlFlow;
use std::path::Path;

/// `fabriclab.ConfigError` (defined in Python so that it exists without this module).
fn config_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    match py.import("fabriclab._errors").and_then(|m| m.getattr("ConfigError")).and_then(|c| c.call1((e.to_string(),)))
    {
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
#[pyo3(signature = (path, overrides, progress=None, messages=true))]
fn run(
    py: Python<'_>,
    path: &str,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    messages: bool,
) -> PyResult<(String, Option<String>, Option<String>)> {
    let cfg = Config::load(Path::new(path), &overrides).map_err(|e| config_error(py, &e))?;
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(expand_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
