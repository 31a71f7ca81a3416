//! PayDebt claims on the setups beyond the 4:1 fabric at load 0.8: the
//! simulated testbed (T1, T2: Fig. 8), fairness (S5: Fig. 11), 100 Gbps (S7:
//! Fig. 13) and other fan-in ratios (S8, S9: Fig. 14).

use super::claims::{kb, over, pct, proto, reduction, ALL_MEAN, BUF, SMALL_MEAN, SMALL_P99};
use crate::bolt::tapped::derived;
use crate::sird::data::View;
use crate::verdict::{claim, combine, factor, ratio, threshold, x, Claim, Verdict};
use crate::Tables;
use fabriclab::sweep::Table;

/// The non-Homa baselines of the simulations.
const RATE_BASED: [&str; 3] = ["dcqcn", "hpcc", "expresspass"];

/// "Within `by` (0.25 = 25%) either way": holds, qualitatively within 2x.
fn within(r: Option<f64>, by: f64) -> Verdict {
    threshold(r.map(|r| r.ln().abs()), by.ln_1p(), 2f64.ln())
}

/// "PayDebt does better than these": holds if every ratio (baseline / PayDebt)
/// exceeds 1, qualitatively if some do.
fn beats(ratios: &[Option<f64>]) -> Verdict {
    let r: Vec<f64> = ratios.iter().flatten().copied().collect();
    match r.iter().filter(|&&v| v > 1.0).count() {
        _ if r.is_empty() => Verdict::NotMeasured,
        n if n == r.len() => Verdict::Holds,
        0 => Verdict::DoesNotHold,
        _ => Verdict::Qualitative,
    }
}

fn list(r: &[Option<f64>]) -> String {
    r.iter().map(|v| x(*v)).collect::<Vec<_>>().join(", ")
}

/// Geometric mean of the ratios present.
fn geo(r: &[Option<f64>]) -> Option<f64> {
    let v: Vec<f64> = r.iter().flatten().copied().collect();
    (!v.is_empty()).then(|| (v.iter().map(|v| v.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// A testbed (Fig. 8) value: `proto` with `prios` priorities, buffer mode `queue`
/// (per-queue bytes), web search/Hadoop `dist` (None: the Memcached table).
fn tb(d: &Tables, dist: Option<&str>, queue: f64, p: &str, prios: f64, col: &str) -> Option<f64> {
    let t = d.get(if dist.is_some() { "fig8" } else { "fig8c" })?;
    let v = View::ok(t).eq("network.queue_buffer_bytes", queue).eq("protocol.name", p).eq("network.priorities", prios);
    match dist {
        Some(s) => v.eq("workload.size_dist", s).num(col),
        None => v.num(col),
    }
}

/// T1 and T2 on the simulated testbed.
pub fn testbed(d: &Tables) -> [Claim; 2] {
    const BIG: f64 = 16e6;
    const SMALL: f64 = 128e3;
    let drop_ratio = |dist, q, p, n| ratio(tb(d, dist, q, p, n, "drops"), tb(d, dist, q, p, n, "packets_sent"));
    let (hd, ws, mc) = (Some("wkb"), Some("wkc"), None);

    let mut t1 = claim(
        "T1",
        "§5.1, Fig. 8a/c/d",
        "Testbed (simulated here), 2:1 dumbbell, 16 MB shared buffer: no drops for PayDebt or Homa; PayDebt \
         comparable to Homa on Memcached and Hadoop; on web search its small flows are slower (no priorities) but \
         medium/large flows faster; Homa with 2 priority queues is downgraded.",
    );
    let drops = [hd, ws, mc].map(|w| {
        let v = ["paydebt", "homa"].map(|p| tb(d, w, BIG, p, 8.0, "drops"));
        v.iter().flatten().copied().reduce(f64::max)
    });
    let any_drop = drops.iter().flatten().copied().reduce(f64::max);
    let near =
        [hd, mc].map(|w| ratio(tb(d, w, BIG, "paydebt", 8.0, SMALL_MEAN), tb(d, w, BIG, "homa", 8.0, SMALL_MEAN)));
    let ws_small = ratio(tb(d, ws, BIG, "paydebt", 8.0, SMALL_MEAN), tb(d, ws, BIG, "homa", 8.0, SMALL_MEAN));
    let ws_all = ratio(tb(d, ws, BIG, "homa", 8.0, ALL_MEAN), tb(d, ws, BIG, "paydebt", 8.0, ALL_MEAN));
    let two_q =
        [hd, ws, mc].map(|w| ratio(tb(d, w, BIG, "homa", 2.0, SMALL_MEAN), tb(d, w, BIG, "homa", 8.0, SMALL_MEAN)));
    t1.measured = format!(
        "most drops (PayDebt or Homa): {}; PayDebt/Homa small-flow mean FCT Hadoop {}, Memcached {}; web search: \
         PayDebt/Homa small mean {}, Homa/PayDebt all-flow mean {}; Homa 2q / 8q small mean (Hadoop, web search, \
         Memcached) {}",
        any_drop.map_or("n/a".into(), |v| format!("{v}")),
        x(near[0]),
        x(near[1]),
        x(ws_small),
        x(ws_all),
        list(&two_q)
    );
    t1.verdict = combine(&[
        threshold(any_drop, 0.0, 0.0),
        within(near[0], 0.25),
        within(near[1], 0.25),
        factor(ws_small, 1.1),
        factor(ws_all, 1.1),
        factor(two_q.iter().flatten().copied().reduce(f64::max), 1.1),
    ]);
    t1.discussion = "The testbed simulated (testbed.toml): 2+2 hosts, base RTT 11 us, all-to-all Poisson at 0.8 of \
                     the inter-switch link (the paper gives no testbed load). 'Comparable' = within 25%; the other \
                     parts have no number in the paper and hold at 10%."
        .into();

    let mut t2 = claim(
        "T2",
        "§5.1, Fig. 8b/d",
        "Testbed (simulated here), 128 KB per queue: PayDebt no drops; Homa drops 0.28% (Hadoop) and 0.10% (web \
         search), Memcached almost unchanged; PayDebt's small-flow avg FCT 63.5% (Hadoop) and 37.6% (web search) \
         below Homa's, tail 3.1x and 1.9x lower.",
    );
    let pd_drops = [hd, ws, mc].map(|w| tb(d, w, SMALL, "paydebt", 8.0, "drops"));
    let homa_loss = [hd, ws].map(|w| drop_ratio(w, SMALL, "homa", 8.0));
    let mean =
        [hd, ws].map(|w| ratio(tb(d, w, SMALL, "homa", 8.0, SMALL_MEAN), tb(d, w, SMALL, "paydebt", 8.0, SMALL_MEAN)));
    let tail =
        [hd, ws].map(|w| ratio(tb(d, w, SMALL, "homa", 8.0, SMALL_P99), tb(d, w, SMALL, "paydebt", 8.0, SMALL_P99)));
    let mc_same = ratio(tb(d, mc, SMALL, "homa", 8.0, SMALL_MEAN), tb(d, mc, BIG, "homa", 8.0, SMALL_MEAN));
    t2.measured = format!(
        "PayDebt drops (Hadoop, web search, Memcached) {:?}; Homa loss Hadoop {}, web search {}; Homa/PayDebt small \
         mean {}, small p99 {}; Homa Memcached small mean 128 KB / 16 MB {}",
        pd_drops.map(|v| v.unwrap_or(f64::NAN)),
        pct(homa_loss[0]),
        pct(homa_loss[1]),
        list(&mean),
        list(&tail),
        x(mc_same)
    );
    let loss_near = |v: Option<f64>, paper: f64| match v {
        None => Verdict::NotMeasured,
        Some(v) => crate::verdict::range(&[v], paper, paper),
    };
    t2.verdict = combine(&[
        threshold(pd_drops.iter().flatten().copied().reduce(f64::max), 0.0, 0.0),
        loss_near(homa_loss[0], 0.0028),
        loss_near(homa_loss[1], 0.0010),
        within(mc_same, 0.25),
        factor(mean[0], reduction(0.635)),
        factor(mean[1], reduction(0.376)),
        factor(tail[0], 3.1),
        factor(tail[1], 1.9),
    ]);
    t2.discussion = "Homa here has 8 priorities (ms-scale timeouts as in its paper). With 128 KB per queue and load \
                     0.8 of the inter-switch link, whether Homa's queues overflow depends on the unknown testbed load."
        .into();
    [t1, t2]
}

/// S5 from the tapped Fig. 11 runs.
pub fn fairness() -> Claim {
    let t = derived().get("fig11").cloned();
    // A derived table: every row ran (no status column).
    let j = |p: &str, col: &str| {
        let t = t.as_ref()?;
        View { t, rows: (0..t.rows.len()).collect() }.eq("protocol.name", p).num(col)
    };
    let (pd, ep) = (j("paydebt", "jain_mean"), j("expresspass", "jain_mean"));
    let mut c = claim(
        "S5",
        "§5.3, Fig. 11",
        "Fairness: 8 flows join one by one and then leave one bottleneck to different receivers; PayDebt and \
         ExpressPass converge quickly, PayDebt is fairer (no token drops); the token queue exceeds K_t = 1 BDP when \
         the 3rd flow joins, then converges around K_t.",
    );
    c.measured = format!(
        "Jain's index over 100 us bins with a stable set of flows: PayDebt mean {} (min {}), ExpressPass mean {} \
         (min {})",
        j("paydebt", "jain_mean").map_or("n/a".into(), |v| format!("{v:.3}")),
        j("paydebt", "jain_min").map_or("n/a".into(), |v| format!("{v:.3}")),
        ep.map_or("n/a".into(), |v| format!("{v:.3}")),
        j("expresspass", "jain_min").map_or("n/a".into(), |v| format!("{v:.3}")),
    );
    let fairer = match (pd, ep) {
        (Some(p), Some(e)) if p >= e => Verdict::Holds,
        (Some(_), Some(_)) => Verdict::DoesNotHold,
        _ => Verdict::NotMeasured,
    };
    c.verdict = combine(&[threshold(pd.map(|v| 1.0 - v), 0.05, 0.2), fairer]);
    c.discussion = "Converged = PayDebt's mean index >= 0.95 (300 us after each join or leave, 30 RTTs). The token \
                    queue over time is not measured: fabriclab records per-port maxima, not time series \
                    (tests/paydebt.rs checks that token CC bounds the token queue of a sender pulled by 8 receivers)."
        .into();
    c
}

/// The rows of `t` at its highest load.
fn at_top_load(t: Option<&Table>) -> Option<(Table, f64)> {
    let t = t?;
    let top = View::ok(t).nums("workload.load").into_iter().reduce(f64::max)?;
    let v = View::ok(t).eq("workload.load", top);
    Some((Table { columns: t.columns.clone(), rows: v.rows.iter().map(|&r| t.rows[r].clone()).collect() }, top))
}

/// S7: 100 Gbps.
pub fn s7(d: &Tables) -> Claim {
    let top = at_top_load(d.get("fig13"));
    let t = top.as_ref().map(|(t, _)| t);
    let others = ["dcqcn", "hpcc", "expresspass"];
    let (mean, tail, buf) = (
        others.map(|p| over(t, p, SMALL_MEAN)),
        others.map(|p| over(t, p, SMALL_P99)),
        ["dcqcn", "hpcc"].map(|p| over(t, p, BUF)),
    );
    let mut c = claim(
        "S7",
        "§5.3, Fig. 13",
        "100 Gbps, web search, 20%-80% load: the same trends as at 10 Gbps; PayDebt reduces avg and tail FCT (Homa \
         omitted: loss and timeouts at 100 Gbps).",
    );
    c.measured = format!(
        "at load {}: DCQCN, HPCC, EP / PayDebt small-flow mean {}; p99 {}; DCQCN, HPCC / PayDebt max buffer {}",
        top.as_ref().map_or("n/a".into(), |(_, l)| format!("{l}")),
        list(&mean),
        list(&tail),
        list(&buf)
    );
    c.verdict = combine(&[beats(&mean), beats(&tail), beats(&buf)]);
    c.discussion = "Fabric of base.toml at 100 Gbps (BDP 62.5 KB at the 5.0 us unloaded RTT), 4:1. 'Reduces' = \
                    below every baseline at the highest load; 'same trends' read as PayDebt's buffer below DCQCN's \
                    and HPCC's, as at 10 Gbps."
        .into();
    c
}

/// S8: 2:1 and 8:1.
pub fn s8(d: &Tables) -> Claim {
    let (t2, t8) = (d.get("fig14a"), d.get("fig14b"));
    let gain = |t| RATE_BASED.map(|p| over(t, p, SMALL_MEAN));
    let (g2, g8) = (geo(&gain(t2)), geo(&gain(t8)));
    let best_tail = RATE_BASED.iter().filter_map(|p| proto(t2, p, SMALL_P99)).reduce(f64::min);
    let tail2 = ratio(proto(t2, "paydebt", SMALL_P99), best_tail);
    let mut c = claim(
        "S8",
        "§5.3, Fig. 14a/b",
        "Web search at 2:1 and 8:1 oversubscription: at 2:1 good small-flow performance with a competitive tail; at \
         8:1 a more notable improvement on small flows.",
    );
    c.measured = format!(
        "DCQCN, HPCC, EP / PayDebt small-flow mean at 2:1 {} (geometric mean {}), at 8:1 {} (geometric mean {}); \
         PayDebt small p99 / best of them at 2:1 {}",
        list(&gain(t2)),
        x(g2),
        list(&gain(t8)),
        x(g8),
        x(tail2)
    );
    c.verdict = combine(&[factor(g2, 1.1), within(tail2, 0.25), factor(ratio(g8, g2), 1.1)]);
    c.discussion = "No numbers in the paper: gains hold at 10%, 'competitive' = within 25% of the best baseline's \
                    p99. Load 0.8 of the core at each ratio."
        .into();
    c
}

/// S9: non-blocking, with NDP.
pub fn s9(d: &Tables) -> Claim {
    let t = d.get("fig14c");
    let best = RATE_BASED.iter().filter_map(|p| proto(t, p, SMALL_MEAN)).reduce(f64::min);
    let comparable = ratio(proto(t, "paydebt", SMALL_MEAN), best);
    let homa = ratio(proto(t, "paydebt", SMALL_MEAN), proto(t, "homa", SMALL_MEAN));
    let ndp_buf = ratio(proto(t, "paydebt", BUF), proto(t, "ndp", BUF));
    let ndp_fct = over(t, "ndp", SMALL_MEAN);
    let mut c = claim(
        "S9",
        "§5.3, Fig. 14c",
        "Web search, non-blocking: Homa is better on small flows; PayDebt at least comparable with the others; NDP \
         has a smaller buffer than PayDebt but worse small-flow FCT.",
    );
    c.measured = format!(
        "PayDebt/Homa small mean {}; PayDebt / best of DCQCN, HPCC, EP small mean {}; PayDebt/NDP max buffer {} \
         ({} vs {}); NDP/PayDebt small mean {}",
        x(homa),
        x(comparable),
        x(ndp_buf),
        kb(proto(t, "paydebt", BUF)),
        kb(proto(t, "ndp", BUF)),
        x(ndp_fct)
    );
    c.verdict = combine(&[factor(homa, 1.1), within(comparable, 0.25), factor(ndp_buf, 1.1), factor(ndp_fct, 1.1)]);
    c.discussion =
        "'Comparable' = within 25% of the best of DCQCN, HPCC and ExpressPass; the other parts hold at 10%.".into();
    c
}
