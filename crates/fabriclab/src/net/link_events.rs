//! Failure injection (`[[network.events]]`): at a given time a switch-to-switch
//! link goes down, comes back up, or changes rate. Packets sent onto a dead
//! link are lost (`link_down_drops`). Routing does not react unless the event
//! asks for it with `reroute_after_us`: that long after the event, every
//! switch recomputes its shortest paths without the dead links (the
//! "100s of ms" of routing recovery in SMaRTT-REPS §4.1.1 is this delay).

use super::topology::{NodeKind, Topology};
use super::Fabric;
use fabriclab_engine::error::ConfigError;
use fabriclab_engine::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkAction {
    Down,
    Up,
    /// Both directions change to `rate_gbps`.
    Rate,
}

/// One `[[network.events]]` entry.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkEvent {
    pub at_us: f64,
    /// The two ends, by name (`["tor0", "agg1"]`).
    pub link: [String; 2],
    pub action: LinkAction,
    /// The new rate; only with `action = "rate"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// Recompute routes without the dead links this long after the event;
    /// absent = routes never change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reroute_after_us: Option<f64>,
}

/// Checks `events` against the topology; errors name `network.events[i]....`.
pub fn check(events: &[LinkEvent], topo: &Topology) -> Result<(), ConfigError> {
    for (i, e) in events.iter().enumerate() {
        let key = |k: &str| format!("network.events[{i}].{k}");
        let time_ok = |t: f64| t.is_finite() && (0.0..1.8e13).contains(&t);
        if !time_ok(e.at_us) {
            return Err(ConfigError::value(&key("at_us"), e.at_us, "a time in microseconds, >= 0"));
        }
        if let Some(d) = e.reroute_after_us.filter(|&d| !time_ok(d)) {
            return Err(ConfigError::value(&key("reroute_after_us"), d, "a delay in microseconds, >= 0"));
        }
        let link = topo.link_by_names(&e.link).map_err(|m| ConfigError::new(&key("link"), m))?;
        let l = topo.links[link];
        let is_host = |n: u32| topo.nodes[n as usize] == NodeKind::Host;
        if e.action != LinkAction::Rate && (is_host(l.a) || is_host(l.b)) {
            return Err(ConfigError::new(
                &key("link"),
                format!("{} joins a host to its switch; only links between switches can go down", e.link.join("-")),
            ));
        }
        match (e.action, e.rate_gbps) {
            (LinkAction::Rate, Some(r)) => fabriclab_engine::error::check_positive(&key("rate_gbps"), r)?,
            (LinkAction::Rate, None) => {
                return Err(ConfigError::new(&key("rate_gbps"), "is required with action = \"rate\"".into()))
            }
            (_, Some(r)) => {
                return Err(ConfigError::value(&key("rate_gbps"), r, "no value unless action = \"rate\""));
            }
            (_, None) => {}
        }
    }
    Ok(())
}

/// An event resolved to the two ports of its link (one per direction).
#[derive(Clone, Copy, Debug)]
pub struct Resolved {
    pub at: Time,
    pub ports: [u32; 2],
    pub action: LinkAction,
    pub rate_bps: u64,
    pub reroute_after: Option<Time>,
}

/// The run-time state of failure injection.
pub struct LinkState {
    pub events: Vec<Resolved>,
    /// Per port: its link is down.
    dead: Vec<bool>,
    /// Packets lost on dead links.
    pub drops: u64,
}

impl LinkState {
    /// Resolves checked `events` against `fabric` (None when there are none).
    pub fn build(events: &[LinkEvent], fabric: &Fabric) -> Option<LinkState> {
        if events.is_empty() {
            return None;
        }
        let us = |t: f64| (t * 1e6).round() as Time;
        let resolved = events
            .iter()
            .filter_map(|e| {
                let (a, b) = (fabric.topo.node_by_name(&e.link[0]).ok()?, fabric.topo.node_by_name(&e.link[1]).ok()?);
                let port = |x, y| fabric.ports.iter().position(|p| p.node == x && p.peer == y).map(|i| i as u32);
                Some(Resolved {
                    at: us(e.at_us),
                    ports: [port(a, b)?, port(b, a)?],
                    action: e.action,
                    rate_bps: e.rate_gbps.map_or(0, |r| (r * 1e9).round() as u64),
                    reroute_after: e.reroute_after_us.map(us),
                })
            })
            .collect();
        Some(LinkState { events: resolved, dead: vec![false; fabric.ports.len()], drops: 0 })
    }

    #[inline]
    pub fn is_dead(&self, port: u32) -> bool {
        self.dead[port as usize]
    }

    /// Applies event `i` to the fabric's ports (routes are left alone).
    pub fn apply(&mut self, i: usize, fabric: &mut Fabric) {
        let e = self.events[i];
        for p in e.ports {
            match e.action {
                LinkAction::Down => self.dead[p as usize] = true,
                LinkAction::Up => self.dead[p as usize] = false,
                LinkAction::Rate => fabric.ports[p as usize].set_rate_bps(e.rate_bps),
            }
        }
    }

    /// Recomputes every switch's routes over the live links.
    pub fn reroute(&self, fabric: &mut Fabric) {
        let mut node_ports: Vec<Vec<(u32, u32)>> = vec![Vec::new(); fabric.topo.nodes.len()];
        for (i, p) in fabric.ports.iter().enumerate() {
            if !self.dead[i] {
                node_ports[p.node as usize].push((i as u32, p.peer));
            }
        }
        fabric.routes = fabric.routes.rebuilt(&fabric.topo, &node_ports);
    }
}
