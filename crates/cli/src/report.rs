//! `fabriclab report RUN_DIR`: RUN_DIR/report.html, one self-contained page
//! (inline SVG and CSS, no script, nothing fetched) with the run's config and
//! provenance, the summary table, the FCT CDF, slowdown against message size
//! and, when the run recorded them, the queue time series, the transport
//! traces (window and RTT per flow over time) and a GOAL schedule's ranks'
//! timeline (ops.csv, drawn by [`timeline`]).
//!
//! Why hand-written SVG: the page must open anywhere (a laptop without
//! Python, a CI artifact viewer) and hold the numbers it plots, so a test can
//! read them back; a plotting crate would bring fonts or a raster backend for
//! a few polylines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

mod timeline;

/// Writes RUN_DIR/report.html; returns the line to print.
pub fn command(dir: &Path) -> Result<String, String> {
    let run = Run::read(dir)?;
    let html = render(&run);
    let out = dir.join("report.html");
    fabriclab::files::write(&out, html.as_bytes())?;
    Ok(format!("wrote {}", out.display()))
}

/// What a run directory holds, as the report needs it.
struct Run {
    dir: String,
    summary: serde_json::Value,
    config: Option<String>,
    provenance: Option<serde_json::Value>,
    /// (size_bytes, fct_us, slowdown) of the completed messages started after warm-up.
    done: Vec<(f64, f64, f64)>,
    /// Messages started after warm-up (completed or not); None without messages.csv.
    started: Option<usize>,
    /// queue_series.csv: (port, [(time_us, bytes, max_bytes)]).
    queues: Vec<(String, Vec<(f64, f64, f64)>)>,
    /// traces.csv: (kind, host, flow) -> [(time_us, value)], in time order.
    traces: BTreeMap<TraceKey, Vec<(f64, f64)>>,
    /// ops.csv of a GOAL run, in file order.
    ops: Vec<timeline::OpBar>,
}

/// A traced flow of traces.csv: (kind, host, flow).
type TraceKey = (String, u64, u64);

impl Run {
    fn read(dir: &Path) -> Result<Run, String> {
        let shown = dir.display().to_string();
        if !dir.is_dir() {
            return Err(format!("{shown} is not a directory (expected a run directory written by `fabriclab run`)"));
        }
        let has = |n: &str| dir.join(n).is_file();
        if !has("summary.json") {
            let why = if has("provenance.json") {
                "the run did not finish (it has provenance.json but no summary.json)"
            } else {
                "it holds no summary.json"
            };
            return Err(format!("{shown} is not a finished run directory: {why}"));
        }
        if has("provenance.json") && !has(fabriclab::files::MANIFEST) {
            return Err(format!(
                "{shown} is an unfinished run: it has no {}, which `fabriclab run` writes last",
                fabriclab::files::MANIFEST
            ));
        }
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).map_err(|e| format!("cannot read {shown}/{n}: {e}"));
        let summary: serde_json::Value =
            serde_json::from_str(&read("summary.json")?).map_err(|e| format!("{shown}/summary.json: {e}"))?;
        let config = has(crate::output::CONFIG_FILE).then(|| read(crate::output::CONFIG_FILE)).transpose()?;
        let provenance = match has(crate::output::PROVENANCE_FILE) {
            true => Some(
                serde_json::from_str(&read(crate::output::PROVENANCE_FILE)?)
                    .map_err(|e| format!("{shown}/provenance.json: {e}"))?,
            ),
            false => None,
        };
        let warmup_us = config
            .as_deref()
            .and_then(|c| toml::from_str::<toml::Table>(strip_comments(c).as_str()).ok())
            .and_then(|t| t.get("run")?.get("warmup_ms")?.as_float())
            .map_or(0.0, |ms| ms * 1e3);
        let (mut done, mut started) = (Vec::new(), None);
        if has("messages.csv") {
            let text = read("messages.csv")?;
            let rows = csv(&text, "messages.csv", &["size_bytes", "start_us", "fct_us", "slowdown"])?;
            let mut n = 0;
            for (line, r) in rows {
                let num = |i: usize| {
                    r[i].parse::<f64>().map_err(|_| format!("{shown}/messages.csv line {line}: bad number {:?}", r[i]))
                };
                if num(1)? < warmup_us {
                    continue;
                }
                n += 1;
                if !r[2].is_empty() {
                    done.push((num(0)?, num(2)?, num(3)?));
                }
            }
            started = Some(n);
        }
        let mut queues: Vec<(String, Vec<(f64, f64, f64)>)> = Vec::new();
        if has("queue_series.csv") {
            let text = read("queue_series.csv")?;
            for (line, r) in csv(&text, "queue_series.csv", &["time_us", "port", "bytes", "max_bytes"])? {
                let num = |i: usize| {
                    r[i].parse::<f64>()
                        .map_err(|_| format!("{shown}/queue_series.csv line {line}: bad number {:?}", r[i]))
                };
                let p = match queues.iter().position(|(n, _)| *n == r[1]) {
                    Some(p) => p,
                    None => {
                        queues.push((r[1].to_string(), Vec::new()));
                        queues.len() - 1
                    }
                };
                queues[p].1.push((num(0)?, num(2)?, num(3)?));
            }
        }
        let mut traces: BTreeMap<TraceKey, Vec<(f64, f64)>> = BTreeMap::new();
        if has("traces.csv") {
            let text = read("traces.csv")?;
            for (line, r) in csv(&text, "traces.csv", &["time_us", "host", "flow", "kind", "value"])? {
                let bad = |i: usize| format!("{shown}/traces.csv line {line}: bad number {:?}", r[i]);
                let f = |i: usize| r[i].parse::<f64>().map_err(|_| bad(i));
                let n = |i: usize| r[i].parse::<u64>().map_err(|_| bad(i));
                traces.entry((r[3].to_string(), n(1)?, n(2)?)).or_default().push((f(0)?, f(4)?));
            }
        }
        let ops = match has("ops.csv") {
            true => timeline::read(&read("ops.csv")?, &shown)?,
            false => Vec::new(),
        };
        Ok(Run { dir: shown, summary, config, provenance, done, started, queues, traces, ops })
    }
}

/// The resolved config without `validate`'s trailing comment lines.
fn strip_comments(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n")
}

/// The rows of a CSV file of ours (no quoting), as the columns `want`, with line numbers.
pub(crate) fn csv<'a>(text: &'a str, name: &str, want: &[&str]) -> Result<Vec<(usize, Vec<&'a str>)>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let idx: Vec<usize> = want
        .iter()
        .map(|w| header.iter().position(|h| h == w).ok_or_else(|| format!("{name} has no column {w}")))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (i, l) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != header.len() {
            return Err(format!("{name} line {}: {} fields, expected {}", i + 2, f.len(), header.len()));
        }
        out.push((i + 2, idx.iter().map(|&j| f[j]).collect()));
    }
    Ok(out)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// A size bucket of the slowdown plot: sizes in [lo, hi).
struct Bucket {
    lo: f64,
    hi: f64,
    count: usize,
    p50: f64,
    p99: f64,
}

/// Slowdown by size, in buckets of a factor of 2 (empty buckets left out).
fn size_buckets(done: &[(f64, f64, f64)]) -> Vec<Bucket> {
    let mut by: std::collections::BTreeMap<i32, Vec<f64>> = Default::default();
    for &(size, _, sd) in done {
        by.entry(size.max(1.0).log2().floor() as i32).or_default().push(sd);
    }
    by.into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            Bucket { lo: 2f64.powi(k), hi: 2f64.powi(k + 1), count: v.len(), p50: pct(&v, 50.0), p99: pct(&v, 99.0) }
        })
        .collect()
}

fn render(run: &Run) -> String {
    let s = &run.summary;
    let mut h = String::new();
    let title = format!(
        "fabriclab report: {} (seed {})",
        s["protocol"].as_str().unwrap_or("?"),
        s["seed"].as_u64().map_or("?".into(), |v| v.to_string())
    );
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<p class=\"dir\">Run directory: <code>{}</code></p>\n",
        esc(&title),
        esc(&title),
        esc(&run.dir)
    );
    // Summary table: every scalar field, then slowdown by group.
    h.push_str("<h2>Summary</h2>\n<table class=\"kv\">\n");
    if let Some(o) = s.as_object() {
        for (k, v) in o.iter().filter(|(_, v)| !v.is_object() && !v.is_array() && !v.is_null()) {
            let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&fmt_json(v)));
        }
    }
    h.push_str("</table>\n");
    if let Some(g) = s["slowdown"].as_object() {
        h.push_str(
            "<h3>Slowdown by size group</h3>\n<p class=\"note\">A &lt; MSS &le; B &lt; BDP &le; C &lt; 8 BDP &le; D \
             (summary.json, messages started after warm-up)</p>\n<table><tr><th>group</th><th>count</th><th>mean</th>\
             <th>p50</th><th>p99</th></tr>\n",
        );
        for (name, st) in g {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                fmt_json(&st["count"]),
                fmt_json(&st["mean"]),
                fmt_json(&st["p50"]),
                fmt_json(&st["p99"])
            );
        }
        h.push_str("</table>\n");
    }
    // FCT CDF.
    h.push_str("<h2>Flow completion time</h2>\n");
    match run.started {
        None => {
            h.push_str("<p class=\"note\">No messages.csv in this run (<code>output.messages = false</code>).</p>\n")
        }
        Some(_) if run.done.is_empty() => h.push_str("<p class=\"note\">No message completed after warm-up.</p>\n"),
        Some(n) => {
            let mut fct: Vec<f64> = run.done.iter().map(|d| d.1).collect();
            fct.sort_by(f64::total_cmp);
            let _ = writeln!(
                h,
                "<p class=\"note\">{} of {n} messages started after warm-up completed; FCT p50 {} us, p99 {} us, max {} us.</p>",
                fct.len(),
                fmt(pct(&fct, 50.0)),
                fmt(pct(&fct, 99.0)),
                fmt(fct[fct.len() - 1])
            );
            let pts: Vec<(f64, f64)> =
                thin(fct.len()).into_iter().map(|i| (fct[i].max(1e-6), (i + 1) as f64 / fct.len() as f64)).collect();
            h.push_str(&plot(
                "FCT CDF",
                "flow completion time (us, log scale)",
                "fraction of completed messages",
                true,
                &[Series { name: "FCT".into(), pts, style: Style::Step }],
            ));
            // Slowdown against size.
            let b = size_buckets(&run.done);
            h.push_str("<h2>Slowdown against message size</h2>\n");
            let mid = |b: &Bucket| (b.lo * b.hi).sqrt();
            h.push_str(&plot(
                "Slowdown by message size",
                "message size (bytes, log scale; buckets of a factor of 2)",
                "slowdown (FCT / ideal)",
                true,
                &[
                    Series {
                        name: "p50".into(),
                        pts: b.iter().map(|b| (mid(b), b.p50)).collect(),
                        style: Style::Markers,
                    },
                    Series {
                        name: "p99".into(),
                        pts: b.iter().map(|b| (mid(b), b.p99)).collect(),
                        style: Style::Markers,
                    },
                ],
            ));
            h.push_str(
                "<table><tr><th>size (bytes)</th><th>messages</th><th>p50 slowdown</th><th>p99 slowdown</th></tr>\n",
            );
            for b in &b {
                let _ = writeln!(
                    h,
                    "<tr><td>{}&ndash;{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    b.lo as u64,
                    b.hi as u64 - 1,
                    b.count,
                    fmt(b.p50),
                    fmt(b.p99)
                );
            }
            h.push_str("</table>\n");
        }
    }
    if !run.queues.is_empty() {
        h.push_str("<h2>Queue occupancy over time</h2>\n<p class=\"note\">queue_series.csv: bytes held by each recorded port at each sample time.</p>\n");
        let series: Vec<Series> = run
            .queues
            .iter()
            .map(|(name, rows)| Series {
                name: name.clone(),
                pts: rows.iter().map(|r| (r.0, r.1)).collect(),
                style: Style::Step,
            })
            .collect();
        h.push_str(&plot("Queue occupancy", "simulated time (us)", "bytes queued at the port", false, &series));
    }
    traces(&mut h, run);
    timeline::section(&mut h, &run.summary["goal"], &run.ops);
    h.push_str("<h2>Provenance</h2>\n");
    match &run.provenance {
        Some(p) => {
            let _ = writeln!(h, "<pre>{}</pre>", esc(&format!("{p:#}")));
        }
        None => h.push_str("<p class=\"note\">No provenance.json (a run from before provenance was written).</p>\n"),
    }
    h.push_str("<h2>Configuration (resolved)</h2>\n");
    match &run.config {
        Some(c) => {
            let _ = writeln!(h, "<pre>{}</pre>", esc(c));
        }
        None => h.push_str("<p class=\"note\">No config.resolved.toml in this run directory.</p>\n"),
    }
    let _ =
        writeln!(h, "<p class=\"foot\">Written by fabriclab {} report.</p>\n</body></html>", env!("CARGO_PKG_VERSION"));
    h
}

/// Traced flows drawn per plot: one colour each, a legend that fits beside the plot.
const TRACED_FLOWS_SHOWN: usize = 8;

/// The window and RTT plots of traces.csv, one line per flow, time on x; the
/// flows with the most rows when there are more than fit, which the page says.
fn traces(h: &mut String, run: &Run) {
    if run.traces.is_empty() {
        return;
    }
    h.push_str("<h2>Transport traces</h2>\n");
    let kinds = [
        ("cwnd", "Congestion window", "window (bytes)", "the sender's window at each change", Style::Step),
        ("rtt", "RTT samples", "RTT (us)", "each RTT sample the sender measured", Style::Line),
    ];
    for (kind, title, ylabel, what, style) in kinds {
        let mut flows: Vec<(&TraceKey, &Vec<(f64, f64)>)> =
            run.traces.iter().filter(|((k, _, _), _)| k == kind).collect();
        if flows.is_empty() {
            continue;
        }
        let total = flows.len();
        // Most rows first (ties: lower host, then flow), then shown in (host, flow) order.
        flows.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        flows.truncate(TRACED_FLOWS_SHOWN);
        flows.sort_by(|a, b| a.0.cmp(b.0));
        let which = if total > flows.len() {
            format!(
                "{} of the {total} traced flows are shown, those with the most rows; traces.csv holds every flow",
                flows.len()
            )
        } else {
            format!("all {total} traced flows are shown")
        };
        let _ = writeln!(
            h,
            "<h3>{title}</h3>\n<p class=\"note\">traces.csv, kind <code>{kind}</code>: {what}, per flow \
             (host, flow) over simulated time; {which}. At most 1,000 points of each flow are drawn.</p>"
        );
        let series: Vec<Series> = flows
            .iter()
            .map(|((_, host, flow), rows)| Series {
                name: format!("host {host} flow {flow}"),
                pts: thin(rows.len()).into_iter().map(|i| rows[i]).collect(),
                style,
            })
            .collect();
        h.push_str(&plot(title, "simulated time (us)", ylabel, false, &series));
        let _ = writeln!(
            h,
            "<table><tr><th>host</th><th>flow</th><th>rows</th><th>first (us)</th><th>last (us)</th>\
             <th>min</th><th>max</th></tr>"
        );
        for ((_, host, flow), rows) in &flows {
            let (lo, hi) =
                rows.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r.1), hi.max(r.1)));
            let _ = writeln!(
                h,
                "<tr><td>{host}</td><td>{flow}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rows.len(),
                fmt(rows[0].0),
                fmt(rows[rows.len() - 1].0),
                fmt(lo),
                fmt(hi)
            );
        }
        h.push_str("</table>\n");
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
table.kv th{text-align:left;font-weight:normal;color:#555}pre{background:#f6f6f6;padding:0.8em;overflow-x:auto;font-size:85%}\
.note{color:#555}svg{display:block;margin:0.5em 0}";

fn fmt_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => fmt(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Four significant digits, without exponent for everyday magnitudes.
fn fmt(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.digits$}")
}

/// At most ~1,000 indices of n, always the first and the last.
fn thin(n: usize) -> Vec<usize> {
    let step = n.div_ceil(1000).max(1);
    let mut v: Vec<usize> = (0..n).step_by(step).collect();
    if v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

struct Series {
    name: String,
    pts: Vec<(f64, f64)>,
    style: Style,
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    /// A staircase: a CDF, a level held until it changes.
    Step,
    /// Points joined by lines, each marked (a few computed points).
    Markers,
    /// Points joined by lines (many samples).
    Line,
}

const COLORS: &[&str] = &["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// An inline SVG line plot with axes, ticks, labels and a legend.
fn plot(title: &str, xlabel: &str, ylabel: &str, log_x: bool, series: &[Series]) -> String {
    let (w, hgt, l, r, t, b) = (760.0, 380.0, 80.0, 160.0, 30.0, 50.0);
    let all = series.iter().flat_map(|s| s.pts.iter());
    let tx = |x: f64| if log_x { x.max(1e-12).log10() } else { x };
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return String::new();
    }
    if log_x {
        x0 = x0.floor();
        x1 = x1.ceil().max(x0 + 1.0);
    } else if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y0 = 0.0;
    let y1 = nice_ceiling(y1.max(1e-9));
    let px = |x: f64| l + (tx(x) - x0) / (x1 - x0) * (w - l - r);
    let py = |y: f64| hgt - b - (y - y0) / (y1 - y0) * (hgt - t - b);
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"{}\">\
         <text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\
         <rect x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>",
        esc(title),
        (l + w - r) / 2.0,
        esc(title),
        w - l - r,
        hgt - t - b
    );
    // Ticks: decades on a log axis, about five round steps otherwise.
    let xt: Vec<(f64, String)> = if log_x {
        (x0 as i32..=x1 as i32).map(|e| (10f64.powi(e), format!("1e{e}"))).collect()
    } else {
        ticks(x0, x1).into_iter().map(|v| (v, fmt_tick(v))).collect()
    };
    for (v, label) in xt {
        let x = px(v);
        let _ = write!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{label}</text>",
            t,
            hgt - b,
            hgt - b + 15.0
        );
    }
    for v in ticks(y0, y1) {
        let y = py(v);
        let _ = write!(
            o,
            "<line x1=\"{l}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            w - r,
            l - 5.0,
            y + 4.0,
            fmt_tick(v)
        );
    }
    let _ = write!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\
         <text x=\"16\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 {})\">{}</text>",
        (l + w - r) / 2.0,
        hgt - 10.0,
        esc(xlabel),
        (t + hgt - b) / 2.0,
        (t + hgt - b) / 2.0,
        esc(ylabel)
    );
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut d = String::new();
        let mut prev: Option<(f64, f64)> = None;
        for &(x, y) in &s.pts {
            let (x, y) = (px(x), py(y));
            match prev {
                None => {
                    let _ = write!(d, "M{x:.1},{y:.1}");
                }
                Some((_, py0)) if s.style == Style::Step => {
                    let _ = write!(d, " L{x:.1},{py0:.1} L{x:.1},{y:.1}");
                }
                Some(_) => {
                    let _ = write!(d, " L{x:.1},{y:.1}");
                }
            }
            prev = Some((x, y));
        }
        let _ = write!(
            o,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\"><title>{}</title></path>",
            esc(&s.name)
        );
        if s.style == Style::Markers {
            for &(x, y) in &s.pts {
                let _ = write!(o, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>", px(x), py(y));
            }
        }
        let ly = t + 15.0 + 18.0 * i as f64;
        let _ = write!(
            o,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
            w - r + 10.0,
            w - r + 30.0,
            w - r + 35.0,
            ly + 4.0,
            esc(&s.name)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// The smallest of 1, 2, 5 x 10^k at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    let e = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * e).find(|&c| c >= v).unwrap_or(10.0 * e)
}

/// About five round ticks between lo and hi.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    let e = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * e).find(|&s| s >= raw).unwrap_or(10.0 * e);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:.1e}")
    } else if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{}", (v * 1e6).round() / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_percentiles_are_exact() {
        // Sizes 1000 (bucket 512..1023) and 3000 (2048..4095); slowdowns 1..=100 in the first.
        let mut done: Vec<(f64, f64, f64)> = (1..=100).map(|i| (1000.0, 1.0, i as f64)).collect();
        done.push((3000.0, 1.0, 7.0));
        let b = size_buckets(&done);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].lo, b[0].hi, b[0].count, b[0].p50, b[0].p99), (512.0, 1024.0, 100, 50.0, 99.0));
        assert_eq!((b[1].lo, b[1].count, b[1].p50, b[1].p99), (2048.0, 1, 7.0, 7.0));
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_ceiling(3.2), 5.0);
    }
}
