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
use fabriclab_engine::limits::{Bound, MAX_MULTIPLE};
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
    /// The bounds of this table's numbers that are narrower than their unit's
    /// (`config::limits`: a `_bdp` in [0, 1e4], a plain number in [-1e6, 1e6],
    /// ...), as (key within the table, bound): a gain in [1e-6, 1], a count of
    /// rounds in [1, 32]. The one statement of each bound: validation checks
    /// it before `validate()` runs, and `fabriclab protocols`, `fabriclab
    /// schema` and Python's `fl.protocols()` print it. `validate()` keeps the
    /// rules between keys (a floor below its bucket), which read each key
    /// already within its bound.
    fn bounds() -> Vec<(&'static str, Bound)> {
        Vec::new()
    }
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

/// A multiple of the BDP or an RTT that must be above 0 (a window, a bucket, a threshold).
pub const POSITIVE_MULTIPLE: Bound = Bound::new("a multiple", 0.0, MAX_MULTIPLE).above();
/// An EWMA gain (DCTCP's g): 0 would freeze the average, above 1 it overshoots.
pub const GAIN: Bound = Bound::new("a gain", 1e-6, 1.0);
pub const FRACTION: Bound = Bound::new("a fraction", 0.0, 1.0);
/// A minimum RTO counted in target or base RTTs.
pub const RTO_RTTS: Bound = Bound::new("a multiple", 0.1, MAX_MULTIPLE);

/// Static dispatch on the selected protocol: `visit` is monomorphised per protocol.
pub trait ProtocolVisitor {
    type Output;
    fn visit<P: ProtocolParams>(self, params: &P) -> Self::Output;
}

/// For the transports' tests: each table in `bad` is refused, naming
/// `protocol.<table>.<key>` (the key of its one bad value), by its own bound
/// ([`ProtocolParams::bounds`]) or by `validate()`'s rules between keys; the
/// defaults pass both. One loop, so every protocol checks its keys the same
/// way; the bounds of units (`config::limits`) are checked there, for every
/// protocol at once.
#[cfg(test)]
pub(crate) fn assert_bad_keys_named<P: ProtocolParams>(table: &str, bad: impl IntoIterator<Item = (P, &'static str)>) {
    for (p, key) in bad {
        if bound_refuses(&p, key) {
            continue;
        }
        let e = p.validate().expect_err(key);
        assert_eq!(e.key, format!("protocol.{table}.{key}"), "{e}");
    }
    let d = P::default();
    assert!(d.validate().is_ok(), "the defaults of [protocol.{table}]");
    for (key, _) in P::bounds() {
        assert!(!bound_refuses(&d, key), "the default of protocol.{table}.{key}");
    }
}

/// Whether `p`'s value at `key` (dotted, within the table) is a number its
/// table's own bound refuses.
#[cfg(test)]
pub(crate) fn bound_refuses<P: ProtocolParams>(p: &P, key: &str) -> bool {
    let Some((_, b)) = P::bounds().into_iter().find(|(k, _)| *k == key) else { return false };
    let mut v = toml::Value::try_from(p).expect("a table");
    for part in key.split('.') {
        match v.get(part) {
            Some(next) => v = next.clone(),
            None => return false,
        }
    }
    match v {
        toml::Value::Float(f) => !b.contains(f),
        toml::Value::Integer(i) => !b.contains(i as f64),
        toml::Value::Array(a) => {
            a.iter().any(|x| x.as_float().or(x.as_integer().map(|i| i as f64)).is_some_and(|f| !b.contains(f)))
        }
        _ => false,
    }
}
