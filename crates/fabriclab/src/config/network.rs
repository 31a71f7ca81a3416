use crate::net::LoadBalancing;
use fabriclab_engine::error::{check_positive, ConfigError, Validate};
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

/// `[network]`: link-layer and switch settings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    /// ECN CE marking threshold per port (instantaneous queue, bytes). Defaults
    /// to the protocol's (SIRD NThr, DCTCP K); absent for protocols without ECN.
    pub ecn_threshold_bytes: Option<u64>,
    /// "spray", "ecmp" or "symmetric_ecmp"; defaults to the protocol's (SIRD spray, DCTCP ECMP).
    pub load_balancing: Option<LoadBalancing>,
    /// Shape credit packets at switch ports (ExpressPass); defaults to the protocol's need.
    pub credit_shaping: Option<bool>,
    /// Capacity of each port's credit queue, in credits (ExpressPass: 8).
    pub credit_queue_packets: u32,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            mtu: 1500,
            bdp_bytes: 100_000,
            priorities: 8,
            buffer_bytes: BufferLimit::Infinite,
            ecn_threshold_bytes: None,
            load_balancing: None,
            credit_shaping: None,
            credit_queue_packets: 8,
        }
    }
}

impl Validate for NetworkConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(576..=9216).contains(&self.mtu) {
            return Err(ConfigError::value("network.mtu", self.mtu, "an integer in [576, 9216]"));
        }
        check_positive("network.bdp_bytes", self.bdp_bytes as f64)?;
        if !(1..=8).contains(&self.priorities) {
            return Err(ConfigError::value("network.priorities", self.priorities, "an integer in [1, 8]"));
        }
        if let BufferLimit::Bytes(b) = self.buffer_bytes {
            if b < 9216 + 38 {
                return Err(ConfigError::value(
                    "network.buffer_bytes",
                    b,
                    "\"infinite\" or at least one maximum-size frame (9254 bytes)",
                ));
            }
        }
        if self.credit_queue_packets == 0 {
            return Err(ConfigError::value("network.credit_queue_packets", 0, "an integer >= 1"));
        }
        if self.ecn_threshold_bytes == Some(0) {
            return Err(ConfigError::value("network.ecn_threshold_bytes", 0, "a positive number of bytes"));
        }
        Ok(())
    }
}
