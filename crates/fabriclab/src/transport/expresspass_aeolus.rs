//! ExpressPass(A): ExpressPass with Aeolus's first RTT ([`super::aeolus`];
//! Hu et al., SIGCOMM 2020, §5 "ExpressPass+Aeolus"), PayDebt's EP(A)
//! baseline (PayDebt §2.3, §5: selective dropping above 8KB).
//!
//! A new message sends its CREDIT_REQUEST as ExpressPass does and, instead of
//! idling for the first RTT, follows it at line rate with pre-credit packets,
//! flagged droppable, until the first credit arrives or one BDP has left; a
//! PROBE closes the burst. The receiver ACKs each pre-credit packet and the
//! PROBE; the sender sends the ones it learns were dropped again on its next
//! credits, before new data, and keeps credit coming until every pre-credit
//! packet's fate is known. From the first credit on, ExpressPass runs
//! unchanged ([`super::expresspass`]); parameters are its, in
//! `[protocol.expresspass_aeolus]`.

use super::aeolus::SELECTIVE_DROP_BYTES;
use super::expresspass::{ExpressPass, ExpressPassParams};
use super::HostInfo;
use crate::net::switch_config::SwitchFeatures;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use serde::{Deserialize, Serialize};

/// `[protocol.expresspass_aeolus]`: ExpressPass's parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct ExpressPassAeolusParams(pub ExpressPassParams);

impl Validate for ExpressPassAeolusParams {
    fn validate(&self) -> Result<(), ConfigError> {
        self.0.validate().map_err(|e| e.in_table("protocol.expresspass.", "protocol.expresspass_aeolus."))
    }
}

impl ProtocolParams for ExpressPassAeolusParams {
    type Host = ExpressPass;
    const PAPER: &'static str = "ExpressPass(A): ExpressPass with Aeolus (Hu et al., SIGCOMM 2020), PayDebt's EP(A) \
                                 baseline (Liu et al., IEEE TPDS 2022)";
    const LOAD_BALANCING: LoadBalancing = ExpressPassParams::LOAD_BALANCING;

    fn docs() -> Vec<ParamDoc> {
        ExpressPassParams::docs()
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        ExpressPassParams::bounds()
    }

    fn credit_shaping(&self) -> bool {
        true
    }

    fn switch_features(&self, _bdp_bytes: u64, _mss: u32) -> SwitchFeatures {
        SwitchFeatures { selective_drop_bytes: Some(SELECTIVE_DROP_BYTES), ..Default::default() }
    }

    fn host(&self, info: &HostInfo) -> ExpressPass {
        ExpressPass::with_aeolus(&self.0, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_expresspass_aeolus_table() {
        let p = ExpressPassAeolusParams(ExpressPassParams { w_init: 0.9, ..Default::default() });
        let e = p.validate().unwrap_err();
        assert_eq!(e.key, "protocol.expresspass_aeolus.w_init", "{e}");
        let p = ExpressPassAeolusParams::default();
        assert!(p.credit_shaping());
        assert_eq!(p.switch_features(12_500, 1460).selective_drop_bytes, Some(8000));
    }
}
