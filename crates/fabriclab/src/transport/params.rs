//! What a protocol provides to be run: its parameter table's contract
//! ([`ProtocolParams`]: defaults, documentation, the switch features it
//! expects, its host stack) and the visitor that dispatches statically on the
//! selected one. The registry of protocols (`config::ProtocolName`) sits above,
//! in `config`, and deserialises into these types; transports import nothing
//! from `config`.

use super::{HostInfo, Transport};
use crate::net::switch_config::{EcnPorts, SwitchFeatures};
use crate::net::LoadBalancing;
use fabriclab_engine::error::Validate;
use serde::{de::DeserializeOwned, Serialize};

/// One documented parameter, for `fabriclab protocols` and the docs.
pub struct ParamDoc {
    pub key: &'static str,
    pub default: String,
    pub meaning: &'static str,
    pub source: &'static str,
}

/// What a protocol's `[protocol.NAME]` table provides.
pub trait ProtocolParams:
    Clone + Default + Validate + Serialize + DeserializeOwned + PartialEq + schemars::JsonSchema
{
    /// The host stack this protocol runs.
    type Host: Transport;
    /// The paper (and evaluation) the defaults come from.
    const PAPER: &'static str;
    /// Load balancing the protocol is evaluated with.
    const LOAD_BALANCING: LoadBalancing;
    /// Whether the transport understands trimmed packets (flag `TRIMMED`: the
    /// header of a data packet whose payload a switch cut off).
    const HANDLES_TRIMS: bool = false;
    /// The switch ports its ECN threshold applies to (`network.ecn_ports`).
    const ECN_PORTS: EcnPorts = EcnPorts::All;
    fn docs() -> Vec<ParamDoc>;
    /// Switch ECN marking threshold the protocol expects (x BDP), if it uses ECN.
    fn ecn_threshold_bdp(&self) -> Option<f64> {
        None
    }
    /// Whether switches must shape credit packets (ExpressPass-style).
    fn credit_shaping(&self) -> bool {
        false
    }
    /// Whether switches must trim data packets to headers instead of dropping
    /// them, and above how many full data frames queued (None: only when the
    /// buffer is full).
    fn trimming(&self) -> Option<Option<u32>> {
        None
    }
    /// The program switches must run for this protocol (Bolt), if any.
    fn switch_program(&self, _info: &HostInfo) -> Option<crate::net::program::ProgramConfig> {
        None
    }

    /// Whether the transport stamps each packet's entropy itself (load balancing "sender").
    /// A protocol evaluated with sender load balancing must; one whose balancer is
    /// optional (Swift's `lb`) says so here.
    fn sender_entropy(&self) -> bool {
        Self::LOAD_BALANCING == LoadBalancing::Sender
    }
    /// Whether the transport, as configured, can run on a trimming fabric
    /// (a protocol whose trim handling is optional says so here).
    fn handles_trims(&self) -> bool {
        Self::HANDLES_TRIMS
    }
    /// Switch features the protocol is evaluated with (RED, PFC, INT, a control
    /// class), given the run's BDP and payload per packet.
    fn switch_features(&self, _bdp_bytes: u64, _mss: u32) -> SwitchFeatures {
        SwitchFeatures::default()
    }
    fn host(&self, info: &HostInfo) -> Self::Host;
}

/// Static dispatch on the selected protocol: `visit` is monomorphised per protocol.
pub trait ProtocolVisitor {
    type Output;
    fn visit<P: ProtocolParams>(self, params: &P) -> Self::Output;
}

/// For the transports' tests: each table in `bad` is refused with the error
/// naming `protocol.<table>.<key>` (the key of its one bad value), and the
/// defaults pass. One loop, so every protocol checks its keys the same way.
#[cfg(test)]
pub(crate) fn assert_bad_keys_named<P: Validate + Default>(
    table: &str,
    bad: impl IntoIterator<Item = (P, &'static str)>,
) {
    for (p, key) in bad {
        let e = p.validate().expect_err(key);
        assert_eq!(e.key, format!("protocol.{table}.{key}"), "{e}");
    }
    assert!(P::default().validate().is_ok(), "the defaults of [protocol.{table}]");
}
