//! PayDebt claims on the setups beyond the 4:1 fabric at load 0.8: the
//! simulated testbed (T1, T2: Fig. 8), fairness (S5: Fig. 11), 100 Gbps (S7:
//! Fig. 13) and other fan-in ratios (S8, S9: Fig. 14).

use super::claims::{change, div, largest, put, smallest, Got, Num, Sweep, ALL_MEAN, BUF, SMALL_MEAN, SMALL_P99};
use crate::bolt::tapped::derived;
use crate::engine::{Record, Unit};
use crate::view::View;
use crate::Tables;
use fabriclab::sweep::Cell;

/// The rate-based baselines of Figs. 13 and 14.
const RATE_BASED: [&str; 3] = ["dcqcn", "hpcc", "expresspass"];

/// The testbed's drop-less and drop buffers (per queue).
const BIG: f64 = 16e6;
const SMALL: f64 = 128e3;

/// The testbed's loads (the paper gives none), decided before any run at them
/// (claims T1, T2; issue 49): fractions of the inter-switch link, with the
/// payload fraction that Memcached's `workload.load` is set to (0.7 of it:
/// fig8c.toml), as (bottleneck fraction, Memcached payload fraction).
const TESTBED_LOADS: [(f64, f64); 3] = [(0.3, 0.21), (0.5, 0.35), (0.7, 0.49)];

/// The simulated testbed (Fig. 8) at one load: web search and Hadoop in fig8,
/// Memcached in fig8c.
struct Testbed<'a> {
    fig8: Sweep<'a>,
    fig8c: Sweep<'a>,
    /// `workload.load` of fig8 and of fig8c.
    load: (f64, f64),
}

/// A testbed workload: `Some(size_dist)` in fig8, `None` for Memcached (fig8c).
type Work = Option<&'static str>;
const HADOOP: Work = Some("wkb");
const WEB: Work = Some("wkc");
const MEMCACHED: Work = None;

impl Testbed<'_> {
    /// `col` of protocol `p` with `prios` priorities and `queue` bytes per queue.
    fn get(&self, w: Work, queue: f64, p: &str, prios: f64, col: &str) -> Got {
        let mut sel: Vec<(&str, Cell)> =
            vec![("network.queue_buffer_bytes", queue.into()), ("network.priorities", prios.into())];
        match w {
            Some(dist) => {
                sel.push(("workload.size_dist", dist.into()));
                sel.push(("workload.load", self.load.0.into()));
                self.fig8.proto(p, &sel, col)
            }
            None => {
                sel.push(("workload.load", self.load.1.into()));
                self.fig8c.proto(p, &sel, col)
            }
        }
    }

    /// PayDebt or Homa (8 priorities).
    fn of(&self, w: Work, queue: f64, p: &str, col: &str) -> Got {
        self.get(w, queue, p, 8.0, col)
    }

    /// Drops of `p` summed over the three workloads.
    fn drops(&self, queue: f64, p: &str) -> Got {
        let mut total = 0.0;
        for w in [HADOOP, WEB, MEMCACHED] {
            total += self.of(w, queue, p, "drops")?.v;
        }
        Ok(Num { v: total, n: None })
    }
}

/// T1 and T2 on the simulated testbed, each part at every load of
/// [`TESTBED_LOADS`] (judged at each; the worst verdict counts).
pub fn testbed(d: &Tables, r: &mut Record) {
    for load in TESTBED_LOADS {
        let tb = Testbed { fig8: Sweep::of(d, "fig8"), fig8c: Sweep::of(d, "fig8c"), load };
        let mut at = Vec::new();
        testbed_at(&tb, &mut Record::new(r.seed(), &mut at));
        for e in &mut at {
            e.condition = format!("load {}", load.0);
        }
        r.extend(at);
    }
}

/// T1 and T2 at one load.
fn testbed_at(tb: &Testbed, r: &mut Record) {
    let pd_vs_homa = |w, q, col| change(tb.of(w, q, "paydebt", col), tb.of(w, q, "homa", col));

    // T1: drop-less, 16 MB.
    put(r, "T1", "paydebt_drops", Unit::Count, tb.drops(BIG, "paydebt"), "");
    put(r, "T1", "homa_drops", Unit::Count, tb.drops(BIG, "homa"), "");
    put(r, "T1", "hadoop_comparable", Unit::Percent, pd_vs_homa(HADOOP, BIG, SMALL_MEAN), "");
    put(r, "T1", "memcached_comparable", Unit::Percent, pd_vs_homa(MEMCACHED, BIG, SMALL_MEAN), "");
    let slower = div(tb.of(WEB, BIG, "paydebt", SMALL_MEAN), tb.of(WEB, BIG, "homa", SMALL_MEAN));
    put(r, "T1", "websearch_small_slower", Unit::Ratio, slower, "");
    let faster = div(tb.of(WEB, BIG, "homa", ALL_MEAN), tb.of(WEB, BIG, "paydebt", ALL_MEAN));
    put(r, "T1", "websearch_large_faster", Unit::Ratio, faster, "");
    let two_q = [("Hadoop", HADOOP), ("web search", WEB), ("Memcached", MEMCACHED)].map(|(name, w)| {
        (name.to_string(), div(tb.get(w, BIG, "homa", 2.0, SMALL_MEAN), tb.of(w, BIG, "homa", SMALL_MEAN)))
    });
    let (g, at) = smallest(two_q.to_vec());
    put(r, "T1", "homa_2q_downgraded", Unit::Ratio, g, &at);

    // T2: 128 KB per queue.
    put(r, "T2", "paydebt_drops", Unit::Count, tb.drops(SMALL, "paydebt"), "");
    let pd_change = [("Hadoop", HADOOP), ("web search", WEB), ("Memcached", MEMCACHED)].map(|(name, w)| {
        (name.to_string(), change(tb.of(w, SMALL, "paydebt", SMALL_MEAN), tb.of(w, BIG, "paydebt", SMALL_MEAN)))
    });
    let (g, at) = largest_magnitude(pd_change.to_vec());
    put(r, "T2", "paydebt_unchanged", Unit::Percent, g, &at);
    let homa_mc = change(tb.of(MEMCACHED, SMALL, "homa", SMALL_MEAN), tb.of(MEMCACHED, BIG, "homa", SMALL_MEAN));
    put(r, "T2", "memcached_homa_unchanged", Unit::Percent, homa_mc, "");
    let homa_loss = |w| div(tb.of(w, SMALL, "homa", "drops"), tb.of(w, SMALL, "homa", "packets_sent"));
    put(r, "T2", "homa_loss_hadoop", Unit::Fraction, homa_loss(HADOOP), "");
    put(r, "T2", "homa_loss_websearch", Unit::Fraction, homa_loss(WEB), "");
    let tenfold = div(tb.of(WEB, SMALL, "homa", SMALL_MEAN), tb.of(WEB, BIG, "homa", SMALL_MEAN));
    put(r, "T2", "homa_websearch_small_10x", Unit::Ratio, tenfold, "");
    let homa_over = |w, col| div(tb.of(w, SMALL, "homa", col), tb.of(w, SMALL, "paydebt", col));
    put(r, "T2", "small_mean_hadoop", Unit::Ratio, homa_over(HADOOP, SMALL_MEAN), "");
    put(r, "T2", "small_mean_websearch", Unit::Percent, pd_vs_homa(WEB, SMALL, SMALL_MEAN), "");
    put(r, "T2", "tail_hadoop", Unit::Ratio, homa_over(HADOOP, SMALL_P99), "");
    put(r, "T2", "tail_websearch", Unit::Ratio, homa_over(WEB, SMALL_P99), "");
}

/// The value farthest from 0 (a change in percent either way).
fn largest_magnitude(items: Vec<(String, Got)>) -> (Got, String) {
    let abs: Vec<(String, Got)> =
        items.iter().map(|(l, g)| (l.clone(), g.clone().map(|x| Num { v: x.v.abs(), n: x.n }))).collect();
    let (_, at) = largest(abs);
    match items.into_iter().find(|(l, _)| *l == at) {
        Some((_, g)) => (g, at),
        None => largest(Vec::new()),
    }
}

/// S5 from the tapped Fig. 11 runs: Jain's index over settled bins. The
/// index comes from the tapped re-run ([`crate::bolt::tapped::derived`]); the
/// run's stability from the fig11 sweep itself.
pub fn fairness(d: &Tables, r: &mut Record) {
    let sweep = Sweep::of(d, "fig11");
    let tapped = derived().get("fig11").cloned();
    let jain = |p: &str| -> Got {
        sweep.row(&[("protocol.name", p.into())])?;
        let t = tapped.as_ref().ok_or("the tapped re-run of fig11 did not run")?;
        // A derived table: every row ran (it has no status column).
        let v = View { t, rows: (0..t.rows.len()).collect() }.eq("protocol.name", p);
        let v = v.num("jain_mean").ok_or(format!("no settled bins for {p} in the tapped fig11 run"))?;
        Ok(Num { v, n: None })
    };
    put(r, "S5", "paydebt_converges", Unit::Fraction, jain("paydebt"), "");
    put(r, "S5", "expresspass_converges", Unit::Fraction, jain("expresspass"), "");
    put(r, "S5", "paydebt_fairer", Unit::Ratio, div(jain("paydebt"), jain("expresspass")), "");
    // The token queue of this seed's own PayDebt run (fairness::token_queue).
    let tokens = || -> Got {
        let (t, row) = sweep.row(&[("protocol.name", "paydebt".into())])?;
        let seed = t.get(row, "run.seed").as_f64().unwrap_or(1.0);
        let d = derived();
        let q = d.get(super::fairness::TOKEN_TABLE).ok_or("the token queue of fig11 was not derived")?;
        let v = View { t: q, rows: (0..q.rows.len()).collect() }.eq("run.seed", seed);
        if let Some(&r) = v.rows.first() {
            if let Some(e) = q.get(r, "token_queue_error").as_str() {
                return Err(e.to_string());
            }
        }
        let v = v.num("token_queue_kt").ok_or(format!("seed {seed}: no settled sample with >= 3 flows in fig11"))?;
        Ok(Num { v, n: None })
    };
    put(r, "S5", "token_queue_near_kt", Unit::Ratio, tokens(), "");
}

/// The highest load protocol `p` ran at in `s`.
fn top_load(s: &Sweep) -> Option<f64> {
    s.t.and_then(|t| View::ok(t).max("workload.load"))
}

/// S7: 100 Gbps (Fig. 13), at the highest load.
pub fn s7(d: &Tables, r: &mut Record) {
    let s = Sweep::of(d, "fig13");
    let top = top_load(&s);
    let note = top.map_or(String::new(), |l| format!("load {l}"));
    let over = |b: &str, col: &str| -> Got {
        let l = top.ok_or(format!("sweep {} did not run", s.name))?;
        let sel = [("workload.load", l.into())];
        div(s.proto(b, &sel, col), s.proto("paydebt", &sel, col))
    };
    for b in RATE_BASED {
        put(r, "S7", &format!("mean_{b}"), Unit::Ratio, over(b, SMALL_MEAN), &note);
        put(r, "S7", &format!("tail_{b}"), Unit::Ratio, over(b, SMALL_P99), &note);
    }
    for b in ["dcqcn", "hpcc"] {
        put(r, "S7", &format!("buffer_{b}"), Unit::Ratio, over(b, BUF), &note);
    }
}

/// Geometric mean over the rate-based baselines of baseline / PayDebt small-flow mean FCT.
fn small_gain(s: &Sweep) -> Got {
    let mut log_sum = 0.0;
    for b in RATE_BASED {
        log_sum += div(s.proto(b, &[], SMALL_MEAN), s.proto("paydebt", &[], SMALL_MEAN))?.v.ln();
    }
    Ok(Num { v: (log_sum / RATE_BASED.len() as f64).exp(), n: None })
}

/// PayDebt's `col` against the lowest of the rate-based baselines, in percent.
fn vs_best(s: &Sweep, col: &str) -> (Got, String) {
    let (best, at) = smallest(RATE_BASED.map(|b| (b.to_string(), s.proto(b, &[], col))).to_vec());
    (change(s.proto("paydebt", &[], col), best), at)
}

/// S8: 2:1 and 8:1 (Fig. 14a, 14b).
pub fn s8(d: &Tables, r: &mut Record) {
    let (two, eight) = (Sweep::of(d, "fig14a"), Sweep::of(d, "fig14b"));
    put(r, "S8", "small_gain_2to1", Unit::Ratio, small_gain(&two), "");
    let (g, at) = vs_best(&two, SMALL_P99);
    put(r, "S8", "tail_competitive_2to1", Unit::Percent, g, &at);
    put(r, "S8", "gain_larger_8to1", Unit::Ratio, div(small_gain(&eight), small_gain(&two)), "");
}

/// S9: non-blocking, with NDP (Fig. 14c).
pub fn s9(d: &Tables, r: &mut Record) {
    let s = Sweep::of(d, "fig14c");
    let pd = |col: &str| s.proto("paydebt", &[], col);
    put(r, "S9", "homa_better", Unit::Ratio, div(pd(SMALL_MEAN), s.proto("homa", &[], SMALL_MEAN)), "");
    let (g, at) = vs_best(&s, SMALL_MEAN);
    put(r, "S9", "comparable_with_others", Unit::Percent, g, &at);
    put(r, "S9", "ndp_smaller_buffer", Unit::Ratio, div(pd(BUF), s.proto("ndp", &[], BUF)), "");
    put(r, "S9", "ndp_slower_small", Unit::Ratio, div(s.proto("ndp", &[], SMALL_MEAN), pd(SMALL_MEAN)), "");
}
