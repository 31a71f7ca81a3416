//! HPCC's sender (Li et al., "HPCC: High Precision Congestion Control",
//! SIGCOMM 2019, Algorithm 1), in the per-ACK form of the authors' ns-3
//! simulator (rdma-hw.cc `UpdateRateHp`, read for behaviour): each ACK echoes
//! the INT records of its data packet; per hop, the link's utilisation is the
//! tx rate since the previous record over the line rate plus the queue over a
//! BDP; the most utilised hop feeds an EWMA over one base RTT, and the rate
//! becomes R_C / (U / eta) + W_AI (multiplicative) or R_C + W_AI (additive,
//! up to maxStage times). An ACK beyond the last update's sequence number
//! commits the reference rate R_C; the others react without committing.

use super::Dcqcn;
use crate::net::int::IntStack;
use crate::net::switch_config::{IntConfig, PfcConfig, SwitchFeatures};
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams};
use crate::transport::HostInfo;
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_MULTIPLE};
use fabriclab_engine::{from_us, Time};
use serde::{Deserialize, Serialize};

/// `[protocol.hpcc]`. Defaults: the HPCC paper, then the authors' ns-3 run.py at 10 Gbps.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HpccParams {
    /// Target utilisation eta.
    pub eta: f64,
    /// Additive-increase steps before a multiplicative update.
    pub max_stage: u32,
    /// W_AI as a rate, Mb/s.
    pub rai_mbps: f64,
    pub min_rate_mbps: f64,
    /// W_init, x BDP (the window at line rate; scaled by rate / line rate).
    pub window_bdp: f64,
    /// PFC at the switches (network default).
    pub pfc: bool,
    pub rto_us: f64,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 5,
            rai_mbps: 4.0,
            min_rate_mbps: 1000.0,
            window_bdp: 1.0,
            pfc: true,
            rto_us: 10_000.0,
        }
    }
}

impl Validate for HpccParams {
    /// Each key's range is in [`HpccParams::bounds`]; no rule relates two keys.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

impl ProtocolParams for HpccParams {
    type Host = Dcqcn;
    const PAPER: &'static str = "HPCC: High Precision Congestion Control (Li et al., SIGCOMM 2019)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;

    fn switch_features(&self, _bdp_bytes: u64, _mss: u32) -> SwitchFeatures {
        SwitchFeatures { int: Some(IntConfig::default()), pfc: self.pfc.then(PfcConfig::default), ..Default::default() }
    }

    fn host(&self, info: &HostInfo) -> Dcqcn {
        let line = info.link_rate_bps as f64;
        let c = HpccConsts {
            eta: self.eta,
            max_stage: self.max_stage,
            rai_bps: self.rai_mbps * 1e6,
            min_rate_bps: (self.min_rate_mbps * 1e6).min(line),
            line_rate_bps: line,
            base_rtt: info.base_rtt,
            win_bytes: self.window_bdp * info.bdp_bytes as f64,
        };
        Dcqcn::with_hpcc(c, from_us(self.rto_us), info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        vec![
            ("eta", Bound::new("a fraction", 0.01, 1.0)),
            ("max_stage", Bound::new("a number of stages", 0.0, 1000.0)),
            ("rai_mbps", super::RATE_STEP),
            ("window_bdp", Bound::new("a multiple", 0.01, MAX_MULTIPLE)),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = HpccParams::default();
        let doc = |key, default: String, meaning, source| ParamDoc { key, default, meaning, source };
        vec![
            doc("eta", d.eta.to_string(), "target utilisation", "HPCC §3.3 (95%); run.py utgt 95"),
            doc(
                "max_stage",
                d.max_stage.to_string(),
                "additive steps before a multiplicative update",
                "HPCC §3.3 (maxStage = 5); run.py's MI_THRESH default is 0",
            ),
            doc("rai_mbps", d.rai_mbps.to_string(), "W_AI as a rate (Mb/s)", "run.py: 10 Mb/s x bw/25 at 10 Gbps"),
            doc("min_rate_mbps", d.min_rate_mbps.to_string(), "rate floor (Mb/s)", "run.py MIN_RATE"),
            doc(
                "window_bdp",
                d.window_bdp.to_string(),
                "W_init (x BDP), scaled by rate / line rate",
                "HPCC §3.3 (W_init = B x T); run.py VAR_WIN",
            ),
            doc("pfc", d.pfc.to_string(), "PFC at switches (network.pfc defaults)", "PayDebt §5 (PFC enabled)"),
            doc("rto_us", d.rto_us.to_string(), "no progress this long -> go back N", "as DCQCN (our choice)"),
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub struct HpccConsts {
    pub eta: f64,
    pub max_stage: u32,
    pub rai_bps: f64,
    pub min_rate_bps: f64,
    pub line_rate_bps: f64,
    /// Base RTT T and the window W_init = line rate x T, in bytes.
    pub base_rtt: Time,
    pub win_bytes: f64,
}

#[derive(Clone, Debug)]
pub struct HpccState {
    /// The pacing rate, and the reference rate R_C it is computed from.
    pub rate: f64,
    cur_rate: f64,
    inc_stage: u32,
    /// PSN beyond which an ACK commits an update (0: no records yet).
    last_update: u32,
    hops: IntStack,
    u: f64,
}

impl HpccState {
    pub fn new(line_rate_bps: f64) -> Self {
        HpccState {
            rate: line_rate_bps,
            cur_rate: line_rate_bps,
            inc_stage: 0,
            last_update: 0,
            hops: IntStack::default(),
            u: 1.0,
        }
    }

    /// An ACK for everything below `acked` arrived with `int`; `snd_nxt` is the next PSN to send.
    pub fn on_ack(&mut self, p: &HpccConsts, acked: u32, snd_nxt: u32, int: &IntStack) {
        if self.last_update == 0 || int.hops().len() != self.hops.hops().len() {
            // First records (or a new path): keep them as the reference.
            self.last_update = snd_nxt.max(1);
            self.hops = *int;
            return;
        }
        let full = acked > self.last_update;
        let (mut big_u, mut dt) = (0.0f64, 0);
        for (new, old) in int.hops().iter().zip(self.hops.hops()) {
            let tau = new.ts.saturating_sub(old.ts);
            if tau == 0 {
                continue;
            }
            let line = new.rate_bps as f64;
            let tx_rate = (new.tx_bytes.saturating_sub(old.tx_bytes)) as f64 * 8.0 / (tau as f64 * 1e-12);
            let q = new.qlen_bytes.min(old.qlen_bytes) as f64;
            let u = tx_rate / line + q * p.line_rate_bps / line / p.win_bytes;
            if u > big_u {
                big_u = u;
                dt = tau;
            }
        }
        self.hops = *int;
        if dt == 0 {
            return;
        }
        let t = p.base_rtt.max(1);
        let dt = dt.min(t);
        self.u = (self.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
        let max_c = self.u / p.eta;
        let (mut rate, stage) = if max_c >= 1.0 || self.inc_stage >= p.max_stage {
            (self.cur_rate / max_c + p.rai_bps, 0)
        } else {
            (self.cur_rate + p.rai_bps, self.inc_stage + 1)
        };
        rate = rate.clamp(p.min_rate_bps, p.line_rate_bps);
        self.rate = rate;
        if full {
            self.cur_rate = rate;
            self.inc_stage = stage;
            self.last_update = snd_nxt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::int::IntHop;

    const US: Time = 1_000_000;

    fn params() -> HpccConsts {
        HpccConsts {
            eta: 0.95,
            max_stage: 5,
            rai_bps: 4e6,
            min_rate_bps: 1e9,
            line_rate_bps: 10e9,
            base_rtt: 10 * US,
            win_bytes: 12_500.0,
        }
    }

    fn stack(tx: u64, ts: Time, q: u64) -> IntStack {
        let mut s = IntStack::default();
        s.push(IntHop { qlen_bytes: q, tx_bytes: tx, ts, rate_bps: 10_000_000_000 });
        s
    }

    #[test]
    fn a_full_link_with_a_queue_cuts_the_rate_below_line_rate() {
        let p = params();
        let mut h = HpccState::new(10e9);
        h.on_ack(&p, 1, 10, &stack(0, 0, 12_500));
        // One base RTT later the link sent at line rate and still holds a BDP
        // (HPCC takes the smaller of the two queue samples): U = 2.
        h.on_ack(&p, 11, 20, &stack(12_500, 10 * US, 12_500));
        let want = 10e9 / (2.0 / 0.95) + 4e6;
        assert!((h.rate - want).abs() < 1.0, "{} vs {want}", h.rate);
    }

    #[test]
    fn an_idle_link_adds_w_ai_per_update_then_goes_multiplicative() {
        let p = params();
        let mut h = HpccState::new(10e9);
        h.cur_rate = 2e9;
        h.on_ack(&p, 1, 10, &stack(0, 0, 0));
        let mut now = 0;
        for i in 0..5 {
            now += 10 * US;
            // Link 20% busy, no queue: U decays toward 0.2, below eta.
            h.on_ack(&p, 11 + 10 * i, 20 + 10 * i, &stack(2_500 * (i as u64 + 1), now, 0));
        }
        assert_eq!(h.inc_stage, 5);
        assert!((h.cur_rate - (2e9 + 5.0 * 4e6)).abs() < 1.0, "{}", h.cur_rate);
        // Stage 5 = maxStage: the next update is multiplicative (U/eta < 1 raises the rate).
        h.on_ack(&p, 61, 70, &stack(2_500 * 6, now + 10 * US, 0));
        assert!(h.cur_rate > 2.02e9 * 1.5, "{}", h.cur_rate);
    }
}
