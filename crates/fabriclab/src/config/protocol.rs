use crate::net::LoadBalancing;
use crate::transport::{dctcp::DctcpParams, sird::SirdParams};
use fabriclab_engine::error::{ConfigError, Validate};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolName {
    Sird,
    Dctcp,
}

impl ProtocolName {
    pub const ALL: [ProtocolName; 2] = [ProtocolName::Sird, ProtocolName::Dctcp];

    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolName::Sird => "sird",
            ProtocolName::Dctcp => "dctcp",
        }
    }
}

/// `[protocol]`: `name` selects the transport; each protocol's parameters live
/// in its own sub-table (`[protocol.sird]`, `[protocol.dctcp]`), so one file can
/// carry settings for several protocols and `--set protocol.name=...` switches
/// between them. Every present sub-table is validated.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProtocolConfig {
    pub name: ProtocolName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sird: Option<SirdParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpParams>,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig { name: ProtocolName::Sird, sird: None, dctcp: None }
    }
}

impl ProtocolConfig {
    /// Makes the selected protocol's table explicit, with its defaults.
    pub fn fill_defaults(&mut self) {
        match self.name {
            ProtocolName::Sird => {
                self.sird.get_or_insert_with(SirdParams::default);
            }
            ProtocolName::Dctcp => {
                self.dctcp.get_or_insert_with(DctcpParams::default);
            }
        }
    }

    pub fn sird(&self) -> SirdParams {
        self.sird.clone().unwrap_or_default()
    }

    pub fn dctcp(&self) -> DctcpParams {
        self.dctcp.clone().unwrap_or_default()
    }

    /// The load balancing the protocol's paper evaluates it with (SIRD Table 2).
    pub fn default_load_balancing(&self) -> LoadBalancing {
        match self.name {
            ProtocolName::Sird => LoadBalancing::Spray,
            ProtocolName::Dctcp => LoadBalancing::Ecmp,
        }
    }

    /// Switch ECN marking threshold the protocol expects, if it uses ECN.
    pub fn default_ecn_threshold_bytes(&self, bdp_bytes: u64) -> Option<u64> {
        let bdp = bdp_bytes as f64;
        Some(match self.name {
            ProtocolName::Sird => (self.sird().nthr_bdp * bdp).round() as u64,
            ProtocolName::Dctcp => (self.dctcp().k_bdp * bdp).round() as u64,
        })
    }
}

impl Validate for ProtocolConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(p) = &self.sird {
            p.validate()?;
        }
        if let Some(p) = &self.dctcp {
            p.validate()?;
        }
        Ok(())
    }
}

/// One documented parameter, for `fabriclab protocols` and the docs.
pub struct ParamDoc {
    pub key: &'static str,
    pub default: String,
    pub meaning: &'static str,
    pub source: &'static str,
}
