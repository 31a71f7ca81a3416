//! The simulator's side of the switch-side programmable hook
//! ([`crate::net::program`]): runs the protocol's program on a packet at switch
//! ingress and forwards the feedback packet it asks for.

use super::Sim;
use crate::net::program::{mirror_back, Action, Egress};
use crate::net::LoadBalancing;
use crate::transport::Transport;

impl<T: Transport> Sim<T> {
    /// Packet `idx`, at switch `node`, is about to join egress `port`.
    #[inline]
    pub(super) fn run_program(&mut self, node: u32, idx: u32, port: u32) {
        let now = self.q.now();
        let Some(prog) = self.feat.as_deref_mut().and_then(|f| f.program.as_mut()) else {
            return;
        };
        let eg = Egress::of(port, &self.fabric.ports[port as usize]);
        let mut pkt = self.slab.get_mut(idx);
        if let Action::ForwardAndFeedback { qlen, rate_bps } = prog.ingress(now, eg, &mut pkt) {
            let fb = mirror_back(&pkt, qlen, rate_bps);
            drop(pkt);
            let (dst, entropy) = (fb.dst, fb.entropy);
            self.counters.packets_sent += 1;
            let fidx = self.slab.insert(fb);
            let back = self.fabric.routes.select(node, dst, entropy, self.lb == LoadBalancing::SymmetricEcmp);
            self.forward_featured(node, fidx, back);
        }
    }
}
