//! Decisions recorded for the conformance test.

use crate::peers::PeerId;
use fabriclab::transport::sird::SirdHeader;
use fabriclab_engine::Time;

/// One protocol decision, recorded when tracing is on (conformance tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub at: Time,
    /// SIRD host ids as the simulator would see them: sender and receiver.
    pub from: PeerId,
    pub to: PeerId,
    pub hdr: TracedHeader,
}

/// SIRD's header with message ids replaced by the sender-side attempt id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedHeader {
    Data { msg: u64, index: u32, scheduled: bool, csn: bool },
    CreditReq { msg: u64, sched_from: u32 },
    Credit { msg: u64, index: u32 },
    Resend { msg: u64, index: u32 },
}

impl TracedHeader {
    pub fn of(h: &SirdHeader, msg: u64) -> TracedHeader {
        match *h {
            SirdHeader::Data { index, scheduled, csn, .. } => TracedHeader::Data { msg, index, scheduled, csn },
            SirdHeader::CreditReq { sched_from, .. } => TracedHeader::CreditReq { msg, sched_from },
            SirdHeader::Credit { index, .. } => TracedHeader::Credit { msg, index },
            SirdHeader::Resend { index, .. } => TracedHeader::Resend { msg, index },
        }
    }
}
