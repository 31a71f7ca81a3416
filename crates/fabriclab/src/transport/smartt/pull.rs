//! EQDS's receiver-driven credit (Olteanu et al., "An edge-queued datagram
//! service for all datacenter traffic", NSDI 2022), as SMaRTT-REPS runs it:
//! the sender spends speculative credit (its first window) until it hears
//! from the receiver, then only credit the receiver's pull pacer grants.
//! Every data packet carries the sender's cumulative pull target; the
//! receiver pulls round-robin over its senders at its link rate until each
//! target is met, and adds a trimmed packet's size to its sender's target.

use super::super::toolkit::{IdMap, SlotPacer};
use super::MsgId;
use fabriclab_engine::Time;
use std::collections::VecDeque;

/// Sender side of one flow's credit.
#[derive(Clone, Debug)]
pub struct Credit {
    /// Until the first ACK, NACK or PULL the flow may spend `spec`.
    pub speculating: bool,
    spec: i64,
    /// Pull credit granted and not yet spent (bytes).
    pull: i64,
    /// Cumulative pull bytes granted so far (the latest PULL's number).
    granted: u64,
}

impl Credit {
    pub fn new(speculative: u64) -> Credit {
        Credit { speculating: true, spec: speculative as i64, pull: 0, granted: 0 }
    }

    pub fn allows(&self) -> bool {
        self.pull > 0 || (self.speculating && self.spec > 0)
    }

    /// A packet of `wire` bytes leaves: pull credit first, else speculative.
    pub fn spend(&mut self, wire: u64) {
        if self.pull > 0 {
            self.pull -= wire as i64;
        } else {
            self.spec -= wire as i64;
        }
    }

    /// A PULL numbered `pull_no` (cumulative bytes) arrived.
    pub fn on_pull(&mut self, pull_no: u64) {
        if pull_no > self.granted {
            self.pull += (pull_no - self.granted) as i64;
            self.granted = pull_no;
        }
    }

    /// The cumulative pull target: what has been granted plus what the flow
    /// still needs (`backlog`, at most `cap`) beyond the credit it holds.
    pub fn target(&self, backlog: u64, cap: u64) -> u64 {
        let held = self.pull.max(0) + if self.speculating { self.spec.max(0) } else { 0 };
        self.granted + (backlog.min(cap) as i64 - held).max(0) as u64
    }
}

/// One sender as the receiver's pull pacer sees it.
struct PullFlow {
    src: u32,
    target: u64,
    pulled: u64,
    queued: bool,
    /// In the idle list (target met, may be pulled ahead).
    idle: bool,
}

/// The receiver's pull pacer: one PULL of `quantum` bytes per `spacing`,
/// round-robin over flows whose target is above what they were pulled.
/// With `idle_credit`, a slot no such flow needs goes to a flow whose target
/// was met, round-robin, until it is `idle_credit` bytes ahead of its target
/// (htsim's `EqdsPullPacer`: its idle senders, pulled up to `_maxwnd` ahead).
pub struct Pacer {
    slots: SlotPacer,
    quantum: u64,
    idle_credit: u64,
    flows: IdMap<MsgId, PullFlow>,
    queue: VecDeque<MsgId>,
    idle: VecDeque<MsgId>,
}

impl Pacer {
    pub fn new(spacing: Time, quantum: u64, idle_credit: u64) -> Pacer {
        Pacer {
            slots: SlotPacer::new(spacing),
            quantum,
            idle_credit,
            flows: IdMap::default(),
            queue: VecDeque::new(),
            idle: VecDeque::new(),
        }
    }

    /// Raises flow `msg`'s target to `target` (plus `extra` bytes a trim added).
    /// Returns a PULL to send at once (its current number) when the target was
    /// already met: a repeat that makes up for a lost PULL.
    pub fn want(&mut self, msg: MsgId, src: u32, target: u64, extra: u64, repeat: bool) -> Option<(u32, u64)> {
        let f = self.flows.entry(msg).or_insert(PullFlow { src, target: 0, pulled: 0, queued: false, idle: false });
        f.target = f.target.max(target) + extra;
        if f.target > f.pulled {
            if !f.queued {
                f.queued = true;
                self.queue.push_back(msg);
            }
            None
        } else {
            repeat.then_some((f.src, f.pulled))
        }
    }

    /// The message completed: no more pulls for it.
    pub fn done(&mut self, msg: MsgId) {
        self.flows.remove(&msg);
    }

    /// The next PULL due now as (msg, src, pull_no); otherwise the time the
    /// pacer needs a timer at, if it has work and none is pending.
    pub fn poll(&mut self, now: Time) -> Result<(MsgId, u32, u64), Option<Time>> {
        if self.queue.is_empty() && self.idle.is_empty() {
            return Err(None);
        }
        let mut arm = None;
        if !self.slots.ready(now, |t| arm = Some(t)) {
            return Err(arm);
        }
        while let Some(msg) = self.queue.pop_front() {
            let Some(f) = self.flows.get_mut(&msg) else {
                continue; // completed meanwhile
            };
            f.pulled += self.quantum;
            if f.target > f.pulled {
                self.queue.push_back(msg);
            } else {
                f.queued = false;
                if self.idle_credit > 0 && !f.idle {
                    f.idle = true;
                    self.idle.push_back(msg);
                }
            }
            self.slots.sent(now);
            return Ok((msg, f.src, f.pulled));
        }
        while let Some(msg) = self.idle.pop_front() {
            let Some(f) = self.flows.get_mut(&msg) else {
                continue; // completed meanwhile
            };
            if f.target > f.pulled || f.pulled - f.target >= self.idle_credit {
                f.idle = false; // active again, or a full window ahead
                continue;
            }
            f.pulled += self.quantum;
            if f.pulled - f.target < self.idle_credit {
                self.idle.push_back(msg);
            } else {
                f.idle = false;
            }
            self.slots.sent(now);
            return Ok((msg, f.src, f.pulled));
        }
        Err(None)
    }

    pub fn timer_fired(&mut self, now: Time) {
        self.slots.timer_fired(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_is_speculative_until_feedback_then_pulled() {
        let mut c = Credit::new(3000);
        assert!(c.allows());
        c.spend(1500);
        c.spend(1500);
        assert!(!c.allows(), "speculative window used up");
        // Needs 10 000 more bytes, holds nothing: target = 10 000.
        assert_eq!(c.target(10_000, u64::MAX), 10_000);
        c.speculating = false;
        c.on_pull(1500);
        assert!(c.allows());
        c.on_pull(1500); // a repeated PULL adds nothing
        c.spend(1500);
        assert!(!c.allows());
        // Cap: at most `cap` outstanding beyond what was granted.
        assert_eq!(c.target(10_000, 4000), 1500 + 4000);
    }

    /// With idle credit (htsim's idle senders), slots no flow below its target
    /// needs go to flows whose target was met, round-robin, until each is the
    /// idle credit ahead; a flow below its target again comes first.
    #[test]
    fn an_idle_pacer_pulls_met_flows_ahead_up_to_its_idle_credit() {
        let mut p = Pacer::new(100, 1000, 2000);
        p.want(1, 10, 1000, 0, false);
        p.want(2, 20, 1000, 0, false);
        assert_eq!(p.poll(0), Ok((1, 10, 1000)));
        assert_eq!(p.poll(100), Ok((2, 20, 1000)), "both targets met now");
        assert_eq!(p.poll(200), Ok((1, 10, 2000)), "idle: 1 pulled ahead");
        assert_eq!(p.poll(300), Ok((2, 20, 2000)));
        // Flow 2 raises its target: it is served first, then idle pulls resume.
        p.want(2, 20, 4000, 0, false);
        assert_eq!(p.poll(400), Ok((2, 20, 3000)));
        assert_eq!(p.poll(500), Ok((2, 20, 4000)));
        assert_eq!(p.poll(600), Ok((1, 10, 3000)), "1 reaches its 2000 of idle credit");
        assert_eq!(p.poll(700), Ok((2, 20, 5000)));
        assert_eq!(p.poll(800), Ok((2, 20, 6000)), "2 reaches its idle credit");
        assert_eq!(p.poll(900), Err(None), "every flow a full idle credit ahead");
        // A completed flow is never pulled again.
        p.want(1, 10, 5000, 0, false);
        p.done(1);
        assert_eq!(p.poll(900), Err(None));
        // Without idle credit nothing is pulled past a target.
        let mut q = Pacer::new(100, 1000, 0);
        q.want(1, 10, 1000, 0, false);
        assert_eq!(q.poll(0), Ok((1, 10, 1000)));
        assert_eq!(q.poll(100), Err(None));
    }

    #[test]
    fn pacer_pulls_round_robin_at_its_spacing_until_targets_are_met() {
        let mut p = Pacer::new(100, 1000, 0);
        assert_eq!(p.want(1, 10, 2000, 0, false), None);
        assert_eq!(p.want(2, 20, 1000, 0, false), None);
        assert_eq!(p.poll(0), Ok((1, 10, 1000)));
        assert_eq!(p.poll(50), Err(Some(100)));
        assert_eq!(p.poll(60), Err(None), "timer already pending");
        p.timer_fired(100);
        assert_eq!(p.poll(100), Ok((2, 20, 1000)));
        assert_eq!(p.poll(200), Ok((1, 10, 2000)));
        assert_eq!(p.poll(300), Err(None), "all targets met");
        // A trim adds its packet to the target; a repeat request of a met target re-sends the number.
        assert_eq!(p.want(2, 20, 0, 1000, false), None);
        assert_eq!(p.poll(300), Ok((2, 20, 2000)));
        assert_eq!(p.want(2, 20, 2000, 0, true), Some((20, 2000)));
    }
}
