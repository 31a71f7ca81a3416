//! Incast: the one-shot N-to-1 scenario (`kind = "incast"`) and the periodic
//! incast overlay of a Poisson workload (`[workload.incast]`).
//!
//! Why together: both pick N distinct random senders and one receiver, which
//! must be uniform and reproducible; the overlay does it without allocating.
//! Both draw from `Stream::Incast` (index 0), so changing them never shifts
//! the per-host Poisson streams.

use crate::config::{Incast, IncastOverlay};
use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::{from_us, stream, ConfigError, SimRng, Stream, Time, S};
use rand::Rng;

/// Moves a uniformly random `k`-subset of `items`, in uniformly random order,
/// to `items[..k]` (partial Fisher-Yates). `k <= items.len()`.
pub(crate) fn choose_prefix(rng: &mut SimRng, items: &mut [u32], k: usize) {
    let n = items.len();
    for i in 0..k.min(n) {
        let j = rng.gen_range(i..n);
        items.swap(i, j);
    }
}

/// The messages of a one-shot incast: one per sender, all at `start_us`, in
/// the order of `sender_hosts` (or of the draw). None when it starts at or
/// after `env.end`.
pub(crate) fn one_shot(cfg: &Incast, env: &WorkloadEnv) -> Result<Vec<MessageSpec>, ConfigError> {
    cfg.check()?;
    let n = env.n_hosts;
    if cfg.receiver >= n {
        return Err(ConfigError::value(
            "workload.receiver",
            cfg.receiver,
            &format!("a host id below {n} (the topology has {n} hosts)"),
        ));
    }
    let senders: Vec<u32> = match &cfg.sender_hosts {
        Some(hosts) => {
            if let Some(&bad) = hosts.iter().find(|&&h| h >= n) {
                return Err(ConfigError::new(
                    "workload.sender_hosts",
                    format!("lists host {bad}, but the topology has hosts 0..{n}"),
                ));
            }
            hosts.clone()
        }
        None => {
            let k = cfg.n_senders();
            if k > n.saturating_sub(1) {
                return Err(ConfigError::value(
                    "workload.senders",
                    k,
                    &format!("at most {} (the hosts other than the receiver)", n.saturating_sub(1)),
                ));
            }
            let mut others: Vec<u32> = (0..n).filter(|&h| h != cfg.receiver).collect();
            let mut rng = stream(env.seed, Stream::Incast, 0);
            choose_prefix(&mut rng, &mut others, k as usize);
            others.truncate(k as usize);
            others
        }
    };
    let time = from_us(cfg.start_us);
    if time >= env.end {
        return Ok(Vec::new());
    }
    Ok(senders
        .into_iter()
        .map(|src| MessageSpec { time, src, dst: cfg.receiver, size: cfg.bytes, incast: false })
        .collect())
}

/// The periodic incast events of a Poisson workload.
///
/// Event `k` happens at `phase + k * period` (computed from `k`, so no rounding
/// drift), with `phase` uniform in `[0, period)`. Each event moves a fresh
/// random receiver and `senders` distinct senders to the front of a persistent
/// permutation of all hosts, then yields one message per sender.
pub(crate) struct OverlayGen {
    rng: SimRng,
    period_ps: f64,
    phase_ps: f64,
    end: Time,
    senders: u32,
    bytes: u64,
    /// Index of the current event.
    k: u64,
    /// Time of the current event; `None` once no event starts before `end`.
    time: Option<Time>,
    /// `perm[0]` is the receiver, `perm[1..=senders]` the senders.
    perm: Vec<u32>,
    /// Messages of the current event already emitted.
    emitted: u32,
}

impl OverlayGen {
    /// `total_bytes_per_s` is the whole workload's offered rate over all hosts;
    /// the overlay carries `share` of it.
    pub(crate) fn new(
        cfg: &IncastOverlay,
        env: &WorkloadEnv,
        total_bytes_per_s: f64,
    ) -> Result<OverlayGen, ConfigError> {
        cfg.check()?;
        let n = env.n_hosts;
        if cfg.senders > n.saturating_sub(1) {
            return Err(ConfigError::value(
                "workload.incast.senders",
                cfg.senders,
                &format!("at most {} (the topology has {n} hosts, one of them receives)", n.saturating_sub(1)),
            ));
        }
        let event_bytes = cfg.senders as f64 * cfg.bytes as f64;
        let period_ps = event_bytes / (cfg.share * total_bytes_per_s) * S as f64;
        if !(period_ps.is_finite() && period_ps > 0.0) {
            return Err(ConfigError::new(
                "workload.incast.share",
                format!("gives an incast period of {period_ps} ps; check the load and host rate"),
            ));
        }
        let mut rng = stream(env.seed, Stream::Incast, 0);
        let phase_ps = rng.gen::<f64>() * period_ps;
        let mut gen = OverlayGen {
            rng,
            period_ps,
            phase_ps,
            end: env.end,
            senders: cfg.senders,
            bytes: cfg.bytes,
            k: 0,
            time: None,
            perm: (0..n).collect(),
            emitted: 0,
        };
        gen.start_event();
        Ok(gen)
    }

    /// Period between events, picoseconds.
    #[cfg(test)]
    pub(crate) fn period_ps(&self) -> f64 {
        self.period_ps
    }

    /// Sets up event `self.k`, or ends the overlay if it is past the end.
    fn start_event(&mut self) {
        let t = self.phase_ps + self.k as f64 * self.period_ps;
        if t >= self.end as f64 {
            self.time = None;
            return;
        }
        self.time = Some(t as Time);
        self.emitted = 0;
        choose_prefix(&mut self.rng, &mut self.perm, self.senders as usize + 1);
    }

    /// Time of the next overlay message, if any.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<Time> {
        self.time
    }

    /// The next overlay message (call only when `peek_time` is `Some`).
    pub(crate) fn next_message(&mut self) -> Option<MessageSpec> {
        let time = self.time?;
        let msg = MessageSpec {
            time,
            src: self.perm[1 + self.emitted as usize],
            dst: self.perm[0],
            size: self.bytes,
            incast: true,
        };
        self.emitted += 1;
        if self.emitted == self.senders {
            self.k += 1;
            self.start_event();
        }
        Some(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::US;

    fn env(n: u32) -> WorkloadEnv {
        WorkloadEnv {
            n_hosts: n,
            host_rate_bps: 100_000_000_000,
            rack_of: vec![0; n as usize],
            core_ratio: 1.0,
            racks_per_pod: 1,
            mss: 1460,
            seed: 42,
            end: 1_000 * US,
        }
    }

    #[test]
    fn choose_prefix_picks_distinct_items() {
        let mut rng = stream(3, Stream::Incast, 0);
        let mut items: Vec<u32> = (0..10).collect();
        for k in 0..=10 {
            choose_prefix(&mut rng, &mut items, k);
            let mut sorted = items.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..10).collect::<Vec<_>>(), "still a permutation");
        }
    }

    #[test]
    fn explicit_senders_give_exact_messages() {
        let cfg = Incast { senders: None, receiver: 3, bytes: 4096, start_us: 2.5, sender_hosts: Some(vec![7, 1, 5]) };
        let msgs = one_shot(&cfg, &env(8)).unwrap();
        let want: Vec<MessageSpec> = [7, 1, 5]
            .into_iter()
            .map(|src| MessageSpec { time: 2_500_000, src, dst: 3, size: 4096, incast: false })
            .collect();
        assert_eq!(msgs, want);
    }

    #[test]
    fn random_senders_are_distinct_and_not_the_receiver() {
        let cfg = Incast { senders: Some(15), receiver: 4, ..Incast::default() };
        let msgs = one_shot(&cfg, &env(16)).unwrap();
        assert_eq!(msgs.len(), 15);
        let mut srcs: Vec<u32> = msgs.iter().map(|m| m.src).collect();
        srcs.sort_unstable();
        let want: Vec<u32> = (0..16).filter(|&h| h != 4).collect();
        assert_eq!(srcs, want);
        assert!(msgs.iter().all(|m| m.dst == 4 && m.time == 0 && m.size == 1_000_000));
        assert_eq!(msgs, one_shot(&cfg, &env(16)).unwrap(), "same seed, same draw");
    }

    #[test]
    fn host_ids_are_checked_against_the_fabric() {
        let e = one_shot(&Incast { receiver: 8, ..Incast::default() }, &env(8)).unwrap_err();
        assert_eq!(e.key, "workload.receiver");
        let e = one_shot(&Incast { sender_hosts: Some(vec![1, 9]), ..Incast::default() }, &env(8)).unwrap_err();
        assert_eq!(e.key, "workload.sender_hosts");
        let e = one_shot(&Incast { senders: Some(8), ..Incast::default() }, &env(8)).unwrap_err();
        assert_eq!(e.key, "workload.senders");
    }

    #[test]
    fn start_after_end_gives_nothing() {
        let cfg = Incast { start_us: 1_000.0, ..Incast::default() };
        assert!(one_shot(&cfg, &env(16)).unwrap().is_empty());
    }

    #[test]
    fn overlay_rejects_too_many_senders() {
        let cfg = IncastOverlay { senders: 30, ..IncastOverlay::default() };
        let e = OverlayGen::new(&cfg, &env(30), 1e9).err().unwrap();
        assert_eq!(e.key, "workload.incast.senders");
        assert!(OverlayGen::new(&cfg, &env(31), 1e9).is_ok());
    }

    #[test]
    fn overlay_events_are_periodic_with_distinct_senders() {
        let cfg = IncastOverlay { senders: 5, bytes: 1000, share: 0.5 };
        // 5000 bytes per event at 0.5 * 1e9 B/s: one event every 10 us.
        let mut g = OverlayGen::new(&cfg, &env(8), 1e9).unwrap();
        assert!((g.period_ps() - 10.0 * US as f64).abs() < 1e-3);
        let first = g.peek_time().unwrap();
        assert!(first < 10 * US);
        let mut events = 0;
        while g.peek_time().is_some() {
            let msgs: Vec<MessageSpec> = (0..5).map(|_| g.next_message().unwrap()).collect();
            let t = msgs[0].time;
            let want = first as f64 + events as f64 * 10.0 * US as f64;
            assert!((t as f64 - want).abs() <= 1.0, "{t} vs {want}");
            let dst = msgs[0].dst;
            let mut srcs: Vec<u32> = msgs.iter().map(|m| m.src).collect();
            srcs.sort_unstable();
            srcs.dedup();
            assert_eq!(srcs.len(), 5);
            assert!(msgs.iter().all(|m| m.time == t && m.dst == dst && m.src != dst && m.incast));
            events += 1;
        }
        assert_eq!(events, 100);
        assert!(g.next_message().is_none());
    }
}
