//! Measures Bolt's claims (experiments/repro/bolt/claims.toml, from the
//! thesis, ch. 4) on one seed's tables: the fat-tree and
//! incast sweeps, and the tapped re-runs of Table 4.1 and Figs. 4.11/4.12
//! ([`super::tapped::derived`], read at this seed).
//!
//! One rule for every part: values come only from runs whose `stable` column is
//! true; a part whose run is missing or unstable is recorded missing, with why.
//! A flow that never captures the bandwidth is recorded failed, never as a number.

use super::tapped::derived;
use crate::engine::{Record, Unit};
use crate::view::View;
use crate::Tables;
use fabriclab::sweep::{Cell, Table};

/// The fat-tree sweeps by workload: (sweep, part suffix, name in reasons).
/// The thesis's Fig. 4.16 is READ RPC, its Fig. 4.17 Hadoop.
const READ: (&str, &str, &str) = ("fig4_17", "read", "READ RPC fat tree");
const HADOOP: (&str, &str, &str) = ("fig4_16", "hadoop", "Hadoop fat tree");

/// The bottleneck of the incast (Table 4.2), bits per second.
const INCAST_RATE_BPS: f64 = 100e9;

/// One stable, successful run: a row of a table.
#[derive(Clone, Copy)]
struct Run<'a> {
    t: &'a Table,
    r: usize,
}

impl Run<'_> {
    fn num(&self, col: &str) -> Option<f64> {
        self.t.get(self.r, col).as_f64()
    }
}

/// The single run of `v`, if it ran, succeeded and is stable; else why not.
fn stable_run<'a>(v: &View<'a>, what: &str) -> Result<Run<'a>, String> {
    let Some(&r) = v.rows.first() else { return Err(format!("{what}: not run (or failed)")) };
    if v.t.get(r, "stable") != &Cell::Bool(true) {
        let growth =
            v.t.get(r, "backlog_growth").as_f64().map_or(String::new(), |g| format!(", backlog growth {g:.3}"));
        return Err(format!("run unstable: {what}{growth}"));
    }
    Ok(Run { t: v.t, r })
}

/// The stable run of `protocol` in sweep `sweep`.
fn protocol_run<'a>(t: &'a Tables, sweep: &str, protocol: &str, what: &str) -> Result<Run<'a>, String> {
    let Some(table) = t.get(sweep) else { return Err(format!("{what}: sweep {sweep} not run")) };
    stable_run(&View::ok(table).eq("protocol", protocol), &format!("{protocol}, {what}"))
}

/// A value with the sample count behind it (None: not a percentile).
type Sampled = (f64, Option<f64>);

/// Records `v` (or why there is none) for a part.
fn put(r: &mut Record, claim: &str, part: &str, unit: Unit, v: Result<Sampled, String>, note: &str) {
    match v {
        Ok((x, n)) => {
            let e = r.value(claim, part, unit, Some(x));
            if n.is_some() {
                e.samples(n);
            }
            if !note.is_empty() {
                e.note(note);
            }
        }
        Err(why) => {
            r.missing(claim, part, unit, why);
        }
    }
}

pub fn measure(t: &Tables, r: &mut Record) {
    fat_tree(t, r);
    incast(t, r);
    ablation(r);
    capture_after_completion(r);
    capture_after_reroute(r);
    line_rates(t, r);
    burstiness(t, r);
    flow_arrival(r);
    fairness(r);
    notification_drain(r);
}

/// Fig. 4.14's sweep and its two size bins (at 100 Gb/s: up to 0.7 BDP, and 0.7 to 1 BDP).
const RATES: &str = "fig4_14";
const SMALL: &str = "slowdown_bins_le_43694";
const LARGE: &str = "slowdown_bins_le_62420";

/// The stable run of `protocol` at `gbps` in Fig. 4.14's sweep.
fn rate_run<'a>(t: &'a Tables, protocol: &str, gbps: f64) -> Result<Run<'a>, String> {
    let Some(table) = t.get(RATES) else { return Err(format!("sweep {RATES} not run")) };
    let v = View::ok(table)
        .eq("protocol", protocol)
        .filter(|t, r| t.get(r, "topology.host_rate_gbps").as_f64() == Some(gbps));
    stable_run(&v, &format!("{protocol} at {gbps} Gb/s"))
}

/// `protocol`'s p99 slowdown in `bin` at `hi` Gb/s over `lo` Gb/s, with the smaller sample count.
fn rate_ratio(t: &Tables, protocol: &str, bin: &str, hi: f64, lo: f64) -> Result<Sampled, String> {
    let (a, b) = (rate_run(t, protocol, hi)?, rate_run(t, protocol, lo)?);
    let (p99, count) = (format!("{bin}_p99"), format!("{bin}_count"));
    let x = crate::view::ratio(a.num(&p99), b.num(&p99)).ok_or_else(|| format!("{p99}: no data"))?;
    Ok((x, Some(a.num(&count).unwrap_or(0.0).min(b.num(&count).unwrap_or(0.0)))))
}

/// R18 on the 63-to-1 star at 100, 200 and 400 Gb/s (§4.5.2, Fig. 4.14).
fn line_rates(t: &Tables, r: &mut Record) {
    let pct = |v: Result<Sampled, String>| v.map(|(x, n)| (100.0 * (x - 1.0), n));
    put(r, "R18", "hpcc_small_400_vs_100", Unit::Percent, pct(rate_ratio(t, "hpcc", SMALL, 400.0, 100.0)), "");
    put(r, "R18", "swift_200_vs_100", Unit::Ratio, rate_ratio(t, "swift", SMALL, 200.0, 100.0), "");
    put(r, "R18", "swift_400_vs_200", Unit::Ratio, rate_ratio(t, "swift", SMALL, 400.0, 200.0), "");
    put(r, "R18", "bolt_400_vs_100", Unit::Percent, pct(rate_ratio(t, "bolt", SMALL, 400.0, 100.0)), "");
    // HPCC over the better of the others, between 0.7 and 1 BDP: the smallest over the rates.
    let worst_margin = || -> Result<(Sampled, f64), String> {
        let (p99, count) = (format!("{LARGE}_p99"), format!("{LARGE}_count"));
        let mut least: Option<(Sampled, f64)> = None;
        for gbps in [100.0, 200.0, 400.0] {
            let runs = [rate_run(t, "hpcc", gbps)?, rate_run(t, "bolt", gbps)?, rate_run(t, "swift", gbps)?];
            // Both others must have the bin: "worse than the others" compares with each.
            let best = runs[1].num(&p99).zip(runs[2].num(&p99)).map(|(a, b)| a.min(b));
            let x =
                crate::view::ratio(runs[0].num(&p99), best).ok_or_else(|| format!("{p99}: no data at {gbps} Gb/s"))?;
            let n = runs.iter().map(|r| r.num(&count).unwrap_or(0.0)).fold(f64::INFINITY, f64::min);
            if least.is_none_or(|((y, _), _)| x < y) {
                least = Some(((x, Some(n)), gbps));
            }
        }
        least.ok_or_else(|| "no rate".into())
    };
    let v = worst_margin();
    let note = v.as_ref().map_or(String::new(), |(_, g)| format!("smallest at {g} Gb/s"));
    put(r, "R18", "hpcc_large_vs_best", Unit::Ratio, v.map(|(s, _)| s), &note);
}

/// Fig. 4.13's sweep: the star with the first N hosts after host 0 sending to it.
const SENDERS: &str = "fig4_13";
/// Its watched bottleneck port's time-weighted p99 (bytes).
pub(super) const BOTTLENECK_P99: &str = "queue_port_percentiles_switch0->host0_p99";
/// The star's link rate, bits per second (star-read.toml).
const STAR_RATE_BPS: f64 = 100e9;

/// The number of hosts in a `workload.senders` cell (a TOML array, e.g. `[1, 2, 3]`).
fn sender_count(c: &Cell) -> Option<usize> {
    let Cell::Str(s) = c else { return None };
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.split(',').filter(|x| !x.trim().is_empty()).count())
}

/// The stable run of each sender count of at least `min` in Fig. 4.13's sweep, in sender order.
fn sender_runs(t: &Tables, min: usize) -> Result<Vec<(usize, Run<'_>)>, String> {
    let Some(table) = t.get(SENDERS) else { return Err(format!("sweep {SENDERS} not run")) };
    let all = View::ok(table);
    let count = |r: usize| sender_count(table.get(r, "workload.senders"));
    let mut counts: Vec<usize> = all.rows.iter().filter_map(|&r| count(r)).filter(|&n| n >= min).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() {
        return Err(format!("sweep {SENDERS}: no run with {min} or more senders"));
    }
    counts
        .into_iter()
        .map(|n| {
            Ok((
                n,
                stable_run(
                    &all.filter(|t, r| sender_count(t.get(r, "workload.senders")) == Some(n)),
                    &format!("{n} senders"),
                )?,
            ))
        })
        .collect()
}

/// SRC (switch feedback) bandwidth of a run over its simulated time, Gb/s; summary.json
/// leaves the count out when no switch sent any (a lone sender never queues).
fn src_gbps(x: &Run) -> Result<f64, String> {
    let bytes = x.num("switch_feedback_bytes").unwrap_or(0.0);
    let secs = x.num("sim_time_s").filter(|s| *s > 0.0).ok_or("no run time")?;
    Ok(bytes * 8.0 / secs / 1e9)
}

/// Eq. 4.3 (§4.6.3) on the star of Fig. 4.13: C x (p_src / p_data) x (rtt_src / rtt), with
/// §4.6.4's rtt = 2 t_pre + 2 t_post + 2 t_s and rtt_src = 2 t_pre + t_s (propagation and one
/// MTU's serialization; control packets take none). `src_wire` is the SRC packet's wire size.
fn eq43_gbps(src_wire: f64) -> Result<f64, String> {
    let file = crate::root().join("experiments/bolt/star-read.toml");
    let cfg = fabriclab::config::Config::load(&file, &[]).map_err(|e| e.to_string())?;
    let topo = cfg.topology.build();
    let link_rate = topo.host_rate_bps(0) as f64;
    // Every link of the star is a host's; host 0's gives both t_pre and t_post.
    let link = topo.links.iter().find(|l| l.a == 0 || l.b == 0).ok_or("the star has no link to host 0")?;
    let t_link = link.delay as f64 * 1e-12;
    let mtu = cfg.network.mtu as f64;
    let t_s = mtu * 8.0 / link_rate;
    let (rtt, rtt_src) = (4.0 * t_link + 2.0 * t_s, 2.0 * t_link + t_s);
    let c = cfg.workload.load() * link_rate;
    Ok(c * (src_wire / mtu) * (rtt_src / rtt) / 1e9)
}

/// R10 and R11 (simulation half) from Fig. 4.13's star with 1 to 63 senders at 80% load.
fn burstiness(t: &Tables, r: &mut Record) {
    // "When there are multiple senders": the SRC level is read over 2 to 63.
    let multi = || -> Result<Vec<(usize, Run<'_>, f64)>, String> {
        sender_runs(t, 2)?.into_iter().map(|(n, x)| Ok((n, x, src_gbps(&x)?))).collect()
    };
    for (part, want_max) in [("src_gbps_min", false), ("src_gbps_max", true)] {
        let v = multi().map(|v| {
            let pick = |a: (usize, f64), b: (usize, f64)| if (b.1 > a.1) == want_max { b } else { a };
            v.iter().map(|&(n, _, g)| (n, g)).reduce(pick).unwrap_or((0, f64::NAN))
        });
        let note = v.as_ref().map_or(String::new(), |(n, _)| format!("at {n} senders"));
        put(r, "R10", part, Unit::Gbps, v.map(|(_, g)| (g, None)), &note);
    }
    // "For all the experiments": the largest p99 over every sender count.
    let queue = || -> Result<(usize, f64), String> {
        let mut most = (0, f64::NEG_INFINITY);
        for (n, x) in sender_runs(t, 1)? {
            let bytes = x.num(BOTTLENECK_P99).ok_or_else(|| format!("{n} senders: no {BOTTLENECK_P99}"))?;
            let us = bytes * 8.0 / STAR_RATE_BPS * 1e6;
            if us > most.1 {
                most = (n, us);
            }
        }
        Ok(most)
    };
    let v = queue();
    let note = v.as_ref().map_or(String::new(), |(n, _)| format!("largest at {n} senders"));
    put(r, "R10", "queue_p99_us", Unit::Us, v.map(|(_, us)| (us, None)), &note);
    let eq43 = || -> Result<(f64, String), String> {
        let v = multi()?;
        let simulated = v.iter().map(|(_, _, g)| g).sum::<f64>() / v.len() as f64;
        let bytes: f64 = v.iter().map(|(_, x, _)| x.num("switch_feedback_bytes").unwrap_or(0.0)).sum();
        let packets: f64 = v.iter().map(|(_, x, _)| x.num("switch_feedback_packets").unwrap_or(0.0)).sum();
        if packets <= 0.0 || simulated <= 0.0 {
            return Err("no SRC packet with 2 or more senders".into());
        }
        let predicted = eq43_gbps(bytes / packets)?;
        let note = format!(
            "Eq. 4.3 {predicted:.3} Gb/s ({:.0} B SRC packets), simulated {simulated:.3} Gb/s",
            bytes / packets
        );
        Ok((predicted / simulated, note))
    };
    let v = eq43();
    let note = v.as_ref().map_or(String::new(), |(_, n)| n.clone());
    put(r, "R11", "eq43_over_simulated", Unit::Ratio, v.map(|(x, _)| (x, None)), &note);
}

/// `baseline`'s `col` over Bolt's on one fat-tree workload; `count` names the
/// sample-count column behind a percentile.
fn over_bolt(
    t: &Tables,
    w: (&str, &str, &str),
    baseline: &str,
    col: &str,
    count: Option<&str>,
) -> Result<Sampled, String> {
    let b = protocol_run(t, w.0, baseline, w.2)?;
    let bolt = protocol_run(t, w.0, "bolt", w.2)?;
    let x = crate::view::ratio(b.num(col), bolt.num(col)).ok_or_else(|| format!("{col}: no data in the {}", w.2))?;
    let n = count.map(|c| b.num(c).unwrap_or(0.0).min(bolt.num(c).unwrap_or(0.0)));
    Ok((x, n))
}

/// As [`over_bolt`], as a change in percent.
fn percent_over_bolt(
    t: &Tables,
    w: (&str, &str, &str),
    baseline: &str,
    col: &str,
    count: Option<&str>,
) -> Result<Sampled, String> {
    over_bolt(t, w, baseline, col, count).map(|(x, n)| (100.0 * (x - 1.0), n))
}

/// R6, R7 and R8 on the 64-host fat tree (§4.5.4).
fn fat_tree(t: &Tables, r: &mut Record) {
    let p99_c = |b: &str| -> Result<(Sampled, &'static str), String> {
        // "Up to 3x": the larger of the two workloads' group-C ratios.
        let read = over_bolt(t, READ, b, "slowdown_C_p99", Some("slowdown_C_count"))?;
        let hadoop = over_bolt(t, HADOOP, b, "slowdown_C_p99", Some("slowdown_C_count"))?;
        Ok(if read.0 >= hadoop.0 { (read, READ.2) } else { (hadoop, HADOOP.2) })
    };
    for (baseline, r6, r7) in [("swift", "vs_swift", "fct_swift"), ("hpcc", "vs_hpcc", "fct_hpcc")] {
        let v = p99_c(baseline);
        let note = v.as_ref().map_or(String::new(), |(_, w)| format!("larger on the {w}"));
        let v = v.map(|(s, _)| s);
        put(r, "R6", r6, Unit::Ratio, v.clone(), &note);
        put(r, "R7", r7, Unit::Ratio, v, &note);
    }
    for w in [READ, HADOOP] {
        for b in ["swift", "hpcc"] {
            let v = over_bolt(t, w, b, "tor_queue_max_bytes", None);
            put(r, "R7", &format!("latency_{b}_{}", w.1), Unit::Ratio, v, "peak ToR queue");
        }
        let s = w.1;
        let a99 = Some("slowdown_A_count");
        let d99 = Some("slowdown_D_count");
        put(r, "R8", &format!("short_swift_{s}"), Unit::Ratio, over_bolt(t, w, "swift", "slowdown_A_p99", a99), "");
        put(
            r,
            "R8",
            &format!("short_hpcc_{s}"),
            Unit::Percent,
            percent_over_bolt(t, w, "hpcc", "slowdown_A_p99", a99),
            "",
        );
        put(r, "R8", &format!("long_hpcc_{s}"), Unit::Ratio, over_bolt(t, w, "hpcc", "slowdown_D_p50", None), "");
        let p50 = percent_over_bolt(t, w, "swift", "slowdown_D_p50", None);
        put(r, "R8", &format!("long_swift_p50_{s}"), Unit::Percent, p50, "");
        let p99 = percent_over_bolt(t, w, "swift", "slowdown_D_p99", d99);
        put(r, "R8", &format!("long_swift_p99_{s}"), Unit::Percent, p99, "");
    }
}

/// R9 from Table 4.2's N-to-1 incast: peak queuing (as time at 100 Gb/s), p99
/// slowdown over all flows, and Bolt's SRC bandwidth.
fn incast(t: &Tables, r: &mut Record) {
    let run = |p: &str| protocol_run(t, "table4_2", p, "incast");
    let queue_ms = |p: &str| -> Result<f64, String> {
        let b = run(p)?.num("tor_queue_max_bytes").ok_or("no queue data")?;
        Ok(b * 8.0 / INCAST_RATE_BPS * 1e3)
    };
    for (p, part) in [("swift", "queuing_vs_swift"), ("hpcc", "queuing_vs_hpcc")] {
        let v = queue_ms("bolt").and_then(|bolt| Ok((100.0 * (bolt / queue_ms(p)? - 1.0), None)));
        put(r, "R9", part, Unit::Percent, v, "peak queue");
    }
    for p in ["swift", "hpcc", "bolt"] {
        put(r, "R9", &format!("queuing_{p}_ms"), Unit::Ms, queue_ms(p).map(|q| (q, None)), "peak queue");
        let slowdown = run(p).and_then(|x| {
            let s = x.num("slowdown_all_p99").ok_or("no slowdown data")?;
            Ok((s, x.num("slowdown_all_count")))
        });
        let note =
            run(p).ok().and_then(|x| x.num("messages_started")).map_or(String::new(), |n| format!("{n:.0} flows"));
        put(r, "R9", &format!("slowdown_{p}"), Unit::Slowdown, slowdown, &note);
    }
    let src = run("bolt").and_then(|x| Ok((src_gbps(&x)?, None)));
    put(r, "R9", "src_gbps", Unit::Gbps, src, "switch feedback bytes over the run");
}

/// This seed's rows of a tapped table (all rows if it has no seed column).
fn tapped_at_seed(name: &str, seed: u64) -> Option<Table> {
    let t = derived().get(name).cloned()?;
    if t.column("run.seed").is_none() {
        return Some(t);
    }
    let rows = (0..t.rows.len()).filter(|&r| t.get(r, "run.seed").as_f64() == Some(seed as f64));
    let rows = rows.map(|r| t.rows[r].clone()).collect();
    Some(Table { columns: t.columns.clone(), rows })
}

/// The stable tapped run of `name` whose column `key` equals `want`.
fn tapped_run<'a>(t: Option<&'a Table>, key: &str, want: Cell, what: &str) -> Result<Run<'a>, String> {
    let t = t.ok_or_else(|| format!("{what}: not run"))?;
    let all = View { t, rows: (0..t.rows.len()).collect() };
    stable_run(&all.eq(key, want), what)
}

/// R12 from the tapped Table 4.1 runs: each mechanism's effect on the receiver
/// link's utilization between the first and the last completion.
fn ablation(r: &mut Record) {
    let t = tapped_at_seed("table4_1", r.seed());
    let util = |pru: bool, sm: bool| -> Result<f64, String> {
        let what = format!("Table 4.1, PRU {} / SM {}", on(pru), on(sm));
        let t = t.as_ref().ok_or_else(|| format!("{what}: not run"))?;
        let all = View { t, rows: (0..t.rows.len()).collect() };
        let v = all.eq("protocol.bolt.pru", Cell::Bool(pru)).eq("protocol.bolt.sm", Cell::Bool(sm));
        stable_run(&v, &what)?.num("utilization").ok_or_else(|| format!("{what}: no utilization"))
    };
    let change = |a: Result<f64, String>, b: Result<f64, String>| -> Result<Sampled, String> {
        Ok((100.0 * (a? / b? - 1.0), None))
    };
    put(r, "R12", "pru_off", Unit::Percent, change(util(false, true), util(true, true)), "");
    put(r, "R12", "sm_off", Unit::Percent, change(util(true, false), util(true, true)), "");
    put(r, "R12", "together", Unit::Percent, change(util(true, true), util(false, false)), "");
    for (part, pru, sm) in [
        ("level_off_off", false, false),
        ("level_pru", true, false),
        ("level_sm", false, true),
        ("level_both", true, true),
    ] {
        put(r, "R12", part, Unit::Fraction, util(pru, sm).map(|u| (u, None)), "");
    }
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// What a tapped capture run gave: the capture time in us, or that the flow
/// never reached 95% of the bottleneck (failed), or no run (missing).
enum Capture {
    At { us: f64, rtt_us: Option<f64> },
    Never(String),
    Missing(String),
}

fn capture(run: Result<Run, String>, what: &str) -> Capture {
    match run {
        Err(why) => Capture::Missing(why),
        Ok(x) => match x.num("capture_us") {
            Some(us) => Capture::At { us, rtt_us: x.num("base_rtt_us").filter(|v| *v > 0.0) },
            None => Capture::Never(format!(
                "{what}: the remaining flow never captured the bottleneck before it ended (Fig. 4.11: its window never \
                 reached 0.9 BDP; Fig. 4.12: its data never reached 95% of the link, sustained over 10 us)"
            )),
        },
    }
}

/// Records a capture time in us, or in unloaded RTTs.
fn put_capture(r: &mut Record, claim: &str, part: &str, c: &Capture, in_rtts: bool) {
    let unit = if in_rtts { Unit::Rtts } else { Unit::Us };
    match c {
        Capture::Missing(why) => {
            r.missing(claim, part, unit, why.clone());
        }
        Capture::Never(why) => {
            r.failed(claim, part, unit, why.clone());
        }
        Capture::At { us, rtt_us } if in_rtts => {
            let note = rtt_us.map_or(String::new(), |rtt| format!("{us:.0} us over an unloaded RTT of {rtt:.2} us"));
            r.value(claim, part, unit, rtt_us.map(|rtt| us / rtt)).note(note);
        }
        Capture::At { us, .. } => {
            r.value(claim, part, unit, Some(*us));
        }
    }
}

/// R13 and R16 from the tapped Fig. 4.11 runs (one flow completes; the other's capture time).
fn capture_after_completion(r: &mut Record) {
    let t = tapped_at_seed("fig4_11", r.seed());
    let c = |p: &str| {
        let what = format!("Fig. 4.11, {p}");
        capture(tapped_run(t.as_ref(), "protocol.name", Cell::Str(p.into()), &what), &what)
    };
    put_capture(r, "R13", "bolt_us", &c("bolt"), false);
    put_capture(r, "R13", "hpcc_us", &c("hpcc"), false);
    let swift = c("swift");
    put_capture(r, "R13", "swift_us", &swift, false);
    put_capture(r, "R16", "swift_rtts", &swift, true);
}

/// R14 from the tapped Fig. 4.12 runs (the other flow is rerouted; SM on and off).
fn capture_after_reroute(r: &mut Record) {
    let t = tapped_at_seed("fig4_12", r.seed());
    let c = |sm: bool| {
        let what = format!("Fig. 4.12, SM {}", on(sm));
        capture(tapped_run(t.as_ref(), "protocol.bolt.sm", Cell::Bool(sm), &what), &what)
    };
    put_capture(r, "R14", "sm_on_us", &c(true), false);
    put_capture(r, "R14", "sm_off_rtts", &c(false), true);
}

/// A tapped run's column `col` as a part's value, with `note`: missing if the
/// run is, failed (with `never`) if the run has no value there.
#[allow(clippy::too_many_arguments)]
fn put_tapped(
    r: &mut Record,
    claim: &str,
    part: &str,
    unit: Unit,
    run: &Result<Run, String>,
    col: &str,
    never: &str,
    note: &str,
) {
    match run {
        Err(why) => {
            r.missing(claim, part, unit, why.clone());
        }
        Ok(x) => match x.num(col) {
            Some(v) => {
                r.value(claim, part, unit, Some(v)).note(note);
            }
            None => {
                r.failed(claim, part, unit, never.to_string());
            }
        },
    }
}

/// R15 from the tapped Figs. 4.6/4.10 runs (a flow joins at 100 us).
fn flow_arrival(r: &mut Record) {
    let t = tapped_at_seed("fig4_10", r.seed());
    let run = |p: &str| {
        let what = format!("Figs. 4.6/4.10, {p}");
        tapped_run(t.as_ref(), "protocol.name", Cell::Str(p.into()), &what)
    };
    let (bolt, hpcc) = (run("bolt"), run("hpcc"));
    let num = |x: &Result<Run, String>, c: &str| x.as_ref().ok().and_then(|x| x.num(c));
    let drain_note = match (num(&bolt, "drained_us"), num(&bolt, "join_us"), num(&bolt, "base_rtt_us")) {
        (Some(d), Some(j), Some(rtt)) => format!("drained {:.1} us after the arrival; unloaded RTT {rtt:.2} us", d - j),
        _ => String::new(),
    };
    let never_drained = "the bottleneck queue was never drained (at most one full packet) after its peak";
    put_tapped(r, "R15", "bolt_drain_rtts", Unit::Rtts, &bolt, "drain_rtts", never_drained, &drain_note);
    put_tapped(r, "R15", "bolt_peak_kb", Unit::KB, &bolt, "peak_kb", "no queue samples", "");
    put_tapped(r, "R15", "hpcc_peak_kb", Unit::KB, &hpcc, "peak_kb", "no queue samples", "");
    let util_note = match (num(&hpcc, "min_util_at_us"), num(&hpcc, "drained_us")) {
        (Some(a), Some(d)) => format!("the window from {a:.1} us (queue drained at {d:.1} us)"),
        _ => String::new(),
    };
    let no_window =
        "no utilization window: the queue was never drained, or drained less than two RTTs before the completion";
    put_tapped(r, "R15", "hpcc_min_util", Unit::Fraction, &hpcc, "min_util", no_window, &util_note);
}

/// R19 from the tapped Fig. 4.15 run (flows join and leave every 10 ms).
fn fairness(r: &mut Record) {
    let t = tapped_at_seed("fig4_15", r.seed());
    let run = tapped_run(t.as_ref(), "protocol.name", Cell::Str("bolt".into()), "Fig. 4.15, bolt");
    let s = |col: &str| run.as_ref().ok().and_then(|x| x.t.get(x.r, col).as_str().map(str::to_string));
    let per_event = s("convergence_per_event_ms").unwrap_or_default();
    let never = format!(
        "after some event the flows never stayed within 10% of the fair share up to the next one (per event, ms: {per_event})"
    );
    let note = format!("events at {} ms; per event {per_event} ms", s("events_ms").unwrap_or_default());
    put_tapped(r, "R19", "convergence_ms", Unit::Ms, &run, "convergence_ms", &never, &note);
    let note = format!("per interval {}", s("jain_per_interval").unwrap_or_default());
    put_tapped(r, "R19", "jain_min", Unit::Fraction, &run, "jain_min", "no interval with two or more flows", &note);
    let note = format!(
        "completions {} ms; fair share {} ms",
        s("completions_ms").unwrap_or_default(),
        s("fair_completions_ms").unwrap_or_default()
    );
    let unfinished = "a flow did not complete before the run ended";
    put_tapped(r, "R19", "completion_offset_ms", Unit::Ms, &run, "completion_offset_ms", unfinished, &note);
}

/// R17 from the re-run Fig. 4.2 points (crates/repro/src/bolt/notify.rs): drain
/// times by generation point (right panel) and by delivery delay (left panel).
fn notification_drain(r: &mut Record) {
    let t = tapped_at_seed("fig4_2", r.seed());
    let drain = |panel: &str, notify: &str, delay: Option<f64>| -> Capture {
        let what = match delay {
            Some(d) => format!("Fig. 4.2, {notify} notification delivered after {d} us"),
            None => format!("Fig. 4.2, {notify} notification"),
        };
        let Some(t) = t.as_ref() else { return Capture::Missing(format!("{what}: not run")) };
        let all = View { t, rows: (0..t.rows.len()).collect() };
        let mut v = all.eq("panel", Cell::Str(panel.into())).eq("protocol.swift.notify", Cell::Str(notify.into()));
        if let Some(d) = delay {
            v = v.eq("notify_delay_us", Cell::Float(d));
        }
        match stable_run(&v, &what) {
            Err(why) => Capture::Missing(why),
            Ok(x) => match x.num("drain_us") {
                Some(us) => Capture::At { us, rtt_us: None },
                None => Capture::Never(format!("{what}: the queue never came back to its two-flow level")),
            },
        }
    };
    let (rcvr, egr, ing) =
        (drain("where", "receiver", None), drain("where", "egress", None), drain("where", "ingress", None));
    let mut ratio = |part: &str, a: &Capture, b: &Capture| match (a, b) {
        (Capture::At { us: x, .. }, Capture::At { us: y, .. }) => {
            r.value("R17", part, Unit::Ratio, Some(x / y)).note(format!("{x:.1} us over {y:.1} us"));
        }
        (Capture::Missing(why), _) | (_, Capture::Missing(why)) => {
            r.missing("R17", part, Unit::Ratio, why.clone());
        }
        (Capture::Never(why), _) | (_, Capture::Never(why)) => {
            r.failed("R17", part, Unit::Ratio, why.clone());
        }
    };
    ratio("rcvr_over_ing", &rcvr, &ing);
    ratio("rcvr_over_egr", &rcvr, &egr);
    ratio("delay16_over_delay0", &drain("delay", "ingress", Some(16.0)), &drain("delay", "ingress", Some(0.0)));
    put_capture(r, "R17", "ing_us", &ing, false);
    put_capture(r, "R17", "rcvr_us", &rcvr, false);
}

#[cfg(test)]
mod tests;
