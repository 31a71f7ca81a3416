//! MP-RDMA's congestion control (Lu, Chen, Xiong, Yang, Peng, Li, Zhou, Wang,
//! Chen, Wang, Xiong, Xiong, Moscibroda, "Multi-Path Transport for RDMA in
//! Datacenters", NSDI 2018, §3.2) as the SMaRTT-REPS paper uses it: a
//! per-packet ECN window ("DCTCP-style", reacting once per ACK) over REPS
//! and trimming, without MP-RDMA's own virtual-path machinery (REPS chooses
//! the paths, as for every algorithm there). Per ACK the window loses half a
//! packet if the data was CE-marked and gains 1/cwnd packet otherwise; a
//! trimmed or timed-out packet takes `loss_decrease_mtu` packets off (one, as
//! the SMaRTT-REPS authors' htsim does). Everything else (flows, ACK/NACK, RTO,
//! load balancing) is SMaRTT's host ([`super::smartt`]).

use super::lb::LbParams;
use super::smartt::cc::Signals;
use super::smartt::{Smartt, SmarttParams};
use super::HostInfo;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams, POSITIVE_MULTIPLE, RTO_RTTS};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use serde::{Deserialize, Serialize};

/// `[protocol.mprdma]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MprdmaParams {
    pub init_cwnd_bdp: f64,
    pub max_cwnd_bdp: f64,
    pub min_cwnd_mtu: f64,
    /// Packets off the window per trimmed or timed-out packet.
    pub loss_decrease_mtu: f64,
    pub trimming: bool,
    pub rto_min_trtt: f64,
    pub lb: LbParams,
}

impl Default for MprdmaParams {
    fn default() -> Self {
        MprdmaParams {
            init_cwnd_bdp: 1.0,
            max_cwnd_bdp: 1.25,
            min_cwnd_mtu: 1.0,
            loss_decrease_mtu: 1.0,
            trimming: true,
            rto_min_trtt: 2.0,
            lb: LbParams::default(),
        }
    }
}

impl MprdmaParams {
    /// `base` (the host's loss, RTO and balancer settings) with MP-RDMA's window.
    pub fn window_law(&self, base: SmarttParams) -> SmarttParams {
        SmarttParams {
            signals: Signals::Mprdma,
            init_cwnd_bdp: self.init_cwnd_bdp,
            max_cwnd_bdp: self.max_cwnd_bdp,
            min_cwnd_mtu: self.min_cwnd_mtu,
            mprdma_loss_mtu: self.loss_decrease_mtu,
            ..base
        }
    }
}

impl Validate for MprdmaParams {
    /// The rules between keys; each key's own range is in [`MprdmaParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        self.lb.validate_as("protocol.mprdma.lb")
    }
}

impl ProtocolParams for MprdmaParams {
    type Host = Smartt;
    const PAPER: &'static str = "Multi-Path Transport for RDMA in Datacenters (Lu et al., NSDI 2018), its congestion \
                                 control as run in SMaRTT-REPS";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Sender;
    const HANDLES_TRIMS: bool = true;

    fn trimming(&self) -> Option<Option<u32>> {
        self.trimming.then_some(None)
    }

    fn host(&self, info: &HostInfo) -> Smartt {
        let base = SmarttParams::host(self.trimming, self.rto_min_trtt, &self.lb);
        Smartt::new(&self.window_law(base), info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let own = [
            ("init_cwnd_bdp", POSITIVE_MULTIPLE),
            ("max_cwnd_bdp", POSITIVE_MULTIPLE),
            ("min_cwnd_mtu", Bound::new("a number of packets", 1e-3, 1e6)),
            ("loss_decrease_mtu", Bound::new("a number of packets", 0.0, 1e3)),
            ("rto_min_trtt", RTO_RTTS),
        ];
        [&own[..], LbParams::BOUNDS].concat()
    }

    fn docs() -> Vec<ParamDoc> {
        let d = MprdmaParams::default();
        let mut v = vec![
            ParamDoc {
                key: "init_cwnd_bdp",
                default: d.init_cwnd_bdp.to_string(),
                meaning: "initial window, x BDP (host link rate x base RTT)",
                source: "our choice: one BDP (MP-RDMA starts flows at line rate)",
            },
            ParamDoc {
                key: "max_cwnd_bdp",
                default: d.max_cwnd_bdp.to_string(),
                meaning: "largest window, x BDP",
                source: "our choice: SMaRTT's bound, so the comparison differs only in the window law",
            },
            ParamDoc {
                key: "min_cwnd_mtu",
                default: d.min_cwnd_mtu.to_string(),
                meaning: "smallest window, in MTU",
                source: "our choice: SMaRTT's bound",
            },
            ParamDoc {
                key: "loss_decrease_mtu",
                default: d.loss_decrease_mtu.to_string(),
                meaning: "packets taken off the window per trimmed (NACKed) or timed-out packet",
                source: "spcl/HTSIM 8b15594 sim/uec.cpp processNack (decrease_on_nack = 1, the SMaRTT-REPS authors' \
                         code; neither paper gives one); 0.5 before 2026-11-27 (a trim counted as a mark)",
            },
            ParamDoc {
                key: "trimming",
                default: d.trimming.to_string(),
                meaning: "switches trim packets that would be dropped (a trim is a loss: loss_decrease_mtu)",
                source: "SMaRTT-REPS §4: trimming for all algorithms",
            },
            ParamDoc {
                key: "rto_min_trtt",
                default: d.rto_min_trtt.to_string(),
                meaning: "per-packet retransmission timeout floor, x 1.5 base RTT",
                source: "our choice, as SMaRTT",
            },
        ];
        v.extend(LbParams::docs());
        v
    }
}
