use crate::net::link_events::LinkEvent;
use crate::net::switch_config::{
    ControlClassConfig, EcnPorts, IntConfig, PfcConfig, QueueAccounting, RedConfig, SharedBufferConfig,
};
use crate::net::LoadBalancing;
use fabriclab_engine::error::{ConfigError, Validate};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Per-port buffer: unlimited, or a byte limit with drop-tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BufferLimit {
    #[default]
    Infinite,
    Bytes(u64),
}

impl BufferLimit {
    pub fn bytes(self) -> u64 {
        match self {
            BufferLimit::Infinite => u64::MAX,
            BufferLimit::Bytes(b) => b,
        }
    }
}

impl Serialize for BufferLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufferLimit::Infinite => s.serialize_str("infinite"),
            BufferLimit::Bytes(b) => s.serialize_u64(*b),
        }
    }
}

impl<'de> Deserialize<'de> for BufferLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        match Raw::deserialize(d)
            .map_err(|_| serde::de::Error::custom("expected \"infinite\" or a positive number of bytes"))?
        {
            Raw::N(n) if n > 0 => Ok(BufferLimit::Bytes(n as u64)),
            Raw::N(n) => {
                Err(serde::de::Error::custom(format!("got {n}, expected \"infinite\" or a positive number of bytes")))
            }
            Raw::S(s) if s == "infinite" => Ok(BufferLimit::Infinite),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "got \"{s}\", expected \"infinite\" or a positive number of bytes"
            ))),
        }
    }
}

/// What `Deserialize` above accepts: "infinite" or a positive integer.
impl schemars::JsonSchema for BufferLimit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BufferLimit".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Per-port buffer: \"infinite\", or a byte limit with drop-tail.",
            "oneOf": [{ "const": "infinite" }, { "type": "integer", "minimum": 1 }]
        })
    }
}

/// `[network]`: link-layer and switch settings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    /// IP MTU in bytes; payload per packet is mtu - 40.
    pub mtu: u32,
    /// The BDP that "x BDP" parameters refer to (SIRD Table 2: 100 KB).
    pub bdp_bytes: u64,
    /// Strict-priority classes per switch port.
    pub priorities: u8,
    /// Per-port buffer at switches.
    pub buffer_bytes: BufferLimit,
    /// Per-port buffer at switch ports that face another switch (ToR uplinks,
    /// aggregation and core ports); absent = `buffer_bytes`. htsim's
    /// oversubscribed fat trees shrink these queues with their links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_buffer_bytes: Option<u64>,
    /// ECN CE marking threshold per port (instantaneous queue, bytes). Defaults
    /// to the protocol's (SIRD NThr, DCTCP K); absent for protocols without ECN.
    pub ecn_threshold_bytes: Option<u64>,
    /// The switch ports `ecn_threshold_bytes` applies to: "all", or "fabric"
    /// (ports facing another switch only). Defaults to the protocol's (SIRD
    /// "fabric", others "all"); absent without a fixed threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_ports: Option<EcnPorts>,
    /// Until when a packet counts in its port's queue: "until_last_bit"
    /// (htsim, the default) or "until_first_bit" (ns-2, ns-3).
    pub queue_accounting: QueueAccounting,
    /// "spray", "ecmp" or "symmetric_ecmp"; defaults to the protocol's (SIRD spray, DCTCP ECMP).
    pub load_balancing: Option<LoadBalancing>,
    /// Shape credit packets at switch ports (ExpressPass); defaults to the protocol's need.
    pub credit_shaping: Option<bool>,
    /// Capacity of each port's credit queue, in credits (ExpressPass: 8).
    pub credit_queue_packets: u32,
    /// Static partition: bytes each priority queue of a switch port may hold
    /// (PayDebt §5.1's "128 KB per-queue buffer"); absent = no partition.
    pub queue_buffer_bytes: Option<u64>,
    /// Trim data packets to their header instead of dropping them (NDP);
    /// defaults to the protocol's need.
    pub trimming: Option<bool>,
    /// Trim a data packet when its port would hold more than this (NDP's
    /// shallow data queue); absent = only when it would be dropped.
    pub trim_threshold_bytes: Option<u64>,
    /// Aeolus selective dropping: packets marked unscheduled are dropped when
    /// their port holds more than this.
    pub selective_drop_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_buffer: Option<SharedBufferConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red: Option<RedConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub int: Option<IntConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_class: Option<ControlClassConfig>,
    /// Failure injection: links going down, up or changing rate (`[[network.events]]`).
    pub events: Vec<LinkEvent>,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            mtu: 1500,
            bdp_bytes: 100_000,
            priorities: 8,
            buffer_bytes: BufferLimit::Infinite,
            fabric_buffer_bytes: None,
            ecn_threshold_bytes: None,
            ecn_ports: None,
            queue_accounting: QueueAccounting::UntilLastBit,
            load_balancing: None,
            credit_shaping: None,
            credit_queue_packets: 8,
            queue_buffer_bytes: None,
            trimming: None,
            trim_threshold_bytes: None,
            selective_drop_bytes: None,
            shared_buffer: None,
            red: None,
            pfc: None,
            int: None,
            control_class: None,
            events: Vec::new(),
        }
    }
}

impl Validate for NetworkConfig {
    /// The rules between keys; each number's own range is in config::limits
    /// (docs/limits.md), checked before.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.red.is_some() && self.ecn_threshold_bytes.is_some() {
            return Err(ConfigError::new(
                "network.red",
                "cannot be combined with network.ecn_threshold_bytes (RED replaces the fixed threshold); \
                 remove one of them"
                    .into(),
            ));
        }
        if let (Some(ports), None) = (self.ecn_ports, self.ecn_threshold_bytes) {
            let why = if self.red.is_some() {
                "absent with network.red (RED has its own thresholds for ports facing switches: fabric_kmin_bytes, \
                 fabric_kmax_bytes)"
            } else {
                "absent without network.ecn_threshold_bytes (the protocol uses no ECN: set a threshold to mark)"
            };
            let ports = serde_json::to_string(&ports).unwrap_or_default();
            return Err(ConfigError::value("network.ecn_ports", ports.trim_matches('"'), why));
        }
        if self.trim_threshold_bytes.is_some() && self.trimming != Some(true) {
            return Err(ConfigError::value(
                "network.trim_threshold_bytes",
                self.trim_threshold_bytes.unwrap_or(0),
                "no value unless network.trimming = true",
            ));
        }
        if let Some(c) = &self.shared_buffer {
            c.validate()?;
        }
        if let Some(c) = &self.red {
            c.validate()?;
        }
        if let Some(c) = &self.pfc {
            c.validate()?;
            if let Some(bad) = c.classes.iter().find(|&&k| k >= self.priorities) {
                return Err(ConfigError::value(
                    "network.pfc.classes",
                    bad,
                    &format!("classes below network.priorities ({})", self.priorities),
                ));
            }
        }
        if let Some(c) = &self.int {
            c.validate()?;
        }
        if let Some(c) = &self.control_class {
            c.validate()?;
            if self.credit_shaping == Some(true) {
                return Err(ConfigError::new(
                    "network.control_class",
                    "cannot be combined with network.credit_shaping = true (both shape a class of their own); \
                     set credit_shaping = false"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}
