//! Homa-Tr (Arslan thesis §3.3.4, nanoTransport): Homa's receiver-driven SRPT
//! grants with NDP's packet trimming. Switches cut the payload of a data packet
//! that does not fit the buffer and forward its header in the top class; the
//! receiver asks for that packet again at once (a one-packet RESEND, NDP's
//! NACK), so a small buffer costs a round trip instead of Homa's RESEND
//! timeout. Everything else, and every parameter, is Homa's
//! ([`super::homa`]); the table is `[protocol.homa_tr]`.

use super::homa::{Homa, HomaParams};
use super::HostInfo;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams};
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::Bound;
use serde::{Deserialize, Serialize};

/// `[protocol.homa_tr]`: Homa's parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct HomaTrParams(pub HomaParams);

impl Validate for HomaTrParams {
    fn validate(&self) -> Result<(), ConfigError> {
        self.0.validate().map_err(|e| e.in_table("protocol.homa.", "protocol.homa_tr."))
    }
}

impl ProtocolParams for HomaTrParams {
    type Host = Homa;
    const PAPER: &'static str = "Homa-Tr (Arslan, Stanford PhD thesis 2024, §3.3.4: Homa with NDP's trimming)";
    const LOAD_BALANCING: LoadBalancing = HomaParams::LOAD_BALANCING;
    const HANDLES_TRIMS: bool = true;

    fn docs() -> Vec<ParamDoc> {
        HomaParams::docs()
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        HomaParams::bounds()
    }

    /// Trim only when the buffer is full: nanoTransport's switches drop (here
    /// trim) exactly what plain Homa would lose.
    fn trimming(&self) -> Option<Option<u32>> {
        Some(None)
    }

    fn host(&self, info: &HostInfo) -> Homa {
        self.0.host(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_homa_tr_table() {
        let p = HomaTrParams(HomaParams { resend_busy_timeout_us: 10.0, ..Default::default() });
        let e = p.validate().unwrap_err();
        assert!(e.key.starts_with("protocol.homa_tr."), "{e}");
        assert_eq!(HomaTrParams::default().trimming(), Some(None));
    }
}
