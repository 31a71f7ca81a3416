//! The two AIMD loops on each sender's buckets (SIRD §4.3): senderBkt_i fed by csn,
//! netBkt_i fed by ECN; the receiver caps sb_i at min(senderBkt_i, netBkt_i).

use super::params::{Cut, Increase};

/// The rules both AIMD loops follow (SIRD §4.3; docs/protocols/sird.md, "AIMD loops").
#[derive(Clone, Copy, Debug)]
pub(super) struct LoopRules {
    pub(super) increase: Increase,
    pub(super) cut: Cut,
    pub(super) g: f64,
    pub(super) alpha_init: f64,
    pub(super) cut_interval_windows: f64,
    /// Credit of one full-sized data packet.
    pub(super) full: f64,
    /// Largest bucket.
    pub(super) max: f64,
}

/// One DCTCP-style AIMD loop on a bucket size (SIRD §4.3), in credit bytes.
#[derive(Clone, Debug)]
pub(super) struct BucketLoop {
    pub(super) size: f64,
    pub(super) floor: f64,
    /// DCTCP's alpha: EWMA of the marked fraction.
    pub(super) alpha: f64,
    /// The current window: bytes and packets seen, and how many were marked.
    pub(super) win_bytes: u64,
    pub(super) win_marked_bytes: u64,
    pub(super) win_pkts: u32,
    pub(super) win_marked_pkts: u32,
    /// With `cut = on_mark`: packets that close the current window.
    pub(super) win_target_pkts: u32,
    /// With `cut = on_mark`: packets since the last cut, and how many must pass before the next.
    pub(super) since_cut_pkts: u32,
    pub(super) next_cut_pkts: u32,
}

impl BucketLoop {
    pub(super) fn new(r: &LoopRules, floor: f64) -> BucketLoop {
        BucketLoop {
            size: r.max,
            floor: floor.min(r.max),
            alpha: r.alpha_init,
            win_bytes: 0,
            win_marked_bytes: 0,
            win_pkts: 0,
            win_marked_pkts: 0,
            // The authors' simulator updates alpha after the first packet, then once per
            // window; the first cut may come after one bucket's worth of packets.
            win_target_pkts: 1,
            since_cut_pkts: 0,
            next_cut_pkts: (r.max / r.full) as u32,
        }
    }

    /// Observes a data packet of `credit` bytes; `combined` is min(senderBkt, netBkt)
    /// before it. Returns whether a window closed (then the caller sets the next
    /// window's length from the updated buckets, [`BucketLoop::set_window`]).
    pub(super) fn on_data(&mut self, r: &LoopRules, credit: u64, marked: bool, combined: f64) -> bool {
        let mut closed = false;
        match r.cut {
            Cut::PerWindow => {
                // A window is this bucket's worth of bytes; alpha from the marked bytes.
                self.win_bytes += credit;
                self.win_marked_bytes += if marked { credit } else { 0 };
                if self.win_bytes as f64 >= self.size {
                    let f = self.win_marked_bytes as f64 / self.win_bytes as f64;
                    self.alpha = (1.0 - r.g) * self.alpha + r.g * f;
                    if self.win_marked_bytes > 0 {
                        self.size *= 1.0 - self.alpha / 2.0;
                    } else if r.increase == Increase::PerWindow {
                        self.size += r.full;
                    }
                    (self.win_bytes, self.win_marked_bytes) = (0, 0);
                    closed = true;
                }
            }
            Cut::OnMark => {
                // A window is the combined bucket's worth of full packets; alpha from
                // the marked packets. A marked packet cuts, at most once per interval.
                self.win_pkts += 1;
                self.win_marked_pkts += marked as u32;
                self.since_cut_pkts += 1;
                if self.win_pkts >= self.win_target_pkts {
                    let f = self.win_marked_pkts as f64 / self.win_pkts as f64;
                    self.alpha = (1.0 - r.g) * self.alpha + r.g * f;
                    if self.win_marked_pkts == 0 && r.increase == Increase::PerWindow {
                        self.size += r.full;
                    }
                    (self.win_pkts, self.win_marked_pkts) = (0, 0);
                    closed = true;
                }
                if marked && self.since_cut_pkts >= self.next_cut_pkts {
                    self.size -= self.size * self.alpha / 2.0;
                    self.since_cut_pkts = 0;
                    self.next_cut_pkts = (r.cut_interval_windows * combined / r.full) as u32;
                }
            }
        }
        if r.increase == Increase::PerPacket {
            // Additive increase spread over packets: one full packet per bucket's worth,
            // marked or not (the artifact's AI condition holds for every packet).
            self.size += r.full * r.full / combined;
        }
        self.size = self.size.clamp(self.floor, r.max);
        closed
    }

    /// The next window (with `cut = on_mark`): the combined bucket's worth of full packets.
    pub(super) fn set_window(&mut self, r: &LoopRules, combined: f64) {
        self.win_target_pkts = ((combined / r.full) as u32).max(1);
    }
}

/// Receiver-side state per sender i. The credit scan reads only the first two
/// fields, so they come first, in one cache line.
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Peer {
    /// sb_i: outstanding credit given to this sender.
    pub(super) sb: u64,
    /// min(senderBkt_i, netBkt_i), kept up to date by [`Peer::on_data`], the only
    /// place the buckets change.
    cap: f64,
    pub(super) sender_bkt: BucketLoop,
    pub(super) net_bkt: BucketLoop,
}

impl Peer {
    pub(super) fn new(r: &LoopRules, sender_floor: f64, net_floor: f64) -> Peer {
        let (sender_bkt, net_bkt) = (BucketLoop::new(r, sender_floor), BucketLoop::new(r, net_floor));
        Peer { sb: 0, cap: sender_bkt.size.min(net_bkt.size), sender_bkt, net_bkt }
    }

    /// min(senderBkt_i, netBkt_i): the cap on sb_i.
    #[inline]
    pub(super) fn cap(&self) -> f64 {
        debug_assert_eq!(self.cap, self.sender_bkt.size.min(self.net_bkt.size));
        self.cap
    }

    /// Sets both bucket sizes (tests).
    #[cfg(test)]
    pub(super) fn set_buckets(&mut self, sender: f64, net: f64) {
        (self.sender_bkt.size, self.net_bkt.size) = (sender, net);
        self.cap = sender.min(net);
    }

    /// Algorithm 1, onDataPacket: both loops see the packet (csn, CE).
    pub(super) fn on_data(&mut self, r: &LoopRules, credit: u64, csn: bool, ce: bool) {
        let combined = self.cap();
        let s = self.sender_bkt.on_data(r, credit, csn, combined);
        let n = self.net_bkt.on_data(r, credit, ce, combined);
        self.cap = self.sender_bkt.size.min(self.net_bkt.size);
        let combined = self.cap;
        if s {
            self.sender_bkt.set_window(r, combined);
        }
        if n {
            self.net_bkt.set_window(r, combined);
        }
    }
}
