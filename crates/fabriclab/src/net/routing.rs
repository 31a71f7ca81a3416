//! Shortest-path routing with equal-cost multipath.
//!
//! Every host hangs off one edge switch (the fabric checks it), so from any
//! other switch the shortest paths to a host are those to its edge switch: the
//! table is per (switch, edge switch), one BFS per edge switch, and the edge
//! switch itself knows the port of each of its hosts. Identical candidate lists
//! are stored once. At 1,024 hosts this keeps the table in L2 (a per-host table
//! was 2.6 MB and its misses were the top cost of a lookup). The sender's
//! entropy picks among the candidates, so per-packet spraying and per-flow
//! ECMP differ only in how hosts set the entropy.

use super::topology::{NodeKind, Topology};
use fabriclab_engine::mix64;
use std::collections::{HashMap, VecDeque};

/// Where a destination host hangs off the fabric.
#[derive(Clone, Copy, Debug)]
struct Dst {
    /// Its edge switch.
    edge: u32,
    /// The port of that switch leading to the host.
    port: u32,
    /// The edge switch's index among the edge switches (the routing table's column).
    index: u32,
}

pub struct Routes {
    n_hosts: u32,
    n_edges: u32,
    /// Per host: its edge switch, read together on every forwarding decision
    /// (one record, so one cache line).
    dst: Vec<Dst>,
    /// Index [(switch - n_hosts) * n_edges + edge index] -> (start, len) in `ports`.
    table: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

impl Routes {
    /// `node_ports[n]` lists (port id, peer node) of node n; every host has exactly one.
    pub fn build(topo: &Topology, node_ports: &[Vec<(u32, u32)>]) -> Result<Routes, String> {
        Self::build_with(topo, node_ports, true)
    }

    /// Routes over the links in `node_ports` (some may be missing: failed
    /// links). Where a switch can no longer reach an edge switch at all it
    /// keeps its current next hops, so its packets keep going to the dead link.
    pub fn rebuilt(&self, topo: &Topology, node_ports: &[Vec<(u32, u32)>]) -> Routes {
        let mut r = Self::build_with(topo, node_ports, false).expect("hosts keep their single link");
        for (i, e) in r.table.iter_mut().enumerate() {
            if e.1 == 0 && self.table[i].1 != 0 {
                let (s, l) = self.table[i];
                r.ports.extend_from_slice(&self.ports[s as usize..(s + l) as usize]);
                *e = ((r.ports.len() as u32 - l), l);
            }
        }
        r
    }

    fn build_with(topo: &Topology, node_ports: &[Vec<(u32, u32)>], strict: bool) -> Result<Routes, String> {
        let n = topo.nodes.len();
        let h = topo.n_hosts as usize;
        let n_sw = n - h;
        let mut edge_of = Vec::with_capacity(h);
        for host in 0..h {
            let &[(_, edge)] = node_ports[host].as_slice() else {
                return Err(format!("host {host} must have exactly one link, has {}", node_ports[host].len()));
            };
            if (edge as usize) < h {
                return Err(format!("host {host} is wired to host {edge}, not to a switch"));
            }
            edge_of.push(edge);
        }
        // Each host's port on its edge switch, in one pass over the switches'
        // ports (a search per host is quadratic on a star of a million hosts).
        let mut edge_port = vec![u32::MAX; h];
        for sw in h..n {
            for &(port, peer) in &node_ports[sw] {
                if (peer as usize) < h && edge_of[peer as usize] == sw as u32 {
                    edge_port[peer as usize] = port;
                }
            }
        }
        debug_assert!(edge_port.iter().all(|&p| p != u32::MAX), "links are bidirectional");
        let mut edges: Vec<u32> = edge_of.clone();
        edges.sort_unstable();
        edges.dedup();
        let dst = (0..h)
            .map(|i| Dst {
                edge: edge_of[i],
                port: edge_port[i],
                index: edges.binary_search(&edge_of[i]).expect("listed") as u32,
            })
            .collect();

        let mut table = vec![(0u32, 0u32); n_sw * edges.len()];
        let mut ports = Vec::new();
        let mut stored: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        let mut cand = Vec::new();
        for (ei, &edge) in edges.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[edge as usize] = 0;
            queue.clear();
            queue.push_back(edge as usize);
            while let Some(u) = queue.pop_front() {
                for &(_, v) in &node_ports[u] {
                    // Hosts do not forward.
                    if dist[v as usize] == u32::MAX && topo.nodes[v as usize] != NodeKind::Host {
                        dist[v as usize] = dist[u] + 1;
                        queue.push_back(v as usize);
                    }
                }
            }
            for sw in h..n {
                cand.clear();
                if dist[sw] != u32::MAX && sw != edge as usize {
                    for &(p, v) in &node_ports[sw] {
                        if dist[v as usize] != u32::MAX && dist[v as usize] + 1 == dist[sw] {
                            cand.push(p);
                        }
                    }
                }
                let start = *stored.entry(cand.clone()).or_insert_with(|| {
                    ports.extend_from_slice(&cand);
                    (ports.len() - cand.len()) as u32
                });
                table[(sw - h) * edges.len() + ei] = (start, cand.len() as u32);
            }
            for (host, &e) in edge_of.iter().enumerate() {
                if strict && dist[e as usize] == u32::MAX {
                    let dst = edge_of.iter().position(|&x| x == edge).expect("edge has a host");
                    return Err(format!("host {host} cannot reach host {dst}"));
                }
            }
        }
        Ok(Routes { n_hosts: topo.n_hosts, n_edges: edges.len() as u32, dst, table, ports })
    }

    /// Equal-cost egress ports of `switch` towards host `dst`.
    #[inline(always)]
    pub fn candidates(&self, switch: u32, dst: u32) -> &[u32] {
        let d = &self.dst[dst as usize];
        if d.edge == switch {
            return std::slice::from_ref(&d.port);
        }
        let row = (switch - self.n_hosts) as usize * self.n_edges as usize;
        let (s, l) = self.table[row + d.index as usize];
        &self.ports[s as usize..(s + l) as usize]
    }

    /// The egress port for a packet with `entropy`. Normally each switch hashes
    /// with its own salt so that choices at successive hops are independent;
    /// `symmetric` drops the salt so every switch maps an entropy to the same
    /// index (see [`super::LoadBalancing::SymmetricEcmp`]).
    #[inline(always)]
    pub fn select(&self, switch: u32, dst: u32, entropy: u32, symmetric: bool) -> u32 {
        let c = self.candidates(switch, dst);
        if c.len() == 1 {
            return c[0];
        }
        let salt = if symmetric { 0 } else { (switch as u64) << 32 };
        let hsh = mix64(salt | entropy as u64);
        c[(((hsh >> 32) * c.len() as u64) >> 32) as usize]
    }
}
