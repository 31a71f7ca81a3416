//! The report's GOAL section: summary.json's `goal` object as a table and the
//! ranks' timeline from ops.csv, one row per rank, a bar per op coloured by
//! kind (calc, send, recv in lanes of their own, since a rank's sends and
//! recvs overlap), the critical path outlined.
//!
//! Why rows are sampled and bars merged: a page must stay readable (and
//! small) for a schedule of thousands of ranks and millions of ops. Beyond
//! [`MAX_ROWS`] ranks it shows the ranks on the critical path and evenly
//! spaced others, and says so; bars of one kind that touch within half a
//! pixel are drawn as one.

use super::{csv, esc, fmt, fmt_tick, ticks};
use std::fmt::Write as _;

/// Ranks drawn at most.
pub(super) const MAX_ROWS: usize = 128;

/// One op of ops.csv, as the timeline needs it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct OpBar {
    rank: u32,
    /// 0 calc, 1 send, 2 recv: its lane in the row.
    lane: usize,
    start_us: Option<f64>,
    end_us: Option<f64>,
    critical: bool,
}

const KINDS: [(&str, &str); 3] = [("calc", "#ff7f0e"), ("send", "#1f77b4"), ("recv", "#9ecae1")];

/// ops.csv's rows; `dir` names the run in errors.
pub(super) fn read(text: &str, dir: &str) -> Result<Vec<OpBar>, String> {
    let rows = csv(text, "ops.csv", &["rank", "kind", "start_us", "end_us", "on_critical_path"])?;
    let bad = |line: usize, what: &str, v: &str| format!("{dir}/ops.csv line {line}: bad {what} {v:?}");
    let time = |line, v: &str| match v {
        "" => Ok(None),
        v => v.parse::<f64>().map(Some).map_err(|_| bad(line, "time", v)),
    };
    let mut out = Vec::with_capacity(rows.len());
    for (line, r) in rows {
        let lane =
            KINDS.iter().position(|k| k.0 == r[1]).ok_or_else(|| bad(line, "kind (calc, send or recv)", r[1]))?;
        out.push(OpBar {
            rank: r[0].parse().map_err(|_| bad(line, "rank", r[0]))?,
            lane,
            start_us: time(line, r[2])?,
            end_us: time(line, r[3])?,
            critical: r[4] == "1",
        });
    }
    Ok(out)
}

/// The ranks drawn, in order: all up to [`MAX_ROWS`], else the critical
/// path's (up to half the rows) and evenly spaced others.
fn rows_shown(ops: &[OpBar], ranks: u32) -> Vec<u32> {
    if ranks as usize <= MAX_ROWS {
        return (0..ranks).collect();
    }
    let mut shown: Vec<u32> = ops.iter().filter(|o| o.critical).map(|o| o.rank).collect();
    shown.sort_unstable();
    shown.dedup();
    shown.truncate(MAX_ROWS / 2);
    let spare = MAX_ROWS - shown.len();
    shown.extend((0..spare as u64).map(|i| (i * ranks as u64 / spare as u64) as u32));
    shown.sort_unstable();
    shown.dedup();
    shown
}

/// The GOAL section, when the summary has a `goal` object.
pub(super) fn section(h: &mut String, goal: &serde_json::Value, ops: &[OpBar]) {
    let Some(g) = goal.as_object() else { return };
    h.push_str("<h2>GOAL schedule</h2>\n<table class=\"kv\">\n");
    for (k, v) in flatten("", g) {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    h.push_str("</table>\n");
    if ops.is_empty() {
        h.push_str("<p class=\"note\">No ops.csv in this run (<code>output.ops = false</code>).</p>\n");
        return;
    }
    let ranks = g.get("ranks").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    let shown = rows_shown(ops, ranks);
    let which = if shown.len() < ranks as usize {
        format!(
            "{} of the {ranks} ranks are drawn: those on the critical path and evenly spaced others (ops.csv holds \
             every rank)",
            shown.len()
        )
    } else {
        format!("all {ranks} ranks are drawn")
    };
    let _ = writeln!(
        h,
        "<p class=\"note\">ops.csv: one row per rank, each op a bar from its start to its end (calc on top, send in \
         the middle, recv below: a recv's bar is the time from its posting to its message's delivery); the critical \
         path's ops outlined in red; ops that did not end run to the right edge; {which}.</p>"
    );
    h.push_str(&svg(ops, &shown));
}

/// `goal`'s fields, nested objects as `critical_path.calc_us`.
fn flatten(prefix: &str, o: &serde_json::Map<String, serde_json::Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in o {
        let key = format!("{prefix}{k}");
        match v {
            serde_json::Value::Object(inner) => out.extend(flatten(&format!("{key}."), inner)),
            serde_json::Value::Number(n) if n.is_f64() => out.push((key, fmt(n.as_f64().unwrap_or(0.0)))),
            other => out.push((key, other.to_string())),
        }
    }
    out
}

/// The timeline as an inline SVG.
fn svg(ops: &[OpBar], shown: &[u32]) -> String {
    let (w, l, r, t, b) = (760.0, 70.0, 20.0, 30.0, 45.0);
    let row_h = (600.0 / shown.len().max(1) as f64).clamp(4.0, 24.0);
    let hgt = t + b + row_h * shown.len() as f64;
    let times = ops.iter().flat_map(|o| [o.start_us, o.end_us]).flatten();
    let (x0, x1) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !x0.is_finite() {
        return String::new();
    }
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - r);
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{hgt}\" role=\"img\" \
         aria-label=\"GOAL ranks' timeline\"><text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" \
         font-weight=\"bold\">Ranks' timeline</text>",
        (l + w - r) / 2.0
    );
    for v in ticks(x0, x1) {
        let x = px(v);
        let _ = write!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{t}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{}\" \
             text-anchor=\"middle\" font-size=\"11\">{}</text>",
            hgt - b,
            hgt - b + 15.0,
            fmt_tick(v)
        );
    }
    let _ = write!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">simulated time (us)</text>",
        (l + w - r) / 2.0,
        hgt - 10.0
    );
    let label_every = (12.0 / row_h).ceil() as usize;
    for (i, rank) in shown.iter().enumerate() {
        let y = t + row_h * i as f64;
        if i % label_every == 0 {
            let _ = write!(
                o,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"10\">rank {rank}</text>",
                l - 4.0,
                y + row_h / 2.0 + 3.0
            );
        }
        bars(&mut o, ops.iter().filter(|op| op.rank == *rank), y, row_h, &px, x1);
    }
    for (i, (name, colour)) in KINDS.iter().enumerate() {
        let x = l + 110.0 * i as f64;
        let _ = write!(
            o,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"8\" fill=\"{colour}\"/><text x=\"{}\" y=\"{}\" \
             font-size=\"11\">{name}</text>",
            hgt - 32.0,
            x + 16.0,
            hgt - 24.0
        );
    }
    let _ = write!(
        o,
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"8\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\">critical path</text></svg>\n",
        l + 330.0,
        hgt - 32.0,
        l + 346.0,
        hgt - 24.0
    );
    o
}

/// One rank's bars: per lane, runs of bars that touch within half a pixel
/// merged; then the critical path's ops outlined over the whole row.
fn bars<'a>(
    o: &mut String,
    ops: impl Iterator<Item = &'a OpBar> + Clone,
    y: f64,
    row_h: f64,
    px: &impl Fn(f64) -> f64,
    right: f64,
) {
    let lane_h = row_h / 3.0;
    for (lane, (_, colour)) in KINDS.iter().enumerate() {
        let mut spans: Vec<(f64, f64)> = ops
            .clone()
            .filter(|op| op.lane == lane)
            .filter_map(|op| Some((px(op.start_us?), px(op.end_us.unwrap_or(right)))))
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (a, z) in merge(spans) {
            let _ = write!(
                o,
                "<rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>",
                y + lane_h * lane as f64,
                (z - a).max(0.5),
                lane_h * 0.9
            );
        }
    }
    for op in ops.filter(|op| op.critical) {
        let (Some(s), Some(e)) = (op.start_us, op.end_us) else { continue };
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#d62728\" \
             stroke-width=\"1.5\"><title>critical path: {}</title></rect>",
            px(s),
            y + lane_h * op.lane as f64,
            (px(e) - px(s)).max(1.0),
            lane_h * 0.9,
            KINDS[op.lane].0
        );
    }
}

/// Pixel spans sorted by start, those that overlap or touch within half a pixel joined.
fn merge(spans: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, z) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 + 0.5 => last.1 = last.1.max(z),
            _ => out.push((a, z)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(rank: u32, critical: bool) -> OpBar {
        OpBar { rank, lane: 0, start_us: Some(0.0), end_us: Some(1.0), critical }
    }

    #[test]
    fn up_to_128_ranks_all_are_drawn_beyond_the_critical_path_and_a_sample() {
        assert_eq!(rows_shown(&[], 128).len(), 128);
        let ops = [bar(999, true), bar(5, true), bar(6, false)];
        let shown = rows_shown(&ops, 1000);
        assert!(shown.len() <= MAX_ROWS && shown.len() > 120, "{}", shown.len());
        assert!(shown.contains(&999) && shown.contains(&5) && !shown.contains(&6), "{shown:?}");
        assert!(shown.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn touching_bars_are_merged_and_bad_rows_named() {
        assert_eq!(merge(vec![(0.0, 1.0), (1.4, 2.0), (3.0, 4.0)]), [(0.0, 2.0), (3.0, 4.0)]);
        let text = "op,rank,kind,start_us,end_us,on_critical_path\n0,1,send,1.5,,1\n1,0,sned,0,1,0\n";
        let e = read(text, "run").unwrap_err();
        assert!(e.contains("run/ops.csv line 3: bad kind (calc, send or recv) \"sned\""), "{e}");
        let ops = read(&text.replace("sned", "calc"), "run").unwrap();
        assert_eq!(ops[0], OpBar { rank: 1, lane: 1, start_us: Some(1.5), end_us: None, critical: true });
    }
}
