//! Measures claims R1-R22 of SMaRTT-REPS (experiments/repro/smartt/claims.toml)
//! on one seed's sweep tables; the engine judges them.
//!
//! Every run is a finite workload, so a run's `sim_time_s` is when its last
//! message completed: the paper's "overall completion time". A value is read
//! only from a run whose `stable` column is true (for these finite runs: it
//! delivered what it was offered, docs/model.md); a part that needs an
//! unstable run, or a run that is not there, is recorded as missing.

use crate::engine::{Record, Unit};
use crate::view::{ratio, View};
use crate::Tables;
use fabriclab::sweep::Cell;

/// Every algorithm SMaRTT is compared with in Figs. 1, 10 and 11.
const BASELINES: [&str; 4] = ["eqds", "swift", "bbr", "mprdma"];
/// The sender-based algorithms other than SMaRTT.
const OTHER_SENDERS: [&str; 3] = ["swift", "mprdma", "bbr"];
/// Fig. 10's algorithms other than BBR: the ones BBR's incast lag is measured against (R3).
const NOT_BBR: [&str; 4] = ["smartt", "eqds", "swift", "mprdma"];
/// Our unloaded cross-pod RTT (docs/model.md), the "base RTT" of R3, R11 and R12.
const BASE_RTT_S: f64 = 11.453e-6;
/// The all-to-all tree of fig12.toml is 2:1 oversubscribed at the ToR uplinks.
const FIG12_OVERSUB: f64 = 2.0;
/// 4,134-byte frames carry 4,056 bytes of payload.
const FRAME_OVERHEAD: f64 = 4134.0 / 4056.0;
const HOST_RATE_BPS: f64 = 800e9;
/// testbed-asym.toml: tor0's uplinks (400 + 200 Gbps) shared by its 8 ring connections.
const TESTBED_FAIR_SHARE_BPS: f64 = 600e9 / 8.0;
const MIB: f64 = 1048576.0;

/// Why a part has no value: nothing to judge, or the claimed behaviour did not occur.
#[derive(Clone, Debug, PartialEq)]
enum Gap {
    Missing(String),
    Failed(String),
}

fn missing(why: impl Into<String>) -> Gap {
    Gap::Missing(why.into())
}

type Got<T = f64> = Result<T, Gap>;

/// A measured value with where it was found (for the report) and, behind a
/// percentile, the number of samples.
struct Found {
    value: f64,
    samples: Option<f64>,
    note: String,
}

impl From<f64> for Found {
    fn from(value: f64) -> Found {
        Found { value, samples: None, note: String::new() }
    }
}

fn found(value: f64, note: impl Into<String>) -> Found {
    Found { value, samples: None, note: note.into() }
}

/// Records one part: its value, or why there is none.
fn put(r: &mut Record, claim: &str, part: &str, unit: Unit, got: Got<impl Into<Found>>) {
    match got.map(Into::into) {
        Ok(f) => {
            let e = r.value(claim, part, unit, Some(f.value));
            if let Some(n) = f.samples {
                e.samples(n);
            }
            if !f.note.is_empty() {
                e.note(f.note);
            }
        }
        Err(Gap::Missing(why)) => {
            r.missing(claim, part, unit, why);
        }
        Err(Gap::Failed(why)) => {
            r.failed(claim, part, unit, why);
        }
    }
}

/// The one run `v` selects, if it ran and is stable.
fn run<'a>(v: &View<'a>, what: &str) -> Got<View<'a>> {
    match v.rows.len() {
        0 => Err(missing(format!("not run: {what}"))),
        1 if v.t.get(v.rows[0], "stable") == &Cell::Bool(true) => Ok(v.clone()),
        1 => Err(missing(format!("run unstable: {what}"))),
        n => Err(missing(format!("{n} runs match {what}: the selection is ambiguous"))),
    }
}

/// A column of the one stable run `v` selects.
fn col(v: &View, name: &str, what: &str) -> Got {
    run(v, what)?.num(name).filter(|x| x.is_finite()).ok_or_else(|| missing(format!("no {name}: {what}")))
}

/// Completion time of the run's last message.
fn jct(v: &View, what: &str) -> Got {
    col(v, "sim_time_s", what)
}

/// a / b, missing when b is 0.
fn div(a: f64, b: f64, what: &str) -> Got {
    ratio(Some(a), Some(b)).ok_or_else(|| missing(format!("{what}: division by zero")))
}

/// The successful rows of a sweep.
fn sweep<'a>(t: &'a Tables, name: &str) -> Got<View<'a>> {
    t.get(name).map(View::ok).ok_or_else(|| missing(format!("not run: sweep {name}")))
}

fn proto<'a>(v: &View<'a>, p: &str) -> View<'a> {
    v.eq("protocol.name", p)
}

/// Completion time of protocol `p` in case `v`.
fn jct_of(v: &View, p: &str, case: &str) -> Got {
    jct(&proto(v, p), &format!("{p}, {case}"))
}

/// The smallest completion time among `protocols` in case `v` (every one must have run).
fn fastest(v: &View, protocols: &[&str], case: &str) -> Got {
    let times = protocols.iter().map(|p| jct_of(v, p, case)).collect::<Got<Vec<f64>>>()?;
    Ok(times.into_iter().fold(f64::INFINITY, f64::min))
}

/// Slowest over typical flow: p99 / p50 slowdown, with the flows behind it.
fn spread(v: &View, what: &str) -> Got<(f64, f64)> {
    let p99 = col(v, "slowdown_all_p99", what)?;
    let p50 = col(v, "slowdown_all_p50", what)?;
    let n = col(v, "slowdown_all_count", what)?;
    Ok((div(p99, p50, what)?, n))
}

/// The distinct values of a column, ascending.
fn distinct(v: &View, name: &str) -> Vec<f64> {
    let mut xs = v.nums(name);
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// The smallest (`min`) or largest value with its label; missing if any is missing or none exist.
fn extreme(values: Vec<(String, Got)>, min: bool, what: &str) -> Got<Found> {
    let mut best: Option<(String, f64)> = None;
    for (label, v) in values {
        let v = v?;
        let better = best.as_ref().is_none_or(|(_, b)| if min { v < *b } else { v > *b });
        if better {
            best = Some((label, v));
        }
    }
    best.map(|(label, v)| found(v, format!("{} at {label}", if min { "smallest" } else { "largest" })))
        .ok_or_else(|| missing(format!("no {what}")))
}

/// Measures every claim part on one seed's tables.
pub fn measure(t: &Tables, r: &mut Record) {
    r1(t, r);
    r2_r4_r14(t, r);
    r3_r13(t, r);
    r5_r6(t, r);
    r7_r8(t, r);
    r9_r10(t, r);
    r11_r12(t, r);
    r15_r18(t, r);
    r19(t, r);
    r20(t, r);
}

/// The permutations of Figs. 1 and 11, by name.
fn permutations(t: &Tables) -> Got<Vec<(String, View<'_>)>> {
    let mut out = Vec::new();
    let fig1 = sweep(t, "fig1")?;
    for b in distinct(&fig1, "workload.bytes") {
        out.push((format!("Fig. 1 {} MiB", b / MIB), fig1.eq("workload.bytes", b)));
    }
    for (name, v) in fig11_cases(&sweep(t, "fig11")?) {
        out.push((format!("Fig. 11{name}"), v));
    }
    Ok(out)
}

/// The four cases of fig11.toml, told apart by their zipped settings.
fn fig11_cases<'a>(v: &View<'a>) -> Vec<(&'static str, View<'a>)> {
    let single = |v: &View<'a>| v.eq("workload.count", 1.0).eq("workload.large_bytes", 2.0 * MIB);
    vec![
        ("a", single(&v.eq("topology.fabric_rate_gbps", 400.0))),
        ("b", single(&v.eq("topology.fabric_rate_gbps", 200.0))),
        ("c", v.eq("workload.count", 4.0)),
        ("d", v.eq("workload.large_bytes", 4.0 * MIB)),
    ]
}

/// R1: "constantly outperforms or matches" each named baseline (its worst case)
/// and "by up to 50%" (the largest gain).
fn r1(t: &Tables, r: &mut Record) {
    let cases = match permutations(t) {
        Ok(c) => c,
        Err(g) => {
            for part in ["vs_eqds", "vs_swift", "vs_bbr", "vs_mprdma", "up_to"] {
                put(r, "R1", part, Unit::Ratio, Err::<f64, _>(g.clone()));
            }
            return;
        }
    };
    let over_smartt =
        |p: &str, name: &str, v: &View| -> Got { div(jct_of(v, p, name)?, jct_of(v, "smartt", name)?, name) };
    let mut all = Vec::new();
    for p in BASELINES {
        let per_case: Vec<(String, Got)> = cases.iter().map(|(n, v)| (n.clone(), over_smartt(p, n, v))).collect();
        all.extend(per_case.iter().map(|(n, v)| (format!("{p}, {n}"), v.clone())));
        put(r, "R1", &format!("vs_{p}"), Unit::Ratio, extreme(per_case, true, "permutation"));
    }
    put(r, "R1", "up_to", Unit::Ratio, extreme(all, false, "permutation"));
}

/// R2 (Swift's spread), R4 (EQDS slower at 32 MiB), R14 (SMaRTT fastest and fair at 2 MiB): Fig. 1.
fn r2_r4_r14(t: &Tables, r: &mut Record) {
    let fig1 = sweep(t, "fig1");
    let small = fig1.as_ref().map(|v| v.eq("workload.bytes", 2.0 * MIB)).map_err(Clone::clone);
    let swift = small.clone().and_then(|v| spread(&proto(&v, "swift"), "Swift, Fig. 1 2 MiB"));
    put(
        r,
        "R2",
        "swift_spread",
        Unit::Ratio,
        swift.map(|(s, n)| Found { value: s, samples: Some(n), note: String::new() }),
    );

    // The largest permutation: 32 MiB in full mode, 8 MiB with --quick.
    let large = fig1.and_then(|v| {
        let b = distinct(&v, "workload.bytes").pop().ok_or_else(|| missing("fig1 has no point"))?;
        Ok((v.eq("workload.bytes", b), format!("Fig. 1 {} MiB", b / MIB)))
    });
    for (part, other) in [("eqds_vs_swift", "swift"), ("eqds_vs_mprdma", "mprdma")] {
        let got = large.clone().and_then(|(v, n)| div(jct_of(&v, "eqds", &n)?, jct_of(&v, other, &n)?, &n));
        put(r, "R4", part, Unit::Ratio, got.map(|x| found(x, large.as_ref().map(|l| l.1.clone()).unwrap_or_default())));
    }

    let case = "Fig. 1 2 MiB";
    let fast = small.clone().and_then(|v| div(fastest(&v, &BASELINES, case)?, jct_of(&v, "smartt", case)?, case));
    put(r, "R14", "fastest", Unit::Ratio, fast);
    let fair = small.and_then(|v| {
        let (mine, n) = spread(&proto(&v, "smartt"), "SMaRTT, Fig. 1 2 MiB")?;
        let others =
            BASELINES.iter().map(|p| spread(&proto(&v, p), &format!("{p}, {case}"))).collect::<Got<Vec<_>>>()?;
        let fairest = others.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
        let fewest = others.iter().map(|s| s.1).fold(n, f64::min);
        Ok(Found { value: div(fairest, mine, case)?, samples: Some(fewest), note: String::new() })
    });
    put(r, "R14", "fair", Unit::Ratio, fair);
}

/// Fig. 10's incasts: (label, rows of one incast degree and size).
fn incasts<'a>(v: &View<'a>) -> Vec<(String, f64, View<'a>)> {
    let mut out = Vec::new();
    for n in distinct(v, "workload.senders") {
        for b in distinct(v, "workload.bytes") {
            let w = v.eq("workload.senders", n).eq("workload.bytes", b);
            out.push((format!("{n}:1 of {} KiB", b / 1024.0), b, w));
        }
    }
    out
}

/// R3 (BBR's lag, a proxy for its adjustment time) and R13 (EQDS best in incasts): Fig. 10.
fn r3_r13(t: &Tables, r: &mut Record) {
    let fig10 = match sweep(t, "fig10") {
        Ok(v) => v,
        Err(g) => {
            put(r, "R3", "bbr_lag", Unit::Rtts, Err::<f64, _>(g.clone()));
            put(r, "R13", "eqds_best_share", Unit::Fraction, Err::<f64, _>(g.clone()));
            put(r, "R13", "bbr_medium", Unit::Ratio, Err::<f64, _>(g.clone()));
            put(r, "R13", "mprdma_worse", Unit::Ratio, Err::<f64, _>(g));
            return;
        }
    };
    let cases = incasts(&fig10);
    let lags = cases
        .iter()
        .map(|(n, _, w)| (n.clone(), (|| Ok((jct_of(w, "bbr", n)? - fastest(w, &NOT_BBR, n)?) / BASE_RTT_S))()))
        .collect();
    put(r, "R3", "bbr_lag", Unit::Rtts, extreme(lags, false, "incast"));

    // EQDS is best in an incast when no other algorithm is more than 1% faster.
    let share = (|| -> Got<Found> {
        let mut wins = 0;
        for (n, _, w) in &cases {
            let others = ["smartt", "swift", "mprdma", "bbr"];
            if fastest(w, &others, n)? / jct_of(w, "eqds", n)? >= 0.99 {
                wins += 1;
            }
        }
        if cases.is_empty() {
            return Err(missing("fig10 has no incast"));
        }
        Ok(found(f64::from(wins) / cases.len() as f64, format!("{wins} of {} incasts", cases.len())))
    })();
    put(r, "R13", "eqds_best_share", Unit::Fraction, share);

    let gm = |cases: Vec<Got>, what: &str| -> Got {
        geomean(&cases.into_iter().collect::<Got<Vec<f64>>>()?).ok_or_else(|| missing(format!("no {what}")))
    };
    let medium: Vec<Got> = cases
        .iter()
        .filter(|(_, b, _)| *b == MIB)
        .map(|(n, _, w)| div(jct_of(w, "bbr", n)?, fastest(w, &["smartt", "swift", "mprdma"], n)?, n))
        .collect();
    put(r, "R13", "bbr_medium", Unit::Ratio, gm(medium, "1 MiB incast"));
    let mprdma: Vec<Got> =
        cases.iter().map(|(n, _, w)| div(jct_of(w, "mprdma", n)?, fastest(w, &["smartt", "swift"], n)?, n)).collect();
    put(r, "R13", "mprdma_worse", Unit::Ratio, gm(mprdma, "incast"));
}

/// R5 (ECN-only vs RTT-only vs SMaRTT) and R6 (reacting every 50 ACKs): Figs. 2 and 3.
fn r5_r6(t: &Tables, r: &mut Record) {
    let fig2 = sweep(t, "fig2");
    let variant = |signals: &str, every: f64| -> Got<(View, String)> {
        let v = fig2.clone()?.eq("protocol.smartt.signals", signals).eq("protocol.smartt.react_every", every);
        let what = format!("{signals} reacting every {every} ACK(s)");
        Ok((run(&v, &what)?, what))
    };
    let (smartt, ecn, rtt, every50) =
        (variant("smartt", 1.0), variant("ecn_only", 1.0), variant("rtt_only", 1.0), variant("smartt", 50.0));

    // A window has shrunk when it first falls to half its initial size; the mean over senders, when all did.
    let halving = |v: &Got<(View, String)>| -> Got<Option<f64>> {
        let (v, what) = v.clone()?;
        let all = col(&v, "cwnd_halved_flows", &what)? >= col(&v, "cwnd_flows", &what)?.max(1.0);
        Ok(if all { Some(col(&v, "cwnd_halving_us", &what)?) } else { None })
    };
    let faster = (|| match (halving(&ecn)?, halving(&rtt)?) {
        (None, _) => Err(Gap::Failed("ECN-only's windows did not all fall to half their initial size".into())),
        (Some(_), None) => Err(missing("RTT-only's windows did not all fall to half: no time to compare")),
        (Some(e), Some(rt)) => div(rt, e, "halving times"),
    })();
    put(r, "R5", "ecn_shrinks_faster", Unit::Ratio, faster);
    let of = |v: &Got<(View, String)>, name: &str| v.clone().and_then(|(v, what)| col(&v, name, &what));
    let jain = of(&rtt, "cwnd_jain").and_then(|a| div(a, of(&ecn, "cwnd_jain")?, "Jain indices"));
    put(r, "R5", "rtt_fairer_windows", Unit::Ratio, jain);
    // With the incast's 8 flows the nearest-rank p99 is the slowest flow: an exact statement about them.
    let sp = |v: &Got<(View, String)>| v.clone().and_then(|(v, what)| spread(&v, &what).map(|s| s.0));
    put(r, "R5", "rtt_fairer_fcts", Unit::Ratio, sp(&ecn).and_then(|e| div(e, sp(&rtt)?, "spreads")));
    let jcts = |v: &Got<(View, String)>| v.clone().and_then(|(v, what)| jct(&v, &what));
    let lowest = (|| div(jcts(&ecn)?.min(jcts(&rtt)?), jcts(&smartt)?, "completion times"))();
    put(r, "R5", "smartt_lowest", Unit::Ratio, lowest);

    let within = (|| div(jcts(&every50)?, jcts(&smartt)?, "completion times"))();
    put(r, "R6", "within", Unit::Ratio, within);
}

/// R7 (Wait-to-Decrease: Fig. 5b and Fig. 6's 4:1 point) and R8 (load balancers: Fig. 6).
fn r7_r8(t: &Tables, r: &mut Record) {
    let fig5b = sweep(t, "fig5b");
    for (part, bytes) in [("gain_2mib", 2.0 * MIB), ("gain_32mib", 32.0 * MIB)] {
        let got = fig5b.clone().and_then(|v| {
            let v = v.eq("workload.bytes", bytes);
            let what = |on: bool| format!("WTD {}, {} MiB", if on { "on" } else { "off" }, bytes / MIB);
            let at = |on: bool| jct(&v.eq("protocol.smartt.wtd", Cell::Bool(on)), &what(on));
            div(at(false)?, at(true)?, "completion times")
        });
        put(r, "R7", part, Unit::Ratio, got);
    }

    let fig6 = sweep(t, "fig6");
    let lb = |kind: &str, wtd: bool, reuse: &str| -> Got<(View, String)> {
        let v = fig6.clone()?;
        let v = v.eq("protocol.smartt.lb.kind", kind).eq("protocol.smartt.wtd", Cell::Bool(wtd));
        let what = format!(
            "{kind}{}{}, Fig. 6",
            if wtd { "" } else { " without WTD" },
            if reuse == "once" { " reusing once" } else { "" }
        );
        Ok((run(&v.eq("protocol.smartt.lb.reuse", reuse), &what)?, what))
    };
    let time = |v: &Got<(View, String)>| v.clone().and_then(|(v, what)| jct(&v, &what));
    let (reps, spray, ecmp, plb) = (
        lb("reps", true, "cached"),
        lb("spray", true, "cached"),
        lb("ecmp", true, "cached"),
        lb("plb", true, "cached"),
    );
    let over =
        |a: &Got<(View, String)>, b: &Got<(View, String)>| -> Got { div(time(a)?, time(b)?, "completion times") };
    put(r, "R7", "gain_4to1", Unit::Ratio, over(&lb("reps", false, "cached"), &reps));
    put(r, "R8", "reps_vs_spray", Unit::Ratio, over(&spray, &reps));
    put(r, "R8", "ecmp_vs_spray", Unit::Ratio, over(&ecmp, &spray));
    put(r, "R8", "ecmp_vs_reps", Unit::Ratio, over(&ecmp, &reps));
    put(r, "R8", "plb_slower", Unit::Ratio, over(&plb, &reps));
    let fairer = (|| {
        let ((v1, w1), (v2, w2)) = (ecmp.clone()?, plb.clone()?);
        let ((e, ne), (p, np)) = (spread(&v1, &w1)?, spread(&v2, &w2)?);
        Ok(Found { value: div(e, p, "spreads")?, samples: Some(ne.min(np)), note: String::new() })
    })();
    put(r, "R8", "plb_fairer", Unit::Ratio, fairer);

    // Fig. 6b: every data packet's RTT; the target is 1.5x the run's smallest sample.
    let rtts = |v: &Got<(View, String)>| -> Got<RttSpread> {
        let (v, what) = v.clone()?;
        let c = |name: &str| col(&v, name, &what);
        let (min, p50) = (c("rtt_us_min")?, c("rtt_us_p50")?);
        Ok(RttSpread {
            off_target: (p50 - 1.5 * min).abs(),
            width: c("rtt_us_p99")? - c("rtt_us_p1")?,
            n: c("rtt_us_count")?,
        })
    };
    let compare = |f: fn(&RttSpread) -> f64, pct: &str| -> Got<Found> {
        let mine = rtts(&reps)?;
        let others = [&spray, &ecmp, &plb].into_iter().map(rtts).collect::<Got<Vec<_>>>()?;
        let best = others.iter().map(f).fold(f64::INFINITY, f64::min);
        let n = others.iter().map(|o| o.n).fold(mine.n, f64::min);
        Ok(Found { value: div(best, f(&mine), pct)?, samples: Some(n), note: String::new() })
    };
    put(r, "R8", "rtt_closer", Unit::Ratio, compare(|s| s.off_target, "distances from the target"));
    put(r, "R8", "rtt_tighter", Unit::Ratio, compare(|s| s.width, "p1-p99 widths"));
}

/// A run's packet RTT distribution: the median's distance from the target,
/// the p1-p99 width (us), and the samples.
struct RttSpread {
    off_target: f64,
    width: f64,
    n: f64,
}

/// The load balancers of the testbed figures (fig7, fig7c).
#[derive(Clone, Copy)]
enum Lb {
    RepsMessage,
    RepsConnection,
    /// Per connection, each unmarked ACK's entropy reused once (`lb.reuse = "once"`).
    RepsConnectionOnce,
    Spray,
}

impl Lb {
    fn select<'a>(self, v: &View<'a>) -> (View<'a>, &'static str) {
        let (kind, scope, reuse, name) = match self {
            Lb::RepsMessage => ("reps", "message", "cached", "REPS per message"),
            Lb::RepsConnection => ("reps", "connection", "cached", "REPS per connection"),
            Lb::RepsConnectionOnce => ("reps", "connection", "once", "REPS per connection reusing once"),
            Lb::Spray => ("spray", "message", "cached", "spraying"),
        };
        let v = v.eq("protocol.smartt.lb.kind", kind).eq("protocol.smartt.lb.scope", scope);
        (v.eq("protocol.smartt.lb.reuse", reuse), name)
    }
}

/// R9 (the asymmetric testbed, Fig. 7) and R10 (the failed link, Fig. 7c), simulated.
fn r9_r10(t: &Tables, r: &mut Record) {
    let fig7 = sweep(t, "fig7");
    let time = |lb: Lb| -> Got {
        let (v, name) = lb.select(&fig7.clone()?);
        jct(&v, &format!("{name}, Fig. 7"))
    };
    // A rank's bytes (each sends 2(N-1)/N of the buffer) at the fair share, over the completion time.
    let share = |lb: Lb| -> Got {
        let (v, name) = lb.select(&fig7.clone()?);
        let what = format!("{name}, Fig. 7");
        let per_rank = col(&v, "bytes_delivered", &what)? / col(&v, "hosts", &what)?;
        div(per_rank * FRAME_OVERHEAD * 8.0 / TESTBED_FAIR_SHARE_BPS, jct(&v, &what)?, &what)
    };
    put(r, "R9", "goodput_share", Unit::Fraction, share(Lb::RepsConnection));
    put(r, "R9", "spray_slower", Unit::Ratio, (|| div(time(Lb::Spray)?, time(Lb::RepsConnection)?, "Fig. 7"))());
    put(r, "R9", "goodput_share_per_message", Unit::Fraction, share(Lb::RepsMessage));
    put(r, "R9", "goodput_share_once", Unit::Fraction, share(Lb::RepsConnectionOnce));

    let lost = |lb: Lb| -> Got {
        let (v, name) = lb.select(&sweep(t, "fig7c")?);
        col(&v, "link_down_drops", &format!("{name}, Fig. 7c"))
    };
    let fewer = (|| {
        let (spray, reps) = (lost(Lb::Spray)?, lost(Lb::RepsConnection)?);
        if reps == 0.0 {
            return Err(missing("REPS lost no packet on the dead link: the ratio has no finite value"));
        }
        Ok(found(spray / reps, format!("spraying {spray:.0} packets lost, REPS {reps:.0}")))
    })();
    put(r, "R10", "fewer_drops", Unit::Ratio, fewer);
    put(
        r,
        "R10",
        "adapts_within",
        Unit::Rtts,
        Err::<f64, _>(missing("not measured: runs count the dead link's losses, not when REPS stops using it")),
    );
}

/// R11 and R12: the extra completion time without trimming, and unnecessary retransmissions.
fn r11_r12(t: &Tables, r: &mut Record) {
    let with = |name: &str, on: bool| -> Got<(View, String)> {
        let v = sweep(t, name)?.eq("network.trimming", Cell::Bool(on));
        let what = format!("{name} {} trimming", if on { "with" } else { "without" });
        Ok((run(&v, &what)?, what))
    };
    let extra = |name: &str| -> Got {
        let ((off, w0), (on, w1)) = (with(name, false)?, with(name, true)?);
        Ok((jct(&off, &w0)? - jct(&on, &w1)?) / BASE_RTT_S)
    };
    put(r, "R11", "extra_rtts", Unit::Rtts, extra("fig8"));
    put(r, "R12", "extra_incast", Unit::Rtts, extra("fig8"));
    put(r, "R12", "extra_permutation", Unit::Rtts, extra("fig9"));
    let spurious = ["fig8", "fig9"]
        .iter()
        .map(|s| (s.to_string(), with(s, false).and_then(|(v, what)| unnecessary(&v, &what))))
        .collect();
    put(r, "R12", "unnecessary_retx", Unit::Fraction, extreme(spurious, false, "run without trimming"));
}

/// Data packets sent beyond each message's packets and the drops, over the messages' packets.
fn unnecessary(v: &View, what: &str) -> Got {
    let c = |name: &str| col(v, name, what);
    let msgs = c("messages_started")?;
    let per_msg = (c("bytes_delivered")? / msgs / c("mss_bytes")?).ceil();
    let needed = msgs * per_msg;
    Ok(((c("data_packets_sent")? - needed - c("drops")?) / needed).max(0.0))
}

/// R15-R18: Fig. 11's four permutations.
fn r15_r18(t: &Tables, r: &mut Record) {
    let fig11 = sweep(t, "fig11");
    let case = |n: &str| -> Got<(View, String)> {
        let v = fig11.clone()?;
        let w = fig11_cases(&v).into_iter().find(|(c, _)| *c == n).map(|(_, w)| w).expect("a Fig. 11 case");
        Ok((w, format!("Fig. 11{n}")))
    };
    let ratio = |v: &View, who: &[&str], whom: &str, name: &str| -> Got {
        div(fastest(v, who, name)?, jct_of(v, whom, name)?, name)
    };
    let over = |n: &str, who: &[&str], whom: &str| -> Got {
        let (v, name) = case(n)?;
        ratio(&v, who, whom, &name)
    };
    put(r, "R15", "fastest_2to1", Unit::Ratio, over("a", &BASELINES, "smartt"));
    put(r, "R15", "fastest_4to1", Unit::Ratio, over("b", &BASELINES, "smartt"));
    // The same two points with the authors' htsim queues between switches (fig11q.toml, whose
    // only axes are the rate and the protocol).
    let authors = |rate: f64, name: &str| -> Got {
        ratio(&sweep(t, "fig11q")?.eq("topology.fabric_rate_gbps", rate), &BASELINES, "smartt", name)
    };
    put(r, "R15", "fastest_2to1_authors_queues", Unit::Ratio, authors(400.0, "Fig. 11a, the authors' queues"));
    put(r, "R15", "fastest_4to1_authors_queues", Unit::Ratio, authors(200.0, "Fig. 11b, the authors' queues"));
    put(r, "R16", "eqds_gap", Unit::Ratio, over("c", &["eqds"], "smartt"));
    put(r, "R16", "senders_gap", Unit::Ratio, over("c", &OTHER_SENDERS, "smartt"));
    put(r, "R17", "senders_gap", Unit::Ratio, over("d", &OTHER_SENDERS, "smartt"));
    put(r, "R17", "eqds_beats_senders", Unit::Ratio, over("d", &OTHER_SENDERS, "eqds"));

    let trims = |n: &str| -> Got {
        let (v, name) = case(n)?;
        let of = |p: &str| col(&proto(&v, p), "trims", &format!("{p}, {name}"));
        let smartt = of("smartt")?;
        if smartt == 0.0 {
            return Err(missing(format!("SMaRTT trimmed no packet in {name}: the ratio has no finite value")));
        }
        Ok(of("eqds")? / smartt)
    };
    let both = ["c", "d"].iter().map(|n| (format!("Fig. 11{n}"), trims(n))).collect();
    put(r, "R18", "trims", Unit::Ratio, extreme(both, false, "Fig. 11 case"));
}

/// R19: the windowed all-to-all of Fig. 12.
fn r19(t: &Tables, r: &mut Record) {
    let fig12 = sweep(t, "fig12");
    let at = |last: bool| -> Got<(View, String)> {
        let v = fig12.clone()?;
        let ks = distinct(&v, "workload.window");
        let k = if last { ks.last() } else { ks.first() }.copied().ok_or_else(|| missing("fig12 has no point"))?;
        Ok((v.eq("workload.window", k), format!("k = {k}")))
    };
    let degrades = (|| {
        let ((lo, a), (hi, b)) = (at(false)?, at(true)?);
        div(jct_of(&hi, "eqds", &b)?, jct_of(&lo, "eqds", &a)?, "EQDS")
    })();
    put(r, "R19", "eqds_degrades", Unit::Ratio, degrades);
    // Ideal: the larger of a host's bytes at line rate and its rack's cross-rack bytes over the 2:1 uplinks.
    let vs_ideal = (|| {
        let (v, k) = at(true)?;
        let s = proto(&v, "smartt");
        let what = format!("smartt, {k}");
        let n = col(&s, "hosts", &what)?;
        let per_host = col(&s, "bytes_delivered", &what)? / n;
        let per_tor = (4.0 * n).cbrt() / 2.0; // hosts per ToR of a k-ary 3-tier fat tree
        let cross = (n - per_tor) / (n - 1.0);
        let ideal = per_host * FRAME_OVERHEAD * 8.0 / HOST_RATE_BPS * (cross * FIG12_OVERSUB).max(1.0);
        Ok(found(div(jct(&s, &what)?, ideal, &what)?, k))
    })();
    put(r, "R19", "smartt_vs_ideal", Unit::Ratio, vs_ideal);
    let leads = (|| {
        let (v, k) = at(true)?;
        Ok(found(div(fastest(&v, &["eqds", "swift", "mprdma"], &k)?, jct_of(&v, "smartt", &k)?, &k)?, k))
    })();
    put(r, "R19", "smartt_leads", Unit::Ratio, leads);
}

/// R20: EQDS with a SMaRTT or MPRDMA window cap (Fig. 13).
fn r20(t: &Tables, r: &mut Record) {
    let fig13 = sweep(t, "fig13");
    // Small flows: the smaller size of the sweep; large: the larger.
    let time = |large: bool, p: &str, cap: &str| -> Got {
        let v = fig13.clone()?;
        let sizes = distinct(&v, "workload.bytes");
        let b =
            if large { sizes.last() } else { sizes.first() }.copied().ok_or_else(|| missing("fig13 has no point"))?;
        let w = proto(&v.eq("workload.bytes", b), p).eq("protocol.eqds.cwnd_cap", cap);
        jct(&w, &format!("{p} with cap {cap}, {} MiB", b / MIB))
    };
    let over = |a: Got, b: Got| -> Got { div(a?, b?, "completion times") };
    put(r, "R20", "cap_helps_small", Unit::Ratio, over(time(false, "eqds", "none"), time(false, "eqds", "smartt")));
    put(
        r,
        "R20",
        "beats_mprdma_cap_small",
        Unit::Ratio,
        over(time(false, "eqds", "mprdma"), time(false, "eqds", "smartt")),
    );
    put(r, "R20", "cap_helps_large", Unit::Ratio, over(time(true, "eqds", "none"), time(true, "eqds", "smartt")));
    put(r, "R20", "alone_large", Unit::Ratio, over(time(true, "eqds", "none"), time(true, "smartt", "none")));
}

#[cfg(test)]
mod tests;
