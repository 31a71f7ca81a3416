//! `fabriclab compare-ns2`: one experiment's messages as fabriclab and the
//! SIRD authors' ns-2 simulator delivered them, side by side (docs/xval.md).
//!
//! The ns-2 run replays the request file `fabriclab export-ns2` wrote for the
//! same experiment and seed, so host h's k-th request there is host h's k-th
//! message here (the artifact numbers a host's requests from 0 as it sends
//! them: `app_level_id`). Each pair must agree on destination and size, or
//! the two runs did not carry the same messages and nothing is compared.
//!
//! Both sides are measured with one set of definitions: a message's
//! completion time (last byte at the receiver, from its arrival at the
//! sender), its slowdown over fabriclab's ideal latency for it, goodput as the
//! payload of messages completed inside the measurement window, per host and
//! second. ToR queues (a ToR's ports summed) are shown as each side measures
//! them, labelled: the artifact's queue-monitor samples (averages over each
//! sampling interval, the packet in service not counted), fabriclab's interval
//! averages where its run kept them (`output.tor_queue_average_us`), else its
//! exact figures.

use fabriclab::config::Config;
use fabriclab::metrics::{size_group, MessageRecord, SlowdownStats};
use fabriclab::net::switch_config::QueueAccounting;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The artifact starts its applications at 10 s (`r2p2-app.cc` asserts
/// requests are created after 9.9 s; its post-processing subtracts 10).
const NS2_START_S: f64 = 10.0;

/// One message as either simulator delivered it.
#[derive(Clone, Copy, Debug)]
struct Msg {
    id: u64,
    src: u32,
    dst: u32,
    size: u64,
    start_us: f64,
    /// Completion time from the start; None if it did not complete.
    fct_us: Option<f64>,
    ideal_us: f64,
}

/// A request as the artifact's `applications_trace.str` records it.
#[derive(Clone, Copy, Debug, Default)]
struct Ns2Request {
    dst: Option<u32>,
    size: Option<u64>,
    start_us: Option<f64>,
    fct_us: Option<f64>,
}

pub fn command(ours: &Path, ns2: &Path, out: Option<&Path>) -> Result<String, String> {
    let cfg = Config::load(&ours.join("config.resolved.toml"), &[])
        .map_err(|e| format!("{}: not a fabriclab run directory ({e})", ours.display()))?;
    let our_msgs = read_ours(&ours.join("messages.csv"))?;
    let trace = find(ns2, "applications_trace.str", false).ok_or_else(|| {
        format!("no applications_trace.str in {} or below it: is it the ns-2 run's output directory?", ns2.display())
    })?;
    let requests = read_ns2_trace(&trace)?;
    let theirs = pair_up(&our_msgs, &requests)?;
    let n_hosts = cfg.topology.build().n_hosts;
    let window = (cfg.run.warmup_ms * 1e3, cfg.run.duration_ms * 1e3);
    let monitors = ns2_monitors(ns2, window)?;
    if let Some(dir) = out {
        write_messages(dir, &theirs)?;
        write_queues(dir, &monitors)?;
    }
    let ns2_queues = ns2_tor_queues(&monitors);
    let our_queues = our_tor_queues(ours, window, cfg.network.queue_accounting)?;
    Ok(table(&cfg, n_hosts, window, &our_msgs, &theirs, our_queues, ns2_queues, &trace))
}

/// The file (or, with `want_dir`, the folder) called `name` in `dir` or below
/// it: the artifact nests its outputs by run.
fn find(dir: &Path, name: &str, want_dir: bool) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for p in std::fs::read_dir(&d).ok()?.flatten().map(|e| e.path()) {
            if p.is_dir() == want_dir && p.file_name().is_some_and(|n| n == name) {
                return Some(p);
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    None
}

/// Our messages.csv, by its header's column names.
fn read_ours(path: &Path) -> Result<Vec<Msg>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let want = ["id", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_us"];
    let rows = crate::report::csv(&text, &path.display().to_string(), &want)?;
    rows.into_iter()
        .map(|(line, f)| {
            let num = |k: usize| {
                f[k].parse::<f64>()
                    .map_err(|_| format!("{}:{line}: bad number `{}` in {}", path.display(), f[k], want[k]))
            };
            Ok(Msg {
                id: num(0)? as u64,
                src: num(1)? as u32,
                dst: num(2)? as u32,
                size: num(3)? as u64,
                start_us: num(4)?,
                // Empty for a message that did not complete.
                fct_us: f[5].parse().ok(),
                ideal_us: num(6)?,
            })
        })
        .collect()
}

/// The `srq` (request sent) and `rrq` (request received) rows of the
/// artifact's application trace, by (client, app_level_id). Columns
/// (`GenericApp::trace_state`, after the tracer's timestamp): event,
/// local_addr, remote_addr, thread_id, req_id, app_level_id, req_dur,
/// req_size, resp_size, pending, wildcard.
fn read_ns2_trace(path: &Path) -> Result<HashMap<(u32, u64), Ns2Request>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reqs: HashMap<(u32, u64), Ns2Request> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 9 {
            continue;
        }
        let bad = || format!("{}:{}: not an application trace row: `{line}`", path.display(), i + 1);
        let num = |k: usize| f[k].parse::<f64>().map_err(|_| bad());
        let (ts, local, remote, app_id, dur, size) = (num(0)?, num(2)?, num(3)?, num(6)?, num(7)?, num(8)?);
        match f[1] {
            "srq" => {
                let r = reqs.entry((local as u32, app_id as u64)).or_default();
                r.start_us = Some((ts - NS2_START_S) * 1e6);
                // The TCP applications (pfabric-app.cc: DCTCP, ExpressPass) write -1 here.
                if remote >= 0.0 {
                    r.dst = Some(remote as u32);
                }
                r.size = Some(size as u64);
            }
            "rrq" => {
                // Written on arrival: its time less the request's age is its start.
                let r = reqs.entry((remote as u32, app_id as u64)).or_default();
                r.fct_us = Some(dur * 1e6);
                r.start_us.get_or_insert((ts - dur - NS2_START_S) * 1e6);
                r.dst.get_or_insert(local as u32);
                r.size.get_or_insert(size as u64);
            }
            _ => {}
        }
    }
    if reqs.is_empty() {
        return Err(format!("{}: no `srq` or `rrq` rows (was trace_application on?)", path.display()));
    }
    Ok(reqs)
}

/// The artifact's outcome of each of our messages: host h's k-th message is
/// its request (h, k). The artifact sends at least 4 bytes.
fn pair_up(ours: &[Msg], reqs: &HashMap<(u32, u64), Ns2Request>) -> Result<Vec<Msg>, String> {
    let mut next: HashMap<u32, u64> = HashMap::new();
    let mut theirs = Vec::with_capacity(ours.len());
    for m in ours {
        let k = next.entry(m.src).or_insert(0);
        let r = reqs.get(&(m.src, *k)).copied().unwrap_or_default();
        *k += 1;
        let same = r.dst.is_none_or(|d| d == m.dst) && r.size.is_none_or(|s| s == m.size.max(4));
        if !same {
            return Err(format!(
                "message {} ({} -> {}, {} B) is host {}'s request {} in the ns-2 trace, which went to {:?} with {:?} B: \
                 the two runs did not carry the same messages (export the request file from the same experiment, \
                 --set and --seed as the fabriclab run)",
                m.id,
                m.src,
                m.dst,
                m.size,
                m.src,
                *k - 1,
                r.dst,
                r.size
            ));
        }
        theirs.push(Msg { start_us: r.start_us.unwrap_or(m.start_us), fct_us: r.fct_us, ..*m });
    }
    Ok(theirs)
}

/// The artifact's messages as a messages.csv of ours (`MessageRecord`'s
/// columns, our ids and ideal latencies). The artifact reports no partial
/// progress, so a message it did not complete shows 0 bytes delivered.
fn write_messages(dir: &Path, msgs: &[Msg]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let ps = |us: f64| (us * 1e6).round() as u64;
    let mut s = format!("{}\n", MessageRecord::CSV_HEADER);
    for m in msgs {
        let record = MessageRecord {
            id: m.id,
            src: m.src,
            dst: m.dst,
            size: m.size,
            start_ps: ps(m.start_us),
            end_ps: m.fct_us.map(|f| ps(m.start_us) + ps(f)),
            ideal_ps: ps(m.ideal_us),
            incast: false,
            delivered: if m.fct_us.is_some() { m.size } else { 0 },
        };
        record.csv_row(&mut s);
    }
    let path = dir.join("messages.csv");
    std::fs::write(&path, s).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// (max, mean) of a ToR's summed queue and how it was measured.
struct TorQueues {
    max_bytes: f64,
    mean_bytes: f64,
    how: &'static str,
}

/// One switch port's queue monitor (`qmon/<area>/<from>_<to>.q`, rows of
/// time, from, to, bytes, packets, packet arrivals, departures, drops, ...;
/// `ns-link.tcl`, `queue-sample-timeout`): its samples inside the window.
struct Monitor {
    /// The sending switch and the node at the other end (the artifact numbers
    /// hosts, then ToRs, then spines, as fabriclab does).
    from: u32,
    to: u32,
    tor: bool,
    samples: Vec<f64>,
    drops: u64,
}

/// The switch ports' monitors of the artifact's run (host NICs left out, as
/// queues.csv leaves them out), each with the samples that end inside
/// `window` (µs): a sample at t averages (t - interval, t].
fn ns2_monitors(ns2: &Path, window: (f64, f64)) -> Result<Vec<Monitor>, String> {
    let Some(qmon) = find(ns2, "qmon", true) else { return Ok(Vec::new()) };
    let mut monitors = Vec::new();
    for area in std::fs::read_dir(&qmon).map_err(|e| format!("cannot read {}: {e}", qmon.display()))?.flatten() {
        let area_name = area.file_name().to_string_lossy().into_owned();
        if area_name.starts_with("host") || !area.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(area.path()).map_err(|e| e.to_string())?.flatten() {
            let path = file.path();
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let mut m = Monitor { from: 0, to: 0, tor: area_name.starts_with("tor"), samples: Vec::new(), drops: 0 };
            for line in text.lines() {
                let f: Vec<f64> = line.split_whitespace().filter_map(|v| v.parse().ok()).collect();
                let [ts, from, to, bytes, _, _, _, drops, ..] = f[..] else { continue };
                (m.from, m.to, m.drops) = (from as u32, to as u32, drops as u64);
                let t_us = (ts - NS2_START_S) * 1e6;
                if t_us > window.0 && t_us <= window.1 {
                    m.samples.push(bytes);
                }
            }
            monitors.push(m);
        }
    }
    monitors.sort_by_key(|m| (m.from, m.to));
    Ok(monitors)
}

/// The artifact's ToR queue: each ToR's ports summed sample by sample, as its
/// post-processing does (`produce_aggr.py`, `process_grouped_data`); the
/// largest sum of any ToR and the mean of the ToRs' mean sums.
fn ns2_tor_queues(monitors: &[Monitor]) -> Option<TorQueues> {
    let mut per_tor: HashMap<u32, Vec<f64>> = HashMap::new();
    for m in monitors.iter().filter(|m| m.tor) {
        let sum = per_tor.entry(m.from).or_default();
        sum.resize(sum.len().max(m.samples.len()), 0.0);
        sum.iter_mut().zip(&m.samples).for_each(|(s, b)| *s += b);
    }
    let sums: Vec<&Vec<f64>> = per_tor.values().filter(|s| !s.is_empty()).collect();
    if sums.is_empty() {
        return None;
    }
    let max_bytes = sums.iter().flat_map(|s| s.iter()).copied().fold(0.0, f64::max);
    let mean_bytes = sums.iter().map(|s| s.iter().sum::<f64>() / s.len() as f64).sum::<f64>() / sums.len() as f64;
    Some(TorQueues { max_bytes, mean_bytes, how: "queue-monitor samples" })
}

/// The artifact's ports as a queues.csv of ours (`switch,peer,tor,max_bytes,
/// mean_bytes,drops`), from their samples in the window.
fn write_queues(dir: &Path, monitors: &[Monitor]) -> Result<(), String> {
    let mut s = String::from("switch,peer,tor,max_bytes,mean_bytes,drops\n");
    for m in monitors.iter().filter(|m| !m.samples.is_empty()) {
        let max = m.samples.iter().copied().fold(0.0, f64::max);
        let mean = m.samples.iter().sum::<f64>() / m.samples.len() as f64;
        let _ = writeln!(s, "{},{},{},{max:.1},{mean:.1},{}", m.from, m.to, m.tor as u8, m.drops);
    }
    let path = dir.join("queues.csv");
    std::fs::write(&path, s).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Our ToR queue: the figures of summary.json, over the same window as the
/// artifact's. A finite run stops once every message has completed, with every
/// queue empty, while the artifact's monitors run on to the configured end: the
/// empty rest of the window is then added to our mean.
fn our_tor_queues(ours: &Path, window: (f64, f64), accounting: QueueAccounting) -> Result<Option<TorQueues>, String> {
    let path = ours.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let get = |k: &str| v.get(k).and_then(serde_json::Value::as_f64);
    let end_us = get("sim_time_s").map_or(window.1, |s| (s * 1e6).min(window.1));
    let share = if window.1 > window.0 { ((end_us - window.0) / (window.1 - window.0)).max(0.0) } else { 1.0 };
    let queues = |max_bytes, mean_bytes: f64, how| Some(TorQueues { max_bytes, mean_bytes: mean_bytes * share, how });
    // The artifact's definition where the run kept it (`output.tor_queue_average_us`).
    if let (Some(max_bytes), Some(mean_bytes)) = (get("tor_queue_avg_max_bytes"), get("tor_queue_avg_mean_bytes")) {
        let how = match accounting {
            QueueAccounting::UntilLastBit => "interval averages, the packet in service counted",
            QueueAccounting::UntilFirstBit => "interval averages, the packet in service not counted",
        };
        return Ok(queues(max_bytes, mean_bytes, how));
    }
    Ok(match (get("tor_queue_max_bytes"), get("tor_queue_mean_bytes")) {
        (Some(max_bytes), Some(mean_bytes)) => queues(max_bytes, mean_bytes, "exact"),
        _ => None,
    })
}

/// The side-by-side table.
#[allow(clippy::too_many_arguments)]
fn table(
    cfg: &Config,
    n_hosts: u32,
    window: (f64, f64),
    ours: &[Msg],
    theirs: &[Msg],
    our_q: Option<TorQueues>,
    ns2_q: Option<TorQueues>,
    trace: &Path,
) -> String {
    let mss = fabriclab::net::wire::mss(cfg.network.mtu);
    let bdp = cfg.network.bdp_bytes;
    let mut s = format!(
        "fabriclab against ns-2 ({}): {} messages, {} of them started after the warm-up ({:.0} us) and counted; \
         ratios are ns-2 / fabriclab, per message completed in both; slowdown over fabriclab's ideal latency on \
         both sides\n\n",
        trace.display(),
        ours.len(),
        ours.iter().filter(|m| m.start_us >= window.0).count(),
        window.0
    );
    let _ = writeln!(
        s,
        "{:<6} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "group", "both", "only_fl", "only_ns", "ratio_p50", "ratio_p99", "fl_p50", "ns_p50", "fl_p99", "ns_p99"
    );
    for g in [None, Some(0), Some(1), Some(2), Some(3)] {
        // The messages the summary's slowdowns count: started after the warm-up.
        let in_g = |m: &&Msg| m.start_us >= window.0 && g.is_none_or(|g| size_group(m.size, mss, bdp) == g);
        let pairs: Vec<(&Msg, &Msg)> = ours.iter().zip(theirs).filter(|(a, _)| in_g(a)).collect();
        let both: Vec<(f64, f64, f64)> =
            pairs.iter().filter_map(|(a, b)| Some((a.fct_us?, b.fct_us?, a.ideal_us))).collect();
        let only_fl = pairs.iter().filter(|(a, b)| a.fct_us.is_some() && b.fct_us.is_none()).count();
        let only_ns = pairs.iter().filter(|(a, b)| a.fct_us.is_none() && b.fct_us.is_some()).count();
        let stats = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
            SlowdownStats::from_values(&mut both.iter().map(f).collect::<Vec<_>>())
        };
        let ratio = stats(&|&(a, b, _)| b / a);
        let (fl, ns) = (stats(&|&(a, _, i)| a / i), stats(&|&(_, b, i)| b / i));
        let name = g.map_or("all", |g| ["A", "B", "C", "D"][g]);
        if both.is_empty() {
            let _ = writeln!(
                s,
                "{name:<6} {:>7} {only_fl:>7} {only_ns:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                0, "-", "-", "-", "-", "-", "-"
            );
            continue;
        }
        // A p99 needs 10 messages beyond it (the reproductions' sample rule).
        let p99 = |v: f64| format!("{v:.3}{}", if both.len() < 1000 { "*" } else { "" });
        let _ = writeln!(
            s,
            "{name:<6} {:>7} {only_fl:>7} {only_ns:>7} {:>9.3} {:>9} {:>9.3} {:>9.3} {:>9} {:>9}",
            both.len(),
            ratio.p50,
            p99(ratio.p99),
            fl.p50,
            ns.p50,
            p99(fl.p99),
            p99(ns.p99)
        );
    }
    s.push_str("(*: a p99 of fewer than 1,000 messages, so fewer than 10 beyond it: not enough to judge)\n");
    let goodput = |msgs: &[Msg]| {
        let bytes: u64 = msgs
            .iter()
            .filter(|m| m.fct_us.is_some_and(|f| (window.0..window.1).contains(&(m.start_us + f))))
            .map(|m| m.size)
            .sum();
        bytes as f64 * 8.0 / ((window.1 - window.0) * 1e3) / f64::from(n_hosts)
    };
    let _ = writeln!(
        s,
        "\ngoodput (payload of messages completed in {:.0}-{:.0} us, per host): fabriclab {:.3} Gbps, ns-2 {:.3} Gbps, ratio {:.3}",
        window.0,
        window.1,
        goodput(ours),
        goodput(theirs),
        goodput(theirs) / goodput(ours)
    );
    let q = |q: &Option<TorQueues>| {
        q.as_ref().map_or("not recorded".to_string(), |q| {
            format!("max {:.1} KB, mean {:.1} KB ({})", q.max_bytes / 1e3, q.mean_bytes / 1e3, q.how)
        })
    };
    let _ = writeln!(s, "ToR queue (a ToR's ports summed): fabriclab {}; ns-2 {}", q(&our_q), q(&ns2_q));
    s
}
