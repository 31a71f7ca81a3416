//! k-ary fat trees (Al-Fares et al., SIGCOMM 2008): 3 tiers (k pods of k/2 edge
//! and k/2 aggregation switches, (k/2)^2 cores; k^3/4 hosts) or 2 tiers (k
//! leaves, k/2 spines; k^2/2 hosts). `hosts_per_tor` above k/2 oversubscribes
//! the ToR uplinks, as htsim's oversubscribed fat trees do.

use super::names::NodeGroup;
use super::overrides::{self, LinkOverride};
use super::topology::{check_setup_work, within_host_limit, Link, NodeKind, Shape, SwitchRole, Topology};
use fabriclab_engine::error::{check_positive, ConfigError};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FatTree {
    /// Switch radix (even).
    pub k: u32,
    /// 2 (leaf-spine built from k-port switches) or 3 (pods, aggregation, core).
    pub tiers: u8,
    /// Hosts under each ToR; default k/2 (no oversubscription).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_tor: Option<u32>,
    pub host_rate_gbps: f64,
    pub fabric_rate_gbps: f64,
    pub host_link_delay_ns: f64,
    pub fabric_link_delay_ns: f64,
    pub switch_latency_ns: f64,
    /// Links with another rate or delay (`[[topology.link_overrides]]`).
    pub link_overrides: Vec<LinkOverride>,
}

impl Default for FatTree {
    fn default() -> Self {
        FatTree {
            k: 8,
            tiers: 3,
            hosts_per_tor: None,
            host_rate_gbps: 100.0,
            fabric_rate_gbps: 100.0,
            host_link_delay_ns: 500.0,
            fabric_link_delay_ns: 500.0,
            switch_latency_ns: 250.0,
            link_overrides: Vec::new(),
        }
    }
}

impl FatTree {
    fn hpt(&self) -> u32 {
        self.hosts_per_tor.unwrap_or(self.k / 2)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.k < 2 || !self.k.is_multiple_of(2) || self.k > 128 {
            return Err(ConfigError::value("topology.k", self.k, "an even integer in [2, 128]"));
        }
        if self.tiers != 2 && self.tiers != 3 {
            return Err(ConfigError::value("topology.tiers", self.tiers, "2 or 3"));
        }
        if self.hosts_per_tor == Some(0) {
            return Err(ConfigError::value("topology.hosts_per_tor", 0, "an integer >= 1"));
        }
        let tors = if self.tiers == 3 { self.k * self.k / 2 } else { self.k };
        let hosts = tors as u64 * self.hpt() as u64;
        within_host_limit("topology.hosts_per_tor", self.hpt(), hosts)?;
        let (k, half) = (self.k as u64, self.k as u64 / 2);
        let shape = if self.tiers == 3 {
            // Edges, aggregations and cores; every edge and aggregation switch has k/2 uplinks.
            Shape {
                hosts,
                switches: 2 * k * half + half * half,
                edges: k * half,
                links: hosts + 2 * k * half * half,
                width: half * half,
            }
        } else {
            Shape { hosts, switches: k + half, edges: k, links: hosts + k * half, width: half }
        };
        check_setup_work("topology.k", self.k, &shape)?;
        check_positive("topology.host_rate_gbps", self.host_rate_gbps)?;
        check_positive("topology.fabric_rate_gbps", self.fabric_rate_gbps)?;
        for (key, v) in [
            ("topology.host_link_delay_ns", self.host_link_delay_ns),
            ("topology.fabric_link_delay_ns", self.fabric_link_delay_ns),
            ("topology.switch_latency_ns", self.switch_latency_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::value(key, v, "a number >= 0"));
            }
        }
        overrides::apply(&mut self.build_regular(), &self.link_overrides)
    }

    /// The tree with its link overrides (which [`FatTree::validate`] checked).
    pub fn build(&self) -> Topology {
        let mut t = self.build_regular();
        let _ = overrides::apply(&mut t, &self.link_overrides);
        t
    }

    fn build_regular(&self) -> Topology {
        let (k, hpt) = (self.k, self.hpt());
        let half = k / 2;
        let tors = if self.tiers == 3 { k * half } else { k };
        let n_hosts = tors * hpt;
        let gbps = |x: f64| (x * 1e9).round() as u64;
        let ns = |x: f64| (x * 1e3).round() as u64;
        let (hr, fr) = (gbps(self.host_rate_gbps), gbps(self.fabric_rate_gbps));
        let (hd, fd) = (ns(self.host_link_delay_ns), ns(self.fabric_link_delay_ns));
        let mut nodes = vec![NodeKind::Host; n_hosts as usize];
        let tor0 = n_hosts;
        nodes.extend((0..tors).map(|_| NodeKind::Switch(SwitchRole::Tor)));
        let mut links: Vec<Link> =
            (0..n_hosts).map(|h| Link { a: h, b: tor0 + h / hpt, rate_bps: hr, delay: hd }).collect();
        let fabric = |a, b| Link { a, b, rate_bps: fr, delay: fd };
        let mut groups = vec![
            NodeGroup { prefix: "host", first: 0, count: n_hosts },
            NodeGroup { prefix: "tor", first: tor0, count: tors },
        ];
        if self.tiers == 2 {
            let spine0 = tor0 + tors;
            groups.push(NodeGroup { prefix: "spine", first: spine0, count: half });
            nodes.extend((0..half).map(|_| NodeKind::Switch(SwitchRole::Fabric)));
            for t in 0..tors {
                links.extend((0..half).map(|s| fabric(tor0 + t, spine0 + s)));
            }
        } else {
            let agg0 = tor0 + tors;
            let core0 = agg0 + k * half;
            groups.push(NodeGroup { prefix: "agg", first: agg0, count: k * half });
            groups.push(NodeGroup { prefix: "core", first: core0, count: half * half });
            nodes.extend((0..k * half + half * half).map(|_| NodeKind::Switch(SwitchRole::Fabric)));
            for pod in 0..k {
                for e in 0..half {
                    links.extend((0..half).map(|a| fabric(tor0 + pod * half + e, agg0 + pod * half + a)));
                }
                for a in 0..half {
                    // Aggregation switch a of every pod reaches core group a.
                    links.extend((0..half).map(|c| fabric(agg0 + pod * half + a, core0 + a * half + c)));
                }
            }
        }
        let core_ratio = ((half as f64 * self.fabric_rate_gbps) / (hpt as f64 * self.host_rate_gbps)).min(1.0);
        Topology {
            n_hosts,
            nodes,
            links,
            switch_latency: ns(self.switch_latency_ns),
            rack_of: (0..n_hosts).map(|h| h / hpt).collect(),
            core_ratio,
            racks_per_pod: if self.tiers == 3 { half } else { 1 },
            groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Fabric;

    #[test]
    fn three_tier_k8_has_128_hosts_and_80_switches() {
        let t = FatTree::default().build();
        assert_eq!(t.n_hosts, 128);
        assert_eq!(t.nodes.len(), 128 + 32 + 32 + 16);
        assert_eq!(t.links.len(), 128 + 8 * 16 + 8 * 16);
        let f = Fabric::build(t, 1, u64::MAX, u64::MAX).unwrap();
        // Same edge: 2 hops; same pod: 4; across pods: 6, with (k/2)^2 = 16 core paths.
        assert_eq!(f.path(0, 1, false).1, 2);
        assert_eq!(f.path(0, 4, false).1, 4);
        assert_eq!(f.path(0, 127, false).1, 6);
        let edge0 = 128;
        assert_eq!(f.routes.candidates(edge0, 127).len(), 4);
        assert_eq!(f.routes.candidates(edge0, 1).len(), 1);
    }

    #[test]
    fn sixteen_ary_tree_has_1024_hosts() {
        let t = FatTree { k: 16, ..Default::default() }.build();
        assert_eq!(t.n_hosts, 1024);
        assert!(Fabric::build(t, 1, u64::MAX, u64::MAX).is_ok());
    }

    #[test]
    fn two_tiers_and_oversubscription() {
        let t = FatTree { tiers: 2, hosts_per_tor: Some(8), ..Default::default() }.build();
        assert_eq!(t.n_hosts, 64);
        assert!((t.core_ratio - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_radix_is_rejected() {
        let e = FatTree { k: 7, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.key, "topology.k");
        assert!(FatTree { tiers: 4, ..Default::default() }.validate().is_err());
        // k = 128 with 3 tiers: 524,288 hosts whose routing table alone would take 1.3 GB.
        let e = FatTree { k: 128, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.key, "topology.k");
        assert!(e.message.contains("2^32"), "{}", e.message);
        assert!(FatTree { k: 64, ..Default::default() }.validate().is_ok());
        assert!(FatTree { k: 128, tiers: 2, ..Default::default() }.validate().is_ok());
    }
}
