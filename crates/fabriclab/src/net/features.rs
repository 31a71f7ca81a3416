//! The optional switch features of a run, built from `[network]`. The
//! simulator takes its ordinary path when this is absent, so a run without
//! features pays one branch per packet.

use super::buffer::Buffers;
use super::control::ControlQueue;
use super::int::IntState;
use super::link_events::LinkState;
use super::pfc::Pfc;
use super::program::{ProgramConfig, SwitchProgram};
use super::red::Red;
use super::Fabric;
use crate::config::{MarkAt, NetworkConfig};

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
    /// Failure injection (`[[network.events]]`).
    pub links: Option<LinkState>,
    pub trims: u64,
    pub selective_drops: u64,
}

impl Features {
    /// The features `net` asks for (installing control queues on `fabric`'s
    /// switch ports) plus the protocol's switch `program`, or None when there
    /// are none.
    pub fn build(
        net: &NetworkConfig,
        fabric: &mut Fabric,
        seed: u64,
        program: Option<&ProgramConfig>,
    ) -> Option<Box<Features>> {
        let n_hosts = fabric.topo.n_hosts;
        let n_ports = fabric.ports.len();
        let n_switches = fabric.topo.nodes.len() - n_hosts as usize;
        if let Some(c) = &net.control_class {
            for p in fabric.ports.iter_mut().filter(|p| p.node >= n_hosts) {
                let rate = (p.rate_bps() as f64 * c.rate_fraction).round() as u64;
                let k = c.ecn_threshold_bytes.unwrap_or(u64::MAX);
                p.set_control(ControlQueue::new(c.buffer_bytes, k, rate));
            }
        }
        let pooled = net.shared_buffer.is_some() || net.queue_buffer_bytes.is_some();
        let buffers = pooled.then(|| {
            Buffers::new(
                n_hosts,
                n_switches,
                n_ports,
                net.priorities,
                net.shared_buffer.as_ref().map(|s| (s.bytes, s.alpha)),
                net.queue_buffer_bytes,
            )
        });
        let red = net
            .red
            .as_ref()
            .map(|r| Red::new(r.kmin_bytes, r.kmax_bytes, r.pmax, r.mark_at == MarkAt::Dequeue, n_switches, seed));
        let trim_threshold = (net.trimming == Some(true)).then(|| net.trim_threshold_bytes.unwrap_or(u64::MAX));
        let pfc = net.pfc.as_ref().map(|c| {
            let lossless = if c.classes.is_empty() { 0xff } else { c.classes.iter().fold(0u8, |m, &k| m | 1 << k) };
            Pfc::new(c.xoff_bytes, c.xon_bytes, c.headroom_bytes, lossless, n_ports, n_hosts as usize)
        });
        let int = net.int.as_ref().map(|c| IntState::new(c.hop_bytes, n_ports));
        let program = program.map(|c| SwitchProgram::new(c, n_ports));
        let links = LinkState::build(&net.events, fabric);
        let any = program.is_some()
            || net.control_class.is_some()
            || buffers.is_some()
            || red.is_some()
            || trim_threshold.is_some()
            || net.selective_drop_bytes.is_some()
            || pfc.is_some()
            || int.is_some()
            || links.is_some();
        any.then(|| {
            Box::new(Features {
                n_hosts,
                buffers,
                red,
                trim_threshold,
                selective_drop: net.selective_drop_bytes,
                pfc,
                int,
                program,
                links,
                trims: 0,
                selective_drops: 0,
            })
        })
    }
}
