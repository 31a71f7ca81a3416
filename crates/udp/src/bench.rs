//! Message load against one or more receivers: open loop (Poisson arrivals at
//! a payload rate) or closed loop (a fixed number of messages in flight), sizes
//! from a workload distribution; reports goodput and latency percentiles.
//! A probe is a bench of tiny messages whose latency is the round trip
//! (DATA to the receiver, DONE back).

use crate::endpoint::{Endpoint, Event};
use crate::io::{Io, IoStats};
use crate::peers::PeerId;
use crate::stats::Stats;
use fabriclab_engine::{ConfigError, Time, MS, S};
use fabriclab_workload::{BuiltinDist, SizeDist};
use hdrhistogram::Histogram;
use rand::Rng;
use serde::Serialize;

/// How messages are offered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// Poisson arrivals offering this many payload bits per second in total.
    Open { gbps: f64 },
    /// This many messages in flight at all times.
    Closed { window: u32 },
    /// One message every `interval`, whatever happens (probes).
    Periodic { interval: Time },
}

/// A size distribution by name: `wka`, `wkb`, `wkc`, `fixed:BYTES`, or a CDF file path.
pub fn parse_dist(spec: &str) -> Result<SizeDist, ConfigError> {
    let key = "--dist";
    if let Some(b) = BuiltinDist::ALL.iter().find(|b| b.name() == spec.to_ascii_lowercase()) {
        return Ok(SizeDist::builtin(*b));
    }
    if let Some(n) = spec.strip_prefix("fixed:") {
        let size: u64 =
            n.parse().map_err(|_| ConfigError::value(key, spec, "fixed:BYTES with BYTES a positive integer"))?;
        return SizeDist::fixed(size).map_err(|e| ConfigError::new(key, e));
    }
    let path = std::path::Path::new(spec);
    if path.exists() {
        return SizeDist::from_file(path, 1, key);
    }
    Err(ConfigError::value(key, spec, "wka, wkb, wkc, fixed:BYTES or the path of a CDF file"))
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub duration_s: f64,
    pub messages_confirmed: u64,
    pub messages_failed: u64,
    pub bytes_confirmed: u64,
    /// Confirmed payload bytes per second, in Gbps.
    pub goodput_gbps: f64,
    pub offered_gbps: Option<f64>,
    /// Send to DONE, microseconds.
    pub latency_us: Percentiles,
    pub stats: Stats,
    /// Socket-layer counters: syscalls per datagram, GSO/GRO use.
    pub io: IoStats,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Percentiles {
    fn of(h: &Histogram<u64>) -> Percentiles {
        let us = |ns: u64| ns as f64 / 1e3;
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: h.len(),
            mean: h.mean() / 1e3,
            p50: us(h.value_at_quantile(0.5)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// What to run.
pub struct Plan {
    pub peers: Vec<PeerId>,
    pub sizes: SizeDist,
    pub load: Load,
    pub duration: Time,
    /// Stop offering after `duration`, then wait this long for stragglers.
    pub drain: Time,
    /// Messages started before this are not measured.
    pub warmup: Time,
    /// Offer at most this many messages; the run ends when all are settled
    /// (or at `duration` + `drain`).
    pub count: Option<u64>,
}

/// Runs `plan` on `ep` (whose clock starts the plan) and reports.
pub fn run<I: Io>(ep: &mut Endpoint<I>, plan: &Plan, rng: &mut impl Rng) -> Report {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let start = ep.now();
    let end = start + plan.duration;
    let measure_from = start + plan.warmup;
    let mut next_arrival = start;
    let mut next_peer = 0usize;
    let mut started_at = std::collections::HashMap::new();
    let (mut confirmed, mut failed, mut bytes) = (0u64, 0u64, 0u64);
    let mut offered_bytes = 0u64;
    let mean_gap = |gbps: f64| plan.sizes.mean() * 8.0 / (gbps * 1e9) * S as f64;
    loop {
        let now = ep.now();
        let quota_left = |offered: usize| plan.count.is_none_or(|c| (offered as u64) < c);
        let offering = now < end && quota_left(next_peer);
        // Offer new messages, never more than --count in all.
        while offering && quota_left(next_peer) {
            let due = match plan.load {
                Load::Open { .. } | Load::Periodic { .. } => now >= next_arrival,
                Load::Closed { window } => ep.in_flight() < window as usize,
            };
            if !due || ep.in_flight() >= ep.config().max_outbound_messages as usize {
                break;
            }
            let size = plan.sizes.sample(rng).min(ep.config().max_message_bytes).max(1);
            let peer = plan.peers[next_peer % plan.peers.len()];
            next_peer += 1;
            match ep.send(peer, crate::check::pattern(ep.next_message_id(), size as usize)) {
                Ok(id) => {
                    started_at.insert(id, (size, now >= measure_from));
                    offered_bytes += size;
                }
                Err(_) => break,
            }
            next_arrival += match plan.load {
                Load::Open { gbps } => (-(1.0 - rng.gen::<f64>()).ln() * mean_gap(gbps)) as Time,
                Load::Periodic { interval } => interval,
                Load::Closed { .. } => 0,
            };
        }
        let wake = ep.step();
        while let Some(e) = ep.next_event() {
            match e {
                Event::Confirmed { id, latency_ps, .. } => {
                    if let Some((size, measured)) = started_at.remove(&id) {
                        if measured {
                            confirmed += 1;
                            bytes += size;
                            let _ = hist.record((latency_ps / 1000).max(1));
                        }
                    }
                }
                Event::Failed { id, .. } => {
                    started_at.remove(&id);
                    failed += 1;
                }
                Event::Received { .. } => {}
            }
        }
        let now = ep.now();
        let settled = ep.in_flight() == 0;
        if (now >= end && (settled || now >= end + plan.drain)) || (!quota_left(next_peer) && settled) {
            break;
        }
        let mut until = wake.min(end.max(now));
        if offering && !matches!(plan.load, Load::Closed { .. }) {
            until = until.min(next_arrival);
        }
        ep.wait_until(until.max(now).min(now + MS));
    }
    let ran = if plan.count.is_some() { ep.now() - start } else { plan.duration };
    let secs = (ran - plan.warmup.min(ran)) as f64 / S as f64;
    Report {
        duration_s: secs,
        messages_confirmed: confirmed,
        messages_failed: failed,
        bytes_confirmed: bytes,
        goodput_gbps: bytes as f64 * 8.0 / secs.max(1e-9) / 1e9,
        offered_gbps: match plan.load {
            Load::Open { gbps } => Some(gbps),
            _ => Some(offered_bytes as f64 * 8.0 / (plan.duration as f64 / S as f64) / 1e9),
        },
        latency_us: Percentiles::of(&hist),
        stats: ep.stats().clone(),
        io: ep.io_stats(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_by_name_and_clear_errors() {
        assert!(parse_dist("wka").is_ok());
        assert_eq!(parse_dist("fixed:1000").unwrap().mean(), 1000.0);
        let e = parse_dist("fixed:zero").unwrap_err();
        assert!(e.to_string().contains("--dist") && e.to_string().contains("fixed:zero"));
        assert!(parse_dist("nope").unwrap_err().to_string().contains("wka, wkb, wkc"));
    }
}
