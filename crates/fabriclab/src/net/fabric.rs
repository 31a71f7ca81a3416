//! A built network: the topology's links turned into ports, plus routes.

use super::fifo::Fifos;
use super::port::{CreditShaper, Port};
use super::routing::Routes;
use super::topology::{NodeKind, Topology};
use super::wire::{data_wire, CONTROL_WIRE};
use fabriclab_engine::{serialization_time, Time};

/// One hop of a path: the egress port's rate and its delay to the next node
/// (propagation + the next switch's forwarding latency).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub rate_bps: u64,
    pub delay: Time,
    /// Whether every packet of a message must cross the same link at this hop.
    /// False where per-packet spraying can put packets on parallel links.
    pub shared: bool,
}

/// Longest path we support (hops); fat trees need 6.
pub const MAX_HOPS: usize = 8;

pub struct Fabric {
    pub topo: Topology,
    pub ports: Vec<Port>,
    /// The ports' class queues.
    pub fifos: Fifos,
    /// The NIC port of each host.
    pub host_port: Vec<u32>,
    pub routes: Routes,
}

impl Fabric {
    /// `classes` priority classes per port, `limit` bytes of buffer per switch
    /// port, ECN marking above `ecn` bytes.
    pub fn build(topo: Topology, classes: u8, limit: u64, ecn: u64) -> Result<Fabric, String> {
        Self::build_with(topo, classes, limit, ecn, None)
    }

    /// Gives every switch port that faces another switch (ToR uplinks,
    /// aggregation and core ports) a buffer of `limit` bytes; returns how
    /// many ports that is.
    pub fn set_fabric_limit(&mut self, limit: u64) -> usize {
        let mut set = 0;
        for p in self.switch_ports(false) {
            p.limit_bytes = limit;
            set += 1;
        }
        set
    }

    /// Takes the ECN threshold off every switch port that faces a host
    /// (`network.ecn_ports = "fabric"`); returns how many ports that is.
    pub fn unmark_host_facing(&mut self) -> usize {
        let mut set = 0;
        for p in self.switch_ports(true) {
            p.ecn_threshold = u64::MAX;
            set += 1;
        }
        set
    }

    /// The switch ports (host NICs left out) that face hosts, or other switches.
    fn switch_ports(&mut self, towards_hosts: bool) -> impl Iterator<Item = &mut Port> {
        let n = self.topo.n_hosts;
        self.ports.iter_mut().filter(move |p| p.node >= n && (p.peer < n) == towards_hosts)
    }

    /// As [`Fabric::build`], with credit shaping at every switch port:
    /// `credit` = (queue capacity in credits, largest data frame a credit triggers).
    pub fn build_with(
        topo: Topology,
        classes: u8,
        limit: u64,
        ecn: u64,
        credit: Option<(usize, u32)>,
    ) -> Result<Fabric, String> {
        let n = topo.nodes.len();
        let mut node_ports: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut fifos = Fifos::new();
        let latency = |node: u32| match topo.nodes[node as usize] {
            NodeKind::Host => 0,
            NodeKind::Switch(_) => topo.switch_latency,
        };
        for l in &topo.links {
            for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                let id = ports.len() as u32;
                let is_host = topo.nodes[from as usize] == NodeKind::Host;
                let (lim, k) = if is_host { (u64::MAX, u64::MAX) } else { (limit, ecn) };
                let mut port = Port::new(&mut fifos, from, to, l.rate_bps, l.delay + latency(to), classes, lim, k);
                if let (false, Some((cap, frame))) = (is_host, credit) {
                    let spacing = serialization_time((CONTROL_WIRE + frame) as u64, l.rate_bps);
                    port.set_shaper(CreditShaper::new(cap, spacing));
                }
                ports.push(port);
                node_ports[from as usize].push((id, to));
            }
        }
        let mut host_port = Vec::with_capacity(topo.n_hosts as usize);
        for h in 0..topo.n_hosts {
            match node_ports[h as usize].as_slice() {
                [(p, _)] => host_port.push(*p),
                other => return Err(format!("host {h} must have exactly one link, has {}", other.len())),
            }
        }
        let routes = Routes::build(&topo, &node_ports)?;
        Ok(Fabric { topo, ports, fifos, host_port, routes })
    }

    #[inline]
    pub fn is_host(&self, node: u32) -> bool {
        node < self.topo.n_hosts
    }

    /// The hops from `src` to `dst`, level by level through the equal-cost DAG.
    /// Each hop has the fastest rate and the shortest delay of its level's
    /// links, so that with a degraded link (link overrides, rate events) the
    /// ideal stays a lower bound whatever path a message takes.
    /// A hop is `shared` when only one link is possible at that depth of the
    /// equal-cost DAG, or always when `spray` is false (a flow keeps one path).
    pub fn path(&self, src: u32, dst: u32, spray: bool) -> ([Hop; MAX_HOPS], usize) {
        let mut hops = [Hop { rate_bps: 0, delay: 0, shared: true }; MAX_HOPS];
        let mut n = 0;
        let mut level = vec![self.host_port[src as usize]];
        loop {
            let ports = level.iter().map(|&q| &self.ports[q as usize]);
            let rate_bps = ports.clone().map(|p| p.rate_bps()).max().unwrap_or(0);
            let delay = ports.map(|p| p.delay).min().unwrap_or(0);
            hops[n] = Hop { rate_bps, delay, shared: !spray || level.len() == 1 };
            n += 1;
            if self.ports[level[0] as usize].peer == dst || n == MAX_HOPS {
                break;
            }
            let mut next: Vec<u32> =
                level.iter().flat_map(|&q| self.routes.candidates(self.ports[q as usize].peer, dst)).copied().collect();
            next.sort_unstable();
            next.dedup();
            level = next;
        }
        (hops, n)
    }

    /// Unloaded round trip: a full data packet from `a` to `b`, a control packet back.
    pub fn rtt(&self, a: u32, b: u32, mss: u32) -> Time {
        let one_way = |s, d, wire: u32| {
            let (hops, n) = self.path(s, d, false);
            hops[..n].iter().map(|h| serialization_time(wire as u64, h.rate_bps) + h.delay).sum::<Time>()
        };
        one_way(a, b, data_wire(mss)) + one_way(b, a, CONTROL_WIRE)
    }

    /// Unloaded RTT (as [`Fabric::rtt`]) from host 0 by the number of links a
    /// path crosses one way: (hops, rtt) in increasing hop order. Hosts are
    /// symmetric in the topologies we build; where hosts at the same distance
    /// differ (link overrides), the smallest is reported.
    pub fn base_rtt_by_hops(&self, mss: u32) -> Vec<(usize, Time)> {
        let mut by: std::collections::BTreeMap<usize, Time> = Default::default();
        for d in 1..self.topo.n_hosts {
            let rtt = self.rtt(0, d, mss);
            let e = by.entry(self.path(0, d, false).1).or_insert(rtt);
            *e = (*e).min(rtt);
        }
        by.into_iter().collect()
    }

    /// Largest unloaded RTT from host 0 to any other host (hosts are symmetric
    /// in the topologies we build).
    pub fn base_rtt(&self, mss: u32) -> Time {
        (1..self.topo.n_hosts).map(|d| self.rtt(0, d, mss)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology_config::TopologyConfig;
    use fabriclab_engine::NS;

    /// The calibration of docs/model.md: 5.5 us intra-rack, 7.5 us inter-rack.
    #[test]
    fn default_fabric_rtts_match_sird_table2() {
        let f = Fabric::build(TopologyConfig::default().build(), 8, u64::MAX, u64::MAX).unwrap();
        assert_eq!(f.rtt(0, 1, 1460), 5_500 * NS);
        assert_eq!(f.rtt(0, 143, 1460), 7_500 * NS);
        assert_eq!(f.base_rtt(1460), 7_500 * NS);
        assert_eq!(f.path(0, 1, true).1, 2);
        let (hops, n) = f.path(0, 143, true);
        assert_eq!(n, 4);
        let shared: Vec<bool> = hops[..n].iter().map(|h| h.shared).collect();
        assert_eq!(shared, [true, false, false, true]);
        assert!(f.path(0, 143, false).0[..4].iter().all(|h| h.shared));
    }

    /// `unmark_host_facing` takes the threshold off the 144 ToR downlinks of
    /// the SIRD fabric and leaves the 2 x 36 ToR-spine ports and the NICs.
    #[test]
    fn ecn_on_fabric_ports_only() {
        let mut f = Fabric::build(TopologyConfig::default().build(), 8, u64::MAX, 125_000).unwrap();
        assert_eq!(f.unmark_host_facing(), 144);
        let n = f.topo.n_hosts;
        let marking = |pred: &dyn Fn(&crate::net::Port) -> bool| {
            f.ports.iter().filter(|p| pred(p)).map(|p| p.ecn_threshold).collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(marking(&|p| p.node >= n && p.peer < n), [u64::MAX].into());
        assert_eq!(marking(&|p| p.node >= n && p.peer >= n), [125_000].into());
        assert_eq!(f.ports.iter().filter(|p| p.node >= n && p.peer >= n).count(), 72);
    }

    /// `set_fabric_limit` reaches exactly the switch-to-switch ports: a k = 4
    /// fat tree has 16 host NICs (unlimited), 16 ToR downlinks (the switch
    /// buffer) and 2 x 16 + 2 x 16 = 64 ports between switches.
    #[test]
    fn the_fabric_limit_holds_at_switch_facing_ports_only() {
        use crate::net::fat_tree::FatTree;
        let mut f = Fabric::build(FatTree { k: 4, ..FatTree::default() }.build(), 1, 400_000, u64::MAX).unwrap();
        assert_eq!(f.set_fabric_limit(100_000), 64);
        let n = f.topo.n_hosts;
        let count = |lim: u64| f.ports.iter().filter(|p| p.limit_bytes == lim).count();
        assert_eq!((count(u64::MAX), count(400_000), count(100_000)), (16, 16, 64));
        assert!(f.ports.iter().filter(|p| p.limit_bytes == 400_000).all(|p| p.node >= n && p.peer < n));
    }

    /// The per-edge-switch table gives, for every switch and host, exactly the
    /// next hops of a breadth-first search from that host (k = 4 three-tier
    /// fat tree and the default leaf-spine).
    #[test]
    fn routes_are_the_shortest_path_next_hops_to_each_host() {
        use crate::net::fat_tree::FatTree;
        for topo in [FatTree { k: 4, ..FatTree::default() }.build(), TopologyConfig::default().build()] {
            let f = Fabric::build(topo, 1, u64::MAX, u64::MAX).unwrap();
            let n = f.topo.nodes.len();
            for dst in 0..f.topo.n_hosts {
                let mut dist = vec![u32::MAX; n];
                dist[dst as usize] = 0;
                let mut frontier = vec![dst];
                while !frontier.is_empty() {
                    let mut next = Vec::new();
                    for u in frontier {
                        if u != dst && f.is_host(u) {
                            continue;
                        }
                        for p in f.ports.iter().filter(|p| p.node == u) {
                            if dist[p.peer as usize] == u32::MAX {
                                dist[p.peer as usize] = dist[u as usize] + 1;
                                next.push(p.peer);
                            }
                        }
                    }
                    frontier = next;
                }
                for sw in f.topo.n_hosts..n as u32 {
                    let want: Vec<u32> = (0..f.ports.len() as u32)
                        .filter(|&i| f.ports[i as usize].node == sw)
                        .filter(|&i| dist[f.ports[i as usize].peer as usize].checked_add(1) == Some(dist[sw as usize]))
                        .collect();
                    assert_eq!(f.routes.candidates(sw, dst), want, "switch {sw} to host {dst}");
                }
            }
        }
    }

    #[test]
    fn spine_choice_spreads_over_all_spines() {
        let f = Fabric::build(TopologyConfig::default().build(), 8, u64::MAX, u64::MAX).unwrap();
        let tor = 144;
        let mut seen = std::collections::BTreeSet::new();
        for e in 0..1000u32 {
            seen.insert(f.routes.select(tor, 143, e, false));
        }
        assert_eq!(seen.len(), 4);
        assert_eq!(f.routes.candidates(tor, 3).len(), 1);
    }
}
