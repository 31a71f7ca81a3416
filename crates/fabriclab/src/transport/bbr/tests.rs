//! BBR's state machine driven by hand: a flow over an ideal pipe of rate
//! `RATE` and propagation RTT `RTT`, with every packet ACKed one RTT after it
//! is sent (plus any extra queueing delay the test adds).

use super::model::{Bbr, Consts, Mode, GAIN_CYCLE};
use super::*;
use crate::transport::lb::RepsStamp;
use fabriclab_engine::{stream, SimRng, Stream, US};

const MTU: f64 = 4096.0;
const RTT: Time = 10 * US;
/// 100 packets per RTT: 40.96 GB/s.
const RATE: f64 = 100.0 * MTU * 1e12 / RTT as f64;

fn consts() -> Consts {
    Consts {
        high_gain: 2.0 / std::f64::consts::LN_2,
        drain_gain: std::f64::consts::LN_2 / 2.0,
        cwnd_gain: 2.0,
        btlbw_rounds: 10,
        rtprop_window: 10_000 * 1_000 * US,
        probe_rtt_time: 200 * 1_000 * US,
        min_cwnd: 4.0 * MTU,
        full_bw_growth: 1.25,
        full_bw_rounds: 3,
        mtu: MTU,
        init_cwnd: 10.0 * MTU,
        nominal_rtt: RTT,
    }
}

/// A sender paced by BBR (and its cwnd) over a bottleneck of `rate` bytes/s:
/// packets leave at max(pacing, bottleneck) spacing and return one `RTT` plus
/// their queueing delay later.
struct Flow {
    k: Consts,
    b: Bbr,
    rng: SimRng,
    now: Time,
    rate: f64,
    /// (ack time, packet index, rtt) in flight, oldest first.
    flight: std::collections::VecDeque<(Time, u32, Time)>,
    inflight: u64,
    next: u32,
    /// When the bottleneck is free again.
    link_free: Time,
    next_send: Time,
    max_queue_delay: Time,
}

impl Flow {
    fn new(k: Consts, rate: f64) -> Flow {
        let b = Bbr::new(&k, 1_000_000, 0);
        Flow {
            k,
            b,
            rng: stream(3, Stream::Host, 0),
            now: 0,
            rate,
            flight: Default::default(),
            inflight: 0,
            next: 0,
            link_free: 0,
            next_send: 0,
            max_queue_delay: 0,
        }
    }

    /// Runs until `until`, sending whenever cwnd and pacing allow.
    fn run(&mut self, until: Time) {
        while self.now < until {
            let can_send = (self.inflight as f64 + MTU) <= self.b.cwnd || self.inflight == 0;
            let ack_at = self.flight.front().map(|f| f.0);
            let send_at = can_send.then_some(self.next_send.max(self.now));
            match (send_at, ack_at) {
                (Some(s), a) if a.is_none_or(|a| s < a) => {
                    self.now = s;
                    self.b.on_send(self.next, s, self.inflight, false);
                    self.next_send = s + self.b.pace_gap(MTU as u64);
                    let ser = (MTU * 1e12 / self.rate) as Time;
                    let start = self.link_free.max(s);
                    self.link_free = start + ser;
                    let qd = start - s;
                    self.max_queue_delay = self.max_queue_delay.max(qd);
                    self.flight.push_back((self.link_free + RTT, self.next, RTT + qd + ser));
                    self.inflight += MTU as u64;
                    self.next += 1;
                }
                (_, Some(a)) => {
                    let (_, i, rtt) = self.flight.pop_front().unwrap();
                    self.now = a;
                    self.inflight -= MTU as u64;
                    self.b.on_ack(&self.k, &mut self.rng, i, MTU as u64, a, rtt, self.inflight);
                }
                _ => unreachable!("a flow with nothing in flight can always send"),
            }
        }
    }
}

#[test]
fn startup_exits_on_a_full_pipe_then_drains_into_probe_bw() {
    let mut f = Flow::new(consts(), RATE);
    f.run(3 * RTT);
    assert_eq!(f.b.mode, Mode::Startup);
    assert!(!f.b.filled_pipe);
    let mut exit_round = None;
    while f.now < 100 * RTT && f.b.mode != Mode::ProbeBw {
        let r = f.b.round_count;
        f.run(f.now + RTT / 10);
        if f.b.filled_pipe && exit_round.is_none() {
            exit_round = Some(r);
        }
    }
    assert_eq!(f.b.mode, Mode::ProbeBw, "Startup -> Drain -> ProbeBW");
    // BtlBw is the bottleneck rate (within a packet per RTT), RTprop the path's RTT.
    let bw = f.b.btlbw();
    assert!((bw - RATE).abs() < 0.02 * RATE, "btlbw {bw} vs {RATE}");
    assert!(f.b.rtprop.unwrap() >= RTT && f.b.rtprop.unwrap() < RTT + RTT / 50);
    // Startup doubles the rate per round from 10 packets: ~4 rounds to reach 100
    // packets per RTT, then three rounds without 25% growth.
    let r = exit_round.unwrap();
    assert!((5..=10).contains(&r), "full pipe detected at round {r}");
}

#[test]
fn probe_bw_cycles_its_eight_gains_once_per_rtprop() {
    let mut f = Flow::new(consts(), RATE);
    while f.b.mode != Mode::ProbeBw {
        f.run(f.now + RTT / 10);
    }
    let mut seen = vec![(f.b.cycle_index, f.b.pacing_gain)];
    let t0 = f.now;
    while f.now < t0 + 40 * RTT {
        f.run(f.now + RTT / 20);
        if seen.last().unwrap().0 != f.b.cycle_index {
            seen.push((f.b.cycle_index, f.b.pacing_gain));
        }
    }
    // Each phase lasts about one RTprop: 40 RTTs see about 40 phase changes (5 cycles).
    assert!((30..=45).contains(&seen.len()), "{} phases in 40 RTTs", seen.len());
    for w in seen.windows(2) {
        assert_eq!(w[1].0, (w[0].0 + 1) % 8, "phases advance one at a time");
        assert_eq!(w[1].1, GAIN_CYCLE[w[1].0]);
    }
    assert!(seen.iter().any(|s| s.1 == 1.25) && seen.iter().any(|s| s.1 == 0.75));
    // The queue stays bounded: cwnd_gain 2 caps the flight at 2 BDP + 3 packets.
    assert!(f.b.cwnd <= 2.0 * 100.0 * MTU * 1.03 + 3.0 * MTU, "cwnd {}", f.b.cwnd);
    assert!(f.max_queue_delay < 2 * RTT, "queueing delay {}", f.max_queue_delay);
}

#[test]
fn probe_bw_starts_at_a_random_phase_other_than_the_drain_phase() {
    let mut starts = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let mut f = Flow::new(consts(), RATE);
        f.rng = stream(seed, Stream::Host, 0);
        while f.b.mode != Mode::ProbeBw {
            f.run(f.now + RTT / 10);
        }
        starts.insert(f.b.cycle_index);
    }
    assert!(!starts.contains(&1), "never starts in the 0.75 phase: {starts:?}");
    assert!(starts.len() >= 5, "{starts:?}");
}

#[test]
fn probe_rtt_is_entered_when_rtprop_expires_and_left_after_its_dwell() {
    // A 2 ms RTprop window and a 50 us dwell (5 RTTs), in place of 10 s and 200 ms.
    let k = Consts { rtprop_window: 2_000 * US, probe_rtt_time: 50 * US, ..consts() };
    let mut f = Flow::new(k, RATE);
    while f.b.mode != Mode::ProbeBw {
        f.run(f.now + RTT / 10);
    }
    // ProbeBW's 1.25 phase keeps a little queue, so RTprop is refreshed only by
    // samples at the bare RTT; run until it expires.
    let mut entered = None;
    while f.now < 10_000 * US && entered.is_none() {
        f.run(f.now + RTT / 10);
        if f.b.mode == Mode::ProbeRtt {
            entered = Some(f.now);
        }
    }
    let entered = entered.expect("ProbeRTT entered");
    assert!(entered >= 2_000 * US, "not before the RTprop window expired");
    assert!(f.b.cwnd <= 4.0 * MTU, "cwnd 4 packets in ProbeRTT");
    let mut left = None;
    while f.now < entered + 2_000 * US && left.is_none() {
        f.run(f.now + RTT / 10);
        assert!(f.b.mode == Mode::ProbeRtt || f.b.cwnd > 4.0 * MTU || left.is_some());
        if f.b.mode != Mode::ProbeRtt {
            left = Some(f.now);
        }
    }
    let left = left.expect("ProbeRTT left");
    let dwell = left - entered;
    assert!((50 * US..50 * US + 3 * RTT).contains(&dwell), "dwell {dwell} ps");
    assert_eq!(f.b.mode, Mode::ProbeBw, "back to ProbeBW: the pipe was full");
    assert!(f.b.cwnd > 50.0 * MTU, "the saved cwnd is restored: {}", f.b.cwnd);
}

#[test]
fn a_loss_conserves_packets_for_a_round_and_a_timeout_drops_to_one_packet() {
    let mut f = Flow::new(consts(), RATE);
    while f.b.mode != Mode::ProbeBw {
        f.run(f.now + RTT / 10);
    }
    f.run(f.now + 5 * RTT);
    let before = f.b.cwnd;
    let bw = f.b.btlbw();
    f.b.on_loss(&f.k, MTU as u64, f.inflight, false);
    assert!(f.b.cwnd <= f.inflight as f64 + MTU, "packet conservation: {} vs {}", f.b.cwnd, f.inflight);
    assert_eq!(f.b.btlbw(), bw, "the model is kept");
    f.run(f.now + 4 * RTT);
    assert!(f.b.cwnd >= 0.95 * before, "cwnd restored after a clean round: {} vs {before}", f.b.cwnd);
    f.b.on_loss(&f.k, MTU as u64, f.inflight, true);
    assert_eq!(f.b.cwnd, MTU);
}

#[test]
fn docs_cover_every_parameter_and_errors_name_keys() {
    let v = serde_json::to_value(BbrParams { high_gain: Some(2.885), ..Default::default() }).unwrap();
    let mut keys: Vec<String> = v.as_object().unwrap().keys().filter(|k| *k != "lb").cloned().collect();
    let mut documented: Vec<String> =
        BbrParams::docs().iter().map(|d| d.key.to_string()).filter(|k| !k.starts_with("lb.")).collect();
    keys.sort();
    documented.sort();
    assert_eq!(keys, documented);
    crate::transport::params::assert_bad_keys_named(
        "bbr",
        [
            (BbrParams { high_gain: Some(0.5), ..Default::default() }, "high_gain"),
            (BbrParams { btlbw_filter_rounds: 0, ..Default::default() }, "btlbw_filter_rounds"),
            (BbrParams { full_bw_growth: f64::NAN, ..Default::default() }, "full_bw_growth"),
            (BbrParams { min_cwnd_pkts: 0.0, ..Default::default() }, "min_cwnd_pkts"),
            (BbrParams { lb: LbParams { entropies: 0, ..Default::default() }, ..Default::default() }, "lb.entropies"),
            (
                BbrParams {
                    lb: LbParams { stamp: Some(RepsStamp::Admission), ..Default::default() },
                    ..Default::default()
                },
                "lb.stamp",
            ),
        ],
    );
}

#[test]
fn constants_resolve_from_the_host() {
    let info =
        HostInfo { link_rate_bps: 800_000_000_000, mtu: 4096, mss: 4056, ..HostInfo::at_100gbps(0, 2, 8, 8_600_000) };
    let k = BbrParams::default().consts(&info);
    assert!((k.high_gain - 2.885).abs() < 1e-3 && (k.drain_gain * k.high_gain - 1.0).abs() < 1e-12);
    assert!((k.init_cwnd - 860_000.0).abs() < 1.0, "one BDP at 800 Gbps x 8.6 us");
    assert_eq!(k.min_cwnd, 4.0 * data_wire(4056) as f64);
    assert_eq!((k.rtprop_window, k.probe_rtt_time), (10 * fabriclab_engine::S, 200 * fabriclab_engine::MS));
}
