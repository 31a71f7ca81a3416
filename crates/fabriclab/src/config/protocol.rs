//! `[protocol]`: which transport runs, and the parameters of each.
//!
//! Every protocol is registered once, in the `protocols!` list below: its name,
//! its parameter table type (which implements [`ProtocolParams`]) and its key.

use crate::net::switch_config::{EcnPorts, SwitchFeatures};
use crate::net::LoadBalancing;
pub use crate::transport::params::{ParamDoc, ProtocolParams, ProtocolVisitor};
use crate::transport::{self, HostInfo};
use fabriclab_engine::error::{ConfigError, Validate};
use serde::{Deserialize, Serialize};

macro_rules! protocols {
    ($( $variant:ident => $field:ident : $params:ty ),+ $(,)?) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ProtocolName { $($variant),+ }

        impl ProtocolName {
            pub const ALL: &'static [ProtocolName] = &[$(ProtocolName::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(ProtocolName::$variant => stringify!($field)),+ }
            }

            pub fn paper(self) -> &'static str {
                match self { $(ProtocolName::$variant => <$params as ProtocolParams>::PAPER),+ }
            }

            pub fn docs(self) -> Vec<ParamDoc> {
                match self { $(ProtocolName::$variant => <$params as ProtocolParams>::docs()),+ }
            }

            /// The bounds this protocol's table narrows (`ProtocolParams::bounds`).
            pub fn bounds(self) -> Vec<(&'static str, fabriclab_engine::limits::Bound)> {
                match self { $(ProtocolName::$variant => <$params as ProtocolParams>::bounds()),+ }
            }

            pub fn handles_trims(self) -> bool {
                match self { $(ProtocolName::$variant => <$params as ProtocolParams>::HANDLES_TRIMS),+ }
            }

            pub fn default_load_balancing(self) -> LoadBalancing {
                match self { $(ProtocolName::$variant => <$params as ProtocolParams>::LOAD_BALANCING),+ }
            }
        }

        /// `[protocol]`: `name` selects the transport; each protocol's parameters
        /// live in its own sub-table (`[protocol.sird]`, `[protocol.dctcp]`, ...),
        /// so one file can carry settings for several protocols and
        /// `--set protocol.name=...` switches between them. Every present
        /// sub-table is validated.
        #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ProtocolConfig {
            pub name: ProtocolName,
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$params>,
            )+
        }

        impl Default for ProtocolConfig {
            fn default() -> Self {
                ProtocolConfig { name: ProtocolName::Sird, $($field: None),+ }
            }
        }

        impl ProtocolConfig {
            /// Makes the selected protocol's table explicit, with its defaults.
            pub fn fill_defaults(&mut self) {
                match self.name {
                    $(ProtocolName::$variant => { self.$field.get_or_insert_with(Default::default); })+
                }
            }

            /// Calls `v.visit(params)` with the selected protocol's parameters.
            pub fn visit<V: ProtocolVisitor>(&self, v: V) -> V::Output {
                match self.name {
                    $(ProtocolName::$variant => v.visit(&self.$field.clone().unwrap_or_default())),+
                }
            }
        }

        impl Validate for ProtocolConfig {
            fn validate(&self) -> Result<(), ConfigError> {
                $(if let Some(p) = &self.$field { p.validate()?; })+
                Ok(())
            }
        }
    };
}

protocols! {
    Sird => sird: transport::sird::SirdParams,
    Dctcp => dctcp: transport::dctcp::DctcpParams,
    Homa => homa: transport::homa::HomaParams,
    Dcpim => dcpim: transport::dcpim::DcpimParams,
    Expresspass => expresspass: transport::expresspass::ExpressPassParams,
    Swift => swift: transport::swift::SwiftParams,
    Ndp => ndp: transport::ndp::NdpParams,
    Bolt => bolt: transport::bolt::BoltParams,
    HomaTr => homa_tr: transport::homa_tr::HomaTrParams,
    Smartt => smartt: transport::smartt::SmarttParams,
    Eqds => eqds: transport::eqds::EqdsParams,
    Mprdma => mprdma: transport::mprdma::MprdmaParams,
    Bbr => bbr: transport::bbr::BbrParams,
    Paydebt => paydebt: transport::paydebt::PayDebtParams,
    Dcqcn => dcqcn: transport::dcqcn::DcqcnParams,
    Hpcc => hpcc: transport::dcqcn::HpccParams,
    HomaAeolus => homa_aeolus: transport::homa_aeolus::HomaAeolusParams,
    ExpresspassAeolus => expresspass_aeolus: transport::expresspass_aeolus::ExpressPassAeolusParams,
}

impl ProtocolConfig {
    pub fn default_load_balancing(&self) -> LoadBalancing {
        self.name.default_load_balancing()
    }

    /// The switch ports the selected protocol's ECN threshold applies to.
    pub fn default_ecn_ports(&self) -> EcnPorts {
        struct Ports;
        impl ProtocolVisitor for Ports {
            type Output = EcnPorts;
            fn visit<P: ProtocolParams>(self, _: &P) -> EcnPorts {
                P::ECN_PORTS
            }
        }
        self.visit(Ports)
    }

    /// Switch ECN marking threshold the selected protocol expects, if it uses ECN.
    pub fn default_ecn_threshold_bytes(&self, bdp_bytes: u64) -> Option<u64> {
        struct Ecn(u64);
        impl ProtocolVisitor for Ecn {
            type Output = Option<u64>;
            fn visit<P: ProtocolParams>(self, p: &P) -> Option<u64> {
                p.ecn_threshold_bdp().map(|k| (k * self.0 as f64).round() as u64)
            }
        }
        self.visit(Ecn(bdp_bytes))
    }

    /// Whether the selected protocol, as configured, handles trimmed packets.
    pub fn handles_trims(&self) -> bool {
        struct Trims;
        impl ProtocolVisitor for Trims {
            type Output = bool;
            fn visit<P: ProtocolParams>(self, p: &P) -> bool {
                p.handles_trims()
            }
        }
        self.visit(Trims)
    }

    /// Whether the selected protocol, as configured, chooses its packets' entropies.
    pub fn sender_entropy(&self) -> bool {
        struct Entropy;
        impl ProtocolVisitor for Entropy {
            type Output = bool;
            fn visit<P: ProtocolParams>(self, p: &P) -> bool {
                p.sender_entropy()
            }
        }
        self.visit(Entropy)
    }

    /// Whether the selected protocol needs switches to shape credits.
    pub fn default_credit_shaping(&self) -> bool {
        struct Shaping;
        impl ProtocolVisitor for Shaping {
            type Output = bool;
            fn visit<P: ProtocolParams>(self, p: &P) -> bool {
                p.credit_shaping()
            }
        }
        self.visit(Shaping)
    }

    /// The switch program the selected protocol asks for, if any.
    pub fn switch_program(&self, info: &HostInfo) -> Option<crate::net::program::ProgramConfig> {
        struct Prog<'a>(&'a HostInfo);
        impl ProtocolVisitor for Prog<'_> {
            type Output = Option<crate::net::program::ProgramConfig>;
            fn visit<P: ProtocolParams>(self, p: &P) -> Self::Output {
                p.switch_program(self.0)
            }
        }
        self.visit(Prog(info))
    }

    /// Switch features the selected protocol expects.
    pub fn default_switch_features(&self, bdp_bytes: u64, mss: u32) -> SwitchFeatures {
        struct Features(u64, u32);
        impl ProtocolVisitor for Features {
            type Output = SwitchFeatures;
            fn visit<P: ProtocolParams>(self, p: &P) -> SwitchFeatures {
                p.switch_features(self.0, self.1)
            }
        }
        self.visit(Features(bdp_bytes, mss))
    }

    /// Whether the selected protocol needs trimming, and its trim threshold in bytes.
    pub fn default_trimming(&self, mss: u32) -> (bool, Option<u64>) {
        struct Trim(u32);
        impl ProtocolVisitor for Trim {
            type Output = (bool, Option<u64>);
            fn visit<P: ProtocolParams>(self, p: &P) -> Self::Output {
                match p.trimming() {
                    None => (false, None),
                    Some(n) => (true, n.map(|n| n as u64 * crate::net::wire::data_wire(self.0) as u64)),
                }
            }
        }
        self.visit(Trim(mss))
    }
}
