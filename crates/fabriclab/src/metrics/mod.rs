//! Streaming metrics and the run summary (the `summary.json` contract of
//! DESIGN.md §4: never rename these fields, only add).

pub mod histogram;
pub mod ideal;
pub mod occupancy;
pub mod pcap;
pub mod trace;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Size groups of the SIRD evaluation (seed §5.4):
/// A < MSS <= B < 1 BDP <= C < 8 BDP <= D.
pub fn size_group(size: u64, mss: u32, bdp: u64) -> usize {
    if size < mss as u64 {
        0
    } else if size < bdp {
        1
    } else if size < 8 * bdp {
        2
    } else {
        3
    }
}

pub const GROUPS: [&str; 4] = ["A", "B", "C", "D"];

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SlowdownStats {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
}

impl SlowdownStats {
    /// Exact statistics of `v` (sorted in place). Percentiles use the
    /// nearest-rank definition: the smallest value with at least p% of values <= it.
    pub fn from_values(v: &mut [f64]) -> Self {
        if v.is_empty() {
            return SlowdownStats::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = |p: f64| {
            let k = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[k - 1]
        };
        SlowdownStats {
            count: v.len() as u64,
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(0.50),
            p99: rank(0.99),
        }
    }
}

/// PayDebt's "small flows": 0-100 KB.
pub const SMALL_FLOW_BYTES: u64 = 100_000;

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The run summary written as summary.json.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub protocol: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    pub stable: bool,
    /// Configured offered load (fraction of the reference capacity).
    pub offered_load: f64,
    /// What `offered_load` is a fraction of: "host" link capacity, or "core" capacity.
    pub load_reference: String,
    /// Offered payload per host per second over the measurement window, Gbps.
    pub offered_gbps: f64,
    pub goodput_gbps: f64,
    pub goodput_fraction: f64,
    /// Bytes delivered in the window / bytes offered in the window.
    pub delivered_fraction: f64,
    /// Backlog growth over the second half of the window / bytes offered in
    /// that half (null if the run ended before the midpoint). `stable` is
    /// `backlog_growth <= run.stable_tolerance`.
    pub backlog_growth: Option<f64>,
    /// The running p99 slowdown at the window's midpoint: over the messages
    /// that started in the window and completed by its midpoint (null with
    /// fewer than 1,000). Beside `slowdown.all.p99` it shows how far the
    /// running percentile still moved over the second half (docs/verdicts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown_p99_midpoint: Option<f64>,
    pub tor_queue_max_bytes: u64,
    pub tor_queue_mean_bytes: f64,
    /// With `output.tor_queue_average_us`: each ToR's bytes (all its ports)
    /// averaged over consecutive intervals of that length in the window, the
    /// largest over ToRs and intervals, and the mean over intervals averaged
    /// over ToRs (the SIRD authors' ToR queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_queue_avg_max_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_queue_avg_mean_bytes: Option<f64>,
    pub switch_queue_max_bytes: u64,
    pub switch_queue_mean_bytes: f64,
    /// Time-weighted percentiles of the bytes held by a ToR downlink (a ToR
    /// port towards a host) over the measurement window: the level at or below
    /// which all ToR downlinks together spend that fraction of (port x time)
    /// (SIRD paper Fig. 2, left). Log-linear buckets: each value is its
    /// bucket's lower bound, at most 1.6% below the exact level. Present with
    /// `output.queue_percentiles = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_downlink_queue_p50_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_downlink_queue_p90_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_downlink_queue_p99_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_downlink_queue_p999_bytes: Option<u64>,
    /// The same over each ToR's total bytes held, all its ports together, as a
    /// fraction of (ToR x time) (SIRD paper Fig. 2, right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_total_queue_p50_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_total_queue_p90_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_total_queue_p99_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_total_queue_p999_bytes: Option<u64>,
    pub messages_started: u64,
    pub messages_completed: u64,
    /// A trace workload's messages that start at or after the end of the run,
    /// not injected (present, possibly 0, with `kind = "trace"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_messages_after_end: Option<u64>,
    pub bytes_delivered: u64,
    /// Data and control packets dropped by full buffers.
    pub drops: u64,
    /// Credits dropped by shaped credit queues (not counted in `drops`).
    pub credit_drops: u64,
    /// Data packets trimmed to their header by switches.
    pub trims: u64,
    /// PFC PAUSE frames sent by switches.
    pub pfc_pauses: u64,
    /// PFC RESUME frames sent by switches (present when PFC is on).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pfc_resumes: u64,
    /// Unscheduled packets dropped by Aeolus selective dropping (included in `drops`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub selective_drops: u64,
    /// Most bytes any switch's shared pool held during the run (with `[network.shared_buffer]`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_buffer_max_bytes: u64,
    /// Packets lost because they were sent onto a link that was down
    /// (`[[network.events]]`; included in `drops`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub link_down_drops: u64,
    /// Feedback packets generated by a switch program (Bolt's SRC), counted in
    /// `packets_sent` (present when there are any).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_feedback_packets: u64,
    /// Their wire bytes, all switches, whole run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_feedback_bytes: u64,
    /// Packets put into the network: by host NICs, plus switch feedback packets.
    pub packets_sent: u64,
    /// Packets larger than a minimum frame (those carrying payload beyond a few bytes).
    pub data_packets_sent: u64,
    pub packets_received: u64,
    /// Packets still inside the network when the run ended
    /// (packets_sent = packets_received + drops + credit_drops + packets_in_flight).
    pub packets_in_flight: u64,
    pub packet_hops: u64,
    pub slowdown: BTreeMap<String, SlowdownStats>,
    /// Absolute completion times in microseconds (`output.fct = true`): `all`
    /// and `small` (at most [`SMALL_FLOW_BYTES`]), same messages as `slowdown`;
    /// with `output.fct_bins_bytes`, one entry per size bin (`le_<bytes>`, `gt_<bytes>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fct_us: Option<BTreeMap<String, SlowdownStats>>,
    /// Slowdown per size bin of `output.fct_bins_bytes` (`le_<bytes>`,
    /// `gt_<bytes>`), same messages as `slowdown`: the thesis's "99th-p slowdown
    /// of messages smaller than a BDP" is `slowdown_bins.le_<BDP>.p99`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown_bins: Option<BTreeMap<String, SlowdownStats>>,
    /// Time-weighted level percentiles of each port of `output.queue_ports`
    /// over the measurement window, by its name (`tor0->host3`), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_port_percentiles: Option<BTreeMap<String, histogram::QueuePercentiles>>,
    /// RTT samples of the traced hosts (`output.traces` has "rtt").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<trace::RttStats>,
    /// Congestion windows of the traced hosts (`output.traces` has "cwnd").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd: Option<trace::CwndStats>,
    /// A GOAL schedule's completion, ranks' finish times, op counts and
    /// critical path (present with `workload.kind = "goal"` only; docs/output.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<fabriclab_workload::goal::GoalSummary>,
    pub warmup_s: f64,
    pub hosts: u32,
    pub mss_bytes: u32,
    pub bdp_bytes: u64,
    pub events_per_s: f64,
}

impl Summary {
    /// Canonical JSON: fields in declaration order, maps sorted.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("summary serialises")
    }

    /// Same summary with wall-clock fields zeroed (for determinism checks).
    pub fn without_wall_clock(&self) -> Summary {
        Summary { wall_time_s: 0.0, events_per_s: 0.0, ..self.clone() }
    }
}

/// One message's outcome (messages.csv).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageRecord {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start_ps: u64,
    /// Completion time; None if it did not complete before the end.
    pub end_ps: Option<u64>,
    pub ideal_ps: u64,
    pub incast: bool,
    /// Payload bytes delivered so far (== size once complete).
    pub delivered: u64,
}

impl MessageRecord {
    pub fn slowdown(&self) -> Option<f64> {
        self.end_ps.map(|e| (e - self.start_ps) as f64 / self.ideal_ps as f64)
    }

    pub const CSV_HEADER: &'static str =
        "id,src,dst,size_bytes,delivered_bytes,start_us,end_us,fct_us,ideal_us,slowdown,incast";

    pub fn csv_row(&self, out: &mut String) {
        use std::fmt::Write;
        let us = |ps: u64| ps as f64 / 1e6;
        let _ = write!(
            out,
            "{},{},{},{},{},{:.6},",
            self.id,
            self.src,
            self.dst,
            self.size,
            self.delivered,
            us(self.start_ps)
        );
        match self.end_ps {
            Some(e) => {
                let _ = write!(
                    out,
                    "{:.6},{:.6},{:.6},{:.6},",
                    us(e),
                    us(e - self.start_ps),
                    us(self.ideal_ps),
                    self.slowdown().unwrap_or(0.0)
                );
            }
            None => {
                let _ = write!(out, ",,{:.6},,", us(self.ideal_ps));
            }
        }
        let _ = writeln!(out, "{}", self.incast as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_the_sird_boundaries() {
        assert_eq!(size_group(1459, 1460, 100_000), 0);
        assert_eq!(size_group(1460, 1460, 100_000), 1);
        assert_eq!(size_group(99_999, 1460, 100_000), 1);
        assert_eq!(size_group(100_000, 1460, 100_000), 2);
        assert_eq!(size_group(800_000, 1460, 100_000), 3);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<f64> = (1..=100).rev().map(|x| x as f64).collect();
        let s = SlowdownStats::from_values(&mut v);
        assert_eq!((s.count, s.p50, s.p99, s.mean), (100, 50.0, 99.0, 50.5));
    }
}

/// One switch port's buffer statistics over the measurement window (queues.csv).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortRecord {
    pub switch: u32,
    /// Node at the other end of the link (hosts are 0..hosts).
    pub peer: u32,
    pub tor: bool,
    pub max_bytes: u64,
    pub mean_bytes: f64,
    pub drops: u64,
}

impl PortRecord {
    pub const CSV_HEADER: &'static str = "switch,peer,tor,max_bytes,mean_bytes,drops";

    pub fn csv_row(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = writeln!(
            out,
            "{},{},{},{},{:.1},{}",
            self.switch, self.peer, self.tor as u8, self.max_bytes, self.mean_bytes, self.drops
        );
    }
}
