//! Optional switch features in `[network]`: shared buffers, RED, PFC, INT, a
//! rate-limited control class. Every one is off unless its table is present.

use fabriclab_engine::error::{ConfigError, Validate};
use serde::{Deserialize, Serialize};

/// `[network.shared_buffer]`: one buffer pool per switch, shared by its ports
/// under dynamic thresholds (Choudhury and Hahne, ToN 1998): a port may take
/// a packet only while it holds less than `alpha` x the free pool.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SharedBufferConfig {
    /// Pool size per switch.
    pub bytes: u64,
    /// Dynamic-threshold factor.
    pub alpha: f64,
}

impl Default for SharedBufferConfig {
    fn default() -> Self {
        // PayDebt §5.2: 8 MB shared buffer; alpha = 1 is the common ASIC default.
        SharedBufferConfig { bytes: 8_000_000, alpha: 1.0 }
    }
}

/// `network.ecn_ports`: the switch ports the fixed ECN threshold
/// (`network.ecn_threshold_bytes`) applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnPorts {
    /// Every switch port (DCTCP's switches).
    #[default]
    All,
    /// Only ports that face another switch (ToR uplinks, aggregation and core
    /// ports); ports towards hosts never mark. SIRD's: its ECN loop measures
    /// core congestion, and the authors' simulator marks only ToR-spine links
    /// (`r2p2_ecn_at_core = 1`, RED on core links only, simulation.tcl).
    Fabric,
}

/// `network.queue_accounting`: until when a packet counts in its switch
/// port's queue. Every decision and figure that reads a port's bytes follows
/// it: drop-tail and shared-buffer admission, ECN marking, trimming, PFC,
/// INT and every queue statistic. It moves each of them by at most the one
/// packet being serialised, so a comparison with another simulator uses that
/// simulator's accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueAccounting {
    /// Until its last bit has left: a switch's memory holds the packet while
    /// it is serialised. htsim's `Queue` (its bytes drop in `completeService`).
    #[default]
    UntilLastBit,
    /// Until its first bit leaves: the packet being serialised belongs to the
    /// link, not the queue. ns-2's `Queue`/`LinkDelay` split, ns-3's queues and
    /// the HPCC switch MMU (their bytes drop when transmission starts).
    UntilFirstBit,
}

/// Where a switch decides to CE-mark a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// On admission, against the queue including the packet (DCTCP).
    Enqueue,
    /// When the packet starts leaving, against the queue it leaves (SMaRTT, PayDebt K_d).
    Dequeue,
}

/// `[network.red]`: probabilistic ECN marking (RED as DCQCN's switches use it):
/// probability 0 up to `kmin_bytes`, rising linearly to `pmax` at `kmax_bytes`,
/// 1 above. Replaces `ecn_threshold_bytes`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedConfig {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    /// Kmin and Kmax at ports that face another switch; absent = kmin_bytes,
    /// kmax_bytes (for `network.fabric_buffer_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_kmin_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_kmax_bytes: Option<u64>,
    pub pmax: f64,
    pub mark_at: MarkAt,
}

impl RedConfig {
    /// (Kmin, Kmax) at host-facing ports and at switch-facing ports.
    pub fn thresholds(&self) -> [(u64, u64); 2] {
        let fabric =
            (self.fabric_kmin_bytes.unwrap_or(self.kmin_bytes), self.fabric_kmax_bytes.unwrap_or(self.kmax_bytes));
        [(self.kmin_bytes, self.kmax_bytes), fabric]
    }
}

impl Default for RedConfig {
    fn default() -> Self {
        // DCQCN's commonly cited values (thesis notes: Kmin 5 KB, Kmax 200 KB, Pmax 1%).
        RedConfig {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            fabric_kmin_bytes: None,
            fabric_kmax_bytes: None,
            pmax: 0.01,
            mark_at: MarkAt::Enqueue,
        }
    }
}

/// `[network.pfc]`: priority flow control (IEEE 802.1Qbb). Each switch counts
/// the bytes it holds per (ingress link, class); above `xoff_bytes` it sends a
/// PAUSE for that class upstream, below `xon_bytes` a RESUME. Lossless classes
/// are never dropped for lack of egress buffer; `headroom_bytes` above XOFF
/// absorbs what is in flight while the PAUSE travels (beyond it: a drop).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PfcConfig {
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub headroom_bytes: u64,
    /// The lossless priority classes (others stay lossy); empty = all.
    pub classes: Vec<u8>,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig { xoff_bytes: 100_000, xon_bytes: 80_000, headroom_bytes: 100_000, classes: Vec::new() }
    }
}

/// `[network.int]`: in-band network telemetry. Every switch egress appends a
/// record (queue length, tx bytes, timestamp, link rate) to packets that ask
/// for it, growing them by `hop_bytes`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IntConfig {
    pub hop_bytes: u32,
}

impl Default for IntConfig {
    fn default() -> Self {
        // HPCC (Li et al., SIGCOMM'19) packs a hop into 8 bytes.
        IntConfig { hop_bytes: 8 }
    }
}

/// `[network.control_class]`: packets flagged as control (PayDebt tokens and
/// debts) wait in a queue of their own at every switch port, leave at most at
/// `rate_fraction` of the link, go before data when eligible, and are CE-marked
/// above their own threshold.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ControlClassConfig {
    pub rate_fraction: f64,
    pub ecn_threshold_bytes: Option<u64>,
    pub buffer_bytes: u64,
}

impl Default for ControlClassConfig {
    fn default() -> Self {
        // Issue 7: "a control class with its own rate limiter (e.g. 5% of the link)".
        ControlClassConfig { rate_fraction: 0.05, ecn_threshold_bytes: None, buffer_bytes: 1_000_000 }
    }
}

/// Switch features a protocol expects (its [`crate::transport::params::ProtocolParams::switch_features`]);
/// each applies only where `[network]` leaves that feature unset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwitchFeatures {
    pub red: Option<RedConfig>,
    pub pfc: Option<PfcConfig>,
    pub int: Option<IntConfig>,
    pub control_class: Option<ControlClassConfig>,
    /// Aeolus selective dropping of unscheduled packets above this many queued bytes.
    pub selective_drop_bytes: Option<u64>,
}

impl Validate for SharedBufferConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        // `bytes` and `alpha` are bounded in config::limits; no rule relates them.
        Ok(())
    }
}

impl Validate for RedConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        let [_, (fkmin, fkmax)] = self.thresholds();
        for (kmin_key, kmin, kmax_key, kmax) in [
            ("kmin_bytes", self.kmin_bytes, "kmax_bytes", self.kmax_bytes),
            ("fabric_kmin_bytes", fkmin, "fabric_kmax_bytes", fkmax),
        ] {
            if kmax < kmin {
                return Err(ConfigError::value(
                    &format!("network.red.{kmax_key}"),
                    kmax,
                    &format!("a number of bytes >= {kmin_key} ({kmin})"),
                ));
            }
        }
        Ok(())
    }
}

impl Validate for PfcConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.xon_bytes > self.xoff_bytes {
            return Err(ConfigError::value(
                "network.pfc.xon_bytes",
                self.xon_bytes,
                &format!("a number of bytes <= xoff_bytes ({})", self.xoff_bytes),
            ));
        }
        Ok(())
    }
}

impl Validate for IntConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        // `hop_bytes` is bounded in config::limits.
        Ok(())
    }
}

impl Validate for ControlClassConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        // Each key is bounded in config::limits; no rule relates them.
        Ok(())
    }
}
