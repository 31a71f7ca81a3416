//! Topologies: which nodes exist and which full-duplex links join them (the
//! `[topology]` table that builds them is in `topology_config`).
//!
//! Hosts are always nodes `0..n_hosts`; switches follow. Defaults reproduce the
//! SIRD evaluation fabric (seed §5.1, Table 2): 9 ToRs x 16 hosts, 4 spines,
//! 100 Gbps host links, 400 Gbps ToR-spine links, with delays calibrated so that
//! an MSS packet's RTT is 5.5 us intra-rack and 7.5 us inter-rack (docs/model.md).

use super::names::NodeGroup;
use fabriclab_engine::error::ConfigError;
use fabriclab_engine::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchRole {
    /// Top-of-rack / leaf: hosts hang off it. Its queues are the "ToR queuing" metric.
    Tor,
    /// Spine / aggregation / core.
    Fabric,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch(SwitchRole),
}

#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    pub delay: Time,
}

/// A built topology: nodes, links, and per-host rack membership.
#[derive(Clone, Debug)]
pub struct Topology {
    pub n_hosts: u32,
    pub nodes: Vec<NodeKind>,
    pub links: Vec<Link>,
    pub switch_latency: Time,
    /// Rack (ToR index) of each host; hosts in one rack share a ToR.
    pub rack_of: Vec<u32>,
    /// Ratio of a rack's core (uplink) capacity to its hosts' capacity; 1.0 when
    /// there is no core or it is not oversubscribed. Used to normalise load to the core.
    pub core_ratio: f64,
    /// Consecutive racks that share a pod (3-tier fat trees: k/2); traffic
    /// between pods crosses the top tier. 1 elsewhere.
    pub racks_per_pod: u32,
    /// Node names, for link overrides and failure events ([`super::names`]).
    pub groups: Vec<NodeGroup>,
}

impl Topology {
    pub fn host_rate_bps(&self, host: u32) -> u64 {
        self.links.iter().find(|l| l.a == host || l.b == host).map(|l| l.rate_bps).unwrap_or(0)
    }

    pub fn n_racks(&self) -> u32 {
        self.rack_of.iter().copied().max().map_or(0, |m| m + 1)
    }

    pub fn is_tor(&self, node: u32) -> bool {
        self.nodes[node as usize] == NodeKind::Switch(SwitchRole::Tor)
    }
}

/// The most hosts a topology may have, so that every node number fits the
/// 28 bits the simulator's events give it (`sim/event.rs`).
pub const MAX_HOSTS: u64 = fabriclab_engine::limits::MAX_HOSTS;

/// Most work building a fabric may take, in steps: one breadth-first search
/// over every node and port per edge switch (the routing table,
/// `net/routing.rs`), plus one walk over the parallel paths to every host
/// (the base RTT). 2^32 steps is a few seconds; a 3-tier fat tree with
/// k = 64 takes about 2^30, k = 128 would take 2^35 and a routing table of
/// 1.3 GB. Checked from the counts alone, so that refusing is instant.
pub const MAX_SETUP_WORK: u64 = 1 << 32;

/// The shape of a fabric, for [`check_setup_work`].
pub(super) struct Shape {
    pub hosts: u64,
    pub switches: u64,
    /// Switches with hosts (ToRs, edges): one search each.
    pub edges: u64,
    pub links: u64,
    /// Most equal-cost next hops a path fans out to (spines, cores).
    pub width: u64,
}

/// Refuses a fabric whose routes would take more than [`MAX_SETUP_WORK`]
/// steps to build, naming `key` = `v`, the count that makes it so.
pub(super) fn check_setup_work(key: &str, v: u32, s: &Shape) -> Result<(), ConfigError> {
    let nodes = s.hosts + s.switches;
    let work = s.edges.saturating_mul(nodes + 2 * s.links).saturating_add(s.hosts.saturating_mul(s.width));
    if work <= MAX_SETUP_WORK {
        return Ok(());
    }
    Err(ConfigError::new(
        key,
        format!(
            "got {v}, which makes a fabric of {} hosts, {} switches and {} links whose routes take about {:.1e} \
             steps to build (one search per edge switch), above the limit of 2^32 (a few seconds); use a smaller \
             fabric (bounds: docs/limits.md)",
            s.hosts, s.switches, s.links, work as f64
        ),
    ))
}

/// `hosts`, set through `key` = `v`, is within [`MAX_HOSTS`].
pub(super) fn within_host_limit(key: &str, v: u32, hosts: u64) -> Result<(), ConfigError> {
    if hosts <= MAX_HOSTS {
        Ok(())
    } else {
        Err(ConfigError::value(key, v, "at most 2^20 hosts in total"))
    }
}
