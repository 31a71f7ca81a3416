//! BBR (v1) as the SMaRTT-REPS paper's baseline [12]: Cardwell, Cheng, Gunn,
//! Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion Control"
//! (ACM Queue 2016) and draft-cardwell-iccrg-bbr-congestion-control-00. The
//! model and mode machine are in [`model`]; the host is SMaRTT's
//! ([`super::smartt`]): one flow per message, an ACK per data packet, a NACK
//! per trimmed header, per-packet RTO, REPS (or another sender load balancer)
//! choosing entropies, as the paper runs every baseline over trimming and REPS.
//! BBR adds pacing: a flow's next packet leaves no sooner than its last
//! packet's wire bytes at `pacing_rate` after it.

pub mod model;

use super::lb::LbParams;
use super::smartt::{Smartt, SmarttParams};
use super::HostInfo;
use crate::net::wire::data_wire;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams, RTO_RTTS};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, HORIZON_US};
use fabriclab_engine::{from_us, Time};
use serde::{Deserialize, Serialize};

/// `[protocol.bbr]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BbrParams {
    /// Startup's gain; absent: 2/ln 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high_gain: Option<f64>,
    pub cwnd_gain: f64,
    pub btlbw_filter_rounds: u32,
    pub rtprop_filter_ms: f64,
    pub probe_rtt_ms: f64,
    pub min_cwnd_pkts: f64,
    pub full_bw_growth: f64,
    pub full_bw_rounds: u32,
    pub init_cwnd_bdp: f64,
    pub trimming: bool,
    pub rto_min_trtt: f64,
    pub lb: LbParams,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: None,
            cwnd_gain: 2.0,
            btlbw_filter_rounds: 10,
            rtprop_filter_ms: 10_000.0,
            probe_rtt_ms: 200.0,
            min_cwnd_pkts: 4.0,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            init_cwnd_bdp: 1.0,
            trimming: true,
            rto_min_trtt: 2.0,
            lb: LbParams::default(),
        }
    }
}

impl BbrParams {
    /// The resolved constants for a host.
    pub fn consts(&self, info: &HostInfo) -> model::Consts {
        let high_gain = self.high_gain.unwrap_or(2.0 / std::f64::consts::LN_2);
        let mtu = data_wire(info.mss) as f64;
        model::Consts {
            high_gain,
            drain_gain: 1.0 / high_gain,
            cwnd_gain: self.cwnd_gain,
            btlbw_rounds: self.btlbw_filter_rounds as usize,
            rtprop_window: from_us(self.rtprop_filter_ms * 1e3),
            probe_rtt_time: from_us(self.probe_rtt_ms * 1e3),
            min_cwnd: self.min_cwnd_pkts * mtu,
            full_bw_growth: self.full_bw_growth,
            full_bw_rounds: self.full_bw_rounds,
            mtu,
            init_cwnd: (self.init_cwnd_bdp * info.base_rtt_bdp()).max(self.min_cwnd_pkts * mtu),
            nominal_rtt: info.base_rtt.max(1) as Time,
        }
    }
}

impl Validate for BbrParams {
    /// The rules between keys; each key's own range is in [`BbrParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        self.lb.validate_transmission_only("protocol.bbr.lb", "BBR, pacing its packets,")
    }
}

impl ProtocolParams for BbrParams {
    type Host = Smartt;
    const PAPER: &'static str = "BBR: Congestion-Based Congestion Control (Cardwell et al., ACM Queue 2016), BBRv1 as \
                                 the SMaRTT-REPS baseline, over trimming and REPS";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Sender;
    const HANDLES_TRIMS: bool = true;

    fn trimming(&self) -> Option<Option<u32>> {
        self.trimming.then_some(None)
    }

    fn host(&self, info: &HostInfo) -> Smartt {
        let base = SmarttParams::host(self.trimming, self.rto_min_trtt, &self.lb);
        Smartt::with_bbr(&base, info, self.consts(info))
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let rounds = Bound::new("a number of rounds", 1.0, 1000.0);
        let own = [
            // Drain paces at 1 / high_gain, which must be below 1.
            ("high_gain", Bound::new("a gain", 1.0, 100.0).above()),
            ("cwnd_gain", Bound::new("a gain", 1e-3, 100.0)),
            ("btlbw_filter_rounds", rounds),
            ("rtprop_filter_ms", Bound::new("a time in milliseconds", 1e-6, HORIZON_US / 1e3)),
            ("min_cwnd_pkts", Bound::new("a number of packets", 1.0, 1e6)),
            ("full_bw_growth", Bound::new("a factor", 1.0, 100.0)),
            ("full_bw_rounds", rounds),
            ("init_cwnd_bdp", Bound::new("a multiple", 0.0, 1e3)),
            ("rto_min_trtt", RTO_RTTS),
        ];
        [&own[..], LbParams::BOUNDS].concat()
    }

    fn docs() -> Vec<ParamDoc> {
        let d = BbrParams::default();
        let row = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        let mut v = vec![
            row("high_gain", "2/ln 2 = 2.885".into(), "Startup pacing and cwnd gain; Drain paces at its inverse", "BBR draft §4.3.2.1 (BBRHighGain)"),
            row("cwnd_gain", d.cwnd_gain.to_string(), "cwnd = cwnd_gain x BtlBw x RTprop + 3 packets outside Startup/Drain", "BBR draft §4.3.4 (cwnd_gain 2)"),
            row("btlbw_filter_rounds", d.btlbw_filter_rounds.to_string(), "BtlBw = max delivery rate over this many round trips", "BBR draft §4.1.1 (BtlBwFilterLen 10)"),
            row("rtprop_filter_ms", d.rtprop_filter_ms.to_string(), "RTprop = min RTT over this window; its expiry triggers ProbeRTT", "BBR draft §4.1.2 (RTpropFilterLen 10 s); the authors' htsim BBR has no ProbeRTT at all"),
            row("probe_rtt_ms", d.probe_rtt_ms.to_string(), "ProbeRTT dwell at min_cwnd (and at least one round trip)", "BBR draft §4.3.5 (ProbeRTTDuration 200 ms)"),
            row("min_cwnd_pkts", d.min_cwnd_pkts.to_string(), "smallest cwnd and the ProbeRTT cwnd, in packets", "BBR draft §4.3.5 (BBRMinPipeCwnd 4)"),
            row("full_bw_growth", d.full_bw_growth.to_string(), "Startup ends when BtlBw grew by less than this factor ...", "BBR draft §4.3.2.2 (25%)"),
            row("full_bw_rounds", d.full_bw_rounds.to_string(), "... for this many round trips in a row", "BBR draft §4.3.2.2 (3 rounds)"),
            row("init_cwnd_bdp", d.init_cwnd_bdp.to_string(), "initial cwnd, x BDP (host link rate x base RTT); Startup paces at high_gain x this per base RTT", "our choice: one BDP as the other baselines (the authors' htsim starts BBR at its starting window); TCP BBR starts at 10 packets"),
            row("trimming", d.trimming.to_string(), "switches trim packets that would be dropped; a NACK is a loss (packet conservation for a round)", "SMaRTT-REPS §4: trimming for all algorithms"),
            row("rto_min_trtt", d.rto_min_trtt.to_string(), "per-packet retransmission timeout floor, x 1.5 base RTT", "our choice, as SMaRTT"),
        ];
        v.extend(LbParams::docs());
        v
    }
}

#[cfg(test)]
mod tests;
