//! Builds the switch features `[network]` asks for (`net::features::Features`):
//! here in the simulator, which reads the configuration, so that the network
//! layer imports nothing from `config`.

use crate::config::NetworkConfig;
use crate::net::buffer::Buffers;
use crate::net::control::ControlQueue;
use crate::net::features::Features;
use crate::net::int::IntState;
use crate::net::link_events::LinkState;
use crate::net::pfc::Pfc;
use crate::net::program::{ProgramConfig, SwitchProgram};
use crate::net::red::Red;
use crate::net::switch_config::MarkAt;
use crate::net::Fabric;

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
        let red =
            net.red.as_ref().map(|r| Red::new(r.thresholds(), r.pmax, r.mark_at == MarkAt::Dequeue, n_switches, seed));
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
                program_at_dequeue: program.as_ref().is_some_and(SwitchProgram::acts_at_dequeue),
                program,
                links,
                trims: 0,
                selective_drops: 0,
            })
        })
    }
}
