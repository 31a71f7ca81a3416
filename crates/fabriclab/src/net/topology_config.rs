//! `[topology]`: the supported fabrics' parameters, their checks, and how each
//! builds its [`Topology`] (the 3-tier fat tree's own code is in `fat_tree`).

use super::fat_tree::FatTree;
use super::names::NodeGroup;
use super::overrides::LinkOverride;
use super::topology::{check_setup_work, within_host_limit, Link, NodeKind, Shape, SwitchRole, Topology};
use fabriclab_engine::error::{check_positive, ConfigError, Validate};
use fabriclab_engine::Time;
use serde::{Deserialize, Serialize};

/// `[topology]`: one of the supported fabrics, chosen by `kind`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    LeafSpine(LeafSpine),
    FatTree(FatTree),
    Dumbbell(Dumbbell),
    Star(Star),
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::LeafSpine(LeafSpine::default())
    }
}

/// Two-tier leaf-spine; every ToR connects to every spine with one link.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LeafSpine {
    pub tors: u32,
    pub hosts_per_tor: u32,
    pub spines: u32,
    pub host_rate_gbps: f64,
    /// ToR-spine link rate; below hosts_per_tor * host_rate / spines the core is oversubscribed.
    pub fabric_rate_gbps: f64,
    pub host_link_delay_ns: f64,
    pub fabric_link_delay_ns: f64,
    pub switch_latency_ns: f64,
    /// Links with another rate or delay (`[[topology.link_overrides]]`).
    pub link_overrides: Vec<LinkOverride>,
}

impl Default for LeafSpine {
    fn default() -> Self {
        LeafSpine {
            tors: 9,
            hosts_per_tor: 16,
            spines: 4,
            host_rate_gbps: 100.0,
            fabric_rate_gbps: 400.0,
            host_link_delay_ns: 1185.12,
            fabric_link_delay_ns: 233.78,
            switch_latency_ns: 250.0,
            link_overrides: Vec::new(),
        }
    }
}

/// Hosts on two switches joined by one bottleneck link.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Dumbbell {
    pub hosts_left: u32,
    pub hosts_right: u32,
    pub host_rate_gbps: f64,
    pub bottleneck_rate_gbps: f64,
    pub host_link_delay_ns: f64,
    pub bottleneck_delay_ns: f64,
    pub switch_latency_ns: f64,
}

impl Default for Dumbbell {
    fn default() -> Self {
        Dumbbell {
            hosts_left: 1,
            hosts_right: 1,
            host_rate_gbps: 100.0,
            bottleneck_rate_gbps: 100.0,
            host_link_delay_ns: 1185.12,
            bottleneck_delay_ns: 233.78,
            switch_latency_ns: 250.0,
        }
    }
}

/// Hosts on a single switch (one rack).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Star {
    pub hosts: u32,
    pub host_rate_gbps: f64,
    pub host_link_delay_ns: f64,
    pub switch_latency_ns: f64,
}

impl Default for Star {
    fn default() -> Self {
        Star { hosts: 16, host_rate_gbps: 100.0, host_link_delay_ns: 1185.12, switch_latency_ns: 250.0 }
    }
}

fn non_negative(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::value(key, v, "a number >= 0"))
    }
}

fn gbps(x: f64) -> u64 {
    (x * 1e9).round() as u64
}

fn ns(x: f64) -> Time {
    (x * 1e3).round() as Time
}

fn at_least(key: &str, v: u32, min: u32) -> Result<(), ConfigError> {
    if v >= min {
        Ok(())
    } else {
        Err(ConfigError::value(key, v, &format!("an integer >= {min}")))
    }
}

impl Validate for TopologyConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        match self {
            TopologyConfig::FatTree(t) => t.validate(),
            TopologyConfig::LeafSpine(t) => {
                at_least("topology.tors", t.tors, 1)?;
                at_least("topology.hosts_per_tor", t.hosts_per_tor, 1)?;
                at_least("topology.spines", t.spines, 1)?;
                let hosts = t.tors as u64 * t.hosts_per_tor as u64;
                if hosts < 2 {
                    return Err(ConfigError::value(
                        "topology.hosts_per_tor",
                        t.hosts_per_tor,
                        "at least 2 hosts in total (tors * hosts_per_tor >= 2)",
                    ));
                }
                within_host_limit("topology.tors", t.tors, hosts)?;
                if t.spines > 4096 {
                    return Err(ConfigError::value("topology.spines", t.spines, "an integer in [1, 4096]"));
                }
                let (tors, spines) = (t.tors as u64, t.spines as u64);
                let shape =
                    Shape { hosts, switches: tors + spines, edges: tors, links: hosts + tors * spines, width: spines };
                check_setup_work("topology.tors", t.tors, &shape)?;
                check_positive("topology.host_rate_gbps", t.host_rate_gbps)?;
                check_positive("topology.fabric_rate_gbps", t.fabric_rate_gbps)?;
                non_negative("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                non_negative("topology.fabric_link_delay_ns", t.fabric_link_delay_ns)?;
                non_negative("topology.switch_latency_ns", t.switch_latency_ns)?;
                super::overrides::apply(&mut leaf_spine(t), &t.link_overrides)
            }
            TopologyConfig::Dumbbell(t) => {
                at_least("topology.hosts_left", t.hosts_left, 1)?;
                at_least("topology.hosts_right", t.hosts_right, 1)?;
                within_host_limit("topology.hosts_right", t.hosts_right, t.hosts_left as u64 + t.hosts_right as u64)?;
                check_positive("topology.host_rate_gbps", t.host_rate_gbps)?;
                check_positive("topology.bottleneck_rate_gbps", t.bottleneck_rate_gbps)?;
                non_negative("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                non_negative("topology.bottleneck_delay_ns", t.bottleneck_delay_ns)?;
                non_negative("topology.switch_latency_ns", t.switch_latency_ns)
            }
            TopologyConfig::Star(t) => {
                at_least("topology.hosts", t.hosts, 2)?;
                within_host_limit("topology.hosts", t.hosts, t.hosts as u64)?;
                check_positive("topology.host_rate_gbps", t.host_rate_gbps)?;
                non_negative("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                non_negative("topology.switch_latency_ns", t.switch_latency_ns)
            }
        }
    }
}

impl TopologyConfig {
    pub fn build(&self) -> Topology {
        match self {
            TopologyConfig::LeafSpine(t) => {
                let mut topo = leaf_spine(t);
                let _ = super::overrides::apply(&mut topo, &t.link_overrides); // checked by validate
                topo
            }
            TopologyConfig::FatTree(t) => t.build(),
            TopologyConfig::Dumbbell(t) => dumbbell(t),
            TopologyConfig::Star(t) => star(t),
        }
    }

    pub fn host_rate_gbps(&self) -> f64 {
        match self {
            TopologyConfig::LeafSpine(t) => t.host_rate_gbps,
            TopologyConfig::FatTree(t) => t.host_rate_gbps,
            TopologyConfig::Dumbbell(t) => t.host_rate_gbps,
            TopologyConfig::Star(t) => t.host_rate_gbps,
        }
    }
}

fn leaf_spine(t: &LeafSpine) -> Topology {
    let n_hosts = t.tors * t.hosts_per_tor;
    let mut nodes = vec![NodeKind::Host; n_hosts as usize];
    let tor0 = n_hosts;
    nodes.extend((0..t.tors).map(|_| NodeKind::Switch(SwitchRole::Tor)));
    let spine0 = tor0 + t.tors;
    nodes.extend((0..t.spines).map(|_| NodeKind::Switch(SwitchRole::Fabric)));
    let mut links = Vec::new();
    let (hr, fr) = (gbps(t.host_rate_gbps), gbps(t.fabric_rate_gbps));
    for h in 0..n_hosts {
        links.push(Link { a: h, b: tor0 + h / t.hosts_per_tor, rate_bps: hr, delay: ns(t.host_link_delay_ns) });
    }
    for tor in 0..t.tors {
        for s in 0..t.spines {
            links.push(Link { a: tor0 + tor, b: spine0 + s, rate_bps: fr, delay: ns(t.fabric_link_delay_ns) });
        }
    }
    let core_ratio = if t.tors > 1 {
        ((t.spines as f64 * t.fabric_rate_gbps) / (t.hosts_per_tor as f64 * t.host_rate_gbps)).min(1.0)
    } else {
        1.0
    };
    Topology {
        n_hosts,
        nodes,
        links,
        switch_latency: ns(t.switch_latency_ns),
        rack_of: (0..n_hosts).map(|h| h / t.hosts_per_tor).collect(),
        core_ratio,
        racks_per_pod: 1,
        groups: vec![
            NodeGroup { prefix: "host", first: 0, count: n_hosts },
            NodeGroup { prefix: "tor", first: tor0, count: t.tors },
            NodeGroup { prefix: "spine", first: spine0, count: t.spines },
        ],
    }
}

fn dumbbell(t: &Dumbbell) -> Topology {
    let n_hosts = t.hosts_left + t.hosts_right;
    let (left, right) = (n_hosts, n_hosts + 1);
    let mut nodes = vec![NodeKind::Host; n_hosts as usize];
    nodes.push(NodeKind::Switch(SwitchRole::Tor));
    nodes.push(NodeKind::Switch(SwitchRole::Tor));
    let hr = gbps(t.host_rate_gbps);
    let mut links: Vec<Link> = (0..n_hosts)
        .map(|h| Link {
            a: h,
            b: if h < t.hosts_left { left } else { right },
            rate_bps: hr,
            delay: ns(t.host_link_delay_ns),
        })
        .collect();
    links.push(Link { a: left, b: right, rate_bps: gbps(t.bottleneck_rate_gbps), delay: ns(t.bottleneck_delay_ns) });
    let side_cap = |n: u32| n as f64 * t.host_rate_gbps;
    Topology {
        n_hosts,
        nodes,
        links,
        switch_latency: ns(t.switch_latency_ns),
        rack_of: (0..n_hosts).map(|h| u32::from(h >= t.hosts_left)).collect(),
        core_ratio: (t.bottleneck_rate_gbps / side_cap(t.hosts_left.max(t.hosts_right))).min(1.0),
        racks_per_pod: 1,
        groups: vec![
            NodeGroup { prefix: "host", first: 0, count: n_hosts },
            NodeGroup { prefix: "switch", first: left, count: 2 },
        ],
    }
}

fn star(t: &Star) -> Topology {
    let mut nodes = vec![NodeKind::Host; t.hosts as usize];
    nodes.push(NodeKind::Switch(SwitchRole::Tor));
    let links = (0..t.hosts)
        .map(|h| Link { a: h, b: t.hosts, rate_bps: gbps(t.host_rate_gbps), delay: ns(t.host_link_delay_ns) })
        .collect();
    Topology {
        n_hosts: t.hosts,
        nodes,
        links,
        switch_latency: ns(t.switch_latency_ns),
        rack_of: vec![0; t.hosts as usize],
        core_ratio: 1.0,
        racks_per_pod: 1,
        groups: vec![
            NodeGroup { prefix: "host", first: 0, count: t.hosts },
            NodeGroup { prefix: "switch", first: t.hosts, count: 1 },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_refuses_more_than_2_20_hosts_naming_the_key() {
        let cases = [
            (TopologyConfig::Star(Star { hosts: (1 << 20) + 1, ..Star::default() }), "topology.hosts"),
            (
                TopologyConfig::Dumbbell(Dumbbell { hosts_left: 1 << 20, hosts_right: 1, ..Dumbbell::default() }),
                "topology.hosts_right",
            ),
            (
                TopologyConfig::LeafSpine(LeafSpine { tors: 1 << 11, hosts_per_tor: 1 << 10, ..LeafSpine::default() }),
                "topology.tors",
            ),
            (TopologyConfig::LeafSpine(LeafSpine { spines: 1 << 20, ..LeafSpine::default() }), "topology.spines"),
            (
                TopologyConfig::LeafSpine(LeafSpine { tors: 65536, hosts_per_tor: 65536, ..LeafSpine::default() }),
                "topology.tors",
            ),
            (
                TopologyConfig::LeafSpine(LeafSpine { tors: 16384, hosts_per_tor: 64, ..LeafSpine::default() }),
                "topology.tors",
            ),
        ];
        for (t, key) in cases {
            let e = t.validate().expect_err(key).to_string();
            assert!(e.contains(key), "{e}");
        }
        assert!(TopologyConfig::Star(Star { hosts: 1 << 20, ..Star::default() }).validate().is_ok());
    }

    #[test]
    fn default_leaf_spine_is_the_sird_fabric() {
        let t = TopologyConfig::default().build();
        assert_eq!(t.n_hosts, 144);
        assert_eq!(t.nodes.len(), 144 + 9 + 4);
        assert_eq!(t.links.len(), 144 + 9 * 4);
        assert_eq!(t.n_racks(), 9);
        assert_eq!(t.core_ratio, 1.0);
        assert_eq!(t.host_rate_bps(0), 100_000_000_000);
    }

    #[test]
    fn oversubscribed_core_ratio() {
        let t = TopologyConfig::LeafSpine(LeafSpine { fabric_rate_gbps: 200.0, ..Default::default() }).build();
        assert!((t.core_ratio - 0.5).abs() < 1e-12);
    }
}
