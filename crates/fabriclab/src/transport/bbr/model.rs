//! BBRv1's model and state machine (Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00,
//! "BBR" below), sans packets: the host reports each send, each newly ACKed
//! packet and each loss, and obeys `cwnd` and `pacing_rate`. Bytes are wire
//! bytes, times picoseconds, rates bytes per second.
//!
//! Per ACK (BBR §4.2): the delivery-rate sample of the ACKed packet (its
//! `delivered` count and times recorded when it was sent, draft-cheng-iccrg-
//! delivery-rate-estimation) feeds the BtlBw max filter over the last
//! `btlbw_rounds` round trips; its RTT feeds RTprop, the minimum over
//! `rtprop_window`; then the mode machine (Startup, Drain, ProbeBW's gain
//! cycle, ProbeRTT) sets pacing_gain and cwnd_gain, and pacing_rate =
//! pacing_gain x BtlBw, cwnd = cwnd_gain x BtlBw x RTprop + 3 packets.

use fabriclab_engine::{SimRng, Time, S};
use rand::Rng;

/// ProbeBW's eight-phase pacing-gain cycle (BBR §4.3.4.3).
pub const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

/// BBR's constants for one sender, resolved to bytes and picoseconds.
#[derive(Clone, Debug)]
pub struct Consts {
    /// Startup's pacing and cwnd gain, 2/ln 2.
    pub high_gain: f64,
    /// Drain's pacing gain, 1/high_gain.
    pub drain_gain: f64,
    /// ProbeBW's cwnd gain.
    pub cwnd_gain: f64,
    /// BtlBw filter length, round trips.
    pub btlbw_rounds: usize,
    pub rtprop_window: Time,
    /// ProbeRTT dwell (at least one round trip too).
    pub probe_rtt_time: Time,
    /// Smallest cwnd, and cwnd during ProbeRTT (4 packets).
    pub min_cwnd: f64,
    /// Full pipe: BtlBw grew by less than this factor ...
    pub full_bw_growth: f64,
    /// ... for this many round trips in a row.
    pub full_bw_rounds: u32,
    /// Wire bytes of a full packet (the send quantum: one packet, no TSO).
    pub mtu: f64,
    pub init_cwnd: f64,
    /// RTT stand-in before the first sample: the fabric's base RTT.
    pub nominal_rtt: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// What the delivery-rate estimator records per packet when it is sent.
#[derive(Clone, Copy, Debug, Default)]
struct SentState {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    sent_time: Time,
    app_limited: bool,
}

/// Windowed max of the per-round maxima over the last `len` rounds: a ring
/// of (round, max) slots, exact (Linux approximates it with three samples).
#[derive(Clone, Debug)]
struct MaxFilter {
    slots: Vec<(u64, f64)>,
}

impl MaxFilter {
    fn new(len: usize) -> MaxFilter {
        MaxFilter { slots: vec![(u64::MAX, 0.0); len.max(1)] }
    }

    fn update(&mut self, round: u64, v: f64) {
        let n = self.slots.len();
        let s = &mut self.slots[(round % n as u64) as usize];
        if s.0 != round {
            *s = (round, v);
        } else if v > s.1 {
            s.1 = v;
        }
    }

    /// The largest value of rounds `round - len + 1 ..= round`.
    fn get(&self, round: u64) -> f64 {
        let n = self.slots.len() as u64;
        self.slots.iter().filter(|s| s.0 <= round && s.0 + n > round).fold(0.0, |m, s| m.max(s.1))
    }
}

/// One flow's BBR.
#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    pub cwnd: f64,
    /// Bytes per second.
    pub pacing_rate: f64,
    // delivery-rate estimation
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero: samples are app-limited until `delivered` passes it.
    app_limited: u64,
    sent: Vec<SentState>,
    // model
    btlbw: MaxFilter,
    /// RTprop (None: no sample yet) and when it was last set.
    pub rtprop: Option<Time>,
    rtprop_stamp: Time,
    // round counting by delivered bytes
    next_round_delivered: u64,
    pub round_count: u64,
    round_start: bool,
    // Startup's full-pipe detection
    pub filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    // ProbeBW
    pub cycle_index: usize,
    cycle_stamp: Time,
    // ProbeRTT
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    // loss recovery: packet conservation for one round, then the saved cwnd
    in_recovery: bool,
    recovery_round: u64,
}

impl Bbr {
    /// A flow of `n_pkts` packets starting at `now` (Startup, BBR §4.3.2.1).
    pub fn new(k: &Consts, n_pkts: u32, now: Time) -> Bbr {
        let mut b = Bbr {
            mode: Mode::Startup,
            pacing_gain: k.high_gain,
            cwnd_gain: k.high_gain,
            cwnd: k.init_cwnd.max(k.min_cwnd),
            pacing_rate: 0.0,
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            app_limited: 0,
            sent: vec![SentState::default(); n_pkts as usize],
            btlbw: MaxFilter::new(k.btlbw_rounds),
            rtprop: None,
            rtprop_stamp: now,
            next_round_delivered: 0,
            round_count: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: now,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            in_recovery: false,
            recovery_round: 0,
        };
        // BBRInitPacingRate: high_gain x InitialCwnd / SRTT.
        b.pacing_rate = k.high_gain * b.cwnd * S as f64 / k.nominal_rtt.max(1) as f64;
        b
    }

    pub fn btlbw(&self) -> f64 {
        self.btlbw.get(self.round_count)
    }

    /// The flow sends packet `i` at `now` with `inflight` bytes already out;
    /// `last_new` says the application has no further data after it.
    pub fn on_send(&mut self, i: u32, now: Time, inflight: u64, last_new: bool) {
        if inflight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        self.sent[i as usize] = SentState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited != 0,
        };
        if last_new {
            // Nothing left to send: later samples measure the application, not the path.
            self.app_limited = (self.delivered + inflight).max(1);
        }
    }

    /// Packet `i` (`size` wire bytes) was ACKed for the first time at `now`
    /// with RTT `rtt`; `inflight` is what remains outstanding.
    pub fn on_ack(&mut self, k: &Consts, rng: &mut SimRng, i: u32, size: u64, now: Time, rtt: Time, inflight: u64) {
        let p = self.sent[i as usize];
        let prior_inflight = inflight + size;
        self.delivered += size;
        self.delivered_time = now;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        self.first_sent_time = p.sent_time;
        // The rate over the longer of the send and ACK intervals, never
        // shorter than RTprop (ACK compression would inflate it).
        let interval = (p.sent_time - p.first_sent_time).max(now - p.delivered_time);
        let rate = (interval >= self.rtprop.unwrap_or(0) && interval > 0)
            .then(|| (self.delivered - p.delivered) as f64 * S as f64 / interval as f64);
        // BBRUpdateModelAndState
        self.update_round(p.delivered);
        if let Some(r) = rate.filter(|&r| !p.app_limited || r >= self.btlbw()) {
            self.btlbw.update(self.round_count, r);
        }
        self.check_cycle_phase(k, now, prior_inflight);
        self.check_full_pipe(k, p.app_limited);
        self.check_drain(k, rng, now, inflight);
        let expired = self.update_rtprop(k, now, rtt);
        self.check_probe_rtt(k, now, expired, inflight);
        // BBRUpdateControlParameters
        self.set_pacing_rate();
        self.set_cwnd(k, size, inflight);
    }

    /// A packet of `size` bytes was trimmed (NACK) or timed out; `inflight`
    /// is what remains outstanding. BBRv1 keeps its model and only bounds
    /// cwnd: packet conservation for one round trip, 1 packet after a timeout.
    pub fn on_loss(&mut self, k: &Consts, size: u64, inflight: u64, timeout: bool) {
        if !self.in_recovery {
            self.in_recovery = true;
            self.prior_cwnd = self.saved_cwnd();
            self.cwnd = inflight as f64 + k.mtu;
        }
        self.recovery_round = self.round_count; // recovery lasts until a round passes without loss
        if timeout {
            self.cwnd = k.mtu;
        } else {
            self.cwnd = (self.cwnd - size as f64).max(k.mtu);
        }
    }

    fn saved_cwnd(&self) -> f64 {
        if self.in_recovery || self.mode == Mode::ProbeRtt {
            self.prior_cwnd.max(self.cwnd)
        } else {
            self.cwnd
        }
    }

    fn update_round(&mut self, p_delivered: u64) {
        self.round_start = p_delivered >= self.next_round_delivered;
        if self.round_start {
            self.next_round_delivered = self.delivered;
            self.round_count += 1;
        }
    }

    /// BBRInflight: gain x BDP plus three send quanta (the initial window before an RTT sample).
    pub fn inflight(&self, k: &Consts, gain: f64) -> f64 {
        match self.rtprop {
            None => k.init_cwnd,
            Some(rtprop) => gain * self.btlbw() * rtprop as f64 / S as f64 + 3.0 * k.mtu,
        }
    }

    fn check_cycle_phase(&mut self, k: &Consts, now: Time, prior_inflight: u64) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = now - self.cycle_stamp > self.rtprop.unwrap_or(k.nominal_rtt);
        let next = if self.pacing_gain > 1.0 {
            // Up: until a round has passed and the pipe holds gain x BDP (or loss).
            full_length && (self.in_recovery || prior_inflight as f64 >= self.inflight(k, self.pacing_gain))
        } else if self.pacing_gain < 1.0 {
            // Down: until a round has passed or the queue it built has drained.
            full_length || prior_inflight as f64 <= self.inflight(k, 1.0)
        } else {
            full_length
        };
        if next {
            self.advance_cycle(now);
        }
    }

    fn advance_cycle(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % GAIN_CYCLE.len();
        self.pacing_gain = GAIN_CYCLE[self.cycle_index];
    }

    fn check_full_pipe(&mut self, k: &Consts, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        let bw = self.btlbw();
        if bw >= self.full_bw * k.full_bw_growth {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.filled_pipe = self.full_bw_count >= k.full_bw_rounds;
    }

    fn check_drain(&mut self, k: &Consts, rng: &mut SimRng, now: Time, inflight: u64) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = k.drain_gain;
            self.cwnd_gain = k.high_gain;
        }
        if self.mode == Mode::Drain && inflight as f64 <= self.inflight(k, 1.0) {
            self.enter_probe_bw(k, rng, now);
        }
    }

    /// ProbeBW starts at a random phase other than the 0.75 one (BBR §4.3.4.3).
    fn enter_probe_bw(&mut self, k: &Consts, rng: &mut SimRng, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = k.cwnd_gain;
        self.cycle_index = GAIN_CYCLE.len() - 1 - rng.gen_range(0..GAIN_CYCLE.len() - 1);
        self.advance_cycle(now);
    }

    /// Returns whether RTprop had expired before this sample.
    fn update_rtprop(&mut self, k: &Consts, now: Time, rtt: Time) -> bool {
        let expired = now > self.rtprop_stamp + k.rtprop_window;
        if self.rtprop.is_none_or(|r| rtt <= r) || expired {
            self.rtprop = Some(rtt);
            self.rtprop_stamp = now;
        }
        expired
    }

    fn check_probe_rtt(&mut self, k: &Consts, now: Time, expired: bool, inflight: u64) {
        if self.mode != Mode::ProbeRtt && expired {
            self.prior_cwnd = self.saved_cwnd();
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        // The low rates ProbeRTT delivers say nothing about the path.
        self.app_limited = (self.delivered + inflight).max(1);
        match self.probe_rtt_done {
            None if inflight as f64 <= k.min_cwnd => {
                self.probe_rtt_done = Some(now + k.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now > done {
                    self.rtprop_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.filled_pipe {
                        self.mode = Mode::ProbeBw;
                        self.cwnd_gain = k.cwnd_gain;
                        self.pacing_gain = GAIN_CYCLE[self.cycle_index];
                        self.cycle_stamp = now;
                    } else {
                        self.mode = Mode::Startup;
                        self.pacing_gain = k.high_gain;
                        self.cwnd_gain = k.high_gain;
                    }
                }
            }
        }
    }

    fn set_pacing_rate(&mut self) {
        let rate = self.pacing_gain * self.btlbw();
        if rate > 0.0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    fn set_cwnd(&mut self, k: &Consts, acked: u64, inflight: u64) {
        let acked = acked as f64;
        if self.in_recovery && self.round_count > self.recovery_round + 1 {
            // A full round without a new loss: restore the window saved on entry.
            self.in_recovery = false;
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        let target = self.inflight(k, self.cwnd_gain);
        if self.in_recovery && self.round_count <= self.recovery_round + 1 {
            self.cwnd = self.cwnd.max(inflight as f64 + acked); // packet conservation
        } else if self.filled_pipe {
            self.cwnd = (self.cwnd + acked).min(target);
        } else if self.cwnd < target || (self.delivered as f64) < k.init_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(k.min_cwnd);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(k.min_cwnd);
        }
    }

    /// The gap after sending `wire` bytes before the flow's next packet (pacing).
    pub fn pace_gap(&self, wire: u64) -> Time {
        if self.pacing_rate > 0.0 {
            (wire as f64 * S as f64 / self.pacing_rate).round() as Time
        } else {
            0
        }
    }
}
