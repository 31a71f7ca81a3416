//! Shortest-path routing with equal-cost multipath.
//!
//! For every switch and destination host we precompute the set of egress
//! ports on a shortest path (BFS from each host), stored flat so a lookup is
//! two array reads. The sender's entropy field picks among them, so per-packet
//! spraying and per-flow ECMP differ only in how hosts set the entropy.

use super::topology::{NodeKind, Topology};
use fabriclab_engine::mix64;
use std::collections::VecDeque;

pub struct Routes {
    n_hosts: u32,
    /// Index [(switch - n_hosts) * n_hosts + dst] -> (start, len) in `ports`.
    table: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

impl Routes {
    /// `node_ports[n]` lists (port id, peer node) of node n.
    pub fn build(topo: &Topology, node_ports: &[Vec<(u32, u32)>]) -> Result<Routes, String> {
        let n = topo.nodes.len();
        let h = topo.n_hosts as usize;
        let n_sw = n - h;
        let mut table = vec![(0u32, 0u32); n_sw * h];
        let mut ports = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..h {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                // Hosts do not forward: only the destination itself expands from a host.
                if u != dst && topo.nodes[u] == NodeKind::Host {
                    continue;
                }
                for &(_, v) in &node_ports[u] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u] + 1;
                        queue.push_back(v as usize);
                    }
                }
            }
            for sw in h..n {
                let start = ports.len() as u32;
                if dist[sw] != u32::MAX {
                    for &(p, v) in &node_ports[sw] {
                        if dist[v as usize] + 1 == dist[sw] && dist[v as usize] != u32::MAX {
                            ports.push(p);
                        }
                    }
                }
                table[(sw - h) * h + dst] = (start, ports.len() as u32 - start);
            }
            for src in 0..h {
                if src != dst && dist[src] == u32::MAX {
                    return Err(format!("host {src} cannot reach host {dst}"));
                }
            }
        }
        Ok(Routes { n_hosts: topo.n_hosts, table, ports })
    }

    /// Equal-cost egress ports of `switch` towards host `dst`.
    #[inline]
    pub fn candidates(&self, switch: u32, dst: u32) -> &[u32] {
        let (s, l) = self.table[(switch - self.n_hosts) as usize * self.n_hosts as usize + dst as usize];
        &self.ports[s as usize..(s + l) as usize]
    }

    /// The egress port for a packet with `entropy`. Normally each switch hashes
    /// with its own salt so that choices at successive hops are independent;
    /// `symmetric` drops the salt so every switch maps an entropy to the same
    /// index (see [`super::LoadBalancing::SymmetricEcmp`]).
    #[inline]
    pub fn select(&self, switch: u32, dst: u32, entropy: u32, symmetric: bool) -> u32 {
        let c = self.candidates(switch, dst);
        if c.len() == 1 {
            return c[0];
        }
        let salt = if symmetric { 0 } else { (switch as u64) << 32 };
        let hsh = mix64(salt | entropy as u64);
        c[((hsh >> 32) * c.len() as u64 >> 32) as usize]
    }
}
