//! Bolt's switch logic (Arslan thesis §4.3, Algorithms 7 and 9), run by the
//! programmable hook of [`super::program`] at every switch ingress:
//! - SRC: a data packet that finds its egress queue at or above `CC_THRESH`
//!   triggers a feedback packet to its sender carrying the occupancy and link
//!   rate, unless an earlier hop already did (DEC set); it leaves with DEC set
//!   and INC cleared.
//! - PRU: an uncongested port counts packets sent in a flow's last window (LAST
//!   and not FIRST) as tokens; a later INC packet takes one, so other flows
//!   ramp up as that flow finishes.
//! - SM: the port keeps a supply token, `+ rate x inter-arrival - size` per data
//!   packet, capped; one MTU of positive token also lets an INC through.
//!
//! Registers are per egress port, as bolt.p4's register arrays (§4.4.1).

use super::program::{Action, Egress, P_DATA, P_DEC, P_FIRST, P_INC, P_LAST};
use super::Packet;
use fabriclab_engine::{Time, S};

/// What a protocol configures Bolt's switches with (all on the wire: bytes
/// include framing, like the queue occupancy they compare with).
#[derive(Clone, Debug, PartialEq)]
pub struct BoltSwitchConfig {
    /// CC_THRESH: queue occupancy (bytes) at and above which a port is congested.
    pub cc_thresh_bytes: u64,
    /// One MTU on the wire: the SM token one INC costs.
    pub mtu_bytes: u64,
    /// Largest SM supply token (bytes).
    pub sm_cap_bytes: u64,
    /// Largest PRU token count.
    pub pru_cap: u32,
    pub pru: bool,
    pub sm: bool,
}

/// One egress port's registers.
#[derive(Clone, Copy, Debug, Default)]
pub struct BoltRegisters {
    pub pru_token: u32,
    /// Supply minus demand since the last data packet, in bytes (negative: queuing).
    pub sm_token: f64,
    pub last_sm_time: Time,
    /// Whether a data packet was seen yet (before it, the port was idle forever).
    pub seen: bool,
}

pub struct BoltSwitch {
    pub cfg: BoltSwitchConfig,
    pub regs: Vec<BoltRegisters>,
    /// SRC packets generated, all switches.
    pub src_packets: u64,
}

impl BoltSwitch {
    pub fn new(cfg: BoltSwitchConfig, n_ports: usize) -> Self {
        BoltSwitch { cfg, regs: vec![BoltRegisters::default(); n_ports], src_packets: 0 }
    }

    /// Algorithm 7 for one packet.
    #[inline]
    pub fn ingress<H>(&mut self, now: Time, eg: Egress, pkt: &mut Packet<H>) -> Action {
        if pkt.prog & P_DATA == 0 {
            return Action::Forward;
        }
        let c = &self.cfg;
        let r = &mut self.regs[eg.port as usize];
        if c.sm {
            supply_token(r, c, now, eg.rate_bps, pkt.wire_bytes);
        }
        if eg.queued >= c.cc_thresh_bytes {
            if pkt.prog & P_DEC == 0 {
                pkt.prog = (pkt.prog | P_DEC) & !P_INC;
                self.src_packets += 1;
                return Action::ForwardAndFeedback { qlen: eg.queued, rate_bps: eg.rate_bps };
            }
        } else if pkt.prog & P_LAST != 0 {
            if c.pru && pkt.prog & P_FIRST == 0 {
                r.pru_token = (r.pru_token + 1).min(c.pru_cap);
            }
        } else if pkt.prog & P_INC != 0 {
            if c.pru && r.pru_token > 0 {
                r.pru_token -= 1;
            } else if c.sm && r.sm_token >= c.mtu_bytes as f64 {
                r.sm_token -= c.mtu_bytes as f64;
            } else {
                pkt.prog &= !P_INC;
            }
        }
        Action::Forward
    }
}

/// Algorithm 9: what the port could have sent since the last data packet,
/// minus this packet, accumulated and capped.
#[inline]
fn supply_token(r: &mut BoltRegisters, c: &BoltSwitchConfig, now: Time, rate_bps: u64, size: u32) {
    let supply =
        if r.seen { (now - r.last_sm_time) as f64 * rate_bps as f64 / (8.0 * S as f64) } else { c.sm_cap_bytes as f64 };
    r.seen = true;
    r.last_sm_time = now;
    r.sm_token = (r.sm_token + supply - size as f64).min(c.sm_cap_bytes as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::NS;

    const MTU: u64 = 1538;

    fn sw(pru: bool, sm: bool) -> BoltSwitch {
        let cfg = BoltSwitchConfig { cc_thresh_bytes: MTU, mtu_bytes: MTU, sm_cap_bytes: MTU, pru_cap: 256, pru, sm };
        BoltSwitch::new(cfg, 4)
    }

    fn data(bits: u8) -> Packet<()> {
        Packet::new(0, 1, MTU as u32, 1, 0, ()).with_prog(P_DATA | bits)
    }

    fn eg(port: u32, queued: u64) -> Egress {
        Egress { port, queued, rate_bps: 100_000_000_000 }
    }

    #[test]
    fn congested_port_sends_one_src_per_packet_and_marks_dec() {
        let mut s = sw(true, true);
        let mut p = data(P_INC);
        assert_eq!(
            s.ingress(0, eg(0, MTU), &mut p),
            Action::ForwardAndFeedback { qlen: MTU, rate_bps: 100_000_000_000 }
        );
        assert_eq!(p.prog & (P_DEC | P_INC), P_DEC);
        // A later congested hop sends nothing more for it.
        assert_eq!(s.ingress(0, eg(1, 10 * MTU), &mut p), Action::Forward);
        assert_eq!(s.src_packets, 1);
        // Below the threshold: no SRC; control packets are never looked at.
        assert_eq!(s.ingress(0, eg(0, MTU - 1), &mut data(0)), Action::Forward);
        let mut ack = Packet::new(1, 0, 84, 0, 0, ());
        assert_eq!(s.ingress(0, eg(0, 100 * MTU), &mut ack), Action::Forward);
        assert_eq!(s.src_packets, 1);
    }

    #[test]
    fn pru_tokens_are_per_port_and_only_from_last_but_not_first_packets() {
        let mut s = sw(true, false);
        s.ingress(0, eg(2, 0), &mut data(P_LAST));
        s.ingress(0, eg(2, 0), &mut data(P_LAST | P_FIRST));
        assert_eq!((s.regs[2].pru_token, s.regs[3].pru_token), (1, 0));
        // An INC packet on port 3 finds no token there: INC cleared.
        let mut p = data(P_INC);
        s.ingress(0, eg(3, 0), &mut p);
        assert_eq!(p.prog & P_INC, 0);
        // On port 2 it takes the token, and the next one finds none.
        let mut p = data(P_INC);
        s.ingress(0, eg(2, 0), &mut p);
        assert_eq!((p.prog & P_INC, s.regs[2].pru_token), (P_INC, 0));
        let mut p = data(P_INC);
        s.ingress(0, eg(2, 0), &mut p);
        assert_eq!(p.prog & P_INC, 0);
        // A congested port creates no token.
        s.ingress(0, eg(2, MTU), &mut data(P_LAST));
        assert_eq!(s.regs[2].pru_token, 0);
    }

    #[test]
    fn supply_token_tracks_idle_link_time() {
        let mut s = sw(false, true);
        // First packet: the port was idle, the token is full then pays for the packet.
        s.ingress(0, eg(0, 0), &mut data(0));
        assert_eq!(s.regs[0].sm_token, 0.0);
        // Packets at exactly line rate (123.04 ns per 1538 B at 100 Gb/s) keep it at 0.
        let gap = 123_040;
        s.ingress(gap, eg(0, 0), &mut data(0));
        assert!(s.regs[0].sm_token.abs() < 1e-9);
        // Twice the gap: one MTU of supply, so one INC gets through and spends it.
        let mut p = data(P_INC);
        s.ingress(3 * gap, eg(0, 0), &mut p);
        assert_eq!(p.prog & P_INC, P_INC);
        assert!(s.regs[0].sm_token.abs() < 1e-6);
        // Back-to-back arrivals (queuing) drive it negative; INC is refused.
        let mut p = data(P_INC);
        s.ingress(3 * gap + NS, eg(0, 0), &mut p);
        assert_eq!(p.prog & P_INC, 0);
        assert!(s.regs[0].sm_token < -1000.0);
        // A long idle period is capped at one MTU (after paying for the packet).
        s.ingress(S, eg(0, 0), &mut data(0));
        assert_eq!(s.regs[0].sm_token, MTU as f64);
    }
}
