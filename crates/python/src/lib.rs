//! `fabriclab._core`: the Rust core for the Python package (python/fabriclab).
//! Thin on purpose: config loading, runs and sweep tables are the library's;
//! this module only converts between Rust and Python values.

use fabriclab::config::{Config, ConfigError};
use fabriclab::metrics::trace::TraceRecord;
use fabriclab::metrics::{MessageRecord, PortRecord};
use fabriclab::sim::run_stoppable;
use fabriclab::sweep::{self, expand, Point, SweepSpec, Table};
use fabriclab::workload::goal::OpRow;
use fabriclab_repro::engine::claims::{Band, Claim, Part, Side, Tolerance};
use fabriclab_repro::engine::judge::JudgedPart;
use fabriclab_repro::engine::Measurements;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// `fabriclab.ConfigError` (defined in Python so that it exists without this module).
fn config_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    package_error(py, e.to_string())
}

/// `fabriclab.ConfigError` at `key` (dotted), worded as the config's own errors.
fn key_error(py: Python<'_>, key: &str, message: String) -> PyErr {
    config_error(py, &ConfigError::new(key, message))
}

/// `fabriclab.ConfigError` with `message`: the package's error for a bad file
/// (experiment, sweep, measurements) or a bad name.
fn package_error(py: Python<'_>, message: String) -> PyErr {
    match py.import("fabriclab._errors").and_then(|m| m.getattr("ConfigError")).and_then(|c| c.call1((message,))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// The directory relative paths in a dict or TOML string resolve against
/// (trace and CDF files): the current directory, as for `--set` values.
fn cwd(py: Python<'_>) -> PyResult<PathBuf> {
    std::env::current_dir().map_err(|e| package_error(py, format!("cannot read the current directory: {e}")))
}

/// A config from Python: `kind` "path" (a file, `value` its path), "text"
/// (TOML text) or "dict" (a mapping, nested as the file or with dotted keys).
/// Relative paths in text and dicts resolve against the current directory.
fn load_config(py: Python<'_>, kind: &str, value: &Bound<'_, PyAny>, overrides: &[String]) -> PyResult<Config> {
    let loaded = match kind {
        "path" => Config::load(Path::new(&value.extract::<String>()?), overrides),
        "text" => Config::parse(&value.extract::<String>()?, overrides, &cwd(py)?, "<TOML string>"),
        "dict" => {
            let mut table = toml::Table::new();
            put_mapping(py, &mut table, value.downcast::<PyMapping>()?, "")?;
            Config::from_table(table, overrides, &cwd(py)?)
        }
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "config kind must be path, text or dict, got {other:?}"
            )))
        }
    };
    loaded.map_err(|e| config_error(py, &e))
}

fn dotted(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Puts a Python mapping's items into `table`; a key with dots (`"workload.load"`)
/// is split into nested tables, as in a TOML file. `prefix` names the
/// mapping's own key in errors.
fn put_mapping(py: Python<'_>, table: &mut toml::Table, map: &Bound<'_, PyMapping>, prefix: &str) -> PyResult<()> {
    for item in map.items()?.iter() {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let Ok(k) = k.extract::<String>() else {
            return Err(key_error(py, prefix, format!("config keys must be strings, got {}", k.repr()?)));
        };
        let full = dotted(prefix, &k);
        if k.split('.').any(str::is_empty) {
            return Err(key_error(py, &full, "a key must be a name or a dotted path like workload.load".into()));
        }
        let (cur, last) = fabriclab::config::parent_table(table, &k).map_err(|e| {
            let msg = e.message.replace(&format!("`{k}`"), &format!("`{full}`"));
            key_error(py, &dotted(prefix, &e.key), msg)
        })?;
        let value = py_to_toml(py, &v, &full)?;
        match (cur.get_mut(last), value) {
            (None, value) => {
                cur.insert(last.to_string(), value);
            }
            // {"protocol": {...}, "protocol.name": ...}: the two tables merge, as TOML's dotted keys do.
            (Some(toml::Value::Table(old)), toml::Value::Table(new)) => {
                for (nk, nv) in new {
                    if old.contains_key(&nk) {
                        return Err(key_error(py, &dotted(&full, &nk), "set twice (nested and dotted)".into()));
                    }
                    old.insert(nk, nv);
                }
            }
            (Some(_), _) => return Err(key_error(py, &full, "set twice (nested and dotted)".into())),
        }
    }
    Ok(())
}

/// A Python value as a TOML value; `key` names it in errors.
fn py_to_toml(py: Python<'_>, v: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| key_error(py, key, format!("{v} is out of range for a config integer (64-bit signed)")));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in v.try_iter()?.enumerate() {
            items.push(py_to_toml(py, &item?, &format!("{key}[{i}]"))?);
        }
        return Ok(toml::Value::Array(items));
    }
    if let Ok(map) = v.downcast::<PyMapping>() {
        let mut t = toml::Table::new();
        put_mapping(py, &mut t, map, key)?;
        return Ok(toml::Value::Table(t));
    }
    let what = if v.is_none() {
        "None (leave the key out for its default)".to_string()
    } else {
        v.get_type().name()?.to_string()
    };
    Err(key_error(
        py,
        key,
        format!("cannot take {what} as a config value (allowed: bool, int, float, str, list, dict)"),
    ))
}

/// A TOML value as Python data (tables as dicts, arrays as lists).
fn toml_to_py(py: Python<'_>, v: &toml::Value) -> PyResult<PyObject> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        toml::Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any().unbind(),
        toml::Value::Array(a) => {
            let items = a.iter().map(|x| toml_to_py(py, x)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, toml_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// The resolved config as a dict and as TOML text (config.resolved.toml's content, without the estimate).
fn resolved(py: Python<'_>, cfg: &Config) -> PyResult<(PyObject, String)> {
    let value = toml::Value::try_from(cfg)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("cannot render the config: {e}")))?;
    Ok((toml_to_py(py, &value)?, cfg.to_toml()))
}

/// Loads and checks a config (see `load_config`) as `fabriclab validate`
/// does; returns the resolved config as a dict and as TOML text.
#[pyfunction]
#[pyo3(signature = (kind, value, overrides))]
fn validate(
    py: Python<'_>,
    kind: &str,
    value: &Bound<'_, PyAny>,
    overrides: Vec<String>,
) -> PyResult<(PyObject, String)> {
    let cfg = load_config(py, kind, value, &overrides)?;
    resolved(py, &cfg)
}

/// What `fabriclab protocols` prints: per protocol its name, paper, default
/// load balancing and parameters (key, default, meaning, source, allowed).
#[pyfunction]
fn protocols(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    use fabriclab::config::ProtocolName;
    let mut out = Vec::new();
    for &name in ProtocolName::ALL {
        let d = PyDict::new(py);
        d.set_item("name", name.as_str())?;
        d.set_item("paper", name.paper())?;
        let lb = serde_json::to_string(&name.default_load_balancing()).unwrap_or_default();
        d.set_item("load_balancing", lb.trim_matches('"'))?;
        let mut params = Vec::new();
        for doc in name.docs() {
            let p = PyDict::new(py);
            p.set_item("key", doc.key)?;
            p.set_item("default", &doc.default)?;
            p.set_item("meaning", doc.meaning)?;
            p.set_item("source", doc.source)?;
            let key = format!("protocol.{}.{}", name.as_str(), doc.key);
            p.set_item("allowed", fabriclab::config::limits::describe(&key, &doc.default))?;
            params.push(p);
        }
        d.set_item("params", params)?;
        out.push(d);
    }
    Ok(out)
}

/// What a bundled TOML file is: "run" (an experiment `run` loads), "sweep"
/// (a sweep file) or "other" (claims, recorded measurements), with the
/// experiment's error for a file that is neither.
#[pyfunction]
fn classify(path: &str) -> (&'static str, Option<String>) {
    let p = Path::new(path);
    match Config::load(p, &[]) {
        Ok(_) => ("run", None),
        Err(run_err) => match SweepSpec::load(p) {
            Ok(_) => ("sweep", None),
            Err(_) => ("other", Some(run_err.to_string())),
        },
    }
}

/// Runs one experiment with the GIL released. Every progress step (a few
/// hundred thousand events) takes the GIL to check for signals (Ctrl-C raises
/// KeyboardInterrupt there and stops the run) and to call `progress(now_ps,
/// end_ps)`. The config is a file, TOML text or a dict (see `load_config`).
/// Returns the summary as JSON text (as summary.json), if `messages` the
/// per-message records as CSV text (as messages.csv), the per-port queue table
/// as CSV text (as queues.csv), if the config asks for `output.traces` the
/// traces as CSV text (as traces.csv), the resolved config as a dict and as
/// TOML text, and for a GOAL run with `output.ops` its ops as CSV text (as ops.csv).
#[pyfunction]
#[pyo3(signature = (kind, value, overrides, progress=None, messages=true, force=false))]
#[allow(clippy::type_complexity)]
fn run(
    py: Python<'_>,
    kind: &str,
    value: &Bound<'_, PyAny>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    messages: bool,
    force: bool,
) -> PyResult<(String, Option<String>, String, Option<String>, PyObject, String, Option<String>)> {
    let cfg = load_config(py, kind, value, &overrides)?;
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
    let queues = py.allow_threads(|| to_csv(PortRecord::CSV_HEADER, &out.ports, PortRecord::csv_row));
    let traces = (!cfg.output.traces.is_empty())
        .then(|| py.allow_threads(|| to_csv(TraceRecord::CSV_HEADER, &out.traces, TraceRecord::csv_row)));
    let ops = (out.summary.goal.is_some() && cfg.output.ops)
        .then(|| py.allow_threads(|| to_csv(OpRow::CSV_HEADER, &out.ops, OpRow::csv_row)));
    let (config, config_toml) = resolved(py, &cfg)?;
    // What `fabriclab run` prints on stderr (a trace's messages after the
    // run's end) is a Python warning here, shown at the caller of `fl.run`.
    for w in &out.warnings {
        let text = std::ffi::CString::new(w.replace('\0', " ")).expect("NULs replaced");
        PyErr::warn(py, py.get_type::<pyo3::exceptions::PyUserWarning>().as_any(), &text, 2)?;
    }
    Ok((out.summary.to_json(), csv, queues, traces, config, config_toml, ops))
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
    let points = load_points(py, file, quick)?;
    // Every point's config loads, or the sweep is one error before anything runs.
    fabriclab::sweep::preflight::load_all(&points).map_err(|e| package_error(py, e))?;
    points
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
/// peak_rss_mb or None)`. With `parquet`, also writes the table there with the
/// CLI's writer (its results.parquet: same columns and types), renamed into
/// place whole.
#[pyfunction]
#[pyo3(signature = (file, outcomes, quick=false, parquet=None))]
fn sweep_table(
    py: Python<'_>,
    file: &str,
    outcomes: Vec<(Option<String>, Option<String>, Option<f64>)>,
    quick: bool,
    parquet: Option<PathBuf>,
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
    let table = Table::from_records(&records);
    if let Some(path) = parquet {
        py.allow_threads(|| fabriclab_cli::write_sweep_parquet(&table, &path))
            .map_err(pyo3::exceptions::PyOSError::new_err)?;
    }
    Ok(table.to_csv())
}

/// Why the sweep point directory `dir` is not complete, "" when it never
/// finished (nothing to report), None when it is complete and its stored
/// resolved config is what `base` with `overrides` resolves to now: the CLI's
/// rule (`fabriclab::files::point_done`, `config_matches`), so both resume
/// the same points.
#[pyfunction]
fn point_incomplete(dir: &str, base: &str, overrides: Vec<String>) -> Option<String> {
    let dir = Path::new(dir);
    let fresh = fabriclab::files::point_done(dir).and_then(|()| {
        let now =
            Config::load(Path::new(base), &overrides).map_err(|e| Some(format!("its config no longer loads: {e}")))?;
        fabriclab::files::config_matches(dir, &now.to_toml())
    });
    fresh.err().map(Option::unwrap_or_default)
}

/// Saves a finished point into `dir` as the CLI does: the directory emptied
/// (manifest first), summary.json (if any), point.json and the resolved
/// config (when `base` with `overrides` loads) renamed into place whole,
/// then, if the point is ok, manifest.json over them, last.
#[pyfunction]
#[pyo3(signature = (dir, summary, point_json, ok, base, overrides))]
fn save_point(
    py: Python<'_>,
    dir: &str,
    summary: Option<String>,
    point_json: String,
    ok: bool,
    base: &str,
    overrides: Vec<String>,
) -> PyResult<()> {
    use fabriclab::files;
    let dir = Path::new(dir);
    let saved = py.allow_threads(|| {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        files::clear(dir, &[])?;
        if let Some(s) = &summary {
            files::write(&dir.join("summary.json"), s.as_bytes())?;
        }
        files::write(&dir.join("point.json"), point_json.as_bytes())?;
        let resolved = Config::load(Path::new(base), &overrides).ok().map(|c| c.to_toml());
        if let Some(r) = &resolved {
            files::write(&dir.join(files::RESOLVED_CONFIG), r.as_bytes())?;
        }
        if ok && summary.is_some() {
            let mut names = files::POINT_REQUIRED.to_vec();
            names.extend(resolved.as_ref().map(|_| files::RESOLVED_CONFIG));
            files::seal(dir, &names)?;
        }
        Ok::<(), String>(())
    });
    saved.map_err(pyo3::exceptions::PyOSError::new_err)
}

/// Runs the `fabriclab` command line (`argv[0]` is the program's name) in
/// this process, with the GIL released, as the binary would, and returns its
/// exit code; child processes (sweep points, benchmark scenarios) run
/// `reinvoke` (the package's `python -m fabriclab`) with their subcommand.
/// The console script (python/fabriclab/_cli.py) calls this.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<std::ffi::OsString>, reinvoke: Vec<std::ffi::OsString>) -> u8 {
    py.allow_threads(|| fabriclab_cli::entry(argv, Some(reinvoke)))
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
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(protocols, m)?)?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(expand_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(point_incomplete, m)?)?;
    m.add_function(wrap_pyfunction!(save_point, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(repro_papers, m)?)?;
    m.add_function(wrap_pyfunction!(repro_claims, m)?)?;
    m.add_function(wrap_pyfunction!(repro_judge, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The commit the extension was built from (build.rs; "unknown" outside git).
    m.add("git_commit", env!("FABRICLAB_GIT_COMMIT"))?;
    // Sweep points record it: a point of another model is not resumed (fabriclab::files::point_done).
    m.add("model", fabriclab::MODEL)?;
    Ok(())
}
