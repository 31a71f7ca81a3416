//! Names users write for nodes and links in TOML (`"tor3"`, `["tor0", "agg1"]`).
//!
//! Each topology lists its nodes as named groups of consecutive ids (hosts,
//! ToRs, aggregation, core/spine switches); a name is the group's prefix and an
//! index within the group. Link overrides and failure events address links by
//! the names of their two ends, and their errors list the names allowed.

use super::topology::Topology;

/// Nodes `first..first + count` are called `{prefix}0..{prefix}{count-1}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGroup {
    pub prefix: &'static str,
    pub first: u32,
    pub count: u32,
}

impl Topology {
    /// The node called `name`, or a message saying which names exist.
    pub fn node_by_name(&self, name: &str) -> Result<u32, String> {
        let split = name.find(|c: char| c.is_ascii_digit()).unwrap_or(name.len());
        let (prefix, index) = name.split_at(split);
        let found = self
            .groups
            .iter()
            .find(|g| g.prefix == prefix)
            .and_then(|g| index.parse::<u32>().ok().filter(|&i| i < g.count).map(|i| g.first + i));
        found.ok_or_else(|| format!("got \"{name}\", expected a node of this topology: {}", self.name_ranges()))
    }

    /// `host0..host15, tor0..tor3, ...`: the names [`Topology::node_by_name`] accepts.
    pub fn name_ranges(&self) -> String {
        let r: Vec<String> = self.groups.iter().map(|g| format!("{0}0..{0}{1}", g.prefix, g.count - 1)).collect();
        r.join(", ")
    }

    /// The name of node `id`.
    pub fn node_name(&self, id: u32) -> String {
        self.groups
            .iter()
            .find(|g| (g.first..g.first + g.count).contains(&id))
            .map_or_else(|| format!("node{id}"), |g| format!("{}{}", g.prefix, id - g.first))
    }

    /// `output.queue_ports[i]`: the (node, peer) of the switch port named
    /// by its two ends, `["tor0", "host3"]`, or an error naming the key.
    pub fn queue_port(
        &self,
        ports: &[[String; 2]],
        i: usize,
    ) -> Result<(u32, u32), fabriclab_engine::error::ConfigError> {
        let key = format!("output.queue_ports[{i}]");
        let ends = &ports[i];
        let err = |m: String| fabriclab_engine::error::ConfigError::new(&key, m);
        self.link_by_names(ends).map_err(err)?;
        let (node, peer) = (self.node_by_name(&ends[0]).map_err(err)?, self.node_by_name(&ends[1]).map_err(err)?);
        if node < self.n_hosts {
            return Err(err(format!(
                "got [\"{}\", \"{}\"], expected a switch port: [switch, the node it sends to] (host NICs are not \
                 recorded; write [\"{}\", \"{}\"] for the switch port towards the host)",
                ends[0], ends[1], ends[1], ends[0]
            )));
        }
        Ok((node, peer))
    }

    /// Index in `links` of the link joining the nodes named `ends`, or a
    /// message naming what is wrong (`key` is the config key, for the message).
    pub fn link_by_names(&self, ends: &[String; 2]) -> Result<usize, String> {
        let a = self.node_by_name(&ends[0])?;
        let b = self.node_by_name(&ends[1])?;
        self.links
            .iter()
            .position(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
            .ok_or_else(|| format!("no link joins {} and {}", ends[0], ends[1]))
    }
}

#[cfg(test)]
mod tests {
    use crate::net::fat_tree::FatTree;

    #[test]
    fn names_round_trip_and_errors_list_the_ranges() {
        let t = FatTree { k: 4, ..Default::default() }.build();
        assert_eq!(t.name_ranges(), "host0..host15, tor0..tor7, agg0..agg7, core0..core3");
        for id in 0..t.nodes.len() as u32 {
            assert_eq!(t.node_by_name(&t.node_name(id)), Ok(id));
        }
        assert_eq!(t.node_by_name("tor0"), Ok(16));
        let e = t.node_by_name("tor8").unwrap_err();
        assert!(e.contains("\"tor8\"") && e.contains("tor0..tor7"), "{e}");
        assert!(t.node_by_name("spine0").is_err());
        assert!(t.node_by_name("tor").is_err());
        assert!(t.link_by_names(&["tor0".into(), "agg1".into()]).is_ok());
        let e = t.link_by_names(&["tor0".into(), "core0".into()]).unwrap_err();
        assert_eq!(e, "no link joins tor0 and core0");
    }
}
