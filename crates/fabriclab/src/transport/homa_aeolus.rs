//! Homa(A): Homa with Aeolus's first RTT ([`super::aeolus`]; Hu et al.,
//! SIGCOMM 2020, which integrates Aeolus into Homa), as PayDebt's Homa(A)
//! baseline (PayDebt §2.3, §5): "unscheduled packets are dropped selectively
//! when buffer occupancy > 8KB", no in-network rate limiter for grants.
//!
//! Homa's unscheduled prefix (RTTbytes) leaves at line rate as before, but
//! flagged droppable; a PROBE in the same priority class follows its last
//! packet. The receiver ACKs each unscheduled packet and the PROBE; the sender
//! learns from them which were dropped and sends those again on its next
//! grants, in a scheduled class, before new data. The receiver, when the PROBE
//! arrives, counts the unscheduled packets missing and grants that many more
//! packets, so the resends do not eat the message's own grants. Homa's RESEND
//! and NEED_ACK timers stay as a fallback (a dropped PROBE or ACK).
//!
//! Aeolus infers loss from order, so a message's packets must stay on one
//! path: Homa(A) runs per-flow ECMP where Homa sprays. Parameters are Homa's
//! ([`super::homa`]), in `[protocol.homa_aeolus]`.

use super::aeolus::SELECTIVE_DROP_BYTES;
use super::homa::{Homa, HomaParams};
use super::HostInfo;
use crate::net::switch_config::SwitchFeatures;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use serde::{Deserialize, Serialize};

/// `[protocol.homa_aeolus]`: Homa's parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct HomaAeolusParams(pub HomaParams);

impl Validate for HomaAeolusParams {
    fn validate(&self) -> Result<(), ConfigError> {
        self.0.validate().map_err(|e| e.in_table("protocol.homa.", "protocol.homa_aeolus."))
    }
}

impl ProtocolParams for HomaAeolusParams {
    type Host = Homa;
    const PAPER: &'static str = "Homa(A): Homa with Aeolus (Hu et al., SIGCOMM 2020), PayDebt's baseline \
                                 (Liu et al., IEEE TPDS 2022)";
    /// Aeolus detects loss from in-order arrival: one path per message.
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Ecmp;

    fn docs() -> Vec<ParamDoc> {
        HomaParams::docs()
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        HomaParams::bounds()
    }

    fn switch_features(&self, _bdp_bytes: u64, _mss: u32) -> SwitchFeatures {
        SwitchFeatures { selective_drop_bytes: Some(SELECTIVE_DROP_BYTES), ..Default::default() }
    }

    fn host(&self, info: &HostInfo) -> Homa {
        Homa::with_aeolus(&self.0, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_homa_aeolus_table_and_switches_drop_selectively() {
        let p = HomaAeolusParams(HomaParams { resend_busy_timeout_us: 10.0, ..Default::default() });
        let e = p.validate().unwrap_err();
        assert!(e.key.starts_with("protocol.homa_aeolus."), "{e}");
        let f = HomaAeolusParams::default().switch_features(12_500, 1460);
        assert_eq!(f.selective_drop_bytes, Some(8000));
    }
}
