//! Sender-side load balancing: the transport chooses each packet's ECMP
//! entropy from its own feedback (network.load_balancing = "sender"); switches
//! hash (switch, entropy) onto an equal-cost port, so an entropy pins a path.
//!
//! - **ECMP**: one entropy for the whole flow.
//! - **Spray**: an independent random entropy per packet (oblivious spraying).
//! - **PLB** (Qureshi et al., "PLB: Congestion Signals are Simple and Effective
//!   for Network Load Balancing", SIGCOMM 2022): one entropy per flow; a round
//!   (one RTT) is congested when at least `plb_threshold` of its ACKed bytes
//!   carried ECN; after `plb_rounds` consecutive congested rounds, or on a
//!   timeout, the flow moves to a fresh random entropy.
//! - **REPS** (SMaRTT-REPS §3.6, Algorithm 4): during the first BDP of a flow
//!   (and at most `entropies` packets) every packet takes the next of
//!   `entropies` entropies round-robin; afterwards it re-uses the entropy echoed
//!   by the latest unmarked ACK, and an ECN-marked ACK moves it on to the next
//!   entropy. The paper leaves trims and timeouts open: we treat a trim NACK or a
//!   timeout like a marked ACK (the path was full or lost), so a dead or
//!   saturated path is abandoned, never recycled.
//!
//! - **Cycle** (htsim's EQDS, `EqdsSrc::nextEntropy` and `penalizePath` in
//!   Broadcom/csg-htsim `sim/eqds.cpp`): every packet takes the next of
//!   `entropies` entropies in an order scrambled by a random XOR mask that is
//!   redrawn after each full cycle; an ECN-marked ACK or a trim NACK sets the
//!   entropy's skip bit, and the cycle passes over it once (clearing it). Not
//!   a paper's algorithm: it is there so that our EQDS can run as htsim's does
//!   (docs/xval.md).
//!
//! Scope (`lb.scope`): Algorithm 4's state (`next_entropy`, `cached_entropy`,
//! the `p.seqnum < bdp` exploration) belongs to a connection. In the authors'
//! htsim every flow is its own connection, so `"message"` (the default) gives
//! each message its own state and first-BDP exploration. `"connection"` keeps
//! one state per destination, shared by its messages, as a NIC that keeps
//! REPS per queue pair does (the FPGA testbed of §4.1.1): only the first BDP
//! a host ever sends to a peer explores.
//!
//! Reuse (`lb.reuse`): Algorithm 4 stamps every packet with the latest unmarked
//! ACK's entropy (`"cached"`, the default), so a window that grows copies one
//! entropy onto several packets. `"once"` gives each unmarked ACK's entropy to
//! one packet only and takes a fresh entropy when none is waiting, as the later
//! REPS design (a queue of recycled entropies) does; an experiment, not the
//! paper's algorithm.
//!
//! After a mark (`lb.after_mark`): Algorithm 4 moves the cached entropy on to
//! the next one (`"next"`, the default). The authors' htsim (spcl/HTSIM at
//! 8b15594, `sim/uec.cpp`, strategy `ecmp_host_random2_ecn`) instead sends each
//! packet on a random one of the `entropies` after a marked ACK or a trim NACK,
//! until an unmarked ACK names a good entropy again (`"random"`); a timeout
//! leaves that state as it is there. The paper's algorithm is the default, the
//! code's behaviour a parameter (docs/xval.md).
//!
//! When a packet takes its entropy (`lb.stamp`): Algorithm 4's `REPS_ONSEND`
//! runs when a packet is sent, and in the authors' htsim a packet is made,
//! entropy and all, when an ACK opens the window for it (`UecSrc::processAck`
//! calls `send_packets`, spcl/HTSIM 8b15594 `sim/uec.cpp`), before it waits
//! for the NIC. Our hosts hand a packet to the NIC only when the link is free,
//! so when two ACKs come in while one packet is on the wire, the first ACK's
//! entropy would be overwritten before any packet took it: a window-clocked
//! flow then loses an entropy at each such pair and crowds onto fewer paths.
//! `"admission"` keeps htsim's order: the transport binds the cached entropy
//! to each packet the window admits ([`FlowLb::admission_entropy`]) and the
//! packet takes it when it goes. `"transmission"` takes the entropy as the
//! packet leaves (a NIC that builds packets as the link frees). The paper is
//! silent; the authors' code decides the default (docs/xval.md).
//!
//! An entropy index `i` of a flow goes on the wire as `mix64(flow key, i)`, so
//! different flows' indices land on unrelated paths, as a real 5-tuple hash does.

use crate::transport::params::ParamDoc;
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use fabriclab_engine::{mix64, SimRng, Time};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which load balancer a sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LbKind {
    Ecmp,
    Spray,
    Plb,
    #[default]
    Reps,
    Cycle,
}

/// Whose state a load balancer keeps (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LbScope {
    Connection,
    #[default]
    Message,
}

/// How REPS reuses the entropies of unmarked ACKs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepsReuse {
    #[default]
    Cached,
    Once,
}

/// When REPS stamps a packet with its entropy (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepsStamp {
    /// When the window admits the packet (spcl/HTSIM's order).
    Admission,
    /// When the packet leaves for the wire.
    Transmission,
}

/// What REPS does after an ECN-marked ACK or a trim NACK (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepsAfterMark {
    /// Algorithm 4: the next entropy of the round-robin, cached.
    #[default]
    Next,
    /// spcl/HTSIM: a random entropy per packet until the next unmarked ACK.
    Random,
}

/// `[protocol.NAME.lb]`: a sender-side load balancer and its constants.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LbParams {
    pub kind: LbKind,
    /// REPS: entropies explored and cycled through.
    pub entropies: u32,
    /// PLB: fraction of ECN-marked bytes that makes a round congested.
    pub plb_threshold: f64,
    /// PLB: consecutive congested rounds before repathing.
    pub plb_rounds: u32,
    /// One state per destination (connection) or per message; None: the
    /// protocol's own (the SMaRTT host: per message; Swift: per connection).
    pub scope: Option<LbScope>,
    /// REPS: the latest unmarked ACK's entropy for every packet, or each for one.
    pub reuse: RepsReuse,
    /// REPS: after a marked ACK or a NACK, the next entropy or random ones.
    pub after_mark: RepsAfterMark,
    /// REPS: when a packet takes its entropy; None: the protocol's own
    /// (admission for the window-clocked SMaRTT host, SMaRTT and MP-RDMA;
    /// transmission for EQDS's credit, BBR's pacing and Swift).
    pub stamp: Option<RepsStamp>,
}

impl Default for LbParams {
    fn default() -> Self {
        LbParams {
            kind: LbKind::Reps,
            entropies: 256,
            plb_threshold: 0.5,
            plb_rounds: 12,
            scope: None,
            reuse: RepsReuse::Cached,
            after_mark: RepsAfterMark::Next,
            stamp: None,
        }
    }
}

impl LbParams {
    /// The bounds of an `lb` sub-table's numbers, keyed as in the protocol's
    /// table (`ProtocolParams::bounds` of each protocol that has one).
    pub const BOUNDS: &'static [(&'static str, Bound)] = &[
        ("lb.entropies", Bound::new("a number of entropies", 1.0, 65_536.0)),
        ("lb.plb_threshold", Bound::new("a fraction", 1e-9, 1.0)),
        ("lb.plb_rounds", Bound::new("a number of rounds", 1.0, 1000.0)),
    ];

    /// The rules between keys of the sub-table under `prefix`; each key's own
    /// range is in [`LbParams::BOUNDS`].
    pub fn validate_as(&self, prefix: &str) -> Result<(), ConfigError> {
        if self.kind == LbKind::Cycle && !self.entropies.is_power_of_two() {
            return Err(ConfigError::value(
                &format!("{prefix}.entropies"),
                self.entropies,
                "a power of two with kind = \"cycle\" (its scrambling XOR needs one, as htsim's does)",
            ));
        }
        if self.after_mark == RepsAfterMark::Random && self.reuse != RepsReuse::Cached {
            return Err(ConfigError::value(
                &format!("{prefix}.after_mark"),
                "\"random\"",
                "\"next\" while reuse = \"once\"; \"random\" needs reuse = \"cached\" (spcl/HTSIM's form)",
            ));
        }
        if let Some(stamp) = self.stamp.filter(|_| self.kind != LbKind::Reps || self.reuse != RepsReuse::Cached) {
            return Err(ConfigError::value(
                &format!("{prefix}.stamp"),
                format!("\"{stamp:?}\"").to_lowercase(),
                "to be left unset unless kind = \"reps\" with reuse = \"cached\" (only a cached entropy depends on when it is taken)",
            ));
        }
        Ok(())
    }

    /// For senders whose packets take their entropies as they leave (paced,
    /// credit-driven, or Swift's): `stamp = "admission"` is refused, not ignored.
    pub fn validate_transmission_only(&self, prefix: &str, sender: &str) -> Result<(), ConfigError> {
        if self.stamp == Some(RepsStamp::Admission) {
            return Err(ConfigError::value(
                &format!("{prefix}.stamp"),
                "\"admission\"",
                &format!("\"transmission\" or unset ({sender} takes each packet's entropy as it leaves)"),
            ));
        }
        self.validate_as(prefix)
    }

    /// The rows of `fabriclab protocols` for the `lb` sub-table.
    pub fn docs() -> Vec<ParamDoc> {
        let d = LbParams::default();
        vec![
            ParamDoc {
                key: "lb.kind",
                default: "reps".into(),
                meaning: "sender load balancer: ecmp (one entropy per flow), spray (random per packet), plb, reps, cycle (htsim EQDS's: a scrambled round-robin that skips entropies once after a mark or trim)",
                source: "SMaRTT-REPS §4: REPS for every algorithm unless stated otherwise; cycle: csg-htsim sim/eqds.cpp",
            },
            ParamDoc {
                key: "lb.entropies",
                default: d.entropies.to_string(),
                meaning: "REPS: entropies explored in the first BDP and cycled through after marked ACKs; cycle: entropies cycled through (a power of two)",
                source: "SMaRTT-REPS Algorithm 4 (num_entropies = 256)",
            },
            ParamDoc {
                key: "lb.plb_threshold",
                default: d.plb_threshold.to_string(),
                meaning: "PLB: a round is congested when this fraction of its ACKed bytes was ECN-marked",
                source: "PLB (SIGCOMM'22); Linux tcp_plb_cong_thresh default 128/256",
            },
            ParamDoc {
                key: "lb.plb_rounds",
                default: d.plb_rounds.to_string(),
                meaning: "PLB: consecutive congested rounds before the flow repaths (and at once on a timeout)",
                source: "Linux tcp_plb_rehash_rounds default (SMaRTT-REPS gives no value: 'after several RTTs')",
            },
            ParamDoc {
                key: "lb.reuse",
                default: "cached".into(),
                meaning: "REPS: cached (every packet takes the latest unmarked ACK's entropy) or once (each such entropy for one packet, then fresh ones)",
                source: "SMaRTT-REPS Algorithm 4 (cached); once: the later REPS design's recycled-entropy queue, an experiment",
            },
            ParamDoc {
                key: "lb.after_mark",
                default: "next".into(),
                meaning: "REPS after an ECN-marked ACK or a trim NACK: next (cache the next entropy of the round-robin) or random (a random entropy per packet until the next unmarked ACK)",
                source: "SMaRTT-REPS Algorithm 4 line 14 (next); random: spcl/HTSIM 8b15594 sim/uec.cpp, ecmp_host_random2_ecn",
            },
            ParamDoc {
                key: "lb.stamp",
                default: "admission (SMaRTT, MP-RDMA); transmission (EQDS, BBR, Swift)".into(),
                meaning: "REPS (cached): when a packet takes its entropy: admission (when the window lets it go, so each ACK's entropy passes to the packet it releases) or transmission (when the NIC sends it; ACKs that arrive while the link is busy overwrite each other's entropy). Only the window-clocked SMaRTT host (SMaRTT, MP-RDMA) may take admission",
                source: "SMaRTT-REPS is silent; spcl/HTSIM 8b15594 sim/uec.cpp: processAck builds the packets it releases (admission)",
            },
            ParamDoc {
                key: "lb.scope",
                default: "message (Swift: connection)".into(),
                meaning: "whose state the balancer keeps: message (each its own, as flows in the authors' htsim) or connection (one per destination, as a NIC's per-QP state); Swift's is always its connection's",
                source: "SMaRTT-REPS Algorithm 4 (state per connection); htsim runs one connection per flow",
            },
        ]
    }
}

impl Validate for LbParams {
    fn validate(&self) -> Result<(), ConfigError> {
        self.validate_as("lb")
    }
}

/// One flow's load-balancing state. `key` identifies the flow (its wire
/// entropies derive from it); `bdp` bounds REPS's exploration.
#[derive(Clone, Debug)]
pub struct FlowLb {
    key: u64,
    state: State,
}

#[derive(Clone, Debug)]
enum State {
    Ecmp,
    Spray,
    Plb(Plb),
    Reps(Reps),
    Cycle(Cycle),
}

#[derive(Clone, Debug)]
struct Cycle {
    /// `entropies - 1` (a power of two minus one).
    mask: u32,
    /// Position in the current cycle.
    index: u32,
    /// The current cycle's scrambling mask.
    xor: u32,
    /// The flow's bits above `mask`, fixed for its life.
    upper: u32,
    /// One bit per entropy: pass over it once.
    skip: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Plb {
    entropy: u32,
    threshold: f64,
    rounds: u32,
    /// End of the current round (None before the first ACK).
    round_end: Option<Time>,
    acked: u64,
    marked: u64,
    congested_rounds: u32,
}

#[derive(Clone, Debug)]
struct Reps {
    entropies: u32,
    bdp: u64,
    next_entropy: u32,
    cached: Option<u32>,
    explored: u32,
    /// `reuse = "once"`: entropies of unmarked ACKs not yet reused, oldest first.
    pool: Option<VecDeque<u32>>,
    /// `after_mark = "random"`.
    random_after_mark: bool,
    /// With it: a mark or NACK came after the latest unmarked ACK, so each
    /// packet takes a random entropy.
    spraying: bool,
}

impl FlowLb {
    pub fn new(p: &LbParams, key: u64, bdp: u64, rng: &mut SimRng) -> FlowLb {
        let state = match p.kind {
            LbKind::Ecmp => State::Ecmp,
            LbKind::Spray => State::Spray,
            LbKind::Plb => State::Plb(Plb {
                entropy: rng.next_u32(),
                threshold: p.plb_threshold,
                rounds: p.plb_rounds,
                round_end: None,
                acked: 0,
                marked: 0,
                congested_rounds: 0,
            }),
            LbKind::Reps => State::Reps(Reps {
                entropies: p.entropies,
                bdp,
                next_entropy: 0,
                cached: None,
                explored: 0,
                pool: (p.reuse == RepsReuse::Once).then(VecDeque::new),
                random_after_mark: p.after_mark == RepsAfterMark::Random,
                spraying: false,
            }),
            LbKind::Cycle => {
                let mask = p.entropies - 1;
                State::Cycle(Cycle {
                    mask,
                    index: 0,
                    xor: rng.next_u32() & mask,
                    upper: rng.next_u32() & !mask,
                    skip: vec![0; p.entropies.div_ceil(64) as usize],
                })
            }
        };
        FlowLb { key, state }
    }

    /// The entropy to bind to a packet the window admits now, for
    /// `lb.stamp = "admission"`: REPS's cached entropy, when it has one to give
    /// (None while it sprays after a mark, or reuses each entropy once).
    pub fn admission_entropy(&self) -> Option<u32> {
        match &self.state {
            State::Reps(r) if r.pool.is_none() && !r.spraying => r.cached,
            _ => None,
        }
    }

    /// The entropy for the next packet; `first_bytes` is the flow's new data
    /// sent before this packet (REPS explores while it is below one BDP), and
    /// `bound` what [`Self::admission_entropy`] gave it when it was admitted.
    pub fn next_entropy(&mut self, first_bytes: u64, rng: &mut SimRng, bound: Option<u32>) -> u32 {
        match &mut self.state {
            State::Ecmp => wire(self.key, 0),
            State::Spray => rng.next_u32(),
            State::Plb(p) => p.entropy,
            State::Reps(r) => {
                if r.explored < r.entropies && first_bytes < r.bdp {
                    r.explored += 1;
                    wire(self.key, r.advance())
                } else if let Some(e) = bound {
                    e
                } else if r.spraying {
                    wire(self.key, rng.next_u32() % r.entropies)
                } else if let Some(pool) = r.pool.as_mut() {
                    match pool.pop_front() {
                        Some(e) => e,
                        None => wire(self.key, r.advance()),
                    }
                } else {
                    *r.cached.get_or_insert_with(|| wire(self.key, r.next_entropy))
                }
            }
            State::Cycle(c) => c.next(rng),
        }
    }

    /// An ACK echoing `entropy`, for `bytes`, ECN-marked or not, at `now`;
    /// `rtt` is the flow's current round length (PLB).
    pub fn on_ack(&mut self, entropy: u32, marked: bool, bytes: u64, now: Time, rtt: Time) {
        match &mut self.state {
            State::Ecmp | State::Spray => {}
            State::Cycle(c) => {
                if marked {
                    c.penalize(entropy);
                }
            }
            State::Plb(p) => {
                p.acked += bytes;
                p.marked += bytes * marked as u64;
                let Some(end) = p.round_end else {
                    p.round_end = Some(now + rtt); // the first ACK opens the first round
                    return;
                };
                if now >= end {
                    let congested = p.marked > 0 && p.marked as f64 >= p.threshold * p.acked as f64;
                    p.congested_rounds = if congested { p.congested_rounds + 1 } else { 0 };
                    p.round_end = Some(now + rtt);
                    p.acked = 0;
                    p.marked = 0;
                    if p.congested_rounds >= p.rounds {
                        repath(self.key, p);
                    }
                }
            }
            State::Reps(r) => match r.pool.as_mut() {
                Some(pool) => {
                    if !marked {
                        if pool.len() == r.entropies as usize {
                            pool.pop_front();
                        }
                        pool.push_back(entropy);
                    }
                }
                None => r.on_feedback(self.key, (!marked).then_some(entropy)),
            },
        }
    }

    /// A trimmed packet sent with `entropy` came back as a NACK.
    pub fn on_nack(&mut self, entropy: u32) {
        match &mut self.state {
            State::Reps(r) => r.on_feedback(self.key, None),
            State::Cycle(c) => c.penalize(entropy),
            _ => {}
        }
    }

    /// A retransmission timeout: the flow's packets were lost.
    pub fn on_timeout(&mut self) {
        match &mut self.state {
            State::Reps(r) if !r.random_after_mark => r.cached = Some(wire(self.key, r.advance())),
            State::Plb(p) => repath(self.key, p),
            _ => {}
        }
    }
}

/// The wire entropy of entropy index `i` of flow `key`.
#[inline]
fn wire(key: u64, i: u32) -> u32 {
    mix64(key.rotate_left(20) ^ i as u64) as u32
}

/// PLB: a fresh pseudo-random entropy, derived from the old one (deterministic).
fn repath(key: u64, p: &mut Plb) {
    p.entropy = mix64(key ^ (p.entropy as u64) << 17) as u32;
    p.congested_rounds = 0;
}

impl Reps {
    /// Feedback in the cached form: an unmarked ACK's `good` entropy is
    /// reused; a marked ACK or a NACK (`None`) moves on, as `after_mark` says.
    fn on_feedback(&mut self, key: u64, good: Option<u32>) {
        match good {
            Some(e) => {
                self.cached = Some(e);
                self.spraying = false;
            }
            None if self.random_after_mark => self.spraying = true,
            None => self.cached = Some(wire(key, self.advance())),
        }
    }

    /// The next entropy index, round-robin over `entropies`.
    fn advance(&mut self) -> u32 {
        let i = self.next_entropy;
        self.next_entropy = (self.next_entropy + 1) % self.entropies;
        i
    }
}

impl Cycle {
    /// The next entropy of the scrambled cycle, passing once over each skipped one.
    fn next(&mut self, rng: &mut SimRng) -> u32 {
        loop {
            let e = (self.index ^ self.xor) & self.mask;
            self.index += 1;
            if self.index > self.mask {
                self.index = 0;
                self.xor = rng.next_u32() & self.mask;
            }
            let (word, bit) = ((e / 64) as usize, 1u64 << (e % 64));
            if self.skip[word] & bit == 0 {
                return self.upper | e;
            }
            self.skip[word] &= !bit;
        }
    }

    /// Skip the entropy a marked ACK or a NACK came back on, once (htsim's
    /// penalty is capped at 1).
    fn penalize(&mut self, entropy: u32) {
        let e = entropy & self.mask;
        self.skip[(e / 64) as usize] |= 1u64 << (e % 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::{stream, Stream};

    fn reps(bdp: u64) -> (FlowLb, SimRng) {
        let mut rng = stream(1, Stream::Host, 0);
        (FlowLb::new(&LbParams::default(), 42, bdp, &mut rng), rng)
    }

    #[test]
    fn reps_explores_distinct_entropies_in_the_first_bdp() {
        let (mut lb, mut rng) = reps(10 * 4096);
        let first: Vec<u32> = (0..10).map(|k| lb.next_entropy(k * 4096, &mut rng, None)).collect();
        let mut uniq = first.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), 10, "ten packets of the first BDP take ten entropies");
        // After the first BDP, with an ACK echoing the third one: that entropy is recycled.
        lb.on_ack(first[2], false, 4096, 0, 1);
        assert_eq!(lb.next_entropy(10 * 4096, &mut rng, None), first[2]);
        assert_eq!(lb.next_entropy(11 * 4096, &mut rng, None), first[2]);
    }

    #[test]
    fn reps_exploration_stops_after_all_entropies() {
        let mut rng = stream(1, Stream::Host, 0);
        let p = LbParams { entropies: 4, ..Default::default() };
        let mut lb = FlowLb::new(&p, 7, u64::MAX, &mut rng);
        let first: Vec<u32> = (0..4).map(|k| lb.next_entropy(k, &mut rng, None)).collect();
        lb.on_ack(first[1], false, 1, 0, 1);
        assert_eq!(lb.next_entropy(4, &mut rng, None), first[1], "all 4 tried: recycle");
    }

    #[test]
    fn reps_recycles_unmarked_and_abandons_marked() {
        let (mut lb, mut rng) = reps(4096);
        let e0 = lb.next_entropy(0, &mut rng, None);
        lb.on_ack(e0, false, 4096, 0, 1);
        assert_eq!(lb.next_entropy(4096, &mut rng, None), e0);
        // A marked ACK of e0: the next packet takes a new entropy, never e0 again until unmarked feedback.
        lb.on_ack(e0, true, 4096, 0, 1);
        let e1 = lb.next_entropy(8192, &mut rng, None);
        assert_ne!(e1, e0);
        lb.on_ack(e1, false, 4096, 0, 1);
        assert_eq!(lb.next_entropy(12288, &mut rng, None), e1);
        // A trim NACK also moves on.
        lb.on_nack(e1);
        assert_ne!(lb.next_entropy(16384, &mut rng, None), e1);
    }

    /// `after_mark = "random"` (spcl/HTSIM): after a marked ACK or a NACK each
    /// packet takes a random one of the flow's entropies, until an unmarked ACK;
    /// a timeout changes nothing.
    #[test]
    fn reps_after_a_mark_sprays_at_random_when_asked() {
        let mut rng = stream(1, Stream::Host, 0);
        let p = LbParams { after_mark: RepsAfterMark::Random, ..Default::default() };
        let mut lb = FlowLb::new(&p, 42, 4096, &mut rng);
        let own: Vec<u32> = (0..256).map(|i| wire(42, i)).collect();
        let e0 = lb.next_entropy(0, &mut rng, None);
        lb.on_ack(e0, false, 4096, 0, 1);
        assert_eq!(lb.next_entropy(4096, &mut rng, None), e0);
        lb.on_ack(e0, true, 4096, 0, 1);
        let sprayed: Vec<u32> = (0..32).map(|i| lb.next_entropy(8192 + 4096 * i, &mut rng, None)).collect();
        assert!(sprayed.iter().all(|e| own.contains(e)), "random entropies are the flow's own");
        let distinct: std::collections::BTreeSet<u32> = sprayed.iter().copied().collect();
        assert!(distinct.len() >= 24, "one random entropy per packet: {} distinct of 32", distinct.len());
        lb.on_timeout();
        assert_ne!(
            lb.next_entropy(1 << 20, &mut rng, None),
            lb.next_entropy(1 << 20, &mut rng, None),
            "still spraying"
        );
        let e1 = sprayed[5];
        lb.on_ack(e1, false, 4096, 0, 1);
        assert_eq!(lb.next_entropy(1 << 21, &mut rng, None), e1, "an unmarked ACK ends it");
        assert_eq!(lb.next_entropy(1 << 21, &mut rng, None), e1);
        lb.on_nack(e1);
        assert_ne!(
            lb.next_entropy(1 << 22, &mut rng, None),
            lb.next_entropy(1 << 22, &mut rng, None),
            "a NACK starts it"
        );
        // The default moves on to one next entropy and keeps it.
        let (mut lb, mut rng) = reps(4096);
        let e0 = lb.next_entropy(0, &mut rng, None);
        lb.on_ack(e0, true, 4096, 0, 1);
        let e1 = lb.next_entropy(4096, &mut rng, None);
        assert_eq!(lb.next_entropy(8192, &mut rng, None), e1);
    }

    #[test]
    fn random_after_mark_needs_the_cached_form() {
        let p = LbParams { after_mark: RepsAfterMark::Random, reuse: RepsReuse::Once, ..Default::default() };
        let e = p.validate_as("protocol.smartt.lb").unwrap_err().to_string();
        assert!(e.contains("protocol.smartt.lb.after_mark") && e.contains("random"), "{e}");
    }

    #[test]
    fn reps_reusing_once_gives_each_unmarked_entropy_to_one_packet() {
        let mut rng = stream(1, Stream::Host, 0);
        let once = LbParams { reuse: RepsReuse::Once, ..Default::default() };
        let mut lb = FlowLb::new(&once, 42, 2 * 4096, &mut rng);
        let (e0, e1) = (lb.next_entropy(0, &mut rng, None), lb.next_entropy(4096, &mut rng, None));
        lb.on_ack(e1, false, 4096, 0, 1);
        lb.on_ack(e0, true, 4096, 0, 1); // marked: not reused
        assert_eq!(lb.next_entropy(8192, &mut rng, None), e1);
        // Nothing waits: a fresh entropy, not e1 again (Algorithm 4 would repeat e1).
        let fresh = lb.next_entropy(12288, &mut rng, None);
        assert!(fresh != e1 && fresh != e0);
        let mut cached = FlowLb::new(&LbParams::default(), 42, 2 * 4096, &mut rng);
        let (_, c1) = (cached.next_entropy(0, &mut rng, None), cached.next_entropy(4096, &mut rng, None));
        cached.on_ack(c1, false, 4096, 0, 1);
        assert_eq!((cached.next_entropy(8192, &mut rng, None), cached.next_entropy(12288, &mut rng, None)), (c1, c1));
    }

    #[test]
    fn cycle_visits_every_entropy_once_per_cycle_and_skips_a_penalised_one_once() {
        let mut rng = stream(1, Stream::Host, 0);
        let p = LbParams { kind: LbKind::Cycle, entropies: 8, ..Default::default() };
        let mut lb = FlowLb::new(&p, 5, 0, &mut rng);
        let first: Vec<u32> = (0..8).map(|_| lb.next_entropy(0, &mut rng, None)).collect();
        let mut low: Vec<u32> = first.iter().map(|e| e & 7).collect();
        low.sort_unstable();
        assert_eq!(low, (0..8).collect::<Vec<_>>(), "one full cycle visits each entropy once");
        assert!(first.iter().all(|e| e & !7 == first[0] & !7), "the upper bits are the flow's");
        // Mark one entropy: the next cycle has 7 distinct entropies without it, then it comes back.
        lb.on_ack(first[3], true, 1, 0, 1);
        let second: Vec<u32> = (0..7).map(|_| lb.next_entropy(0, &mut rng, None)).collect();
        assert!(!second.contains(&first[3]), "{second:?} skips {}", first[3]);
        let mut uniq = second.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), 7);
        // The same flow again (same stream: same scrambling): an unmarked ACK does nothing, a
        // NACK skips like a mark.
        let mut r2 = stream(1, Stream::Host, 0);
        let mut again = FlowLb::new(&p, 5, 0, &mut r2);
        again.on_ack(first[0], false, 1, 0, 1);
        again.on_nack(first[1]);
        let seq: Vec<u32> = (0..7).map(|_| again.next_entropy(0, &mut r2, None)).collect();
        assert_eq!(seq[0], first[0]);
        assert!(!seq.contains(&first[1]));
        assert!(LbParams { kind: LbKind::Cycle, entropies: 6, ..Default::default() }.validate().is_err());
    }

    #[test]
    fn ecmp_is_one_entropy_and_spray_is_many() {
        let mut rng = stream(1, Stream::Host, 0);
        let mut e = FlowLb::new(&LbParams { kind: LbKind::Ecmp, ..Default::default() }, 3, 0, &mut rng);
        let a = e.next_entropy(0, &mut rng, None);
        e.on_ack(a ^ 1, true, 1, 0, 1);
        assert!((1..100).all(|k| e.next_entropy(k, &mut rng, None) == a));
        let mut s = FlowLb::new(&LbParams { kind: LbKind::Spray, ..Default::default() }, 3, 0, &mut rng);
        let mut v: Vec<u32> = (0..100).map(|k| s.next_entropy(k, &mut rng, None)).collect();
        v.sort_unstable();
        v.dedup();
        assert!(v.len() > 95);
    }

    #[test]
    fn plb_repaths_after_consecutive_congested_rounds_only() {
        let mut rng = stream(1, Stream::Host, 0);
        let p = LbParams { kind: LbKind::Plb, plb_rounds: 3, ..Default::default() };
        let mut lb = FlowLb::new(&p, 9, 0, &mut rng);
        let e0 = lb.next_entropy(0, &mut rng, None);
        // Rounds of 10 time units, one ACK each: the ACK at t opens the round that the ACK at t + 10 closes.
        for (k, marked) in [true, true, true, false, true, true].into_iter().enumerate() {
            lb.on_ack(0, marked, 100, 10 * k as u64, 10);
        }
        // Rounds: {0,10} congested, {20} congested, {30} not (reset), {40}, {50} congested: two in a row.
        assert_eq!(lb.next_entropy(0, &mut rng, None), e0);
        lb.on_ack(0, true, 100, 60, 10);
        let e1 = lb.next_entropy(0, &mut rng, None);
        assert_ne!(e1, e0, "three congested rounds in a row repath");
        lb.on_timeout();
        assert_ne!(lb.next_entropy(0, &mut rng, None), e1, "a timeout repaths at once");
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let p = LbParams { kind: LbKind::Cycle, entropies: 6, ..Default::default() };
        assert_eq!(p.validate_as("protocol.smartt.lb").unwrap_err().key, "protocol.smartt.lb.entropies");
        let p = LbParams { after_mark: RepsAfterMark::Random, reuse: RepsReuse::Once, ..Default::default() };
        assert_eq!(p.validate_as("x").unwrap_err().key, "x.after_mark");
        let bound = |k: &str| LbParams::BOUNDS.iter().find(|(key, _)| *key == k).unwrap().1;
        assert!(!bound("lb.entropies").contains(0.0) && !bound("lb.plb_threshold").contains(1.5));
    }
}
