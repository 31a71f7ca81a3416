use crate::metrics::trace::TraceKind;
use fabriclab_engine::error::{ConfigError, Validate};
use serde::{Deserialize, Serialize};

/// `[run]`: how long, which seed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Simulated time. The run also ends early once a finite workload has fully completed.
    pub duration_ms: f64,
    /// Metrics ignore everything before this time.
    pub warmup_ms: f64,
    pub seed: u64,
    /// A run is stable when its backlog (offered minus delivered bytes) grows by
    /// at most this fraction of the bytes offered over the second half of the
    /// measurement window (for runs ending early: when it delivers at least
    /// 1 - stable_tolerance of the bytes offered in the window).
    pub stable_tolerance: f64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { duration_ms: 10.0, warmup_ms: 1.0, seed: 1, stable_tolerance: 0.05 }
    }
}

impl Validate for RunConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        // Each number's own range is in config::limits, checked before.
        if self.warmup_ms >= self.duration_ms {
            let allowed = format!("a value below run.duration_ms ({})", self.duration_ms);
            return Err(ConfigError::value("run.warmup_ms", self.warmup_ms, &allowed));
        }
        Ok(())
    }
}

/// `[output]`: what to write besides summary.json.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OutputConfig {
    /// Write one record per message (messages.csv).
    pub messages: bool,
    /// Write one record per op of a GOAL schedule (ops.csv; `workload.kind = "goal"` only).
    pub ops: bool,
    /// Add absolute flow completion times to summary.json (`fct_us`: all
    /// messages, and those of at most 100 KB, PayDebt's "small flows").
    pub fct: bool,
    /// Size bins, by ascending upper bounds in payload bytes: `[1460, 100000]`
    /// adds `slowdown_bins.le_1460` (sizes 1 to 1460), `slowdown_bins.le_100000`
    /// (1461 to 100000) and `slowdown_bins.gt_100000` (the rest) to
    /// summary.json, and with `fct` the same keys of `fct_us`.
    pub fct_bins_bytes: Vec<u64>,
    /// The ideal latency slowdowns divide by (docs/model.md, "Metrics").
    pub ideal: IdealLatency,
    /// Add the time-weighted queue percentiles per ToR downlink and per ToR
    /// to summary.json (`tor_downlink_queue_*_bytes`, `tor_total_queue_*_bytes`:
    /// the SIRD paper's Fig. 2); off by default, they cost about 8% of a run.
    pub queue_percentiles: bool,
    /// Average each ToR's bytes (all its ports) over consecutive intervals of
    /// this many microseconds from the end of warm-up, and add the largest and
    /// the mean of those averages to summary.json (`tor_queue_avg_max_bytes`,
    /// `tor_queue_avg_mean_bytes`): the SIRD authors' ToR queue (their ns-2
    /// queue monitors, 10 us). 0: off.
    pub tor_queue_average_us: f64,
    /// Transport time series to record (traces.csv, docs/output.md): "cwnd", "rtt".
    pub traces: Vec<TraceKind>,
    /// At most one row per flow and kind per this many microseconds (0: every
    /// window change, every RTT sample).
    pub trace_interval_us: f64,
    /// Hosts whose transports are traced; empty: all.
    pub trace_hosts: Vec<u32>,
    /// Switch ports whose queue is sampled over time (queue_series.csv), each
    /// as the names of its two ends, `["tor0", "host3"]`: the port of tor0
    /// that sends to host3 (names as in `topology.link_overrides`).
    pub queue_ports: Vec<[String; 2]>,
    /// The sampling period of `queue_ports`, in microseconds.
    pub queue_interval_us: f64,
    /// Hosts whose NICs' packets (sent and received) go to packets.pcap.
    pub pcap_hosts: Vec<u32>,
    /// Host pairs `[a, b]` whose packets (either direction) go to packets.pcap.
    pub pcap_flows: Vec<[u32; 2]>,
    /// Bytes kept of each captured frame (its length is recorded whole).
    pub pcap_snaplen: u32,
    /// Largest packets.pcap (MB, 10^6 bytes): the capture is held in memory
    /// until the run ends, so it stops here; the records left out are counted
    /// and reported.
    pub pcap_max_mb: f64,
}

/// `output.ideal`: what a message's slowdown divides its completion time by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdealLatency {
    /// The message alone in the empty network at line rate: every packet's
    /// headers, serialisation on the bottleneck and store-and-forward of the
    /// last packet at the other hops, plus the path's delays (DESIGN.md §3).
    #[default]
    StoreAndForward,
    /// The SIRD authors' (their ns-2 post-processing, `app_hlp.py`,
    /// `calc_per_msg_slowdown`): the payload alone at the slowest link rate of
    /// the path, plus the path's delays; no headers, no per-hop serialisation.
    PayloadAndPropagation,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            messages: true,
            ops: true,
            fct: false,
            fct_bins_bytes: Vec::new(),
            ideal: IdealLatency::StoreAndForward,
            queue_percentiles: false,
            tor_queue_average_us: 0.0,
            traces: Vec::new(),
            trace_interval_us: 0.0,
            trace_hosts: Vec::new(),
            queue_ports: Vec::new(),
            queue_interval_us: 1.0,
            pcap_hosts: Vec::new(),
            pcap_flows: Vec::new(),
            pcap_snaplen: 256,
            pcap_max_mb: 1000.0,
        }
    }
}

impl OutputConfig {
    /// The size bin of a message of `size` bytes: the index of the first bound
    /// of `fct_bins_bytes` at or above it, or their number for the open bin.
    pub fn fct_bin(&self, size: u64) -> usize {
        self.fct_bins_bytes.partition_point(|&hi| hi < size)
    }

    /// The `fct_us` keys of the size bins, in order: `le_<bound>` for each
    /// bound, then `gt_<last bound>` (none without bins).
    pub fn fct_bin_keys(&self) -> Vec<String> {
        let b = &self.fct_bins_bytes;
        let open = b.last().map(|last| format!("gt_{last}"));
        b.iter().map(|hi| format!("le_{hi}")).chain(open).collect()
    }

    /// Whether any packet is captured (packets.pcap).
    pub fn pcap(&self) -> bool {
        !self.pcap_hosts.is_empty() || !self.pcap_flows.is_empty()
    }

    /// The most size bins `fct_bins_bytes` may give (each adds four columns of
    /// `slowdown_bins`, and with `fct` four of `fct_us`, to a sweep's table).
    pub const MAX_FCT_BINS: usize = 64;

    /// Checks the trace keys against a fabric of `n_hosts` hosts.
    pub fn check(&self, n_hosts: u32) -> Result<(), ConfigError> {
        let avg = self.tor_queue_average_us;
        if !(avg == 0.0 || (1e-3..=1e7).contains(&avg)) {
            return Err(ConfigError::value(
                "output.tor_queue_average_us",
                avg,
                "0 (off) or an interval in [0.001, 1e7] microseconds",
            ));
        }
        let bins = &self.fct_bins_bytes;
        if bins.len() > Self::MAX_FCT_BINS {
            let most = format!("at most {} bounds", Self::MAX_FCT_BINS);
            return Err(ConfigError::value("output.fct_bins_bytes", format!("{} bounds", bins.len()), &most));
        }
        if let Some(i) = (0..bins.len()).find(|&i| bins[i] == 0 || (i > 0 && bins[i] <= bins[i - 1])) {
            return Err(ConfigError::value(
                &format!("output.fct_bins_bytes[{i}]"),
                bins[i],
                "positive upper bounds in payload bytes, strictly ascending",
            ));
        }
        let hosts = format!("host ids of this topology, 0 to {}", n_hosts.saturating_sub(1));
        if let Some(h) = self.trace_hosts.iter().find(|&&h| h >= n_hosts) {
            return Err(ConfigError::value("output.trace_hosts", h, &hosts));
        }
        if let Some(h) = self.pcap_hosts.iter().find(|&&h| h >= n_hosts) {
            return Err(ConfigError::value("output.pcap_hosts", h, &hosts));
        }
        if let Some((i, h)) =
            self.pcap_flows.iter().enumerate().find_map(|(i, f)| f.iter().find(|&&h| h >= n_hosts).map(|h| (i, h)))
        {
            return Err(ConfigError::value(&format!("output.pcap_flows[{i}]"), h, &hosts));
        }
        Ok(())
    }
}
