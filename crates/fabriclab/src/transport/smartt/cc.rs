//! SMaRTT's window logic (SMaRTT-REPS §3, Algorithms 1-3), sans packets: the
//! transport feeds it ACKs (size, ECN, RTT) and losses (trims, timeouts) and
//! reads `cwnd`. Window units are wire bytes.

use fabriclab_engine::Time;
use serde::{Deserialize, Serialize};

/// Which congestion signals drive the window (Fig. 2's straw-men besides SMaRTT).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signals {
    /// SMaRTT: ECN and RTT (the four cases), QuickAdapt, FastIncrease, WTD.
    #[default]
    Smartt,
    /// Straw-man: a marked ACK takes half its size off the window, else Fair Increase.
    EcnOnly,
    /// Straw-man: an RTT above target takes half the ACK's size off the window,
    /// else Multiplicative and Fair Increase.
    RttOnly,
    /// MP-RDMA's window (Lu et al., NSDI 2018, §3.2): per ACK, half a packet
    /// off if marked, else 1/cwnd packet on; a trim or timeout takes
    /// `Consts::mprdma_loss` packets off. The `mprdma` protocol, not a
    /// `[protocol.smartt]` setting.
    Mprdma,
}

/// The constants of one sender, resolved to bytes and picoseconds.
#[derive(Clone, Debug)]
pub struct Consts {
    pub brtt: Time,
    pub trtt: Time,
    /// BDP at the base RTT (bytes): Eq. 1's normaliser.
    pub bdp: f64,
    pub mtu: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    pub fd: f64,
    /// fi and mi, already scaled by gamma.
    pub fi: f64,
    pub mi: f64,
    pub md: f64,
    pub qa_scaling: f64,
    pub quick_adapt: bool,
    /// FastIncrease: k MTU per ACK once cwnd bytes saw RTT < brtt + tolerance and no ECN.
    pub fast_increase_mtu: f64,
    pub fast_increase_tolerance: Time,
    pub wtd_alpha: f64,
    pub wtd_threshold: f64,
    /// Apply the per-ACK update once every this many ACKs, with their bytes summed.
    pub react_every: u32,
    pub signals: Signals,
    /// MP-RDMA: packets off the window per lost (trimmed, timed-out) packet.
    pub mprdma_loss: f64,
}

/// One flow's SMaRTT state.
#[derive(Clone, Debug)]
pub struct SmarttCc {
    pub cwnd: f64,
    /// QuickAdapt: bytes ACKed in the current target-RTT window and its end (0: none yet).
    acked: u64,
    qa_end: Time,
    trigger_qa: bool,
    /// After QuickAdapt: feedback for the bytes then in flight is ignored.
    bytes_ignored: u64,
    bytes_to_ignore: u64,
    /// FastIncrease: congestion-free bytes in a row, and whether it is active.
    fi_count: u64,
    fi_on: bool,
    /// Wait-to-Decrease: EWMA of ECN marks per ACK.
    avg_wtd: f64,
    /// React-every-N: ACKs and bytes accumulated since the last reaction.
    pending_acks: u32,
    pending_bytes: u64,
}

impl SmarttCc {
    pub fn new(init_cwnd: f64, k: &Consts) -> SmarttCc {
        SmarttCc {
            cwnd: init_cwnd.clamp(k.min_cwnd, k.max_cwnd),
            acked: 0,
            qa_end: 0,
            trigger_qa: false,
            bytes_ignored: 0,
            bytes_to_ignore: 0,
            fi_count: 0,
            fi_on: false,
            avg_wtd: 0.0,
            pending_acks: 0,
            pending_bytes: 0,
        }
    }

    /// An ACK for `size` bytes, `ecn` marked, with RTT `rtt`, at `now`;
    /// `inflight` is what the sender has outstanding.
    pub fn on_ack(&mut self, k: &Consts, now: Time, size: u64, ecn: bool, rtt: Time, inflight: u64) {
        self.acked += size;
        self.bytes_ignored += size;
        if self.bytes_ignored < self.bytes_to_ignore {
            return; // stale feedback after QuickAdapt (Algorithm 1 line 8)
        }
        match k.signals {
            Signals::Smartt => {}
            Signals::Mprdma => return self.mprdma(k, size, ecn),
            _ => return self.straw_man(k, size, ecn, rtt),
        }
        self.avg_wtd = k.wtd_alpha * ecn as u8 as f64 + (1.0 - k.wtd_alpha) * self.avg_wtd;
        let can_decrease = self.avg_wtd >= k.wtd_threshold;
        // Algorithm 1 lines 13-16: both run on every ACK that is not ignored
        // (FastIncrease sees the window QuickAdapt may just have set).
        let adapted = self.quick_adapt(k, now, inflight);
        let fast = self.fast_increase(k, size, ecn, rtt);
        if adapted || fast {
            return self.clamp(k);
        }
        let Some(s) = self.react(k, size) else {
            return;
        };
        let (fd, md) = (self.cwnd / k.bdp * k.fd * s, k.md * s * rtt.saturating_sub(k.trtt) as f64 / rtt as f64);
        match (ecn, rtt > k.trtt) {
            (true, false) if can_decrease => self.cwnd -= fd,
            (true, true) if can_decrease => self.cwnd -= s.min(md) + fd,
            (true, _) => {}
            (false, true) => self.cwnd += self.fair_increase(k, s),
            (false, false) => self.cwnd += self.multiplicative_increase(k, s, rtt) + self.fair_increase(k, s),
        }
        self.clamp(k);
    }

    /// A trimmed packet of `size` bytes came back NACKed, or timed out.
    pub fn on_loss(&mut self, k: &Consts, now: Time, size: u64, inflight: u64) {
        if k.signals == Signals::Mprdma {
            self.cwnd -= k.mprdma_loss * size as f64;
            return self.clamp(k);
        }
        self.bytes_ignored += size;
        self.cwnd -= size as f64;
        // Ours: a loss ends FastIncrease and its count of clean bytes
        // (Algorithm 1 lines 28-34 leave them; docs/protocols/smartt.md).
        self.fi_count = 0;
        self.fi_on = false;
        if k.signals == Signals::Smartt && k.quick_adapt {
            self.trigger_qa = true;
            if self.bytes_ignored >= self.bytes_to_ignore {
                self.quick_adapt(k, now, inflight);
            }
        }
        self.clamp(k);
    }

    /// Algorithm 2: at most once per target RTT, a pending loss sets the window
    /// to the bytes ACKed in the last target RTT (x qa_scaling) and the feedback
    /// for what is now in flight is ignored.
    fn quick_adapt(&mut self, k: &Consts, now: Time, inflight: u64) -> bool {
        let mut adapted = false;
        if now > self.qa_end {
            if self.trigger_qa && self.qa_end != 0 {
                self.trigger_qa = false;
                adapted = true;
                self.cwnd = (self.acked as f64).max(k.mtu) * k.qa_scaling;
                self.bytes_to_ignore = inflight;
                self.bytes_ignored = 0;
            }
            self.qa_end = now + k.trtt;
            self.acked = 0;
        }
        adapted
    }

    /// Algorithm 3: after cwnd bytes in a row with RTT near the base RTT and no
    /// mark, every ACK adds k MTU until congestion is seen again.
    fn fast_increase(&mut self, k: &Consts, size: u64, ecn: bool, rtt: Time) -> bool {
        if k.fast_increase_mtu > 0.0 && !ecn && rtt < k.brtt + k.fast_increase_tolerance {
            self.fi_count += size;
            if self.fi_count as f64 > self.cwnd || self.fi_on {
                self.cwnd += k.fast_increase_mtu * k.mtu;
                self.fi_on = true;
                return true;
            }
        } else {
            self.fi_count = 0;
            self.fi_on = false;
        }
        false
    }

    /// React-every-N: the bytes to react to now, or None while accumulating.
    fn react(&mut self, k: &Consts, size: u64) -> Option<f64> {
        self.pending_acks += 1;
        self.pending_bytes += size;
        if self.pending_acks < k.react_every {
            return None;
        }
        let s = self.pending_bytes as f64;
        self.pending_acks = 0;
        self.pending_bytes = 0;
        Some(s)
    }

    /// Eq. 3: larger steps for smaller windows.
    fn fair_increase(&self, k: &Consts, s: f64) -> f64 {
        s / self.cwnd * k.mtu * k.fi
    }

    /// Eq. 4: proportional to how far below target the RTT is, at most s.
    fn multiplicative_increase(&self, k: &Consts, s: f64, rtt: Time) -> f64 {
        let below = k.trtt.saturating_sub(rtt) as f64 / rtt.max(1) as f64;
        s.min(below * s / self.cwnd * k.mtu * k.mi)
    }

    /// Fig. 2's single-signal straw-men: at most half an MTU off per packet on
    /// the signal, the same increase as SMaRTT otherwise.
    fn straw_man(&mut self, k: &Consts, size: u64, ecn: bool, rtt: Time) {
        let Some(s) = self.react(k, size) else {
            return;
        };
        let congested = match k.signals {
            Signals::EcnOnly => ecn,
            _ => rtt > k.trtt,
        };
        if congested {
            self.cwnd -= 0.5 * s;
        } else if k.signals == Signals::RttOnly {
            self.cwnd += self.multiplicative_increase(k, s, rtt) + self.fair_increase(k, s);
        } else {
            self.cwnd += self.fair_increase(k, s);
        }
        self.clamp(k);
    }

    /// MP-RDMA's per-ACK AIMD, in bytes: `size` acknowledged bytes are size/mtu packets.
    fn mprdma(&mut self, k: &Consts, size: u64, marked: bool) {
        let pkts = size as f64 / k.mtu;
        if marked {
            self.cwnd -= 0.5 * k.mtu * pkts;
        } else {
            self.cwnd += k.mtu * k.mtu / self.cwnd * pkts;
        }
        self.clamp(k);
    }

    fn clamp(&mut self, k: &Consts) {
        self.cwnd = self.cwnd.clamp(k.min_cwnd, k.max_cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;

    /// 800 Gbps, 4 KiB frames, base RTT 8.6 us: the paper's setting.
    fn consts() -> Consts {
        let brtt = 8_600_000;
        let bdp = 800e9 / 8.0 * 8.6e-6;
        let gamma = bdp / 150_000.0;
        Consts {
            brtt,
            trtt: brtt * 3 / 2,
            bdp,
            mtu: 4096.0,
            min_cwnd: 4096.0,
            max_cwnd: 1.25 * bdp,
            fd: 0.8,
            fi: 0.25 * gamma,
            mi: 2.0 * gamma,
            md: 2.0,
            qa_scaling: 0.8,
            quick_adapt: true,
            fast_increase_mtu: 2.0,
            fast_increase_tolerance: US,
            wtd_alpha: 0.05,
            wtd_threshold: 0.25,
            react_every: 1,
            signals: Signals::Smartt,
            mprdma_loss: 1.0,
        }
    }

    #[test]
    fn four_cases_move_the_window_as_equations_1_to_4() {
        let k = Consts { fast_increase_mtu: 0.0, wtd_threshold: 0.0, ..consts() };
        let start = 0.5 * k.bdp;
        let step = |ecn: bool, rtt: Time| {
            let mut cc = SmarttCc::new(start, &k);
            cc.on_ack(&k, 1, 4096, ecn, rtt, 0);
            cc.cwnd - start
        };
        // FD: marked, RTT below target: -cwnd/bdp * fd * size.
        assert!((step(true, 10 * US) + 0.5 * 0.8 * 4096.0).abs() < 1e-6);
        // MD: marked, RTT twice target: -min(size, 0.5 * 2 * size) - FD = one packet plus FD.
        assert!((step(true, 2 * k.trtt) + 4096.0 + 0.5 * 0.8 * 4096.0).abs() < 1e-6);
        // FI: unmarked, RTT above target: +size/cwnd * mtu * fi.
        let fi = 4096.0 / start * 4096.0 * k.fi;
        assert!((step(false, 2 * k.trtt) - fi).abs() < 1e-6);
        // MI: unmarked, RTT below target: MI plus FI, bounded by one packet plus FI.
        let rtt = 10 * US;
        let mi = ((k.trtt - rtt) as f64 / rtt as f64 * 4096.0 / start * 4096.0 * k.mi).min(4096.0);
        assert!((step(false, rtt) - (mi + fi)).abs() < 1e-6);
    }

    #[test]
    fn wait_to_decrease_holds_the_window_until_a_quarter_of_acks_are_marked() {
        let k = Consts { fast_increase_mtu: 0.0, ..consts() };
        let mut cc = SmarttCc::new(0.5 * k.bdp, &k);
        let w = cc.cwnd;
        // A few marks: the EWMA stays below 0.25, so marked ACKs change nothing.
        for _ in 0..5 {
            cc.on_ack(&k, 1, 4096, true, 10 * US, 0);
        }
        assert_eq!(cc.cwnd, w);
        for _ in 0..20 {
            cc.on_ack(&k, 1, 4096, true, 10 * US, 0);
        }
        assert!(cc.cwnd < w, "persistent marks decrease the window");
    }

    #[test]
    fn quick_adapt_sets_the_window_to_what_was_acked_in_the_last_target_rtt() {
        let k = consts();
        let mut cc = SmarttCc::new(k.max_cwnd, &k);
        // First feedback opens the window [t0, t0 + trtt); 10 packets are ACKed in it.
        let t0 = 100 * US;
        for i in 0..10 {
            cc.on_ack(&k, t0 + i, 4096, true, 20 * US, 0);
        }
        // A trim: cwnd -= size at once; QuickAdapt waits for the window to end.
        let before = cc.cwnd;
        cc.on_loss(&k, t0 + US, 4096, 50 * 4096);
        assert_eq!(cc.cwnd, before - 4096.0);
        // The next feedback after the window end applies it: 0.8 x 10 packets.
        cc.on_ack(&k, t0 + k.trtt + 1, 4096, true, 20 * US, 40 * 4096);
        assert!((cc.cwnd - 0.8 * 10.0 * 4096.0).abs() < 1e-6, "cwnd {}", cc.cwnd);
        // The 40 packets then in flight are ignored: their marks do not move the window.
        let w = cc.cwnd;
        for i in 0..39 {
            cc.on_ack(&k, t0 + k.trtt + 2 + i, 4096, true, 40 * US, 0);
        }
        assert_eq!(cc.cwnd, w);
        // And QuickAdapt runs at most once per target RTT: another trim right away only subtracts.
        cc.on_loss(&k, t0 + k.trtt + 100, 4096, 0);
        assert_eq!(cc.cwnd, w - 4096.0);
    }

    #[test]
    fn fast_increase_starts_after_a_window_of_clean_acks() {
        let k = consts();
        let mut cc = SmarttCc::new(20.0 * 4096.0, &k);
        let clean = |cc: &mut SmarttCc| {
            let w = cc.cwnd;
            cc.on_ack(&k, 1, 4096, false, k.brtt, 0);
            cc.cwnd - w
        };
        // Ordinary MI + FI growth (under one packet per ACK) until the clean
        // bytes in a row exceed the (growing) window; then exactly +2 MTU per ACK.
        let mut n = 1;
        while clean(&mut cc) < 4096.0 {
            n += 1;
            assert!(n < 100, "FastIncrease never started");
        }
        assert!(n as f64 * 4096.0 > 20.0 * 4096.0, "not before one window of clean ACKs ({n})");
        assert_eq!(clean(&mut cc), 2.0 * 4096.0);
        // A marked ACK ends it.
        cc.on_ack(&k, 1, 4096, true, k.brtt, 0);
        assert!(clean(&mut cc) < 4096.0);
    }

    /// Algorithm 1 lines 13-16 call quick_adapt and fast_increase on every ACK
    /// that is not ignored; before this was fixed a QuickAdapt ACK skipped
    /// FastIncrease, so a slow ACK that triggered QuickAdapt did not end a run
    /// of clean ACKs.
    #[test]
    fn the_quick_adapt_ack_also_counts_for_fast_increase() {
        let k = consts();
        let mut cc = SmarttCc::new(20.0 * 4096.0, &k);
        let t0 = 100 * US;
        cc.on_ack(&k, t0, 4096, false, k.brtt, 0); // opens the trtt window
        cc.on_loss(&k, t0 + 1, 4096, 0); // arms QuickAdapt
        for i in 0..9 {
            cc.on_ack(&k, t0 + 2 + i, 4096, false, k.brtt, 0); // nine clean ACKs in a row
        }
        // The QuickAdapt ACK (0.8 x the ten ACKed packets) is slow: it ends the run of clean ACKs...
        cc.on_ack(&k, t0 + k.trtt + 1, 4096, false, 3 * k.trtt, 0);
        assert!((cc.cwnd - 0.8 * 10.0 * 4096.0).abs() < 1e-6, "cwnd {}", cc.cwnd);
        // ...so FastIncrease waits for a new window's worth of clean ACKs (8
        // packets are not more than the window); with the run kept, the first
        // clean ACK would have started it.
        for i in 0..8 {
            let w = cc.cwnd;
            cc.on_ack(&k, t0 + k.trtt + 2 + i, 4096, false, k.brtt, 0);
            assert!(cc.cwnd - w < 4096.0, "FastIncrease after {} clean ACKs", i + 1);
        }
    }

    #[test]
    fn react_every_n_applies_the_summed_update_once() {
        let k1 = Consts { fast_increase_mtu: 0.0, ..consts() };
        let k5 = Consts { react_every: 5, ..k1.clone() };
        let (mut a, mut b) = (SmarttCc::new(0.5 * k1.bdp, &k1), SmarttCc::new(0.5 * k1.bdp, &k5));
        for i in 0..4 {
            a.on_ack(&k1, i, 4096, false, 2 * k1.trtt, 0);
            b.on_ack(&k5, i, 4096, false, 2 * k1.trtt, 0);
        }
        assert!(a.cwnd > 0.5 * k1.bdp);
        assert_eq!(b.cwnd, 0.5 * k1.bdp, "nothing before the fifth ACK");
        b.on_ack(&k5, 4, 4096, false, 2 * k1.trtt, 0);
        a.on_ack(&k1, 4, 4096, false, 2 * k1.trtt, 0);
        assert!((a.cwnd - b.cwnd).abs() / a.cwnd < 1e-3, "{} vs {}", a.cwnd, b.cwnd);
    }

    #[test]
    fn straw_men_cut_half_a_packet_on_their_own_signal_only() {
        let ecn = Consts { signals: Signals::EcnOnly, ..consts() };
        let rtt = Consts { signals: Signals::RttOnly, ..consts() };
        let mut a = SmarttCc::new(0.5 * ecn.bdp, &ecn);
        a.on_ack(&ecn, 1, 4096, true, 10 * US, 0);
        assert_eq!(a.cwnd, 0.5 * ecn.bdp - 2048.0);
        let mut b = SmarttCc::new(0.5 * rtt.bdp, &rtt);
        b.on_ack(&rtt, 1, 4096, true, 10 * US, 0);
        assert!(b.cwnd > 0.5 * rtt.bdp, "RTT-only ignores the mark");
        b.on_ack(&rtt, 2, 4096, false, 2 * rtt.trtt, 0);
        assert!(b.cwnd < 0.5 * rtt.bdp);
    }

    #[test]
    fn mprdma_takes_half_a_packet_per_mark_one_per_loss_and_adds_one_per_window() {
        let k = Consts { signals: Signals::Mprdma, ..consts() };
        let w = 100.0 * 4096.0;
        let mut cc = SmarttCc::new(w, &k);
        cc.on_ack(&k, 1, 4096, true, k.brtt, 0);
        assert_eq!(cc.cwnd, w - 2048.0);
        cc.on_loss(&k, 2, 4096, 0); // a whole packet, as the authors' htsim
        assert_eq!(cc.cwnd, w - 2048.0 - 4096.0);
        let half = Consts { mprdma_loss: 0.5, ..k.clone() };
        cc.on_loss(&half, 2, 4096, 0);
        assert_eq!(cc.cwnd, w - 2.0 * 4096.0);
        cc.cwnd = w - 4096.0;
        // One window of unmarked ACKs (99 packets) adds about one packet.
        for i in 0..99 {
            cc.on_ack(&k, 3 + i, 4096, false, 3 * k.trtt, 0);
        }
        assert!((cc.cwnd - w).abs() < 0.01 * 4096.0, "{}", cc.cwnd - w);
    }

    #[test]
    fn window_stays_within_one_mtu_and_max_cwnd() {
        let k = consts();
        let mut cc = SmarttCc::new(k.max_cwnd, &k);
        for i in 0..10_000 {
            cc.on_loss(&k, i, 4096, 0);
        }
        assert_eq!(cc.cwnd, k.min_cwnd);
        for i in 0..100_000 {
            cc.on_ack(&k, i, 4096, false, k.brtt, 0);
        }
        assert_eq!(cc.cwnd, k.max_cwnd);
    }
}
