//! Measures the claims of PayDebt's results table
//! (experiments/repro/paydebt/claims.toml: H1-H4, M1, T1-T2, S1-S15) on one
//! seed's sweep tables; the verdict engine judges them.
//!
//! Stability: a value is read only from a successful run whose `stable`
//! column is true; otherwise the part is recorded missing ("run unstable:
//! ..."). A part built from several runs (a ratio, the largest over
//! baselines) is missing when any of them is. The exception is
//! [`OVERLOADED`]: the sweeps whose fabric the paper's load definition
//! overloads by construction (docs/verdicts.md).

use crate::engine::{Record, Unit};
use crate::view::View;
use crate::Tables;
use fabriclab::sweep::{Cell, Table};

pub(super) const BUF: &str = "shared_buffer_max_bytes";
pub(super) const SMALL_MEAN: &str = "fct_us_small_mean";
pub(super) const SMALL_P99: &str = "fct_us_small_p99";
pub(super) const ALL_MEAN: &str = "fct_us_all_mean";
pub(super) const ALL_P99: &str = "fct_us_all_p99";
const PROTO: &str = "protocol.name";

/// The state of the art except Homa (H2-H4: Homa(A) keeps Homa's SRPT).
const NOT_HOMA: [&str; 4] = ["dcqcn", "hpcc", "expresspass", "expresspass_aeolus"];
/// Every baseline of Fig. 9 (Homa with two queues runs only in the testbed figure).
const FIG9_BASELINES: [&str; 6] = ["dcqcn", "hpcc", "homa", "homa_aeolus", "expresspass", "expresspass_aeolus"];

/// The sweeps on oversubscribed fabrics at the paper's load, which is Homa's
/// definition (a payload fraction of each host's link): from load 0.35 on the
/// 4:1 fabric they offer more than the core carries (2.86x at 0.8), so no run
/// can be stable; the paper reads such fixed-length runs, and so do we, stable
/// or not (the claims file's `[[tolerance_change]]` entries of 2026-11-26).
/// fig3 is non-blocking, but Memcached at 0.8 of the host links in payload
/// bytes is more than those links carry on the wire (its messages are mostly
/// a few bytes: pure Homa delivers 3.6 of the 8 Gbps offered); M1's rule of
/// 2026-11-26 (read whether stable or not) covers its runs as it did fig9a's.
pub(super) const OVERLOADED: [&str; 12] =
    ["fig3", "fig9a", "fig9b", "fig9c", "fig12", "fig13", "fig14a", "fig14b", "fig15", "fig16b", "fig16c", "fig16d"];

/// A number read from the tables, with the per-message samples behind it when
/// it is a percentile (for a ratio of two percentiles, the smaller count).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Num {
    pub v: f64,
    pub n: Option<f64>,
}

/// A number, or why there is none (the part is then recorded missing).
pub(super) type Got = Result<Num, String>;

/// A row condition: column = value.
pub(super) type Sel<'a> = &'a [(&'a str, Cell)];

/// One sweep's table of this seed, by name.
#[derive(Clone, Copy)]
pub(super) struct Sweep<'a> {
    pub name: &'static str,
    pub t: Option<&'a Table>,
}

fn describe(sel: Sel) -> String {
    let s: Vec<String> = sel.iter().map(|(k, v)| format!("{k}={}", show_cell(v))).collect();
    s.join(", ")
}

fn show_cell(c: &Cell) -> String {
    match c {
        Cell::Str(s) => s.clone(),
        c => c.as_f64().map_or("?".into(), |v| format!("{v}")),
    }
}

impl<'a> Sweep<'a> {
    pub fn of(d: &'a Tables, name: &'static str) -> Sweep<'a> {
        Sweep { name, t: d.get(name) }
    }

    /// The one successful run matching `sel`, stable unless the sweep is [`OVERLOADED`].
    pub fn row(&self, sel: Sel) -> Result<(&'a Table, usize), String> {
        let t = self.t.ok_or_else(|| format!("sweep {} did not run", self.name))?;
        let mut v = View::ok(t);
        for (k, c) in sel {
            v = v.eq(k, c.clone());
        }
        let &r = v.rows.first().ok_or_else(|| format!("{}: no successful run with {}", self.name, describe(sel)))?;
        if t.get(r, "stable") != &Cell::Bool(true) && !OVERLOADED.contains(&self.name) {
            return Err(format!("run unstable: {} {}", self.name, describe(sel)));
        }
        Ok((t, r))
    }

    /// `col` of the run matching `sel`; a `_p99` column carries its `_count`.
    pub fn get(&self, sel: Sel, col: &str) -> Got {
        let (t, r) = self.row(sel)?;
        let v = t.get(r, col).as_f64().ok_or_else(|| format!("{} {}: no {col}", self.name, describe(sel)))?;
        let n = col.strip_suffix("_p99").and_then(|stem| t.get(r, &format!("{stem}_count")).as_f64());
        Ok(Num { v, n })
    }

    /// `col` of protocol `p` (with the other conditions in `sel`).
    pub fn proto(&self, p: &str, sel: Sel, col: &str) -> Got {
        let mut all: Vec<(&str, Cell)> = vec![(PROTO, p.into())];
        all.extend(sel.iter().cloned());
        self.get(&all, col)
    }

    /// Loss of protocol `p`: drops / packets sent.
    pub fn loss(&self, p: &str, sel: Sel) -> Got {
        div(self.proto(p, sel, "drops"), self.proto(p, sel, "packets_sent"))
    }
}

/// a / b; the sample count is the smaller of the two.
pub(super) fn div(a: Got, b: Got) -> Got {
    let (a, b) = (a?, b?);
    if b.v == 0.0 {
        return Err("the denominator is zero".into());
    }
    let n = match (a.n, b.n) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Ok(Num { v: a.v / b.v, n })
}

/// (a / b - 1) x 100: a's change against b in percent.
pub(super) fn change(a: Got, b: Got) -> Got {
    div(a, b).map(|r| Num { v: (r.v - 1.0) * 100.0, n: r.n })
}

pub(super) fn scale(g: Got, by: f64) -> Got {
    g.map(|x| Num { v: x.v * by, n: x.n })
}

/// The largest of labelled values with its label; unknown if any is unknown
/// (the largest of a set with an unknown member is unknown).
pub(super) fn largest(items: Vec<(String, Got)>) -> (Got, String) {
    extreme(items, |a, b| a > b)
}

pub(super) fn smallest(items: Vec<(String, Got)>) -> (Got, String) {
    extreme(items, |a, b| a < b)
}

fn extreme(items: Vec<(String, Got)>, better: fn(f64, f64) -> bool) -> (Got, String) {
    let mut best: Option<(Num, String)> = None;
    for (label, g) in items {
        match g {
            Err(why) => return (Err(why), String::new()),
            Ok(x) if best.as_ref().is_none_or(|(b, _)| better(x.v, b.v)) => best = Some((x, label)),
            Ok(_) => {}
        }
    }
    match best {
        Some((x, label)) => (Ok(x), label),
        None => (Err("no values".into()), String::new()),
    }
}

/// Records one part: the value (with its samples) or why it is missing.
pub(super) fn put(r: &mut Record, claim: &str, part: &str, unit: Unit, g: Got, note: &str) {
    let e = match g {
        Ok(x) => {
            let e = r.value(claim, part, unit, Some(x.v));
            if let Some(n) = x.n {
                e.samples(n);
            }
            e
        }
        Err(why) => r.missing(claim, part, unit, why),
    };
    if !note.is_empty() {
        e.note(note);
    }
}

/// A part simulation cannot give from the sweep tables.
pub(super) fn absent(r: &mut Record, claim: &str, part: &str, unit: Unit, why: &str) {
    r.missing(claim, part, unit, why);
}

/// The Fig. 9 workloads at 4:1, load 0.8.
fn fig9(d: &Tables) -> [(&'static str, Sweep<'_>); 3] {
    [("Memcached", Sweep::of(d, "fig9a")), ("Hadoop", Sweep::of(d, "fig9b")), ("web search", Sweep::of(d, "fig9c"))]
}

/// Measures every claim on one seed's tables.
pub fn measure(d: &Tables, r: &mut Record) {
    headline(d, r);
    motivation(d, r);
    super::scenarios::testbed(d, r);
    memcached(d, r);
    hadoop(d, r);
    web_search(d, r);
    all_flows(d, r);
    super::scenarios::fairness(d, r);
    loads(d, r);
    super::scenarios::s7(d, r);
    super::scenarios::s8(d, r);
    super::scenarios::s9(d, r);
    overflow(d, r);
    incast(d, r);
    ablations(d, r);
}

/// Over `sweeps`, the largest `baseline` / PayDebt of `col`.
fn largest_over(sweeps: &[(&str, Sweep)], baseline: &str, col: &str) -> (Got, String) {
    largest(
        sweeps
            .iter()
            .map(|(w, s)| (w.to_string(), div(s.proto(baseline, &[], col), s.proto("paydebt", &[], col))))
            .collect(),
    )
}

/// H1-H4: the abstract's ranges, per baseline the paper names.
fn headline(d: &Tables, r: &mut Record) {
    let all = fig9(d);
    for b in ["dcqcn", "homa"] {
        let (g, at) = largest_over(&all, b, BUF);
        put(r, "H1", b, Unit::Ratio, g, &at);
    }
    for b in NOT_HOMA {
        let (g, at) = largest_over(&all, b, SMALL_MEAN);
        put(r, "H2", b, Unit::Ratio, g, &at);
        let big = &all[1..];
        let changes = big
            .iter()
            .map(|(w, s)| (w.to_string(), change(s.proto("paydebt", &[], ALL_MEAN), s.proto(b, &[], ALL_MEAN))));
        let (g, at) = smallest(changes.collect());
        put(r, "H3", b, Unit::Percent, g, &at);
        let (g, at) = largest_over(&all, b, SMALL_P99);
        put(r, "H4", b, Unit::Ratio, g, &at);
    }
}

/// M1 (§2.3, Fig. 3): what Aeolus's selective dropping costs Homa (on the
/// non-blocking fabric, fig3) and ExpressPass (on the 4:1 one, fig9a), with
/// Memcached at load 0.8, as the paper ran each.
fn motivation(d: &Tables, r: &mut Record) {
    let (nb, mc) = (Sweep::of(d, "fig3"), Sweep::of(d, "fig9a"));
    let (a, h) = ("homa_aeolus", "homa");
    put(r, "M1", "mean", Unit::Ratio, div(nb.proto(a, &[], ALL_MEAN), nb.proto(h, &[], ALL_MEAN)), "");
    put(r, "M1", "p99", Unit::Ratio, div(nb.proto(a, &[], ALL_P99), nb.proto(h, &[], ALL_P99)), "");
    put(r, "M1", "homa_a_drops", Unit::Fraction, nb.loss(a, &[]), "");
    put(r, "M1", "ep_a_loss", Unit::Fraction, mc.loss("expresspass_aeolus", &[]), "");
    absent(
        r,
        "M1",
        "ep_a_degraded_flows",
        Unit::Fraction,
        "needs a per-flow comparison with plain ExpressPass, which the sweep tables do not hold",
    );
}

/// S1: Memcached (Fig. 9a).
fn memcached(d: &Tables, r: &mut Record) {
    let mc = Sweep::of(d, "fig9a");
    let pd = |col| mc.proto("paydebt", &[], col);
    put(r, "S1", "buffer_vs_dcqcn", Unit::Percent, change(pd(BUF), mc.proto("dcqcn", &[], BUF)), "");
    absent(
        r,
        "S1",
        "buffer_vs_homa_2q",
        Unit::Percent,
        "Homa(2q) runs only in the testbed sweeps (fig8), not in fig9a",
    );
    let others = ["dcqcn", "hpcc", "expresspass", "expresspass_aeolus", "homa_aeolus"];
    for b in others {
        put(
            r,
            "S1",
            &format!("small_mean_{b}"),
            Unit::Percent,
            change(pd(SMALL_MEAN), mc.proto(b, &[], SMALL_MEAN)),
            "",
        );
    }
    let tails = others.iter().map(|b| (b.to_string(), div(mc.proto(b, &[], SMALL_P99), pd(SMALL_P99))));
    let (g, at) = largest(tails.collect());
    put(r, "S1", "p99_best", Unit::Ratio, g, &at);
    let hpcc = change(mc.proto("hpcc", &[], BUF), mc.proto("dcqcn", &[], BUF));
    put(r, "S1", "hpcc_over_dcqcn_buffer", Unit::Percent, hpcc, "");
}

/// S2: Hadoop (Fig. 9b).
fn hadoop(d: &Tables, r: &mut Record) {
    let hd = Sweep::of(d, "fig9b");
    let over = |b: &str, col| div(hd.proto(b, &[], col), hd.proto("paydebt", &[], col));
    let (g, at) = largest(FIG9_BASELINES.iter().map(|b| (b.to_string(), over(b, BUF))).collect());
    put(r, "S2", "buffer_best", Unit::Ratio, g, &at);
    for b in ["dcqcn", "expresspass"] {
        put(r, "S2", &format!("{b}_mean"), Unit::Ratio, over(b, SMALL_MEAN), "");
        put(r, "S2", &format!("{b}_p99"), Unit::Ratio, over(b, SMALL_P99), "");
    }
    let pd_vs_hpcc = |col| change(hd.proto("paydebt", &[], col), hd.proto("hpcc", &[], col));
    put(r, "S2", "hpcc_mean", Unit::Percent, pd_vs_hpcc(SMALL_MEAN), "");
    put(r, "S2", "hpcc_p99", Unit::Percent, pd_vs_hpcc(SMALL_P99), "");
}

/// S3: web search (Fig. 9c) buffers.
fn web_search(d: &Tables, r: &mut Record) {
    let ws = Sweep::of(d, "fig9c");
    put(r, "S3", "homa_buffer", Unit::MB, scale(ws.proto("homa", &[], BUF), 1e-6), "");
    put(r, "S3", "paydebt_buffer", Unit::KB, scale(ws.proto("paydebt", &[], BUF), 1e-3), "");
}

/// S4: all flows, Hadoop and web search.
fn all_flows(d: &Tables, r: &mut Record) {
    let both = [("Hadoop", "hadoop", Sweep::of(d, "fig9b")), ("web search", "websearch", Sweep::of(d, "fig9c"))];
    let pd_vs = |s: &Sweep, b: &str, col| change(s.proto("paydebt", &[], col), s.proto(b, &[], col));
    let means = both.iter().flat_map(|(w, _, s)| FIG9_BASELINES.map(|b| (format!("{b}, {w}"), pd_vs(s, b, ALL_MEAN))));
    let (g, at) = smallest(means.collect());
    put(r, "S4", "all_mean_best", Unit::Percent, g, &at);
    for b in ["expresspass", "expresspass_aeolus", "hpcc"] {
        for (_, w, s) in &both {
            put(r, "S4", &format!("tail_{b}_{w}"), Unit::Percent, pd_vs(s, b, ALL_P99), "");
        }
    }
    let ws = &both[1].2;
    put(r, "S4", "websearch_tail_vs_dcqcn", Unit::Percent, pd_vs(ws, "dcqcn", ALL_P99), "");
    put(r, "S4", "websearch_tail_vs_homa", Unit::Percent, pd_vs(ws, "homa", ALL_P99), "");
}

/// The loads a protocol ran at in `s` (successful runs), lowest first.
fn loads_of(s: &Sweep, p: &str) -> Vec<f64> {
    let mut l = s.t.map(|t| View::ok(t).eq(PROTO, p).nums("workload.load")).unwrap_or_default();
    l.sort_by(f64::total_cmp);
    l.dedup();
    l
}

/// How many times a loss rate rose from the lowest load to the highest. A
/// loss-free lowest load counts one lost packet (a lower bound of the rise);
/// no loss at either load is the claim not happening.
fn loss_rise(s: &Sweep, p: &str, lo: f64, hi: f64) -> Result<Got, String> {
    let at = |l: f64| -> Result<(f64, f64), String> {
        let sel = [("workload.load", l.into())];
        Ok((s.proto(p, &sel, "drops")?.v, s.proto(p, &sel, "packets_sent")?.v))
    };
    let ((d0, n0), (d1, n1)) = match (at(lo), at(hi)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    if d1 == 0.0 {
        return Err(format!("no loss at load {hi} ({d0} drops at load {lo}): the loss rate does not rise"));
    }
    Ok(Ok(Num { v: (d1 / n1) / (d0.max(1.0) / n0), n: None }))
}

/// S6: the web-search load sweep (Fig. 12).
fn loads(d: &Tables, r: &mut Record) {
    let s = Sweep::of(d, "fig12");
    let pd_loads = loads_of(&s, "paydebt");
    let bufs: Vec<(String, Got)> = pd_loads
        .iter()
        .map(|&l| (format!("load {l}"), scale(s.proto("paydebt", &[("workload.load", l.into())], BUF), 1e-3)))
        .collect();
    let none = || (Err::<Num, String>(format!("{}: no PayDebt runs", s.name)), String::new());
    let (lo, at_lo) = if bufs.is_empty() { none() } else { smallest(bufs.clone()) };
    let (hi, at_hi) = if bufs.is_empty() { none() } else { largest(bufs) };
    put(r, "S6", "paydebt_buffer_min", Unit::KB, lo, &at_lo);
    put(r, "S6", "paydebt_buffer_max", Unit::KB, hi, &at_hi);
    for p in ["dcqcn", "hpcc", "homa"] {
        let l = loads_of(&s, p);
        let g = match (l.first(), l.last()) {
            (Some(&a), Some(&b)) if a < b => {
                div(s.proto(p, &[("workload.load", b.into())], BUF), s.proto(p, &[("workload.load", a.into())], BUF))
            }
            _ => Err(format!("{}: {p} ran at fewer than two loads", s.name)),
        };
        put(r, "S6", &format!("{p}_buffer_grows"), Unit::Ratio, g, "");
    }
    for p in ["expresspass_aeolus", "homa_aeolus"] {
        let part = format!("{p}_loss_grows");
        let l = loads_of(&s, p);
        match (l.first(), l.last()) {
            (Some(&a), Some(&b)) if a < b => match loss_rise(&s, p, a, b) {
                Ok(g) => put(r, "S6", &part, Unit::Ratio, g, ""),
                Err(why) => {
                    r.failed("S6", &part, Unit::Ratio, why);
                }
            },
            _ => absent(r, "S6", &part, Unit::Ratio, &format!("{}: {p} ran at fewer than two loads", s.name)),
        }
    }
}

/// S10 and S11: Hadoop with 8 MB, 4 MB and 800 KB buffers (Fig. 15).
fn overflow(d: &Tables, r: &mut Record) {
    let s = Sweep::of(d, "fig15");
    let at = |p: &str, bytes: f64, col: &str| s.proto(p, &[("network.shared_buffer.bytes", bytes.into())], col);
    let loss = |p: &str, bytes: f64| s.loss(p, &[("network.shared_buffer.bytes", bytes.into())]);
    let (big, mid, small) = (8e6, 4e6, 8e5);
    put(r, "S10", "paydebt_buffer_8mb", Unit::MB, scale(at("paydebt", big, BUF), 1e-6), "");
    put(r, "S10", "homa_buffer_8mb", Unit::MB, scale(at("homa", big, BUF), 1e-6), "");
    let drops =
        at("paydebt", big, "drops").and_then(|a| at("paydebt", mid, "drops").map(|b| Num { v: a.v + b.v, n: None }));
    put(r, "S10", "paydebt_drops", Unit::Count, drops, "");
    put(r, "S10", "homa_loss_4mb_hadoop", Unit::Fraction, loss("homa", mid), "");
    absent(r, "S10", "homa_loss_4mb_websearch", Unit::Fraction, "fig15 runs Hadoop only");
    put(
        r,
        "S10",
        "homa_small_mean_4mb",
        Unit::Percent,
        change(at("homa", mid, SMALL_MEAN), at("homa", big, SMALL_MEAN)),
        "",
    );
    put(r, "S10", "homa_tail_4mb", Unit::Ratio, div(at("homa", mid, SMALL_P99), at("homa", big, SMALL_P99)), "");

    put(r, "S11", "paydebt_loss", Unit::Fraction, loss("paydebt", small), "");
    let vs_8mb = |col| change(at("paydebt", small, col), at("paydebt", big, col));
    put(r, "S11", "small_mean", Unit::Percent, vs_8mb(SMALL_MEAN), "");
    put(r, "S11", "small_tail", Unit::Percent, vs_8mb(SMALL_P99), "");
    put(r, "S11", "all_mean", Unit::Percent, vs_8mb(ALL_MEAN), "");
    put(r, "S11", "all_tail", Unit::Percent, vs_8mb(ALL_P99), "");
    put(
        r,
        "S11",
        "better_than_homa",
        Unit::Ratio,
        div(at("homa", small, SMALL_MEAN), at("paydebt", small, SMALL_MEAN)),
        "",
    );
}

/// S12: the incast of one-BDP flows (Fig. 16a), at the largest incast.
fn incast(d: &Tables, r: &mut Record) {
    let s = Sweep::of(d, "fig16a");
    let n = s.t.and_then(|t| View::ok(t).max("workload.senders"));
    let Some(n) = n else {
        for part in ["expresspass_small", "expresspass_aeolus_small", "homa_aeolus_small", "paydebt_relatively_small"] {
            absent(r, "S12", part, Unit::Ratio, "sweep fig16a did not run");
        }
        for part in ["dcqcn_above_6mb", "hpcc_above_6mb", "homa_8mb"] {
            absent(r, "S12", part, Unit::MB, "sweep fig16a did not run");
        }
        for part in ["dcqcn_pfc", "hpcc_pfc", "homa_drops"] {
            absent(r, "S12", part, Unit::Count, "sweep fig16a did not run");
        }
        return;
    };
    let note = format!("{n} senders");
    let sel = [("workload.senders", n.into())];
    let get = |p: &str, col: &str| s.proto(p, &sel, col);
    for p in ["expresspass", "expresspass_aeolus", "homa_aeolus"] {
        put(r, "S12", &format!("{p}_small"), Unit::Ratio, div(get(p, BUF), get("paydebt", BUF)), &note);
    }
    let (least, at) = smallest(["dcqcn", "hpcc", "homa"].map(|p| (p.to_string(), get(p, BUF))).to_vec());
    put(r, "S12", "paydebt_relatively_small", Unit::Ratio, div(get("paydebt", BUF), least), &format!("{note}; {at}"));
    put(r, "S12", "dcqcn_above_6mb", Unit::MB, scale(get("dcqcn", BUF), 1e-6), &note);
    put(r, "S12", "hpcc_above_6mb", Unit::MB, scale(get("hpcc", BUF), 1e-6), &note);
    put(r, "S12", "dcqcn_pfc", Unit::Count, get("dcqcn", "pfc_pauses"), &note);
    put(r, "S12", "hpcc_pfc", Unit::Count, get("hpcc", "pfc_pauses"), &note);
    put(r, "S12", "homa_8mb", Unit::MB, scale(get("homa", BUF), 1e-6), &note);
    put(r, "S12", "homa_drops", Unit::Count, get("homa", "drops"), &note);
}

/// The values of a swept PayDebt parameter in `s`, lowest first.
fn swept(s: &Sweep, key: &str) -> Vec<f64> {
    let mut v = s.t.map(|t| View::ok(t).nums(key)).unwrap_or_default();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// S13-S15: the Hadoop ablations (Fig. 16b-d).
fn ablations(d: &Tables, r: &mut Record) {
    let b = Sweep::of(d, "fig16b");
    let debt = |m: &str| b.get(&[("protocol.paydebt.debt", m.into())], BUF);
    put(r, "S13", "no_debt", Unit::Ratio, div(debt("none"), debt("paydebt")), "");
    put(r, "S13", "late_debt", Unit::Ratio, div(debt("late"), debt("paydebt")), "");
    put(r, "S13", "late_beats_none", Unit::Ratio, div(debt("none"), debt("late")), "");
    put(r, "S13", "early_same", Unit::Percent, change(debt("early"), debt("paydebt")), "");

    let c = Sweep::of(d, "fig16c");
    let kd_key = "protocol.paydebt.k_d_bdp";
    let kd = swept(&c, kd_key);
    let buf = |k: f64| c.get(&[(kd_key, k.into())], BUF);
    if kd.len() < 2 || kd[0] != 0.0 {
        for part in ["lowest_at_zero", "grows_overall", "grows_each_step"] {
            absent(r, "S14", part, Unit::Ratio, "fig16c lacks K_d = 0 or a second K_d");
        }
    } else {
        let (least, at) = smallest(kd[1..].iter().map(|&k| (format!("K_d {k}"), buf(k))).collect());
        put(r, "S14", "lowest_at_zero", Unit::Ratio, div(buf(0.0), least), &at);
        put(r, "S14", "grows_overall", Unit::Ratio, div(buf(kd[kd.len() - 1]), buf(0.0)), "");
        let steps = kd.windows(2).map(|w| (format!("K_d {} -> {}", w[0], w[1]), div(buf(w[1]), buf(w[0]))));
        let (g, at) = smallest(steps.collect());
        put(r, "S14", "grows_each_step", Unit::Ratio, g, &at);
    }

    let t = Sweep::of(d, "fig16d");
    let kt_key = "protocol.paydebt.k_t_bdp";
    let kt = |k: f64, col: &str| t.get(&[(kt_key, k.into())], col);
    let top = swept(&t, kt_key).last().copied().filter(|&k| k > 1.0);
    put(r, "S15", "under_utilisation", Unit::Ratio, div(kt(0.5, ALL_MEAN), kt(1.0, ALL_MEAN)), "");
    let incast = top.map_or(Err("fig16d has no K_t above 1".into()), |k| div(kt(k, BUF), kt(1.0, BUF)));
    put(r, "S15", "token_incast", Unit::Ratio, incast, &top.map_or(String::new(), |k| format!("K_t {k}")));
}

#[cfg(test)]
mod tests;
