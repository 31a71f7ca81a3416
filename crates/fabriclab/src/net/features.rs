//! The optional switch features of a run (built from `[network]` by the
//! simulator: `sim::switch_features`). The simulator takes its ordinary path
//! when this is absent, so a run without features pays one branch per packet.

use super::buffer::Buffers;
use super::int::IntState;
use super::link_events::LinkState;
use super::pfc::Pfc;
use super::program::SwitchProgram;
use super::red::Red;

pub struct Features {
    pub n_hosts: u32,
    pub buffers: Option<Buffers>,
    pub red: Option<Red>,
    /// Trim data packets that would be dropped or would push their port above this.
    pub trim_threshold: Option<u64>,
    pub selective_drop: Option<u64>,
    pub pfc: Option<Pfc>,
    pub int: Option<IntState>,
    /// The protocol's switch program (Bolt), run at every switch ingress.
    pub program: Option<SwitchProgram>,
    /// The program acts on packets leaving a queue (Swift's egress
    /// notifications). Decided when the program is built, so that any other
    /// program (Bolt) pays neither a call nor a packet copy per dequeue.
    pub program_at_dequeue: bool,
    /// Failure injection (`[[network.events]]`).
    pub links: Option<LinkState>,
    pub trims: u64,
    pub selective_drops: u64,
}
