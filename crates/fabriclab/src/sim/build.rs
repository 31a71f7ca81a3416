//! From a validated [`Config`] to a finished run: builds the fabric, hosts and
//! workload, runs the loop for the selected protocol, and summarises.

use super::{RunOutput, Sim};
use crate::config::{Config, ConfigError, ProtocolParams, ProtocolVisitor};
use crate::metrics::{size_group, PortRecord, SlowdownStats, Summary, GROUPS};
use crate::net::switch_config::EcnPorts;
use crate::net::{wire, Fabric, LoadBalancing};
use crate::transport::{HostInfo, Transport};
use crate::workload::goal::{GoalSummary, OpRow};
use crate::workload::{MessageSpec, Workload, WorkloadEnv};
use fabriclab_engine::{from_us, stream, to_secs, Stream, Time};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Instant;

/// Runs the experiment `cfg` (already validated). `progress(now, end)` is
/// called periodically with simulated time.
pub fn run(cfg: &Config, progress: &mut dyn FnMut(Time, Time)) -> Result<RunOutput, ConfigError> {
    let out = run_stoppable(cfg, &mut |now, end| {
        progress(now, end);
        ControlFlow::Continue(())
    })?;
    Ok(out.expect("a run that is never asked to stop finishes"))
}

/// Like [`run`], but `progress(now, end)` may return `Break` to stop the run
/// (Ctrl-C, KeyboardInterrupt); the partial run is then dropped and `Ok(None)`
/// returned.
pub fn run_stoppable(
    cfg: &Config,
    progress: &mut dyn FnMut(Time, Time) -> ControlFlow<()>,
) -> Result<Option<RunOutput>, ConfigError> {
    let Prepared { fabric, workload, lb, info, warmup, end, wall } = prepare(cfg)?;
    let mut progress = |t| progress(t, end);
    let ctx = Ctx { cfg, info: &info, warmup, end, wall, seed: cfg.run.seed };
    Ok(cfg.protocol.visit(Simulate { ctx, fabric, workload, lb, progress: &mut progress }))
}

/// Runs the experiment `cfg` with hosts made by `make` instead of the
/// configured protocol: a transport under development, or a test probe.
pub fn run_custom<T: Transport>(cfg: &Config, make: impl Fn(&HostInfo) -> T) -> Result<RunOutput, ConfigError> {
    let Prepared { fabric, workload, lb, info, warmup, end, wall } = prepare(cfg)?;
    let ctx = Ctx { cfg, info: &info, warmup, end, wall, seed: cfg.run.seed };
    Ok(simulate(ctx, fabric, workload, lb, &mut |_| ControlFlow::Continue(()), make).expect("never stopped"))
}

/// The unloaded round trip of `cfg`'s fabric by one-way hop count (links
/// crossed): a full data packet out, a control packet back, no queueing.
/// `fabriclab validate` prints it (docs/network.md explains the arithmetic).
pub fn base_rtts(cfg: &Config) -> Result<Vec<(usize, Time)>, ConfigError> {
    let fabric =
        Fabric::build(cfg.topology.build(), 1, u64::MAX, u64::MAX).map_err(|e| ConfigError::new("topology", e))?;
    Ok(fabric.base_rtt_by_hops(wire::mss(cfg.network.mtu)))
}

/// The messages a run of `cfg` injects, in injection order, and the fabric's
/// host count: the workload the simulator builds, drained to the end of the
/// run (`fabriclab export-cm` writes them for htsim). Closed-loop workloads
/// are an error naming `workload.kind`: their messages start on completions,
/// so they depend on the run.
pub fn injected_messages(cfg: &Config) -> Result<(u32, Vec<MessageSpec>), ConfigError> {
    let Prepared { fabric, workload, .. } = prepare(cfg)?;
    if workload.is_closed_loop() {
        return Err(ConfigError::new(
            "workload.kind",
            "a closed-loop workload (all_to_all, ring_allreduce, goal) starts messages when others complete, so its \
             messages depend on the run and cannot be listed before it"
                .into(),
        ));
    }
    Ok((fabric.topo.n_hosts, workload.collect()))
}

struct Prepared {
    fabric: Fabric,
    workload: Workload,
    lb: LoadBalancing,
    info: HostInfo,
    warmup: Time,
    end: Time,
    wall: Instant,
}

/// Builds the fabric, the host facts and the workload of `cfg`.
fn prepare(cfg: &Config) -> Result<Prepared, ConfigError> {
    let wall = Instant::now();
    let topo = cfg.topology.build();
    let net = &cfg.network;
    let ecn = net.ecn_threshold_bytes.unwrap_or(u64::MAX);
    let mss = wire::mss(net.mtu);
    let shaping =
        net.credit_shaping.unwrap_or(false).then_some((net.credit_queue_packets as usize, wire::data_wire(mss)));
    let mut fabric = Fabric::build_with(topo, net.priorities, net.buffer_bytes.bytes(), ecn, shaping)
        .map_err(|e| ConfigError::new("topology", e))?;
    if net.ecn_ports == Some(EcnPorts::Fabric) {
        fabric.unmark_host_facing();
    }
    if let Some(b) = net.fabric_buffer_bytes {
        if fabric.set_fabric_limit(b) == 0 {
            // Nothing silently ignored: a star has no link between switches.
            return Err(ConfigError::value(
                "network.fabric_buffer_bytes",
                b,
                "absent on a topology without links between switches",
            ));
        }
    }
    let host_rate = fabric.ports[fabric.host_port[0] as usize].rate_bps();
    let mut info = HostInfo {
        id: 0,
        n_hosts: fabric.topo.n_hosts,
        link_rate_bps: host_rate,
        mtu: net.mtu,
        mss,
        bdp_bytes: net.bdp_bytes,
        priorities: net.priorities,
        base_rtt: fabric.base_rtt(mss),
        size_dist: None,
    };
    let seed = cfg.run.seed;
    let end = from_us(cfg.run.duration_ms * 1e3);
    let warmup = from_us(cfg.run.warmup_ms * 1e3);
    let env = WorkloadEnv {
        n_hosts: fabric.topo.n_hosts,
        host_rate_bps: host_rate,
        rack_of: fabric.topo.rack_of.clone(),
        core_ratio: fabric.topo.core_ratio,
        racks_per_pod: fabric.topo.racks_per_pod,
        mss,
        seed,
        end,
    };
    let workload = Workload::build(&cfg.workload, &env)?;
    info.size_dist = workload.size_dist().map(|d| std::sync::Arc::new(d.clone()));
    let lb = net.load_balancing.unwrap_or(LoadBalancing::Spray);
    Ok(Prepared { fabric, workload, lb, info, warmup, end, wall })
}

/// Runs the loop monomorphised for the selected protocol.
struct Simulate<'a, 'p> {
    ctx: Ctx<'a>,
    fabric: Fabric,
    workload: Workload,
    lb: LoadBalancing,
    progress: &'p mut dyn FnMut(Time) -> ControlFlow<()>,
}

impl ProtocolVisitor for Simulate<'_, '_> {
    type Output = Option<RunOutput>;
    fn visit<P: ProtocolParams>(self, params: &P) -> Option<RunOutput> {
        simulate(self.ctx, self.fabric, self.workload, self.lb, self.progress, |i| params.host(i))
    }
}

struct Ctx<'a> {
    cfg: &'a Config,
    info: &'a HostInfo,
    warmup: Time,
    end: Time,
    wall: Instant,
    seed: u64,
}

fn simulate<T: Transport>(
    ctx: Ctx,
    fabric: Fabric,
    workload: Workload,
    lb: LoadBalancing,
    progress: &mut dyn FnMut(Time) -> ControlFlow<()>,
    make: impl Fn(&HostInfo) -> T,
) -> Option<RunOutput> {
    let n = fabric.topo.n_hosts;
    let hosts = (0..n).map(|h| make(&HostInfo { id: h, ..ctx.info.clone() })).collect();
    let host_rng = (0..n).map(|h| stream(ctx.seed, Stream::Host, h as u64)).collect();
    let entropy_rng = (0..n).map(|h| stream(ctx.seed, Stream::Entropy, h as u64)).collect();
    let mut fabric = fabric;
    let program = ctx.cfg.protocol.switch_program(ctx.info);
    let feat = crate::net::features::Features::build(&ctx.cfg.network, &mut fabric, ctx.seed, program.as_ref());
    let mut sim = Sim::new(fabric, hosts, host_rng, entropy_rng, lb, workload, ctx.info.clone(), ctx.warmup, ctx.end);
    sim.feat = feat;
    sim.ideal = ctx.cfg.output.ideal;
    sim.accounting = ctx.cfg.network.queue_accounting;
    sim.set_fold();
    if ctx.cfg.output.tor_queue_average_us > 0.0 {
        sim.occupancy.keep_averages(from_us(ctx.cfg.output.tor_queue_average_us));
    }
    if ctx.cfg.output.queue_percentiles {
        sim.occupancy.keep_levels();
    }
    let out = &ctx.cfg.output;
    sim.tracer =
        crate::metrics::trace::Tracer::new(&out.traces, out.trace_interval_us, &out.trace_hosts, n).map(Box::new);
    if !out.queue_ports.is_empty() {
        let topo = &sim.fabric.topo;
        let ports = (0..out.queue_ports.len())
            .map(|i| {
                let (node, peer) = topo.queue_port(&out.queue_ports, i).expect("checked by Config::validate");
                let idx = sim.fabric.ports.iter().position(|p| p.node == node && p.peer == peer);
                let idx = idx.expect("a link has a port at each end") as u32;
                (idx, node, peer, format!("{}->{}", out.queue_ports[i][0], out.queue_ports[i][1]))
            })
            .collect();
        let series = crate::metrics::occupancy::QueueSeries::new(from_us(out.queue_interval_us), ports);
        sim.occupancy.keep_series(series);
    }
    if out.pcap() {
        let proto = crate::config::ProtocolName::ALL.iter().position(|&p| p == ctx.cfg.protocol.name);
        let (hosts, flows, snap) = (&out.pcap_hosts, &out.pcap_flows, out.pcap_snaplen);
        let max = (out.pcap_max_mb * 1e6) as usize;
        let cap = crate::metrics::pcap::Pcap::new(n, hosts, flows, snap, max, proto.unwrap_or(0) as u16);
        sim.pcap = Some(Box::new(cap));
    }
    sim.run(progress).is_continue().then(|| summarise(&ctx, sim))
}

fn summarise<T: Transport>(ctx: &Ctx, mut sim: Sim<T>) -> RunOutput {
    let cfg = ctx.cfg;
    let (traces, rtt_us, cwnd) = sim.tracer.take().map_or((Vec::new(), None, None), |t| t.finish());
    let now = sim.q.now().min(ctx.end);
    let window_start = sim.counters.window_start;
    let window = to_secs(now.saturating_sub(window_start)).max(1e-12);
    let n = sim.fabric.topo.n_hosts as f64;
    let host_gbps = sim.info.link_rate_bps as f64 / 1e9;
    let c = &sim.counters;
    let goodput_gbps = c.delivered_in_window as f64 * 8.0 / window / n / 1e9;
    let offered_gbps = c.offered_in_window as f64 * 8.0 / window / n / 1e9;
    let delivered_fraction =
        if c.offered_in_window == 0 { 1.0 } else { c.delivered_in_window as f64 / c.offered_in_window as f64 };

    // Queues: ToRs are the switches hosts hang off.
    let n_hosts = sim.fabric.topo.n_hosts;
    let levels = sim.occupancy.keeps_levels().then(|| sim.occupancy.level_percentiles(now, &sim.fabric.ports));
    let series = sim.occupancy.finish_series(now, &sim.fabric.ports);
    let averages = sim.occupancy.finish_averages(now);
    let queue_port_percentiles =
        (!series.names.is_empty()).then(|| series.names.iter().cloned().zip(series.percentiles).collect());
    let occ = &sim.occupancy;
    // Once per run, O(ports): the occupancy records follow every change of a port's bytes.
    if let Some((sw, recorded, held)) = occ.mismatch(&sim.fabric.ports) {
        panic!("occupancy record of switch {sw} says {recorded} bytes, its ports hold {held}");
    }
    let (mut tor_max, mut tor_mean_sum, mut tors, mut sw_max, mut sw_mean_sum) = (0u64, 0.0, 0u32, 0u64, 0.0);
    for (i, lvl) in occ.switches.iter().enumerate() {
        let mean = lvl.mean(occ.since, now);
        sw_max = sw_max.max(lvl.max());
        sw_mean_sum += mean;
        if sim.fabric.topo.is_tor(n_hosts + i as u32) {
            tor_max = tor_max.max(lvl.max());
            tor_mean_sum += mean;
            tors += 1;
        }
    }
    let n_sw = occ.switches.len().max(1) as f64;

    // Slowdown of non-incast messages that started after warm-up and completed.
    let mut groups: [Vec<f64>; 4] = Default::default();
    let mut all = Vec::new();
    let mut by_midpoint = Vec::new();
    let midpoint = c.midpoint_at.unwrap_or(0);
    let (mut fct_all, mut fct_small) = (Vec::new(), Vec::new());
    let bin_keys = cfg.output.fct_bin_keys();
    let mut fct_bins: Vec<Vec<f64>> = vec![Vec::new(); bin_keys.len()];
    let mut slowdown_bins: Vec<Vec<f64>> = vec![Vec::new(); bin_keys.len()];
    for m in &sim.messages {
        if m.incast || m.start_ps < window_start {
            continue;
        }
        if let Some(s) = m.slowdown() {
            groups[size_group(m.size, sim.info.mss, sim.info.bdp_bytes)].push(s);
            all.push(s);
            if !slowdown_bins.is_empty() {
                slowdown_bins[cfg.output.fct_bin(m.size)].push(s);
            }
            if m.end_ps.is_some_and(|e| e <= midpoint) {
                by_midpoint.push(s);
            }
            if cfg.output.fct {
                let fct = to_secs(m.end_ps.unwrap_or(0) - m.start_ps) * 1e6;
                fct_all.push(fct);
                if m.size <= crate::metrics::SMALL_FLOW_BYTES {
                    fct_small.push(fct);
                }
                if !fct_bins.is_empty() {
                    fct_bins[cfg.output.fct_bin(m.size)].push(fct);
                }
            }
        }
    }
    let fct_us = cfg.output.fct.then(|| {
        let mut m = BTreeMap::from([
            ("all".to_string(), SlowdownStats::from_values(&mut fct_all)),
            ("small".to_string(), SlowdownStats::from_values(&mut fct_small)),
        ]);
        for (k, v) in bin_keys.iter().zip(fct_bins.iter_mut()) {
            m.insert(k.clone(), SlowdownStats::from_values(v));
        }
        m
    });
    let slowdown_bins = (!bin_keys.is_empty()).then(|| {
        bin_keys.iter().cloned().zip(slowdown_bins.iter_mut().map(|v| SlowdownStats::from_values(v))).collect()
    });
    let mut slowdown = BTreeMap::new();
    slowdown.insert("all".to_string(), SlowdownStats::from_values(&mut all));
    for (g, v) in GROUPS.iter().zip(groups.iter_mut()) {
        slowdown.insert(g.to_string(), SlowdownStats::from_values(v));
    }
    // Once per run, after it: the critical path and ops.csv's rows of a GOAL schedule.
    let goal = sim.workload.goal().map(|g| (g, g.critical_path()));
    let goal_summary = goal.as_ref().map(|(g, path)| GoalSummary::of(g, path.as_ref()));
    let ops = match &goal {
        Some((g, path)) if cfg.output.ops => OpRow::all(g, path.as_ref()),
        _ => Vec::new(),
    };
    let unfinished = goal.as_ref().filter(|(g, _)| !g.is_complete()).map(|(g, _)| {
        format!("the GOAL schedule did not finish by the end of the run; {}", g.describe_waiting(10).trim_end())
    });
    let wall = ctx.wall.elapsed().as_secs_f64();
    let events = sim.q.events_processed();
    let summary = Summary {
        protocol: cfg.protocol.name.as_str().to_string(),
        seed: ctx.seed,
        sim_time_s: to_secs(now),
        wall_time_s: wall,
        events,
        stable: match c.backlog_growth() {
            Some(g) => g <= cfg.run.stable_tolerance,
            None => delivered_fraction >= 1.0 - cfg.run.stable_tolerance,
        },
        backlog_growth: c.backlog_growth(),
        // 1,000 messages leave 10 beyond the p99 (the reproductions' sample rule).
        slowdown_p99_midpoint: (by_midpoint.len() >= 1000).then(|| SlowdownStats::from_values(&mut by_midpoint).p99),
        offered_load: cfg.workload.load(),
        load_reference: cfg.workload.load_reference().to_string(),
        offered_gbps,
        goodput_gbps,
        goodput_fraction: goodput_gbps / host_gbps,
        delivered_fraction,
        tor_queue_max_bytes: tor_max,
        tor_queue_mean_bytes: if tors > 0 { tor_mean_sum / tors as f64 } else { 0.0 },
        tor_queue_avg_max_bytes: averages.map(|a| a.0),
        tor_queue_avg_mean_bytes: averages.map(|a| a.1),
        switch_queue_max_bytes: sw_max,
        switch_queue_mean_bytes: sw_mean_sum / n_sw,
        tor_downlink_queue_p50_bytes: levels.map(|l| l.downlink.p50),
        tor_downlink_queue_p90_bytes: levels.map(|l| l.downlink.p90),
        tor_downlink_queue_p99_bytes: levels.map(|l| l.downlink.p99),
        tor_downlink_queue_p999_bytes: levels.map(|l| l.downlink.p999),
        tor_total_queue_p50_bytes: levels.map(|l| l.tor.p50),
        tor_total_queue_p90_bytes: levels.map(|l| l.tor.p90),
        tor_total_queue_p99_bytes: levels.map(|l| l.tor.p99),
        tor_total_queue_p999_bytes: levels.map(|l| l.tor.p999),
        messages_started: sim.messages.len() as u64,
        messages_completed: c.messages_completed,
        trace_messages_after_end: sim.workload.trace_after_end().map(|a| a.count),
        bytes_delivered: c.delivered_bytes,
        drops: c.drops,
        credit_drops: c.credit_drops,
        trims: sim.feat.as_ref().map_or(0, |f| f.trims),
        pfc_pauses: sim.feat.as_ref().and_then(|f| f.pfc.as_ref()).map_or(0, |p| p.pauses),
        pfc_resumes: sim.feat.as_ref().and_then(|f| f.pfc.as_ref()).map_or(0, |p| p.resumes),
        selective_drops: sim.feat.as_ref().map_or(0, |f| f.selective_drops),
        switch_feedback_packets: sim.feat.as_ref().and_then(|f| f.program.as_ref()).map_or(0, |p| p.feedback().0),
        switch_feedback_bytes: sim.feat.as_ref().and_then(|f| f.program.as_ref()).map_or(0, |p| p.feedback().1),
        shared_buffer_max_bytes: sim.feat.as_ref().and_then(|f| f.buffers.as_ref()).map_or(0, |b| b.max_used),
        link_down_drops: sim.feat.as_ref().and_then(|f| f.links.as_ref()).map_or(0, |l| l.drops),
        packets_sent: c.packets_sent,
        data_packets_sent: c.data_packets_sent,
        packets_received: c.packets_received,
        packets_in_flight: sim.slab.live() as u64,
        packet_hops: c.packet_hops,
        slowdown,
        fct_us,
        slowdown_bins,
        queue_port_percentiles,
        rtt_us,
        cwnd,
        goal: goal_summary,
        warmup_s: to_secs(window_start),
        hosts: n_hosts,
        mss_bytes: sim.info.mss,
        bdp_bytes: sim.info.bdp_bytes,
        events_per_s: events as f64 / wall.max(1e-9),
    };
    let ports = sim
        .fabric
        .ports
        .iter()
        .filter(|p| p.node >= n_hosts)
        .map(|p| PortRecord {
            switch: p.node,
            peer: p.peer,
            tor: sim.fabric.topo.is_tor(p.node),
            max_bytes: p.occupancy.max(),
            mean_bytes: p.occupancy.mean(p.bytes, occ.since, now),
            drops: p.drops,
        })
        .collect();
    let queue_cdf = if levels.is_some() {
        crate::metrics::histogram::CdfRow::of(sim.occupancy.downlinks(), sim.occupancy.tors())
    } else {
        Vec::new()
    };
    let (queue_ports, queue_series) = (series.names, series.rows);
    let (pcap, pcap_dropped) = sim.pcap.take().map_or((Vec::new(), 0), |p| p.finish());
    let warnings = sim.workload.trace_after_end().and_then(|a| a.warning()).into_iter().chain(unfinished).collect();
    RunOutput {
        summary,
        warnings,
        messages: sim.messages,
        ports,
        traces,
        queue_cdf,
        queue_ports,
        queue_series,
        pcap,
        pcap_dropped,
        ops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn cfg() -> Config {
        // About a million events: several progress calls.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/quickstart.toml");
        let set = ["run.duration_ms=0.6".into(), "run.warmup_ms=0.1".into()];
        Config::load(std::path::Path::new(path), &set).expect("valid config")
    }

    #[test]
    fn break_stops_the_run_at_the_first_progress_call() {
        let mut calls = 0;
        let r = run_stoppable(&cfg(), &mut |_, _| {
            calls += 1;
            ControlFlow::Break(())
        });
        assert!(matches!(r, Ok(None)));
        assert_eq!(calls, 1);
    }

    /// `output.queue_percentiles` adds the Fig. 2 fields and changes nothing else.
    #[test]
    fn queue_percentiles_are_added_only_when_asked_for() {
        let off = run(&cfg(), &mut |_, _| {}).unwrap().summary;
        assert_eq!(off.tor_downlink_queue_p99_bytes, None);
        let mut c = cfg();
        c.output.queue_percentiles = true;
        let on = run(&c, &mut |_, _| {}).unwrap().summary;
        let d = [on.tor_downlink_queue_p50_bytes, on.tor_downlink_queue_p90_bytes, on.tor_downlink_queue_p99_bytes];
        let t = [on.tor_total_queue_p50_bytes, on.tor_total_queue_p90_bytes, on.tor_total_queue_p999_bytes];
        let (d, t) = (d.map(Option::unwrap), t.map(Option::unwrap));
        assert!(d.windows(2).chain(t.windows(2)).all(|w| w[0] <= w[1]), "{d:?} {t:?}");
        // A downlink is one of a ToR's ports, and nothing exceeds the peak.
        assert!(d[2] <= t[2] && t[2] <= on.tor_queue_max_bytes && t[2] > 0, "{d:?} {t:?} {}", on.tor_queue_max_bytes);
        let levels_off = Summary {
            tor_downlink_queue_p50_bytes: None,
            tor_downlink_queue_p90_bytes: None,
            tor_downlink_queue_p99_bytes: None,
            tor_downlink_queue_p999_bytes: None,
            tor_total_queue_p50_bytes: None,
            tor_total_queue_p90_bytes: None,
            tor_total_queue_p99_bytes: None,
            tor_total_queue_p999_bytes: None,
            ..on.without_wall_clock()
        };
        assert_eq!(levels_off, off.without_wall_clock());
    }

    /// `output.tor_queue_average_us` adds the two interval-average fields and
    /// changes nothing else; averages over whole intervals never exceed the
    /// exact peak, and over a window of whole intervals their mean is the
    /// exact time-weighted mean.
    #[test]
    fn tor_queue_averages_are_added_only_when_asked_for() {
        let mut c = cfg();
        let off = run(&c, &mut |_, _| {}).unwrap().summary;
        assert_eq!(off.tor_queue_avg_max_bytes, None);
        c.output.tor_queue_average_us = (c.run.duration_ms - c.run.warmup_ms) * 1e3 / 100.0;
        let on = run(&c, &mut |_, _| {}).unwrap().summary;
        let (max, mean) = (on.tor_queue_avg_max_bytes.unwrap(), on.tor_queue_avg_mean_bytes.unwrap());
        assert!(max > 0.0 && max <= on.tor_queue_max_bytes as f64, "{max} {}", on.tor_queue_max_bytes);
        assert!(
            (mean - on.tor_queue_mean_bytes).abs() <= 1e-6 * on.tor_queue_mean_bytes,
            "{mean} {}",
            on.tor_queue_mean_bytes
        );
        let averages_off =
            Summary { tor_queue_avg_max_bytes: None, tor_queue_avg_mean_bytes: None, ..on.without_wall_clock() };
        assert_eq!(averages_off, off.without_wall_clock());
    }

    #[test]
    fn continue_gives_the_same_summary_as_run() {
        let c = cfg();
        let a = run_stoppable(&c, &mut |_, _| ControlFlow::Continue(())).unwrap().unwrap();
        let b = run(&c, &mut |_, _| {}).unwrap();
        assert_eq!(a.summary.events, b.summary.events);
        assert_eq!(a.summary.goodput_gbps, b.summary.goodput_gbps);
        assert_eq!(a.messages.len(), b.messages.len());
    }
}
