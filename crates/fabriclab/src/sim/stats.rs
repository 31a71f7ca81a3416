//! Run-wide counters (payload and packets), split at the end of warm-up.

use fabriclab_engine::Time;

#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub window_start: Time,
    pub offered_bytes: u64,
    pub offered_in_window: u64,
    pub delivered_bytes: u64,
    pub delivered_in_window: u64,
    pub messages_completed: u64,
    pub packets_sent: u64,
    pub data_packets_sent: u64,
    pub packets_received: u64,
    pub packet_hops: u64,
    pub drops: u64,
    /// Credits dropped by shaped credit queues (ExpressPass's feedback signal).
    pub credit_drops: u64,
    /// (offered, delivered) in the window at its midpoint, if reached.
    pub at_midpoint: Option<(u64, u64)>,
    /// When the midpoint was reached.
    pub midpoint_at: Option<Time>,
}

impl Counters {
    pub fn start_window(&mut self, now: Time) {
        self.window_start = now;
        self.offered_in_window = 0;
        self.delivered_in_window = 0;
    }

    pub fn mark_midpoint(&mut self, now: Time) {
        self.at_midpoint = Some((self.offered_in_window, self.delivered_in_window));
        self.midpoint_at = Some(now);
    }

    /// Growth of the backlog (offered minus delivered bytes) over the second
    /// half of the window, as a fraction of the bytes offered in that half.
    /// A stable run's backlog stays bounded, so this tends to zero; comparing
    /// halves (rather than delivered vs offered over the whole window) keeps
    /// the start-up transient of heavy-tailed workloads from counting.
    pub fn backlog_growth(&self) -> Option<f64> {
        let (o1, d1) = self.at_midpoint?;
        let o2 = self.offered_in_window - o1;
        let d2 = self.delivered_in_window - d1;
        (o2 > 0).then(|| (o2 as f64 - d2 as f64) / o2 as f64)
    }

    #[inline]
    pub fn offered(&mut self, now: Time, bytes: u64) {
        self.offered_bytes += bytes;
        if now >= self.window_start {
            self.offered_in_window += bytes;
        }
    }

    #[inline]
    pub fn delivered(&mut self, now: Time, bytes: u64) {
        self.delivered_bytes += bytes;
        if now >= self.window_start {
            self.delivered_in_window += bytes;
        }
    }
}
