//! EQDS (Olteanu, Eran, Dumitrescu, Popa, Baciu, Silberstein, Nikolaidis,
//! Handley, Raiciu, "An edge-queued datagram service for all datacenter
//! traffic", NSDI 2022) as the SMaRTT-REPS paper runs it: trimming switches,
//! REPS entropies, and optionally SMaRTT capping the sender's window
//! (EQDS+SMaRTT, §5.1). The host is SMaRTT's with EQDS credit turned on
//! ([`super::smartt::pull`]): a new flow sends its first `initial_window_bdp`
//! speculatively, then only what the receiver's pull pacer grants, one
//! full frame per frame time at the receiver's link rate, round-robin over
//! its senders. Constants the NSDI paper leaves open follow htsim's EQDS
//! (github.com/Broadcom/csg-htsim, `sim/eqds.cpp`).

use super::lb::LbParams;
use super::smartt::{EqdsMode, Smartt, SmarttParams};
use super::HostInfo;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams, RTO_RTTS};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use serde::{Deserialize, Serialize};

/// The sender congestion control capping EQDS's window (SMaRTT-REPS §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CwndCap {
    /// Credit alone.
    #[default]
    None,
    /// EQDS+SMaRTT: SMaRTT with `[protocol.smartt]`'s defaults.
    Smartt,
    /// EQDS+MPRDMA: MP-RDMA's per-ACK ECN window (docs/protocols/mprdma.md).
    Mprdma,
}

/// `[protocol.eqds]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EqdsParams {
    /// Speculative first window, and the most pull credit a flow asks for ahead (x BDP).
    pub initial_window_bdp: f64,
    /// Pull pacing as a multiple of the receiver's link rate.
    pub pull_rate_modifier: f64,
    /// A sender window law that caps EQDS: none, smartt or mprdma.
    pub cwnd_cap: CwndCap,
    /// Switches trim when full (false: drop-tail, recovery by timeouts).
    pub trimming: bool,
    /// Retransmission-timeout floor, x SMaRTT's target RTT (1.5 base RTT).
    pub rto_min_trtt: f64,
    /// Pulls beyond a met target while the pacer is otherwise idle (x window).
    pub idle_pull_window: f64,
    pub lb: LbParams,
}

impl Default for EqdsParams {
    fn default() -> Self {
        EqdsParams {
            initial_window_bdp: 1.0,
            pull_rate_modifier: 1.0,
            cwnd_cap: CwndCap::None,
            trimming: true,
            rto_min_trtt: 2.0,
            idle_pull_window: 1.0,
            lb: LbParams::default(),
        }
    }
}

impl Validate for EqdsParams {
    /// The rules between keys; each key's own range is in [`EqdsParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        self.lb.validate_transmission_only("protocol.eqds.lb", "EQDS, sending on credit,")
    }
}

impl EqdsParams {
    /// The host's settings: loss, RTO and balancer from EQDS, the cap's window law.
    fn window_law(&self) -> SmarttParams {
        let base = SmarttParams::host(self.trimming, self.rto_min_trtt, &self.lb);
        match self.cwnd_cap {
            CwndCap::Mprdma => super::mprdma::MprdmaParams::default().window_law(base),
            _ => base,
        }
    }
}

impl ProtocolParams for EqdsParams {
    type Host = Smartt;
    const PAPER: &'static str = "An edge-queued datagram service for all datacenter traffic (Olteanu et al., NSDI \
                                 2022), as run in SMaRTT-REPS";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Sender;
    const HANDLES_TRIMS: bool = true;

    fn trimming(&self) -> Option<Option<u32>> {
        self.trimming.then_some(None)
    }

    fn host(&self, info: &HostInfo) -> Smartt {
        // The BDP at the fabric's base RTT, as SMaRTT's.
        let bdp = info.base_rtt_bdp();
        let window = (self.initial_window_bdp * bdp).ceil() as u64;
        let cwnd_cap = self.cwnd_cap != CwndCap::None;
        let idle_credit = (self.idle_pull_window * window as f64).ceil() as u64;
        let mode = EqdsMode { window, pull_rate_modifier: self.pull_rate_modifier, cwnd_cap, idle_credit };
        Smartt::with_eqds(&self.window_law(), info, mode)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let own = [
            ("initial_window_bdp", Bound::new("a multiple", 1e-3, 1e3)),
            ("pull_rate_modifier", Bound::new("a multiple", 0.01, 100.0)),
            ("rto_min_trtt", RTO_RTTS),
            ("idle_pull_window", Bound::new("a multiple", 0.0, 100.0)),
        ];
        [&own[..], LbParams::BOUNDS].concat()
    }

    fn docs() -> Vec<ParamDoc> {
        let d = EqdsParams::default();
        let mut v = vec![
            ParamDoc {
                key: "initial_window_bdp",
                default: d.initial_window_bdp.to_string(),
                meaning: "speculative first window of a flow, and the most pull credit it requests ahead (x BDP)",
                source: "EQDS §3 (first BDP sent unsolicited); htsim EqdsSrc _maxwnd caps the pull target",
            },
            ParamDoc {
                key: "pull_rate_modifier",
                default: d.pull_rate_modifier.to_string(),
                meaning: "pull pacer rate as a multiple of the receiver's link rate (one full frame per PULL)",
                source: "htsim EqdsPullPacer (rate modifier 1, one MTU of credit per pull)",
            },
            ParamDoc {
                key: "idle_pull_window",
                default: d.idle_pull_window.to_string(),
                meaning: "when no flow is below its pull target, the pacer keeps pulling flows whose target was met, \
                          round-robin, up to this x the window beyond their target (0: it stops)",
                source: "csg-htsim 841d9e7 sim/eqds.cpp EqdsPullPacer (idle senders get up to _maxwnd of speculative \
                         credit), as spcl/HTSIM 8a33f33 htsim/sim/eqds.cpp (the EQDS paper was not at hand; its authors' simulator decides)",
            },
            ParamDoc {
                key: "cwnd_cap",
                default: "none".into(),
                meaning: "a sender window caps EQDS: none, smartt (EQDS+SMaRTT, [protocol.smartt] defaults) or \
                          mprdma (EQDS+MPRDMA, [protocol.mprdma] defaults)",
                source: "SMaRTT-REPS §5.1, Fig. 13",
            },
            ParamDoc {
                key: "trimming",
                default: d.trimming.to_string(),
                meaning: "switches trim packets that would be dropped; the receiver pulls for them again",
                source: "EQDS §3",
            },
            ParamDoc {
                key: "rto_min_trtt",
                default: d.rto_min_trtt.to_string(),
                meaning: "per-packet retransmission timeout floor, x 1.5 base RTT; a sender out of credit with \
                          nothing in flight sends an RTS after one RTO",
                source: "our choice (htsim: 100 us minimum RTO at its settings)",
            },
        ];
        v.extend(LbParams::docs());
        v
    }
}
