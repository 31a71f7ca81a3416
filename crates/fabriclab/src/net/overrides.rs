//! Per-link overrides (`[[topology.link_overrides]]`): one link of a regular
//! fabric with another rate or delay, e.g. the degraded 400G -> 200G uplink of
//! the SMaRTT-REPS testbed (Bonato et al., §4.1.1, Fig. 7a/b).

use super::topology::Topology;
use fabriclab_engine::error::ConfigError;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    /// The two ends, by name (`["tor0", "agg1"]`, see `fabriclab validate` errors for the names).
    pub between: [String; 2],
    /// New rate of both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// New propagation delay of both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ns: Option<f64>,
}

/// Applies `overrides` to `topo`; errors name `topology.link_overrides[i]....`.
pub fn apply(topo: &mut Topology, overrides: &[LinkOverride]) -> Result<(), ConfigError> {
    for (i, o) in overrides.iter().enumerate() {
        let key = |k: &str| format!("topology.link_overrides[{i}].{k}");
        let link = topo.link_by_names(&o.between).map_err(|m| ConfigError::new(&key("between"), m))?;
        if o.rate_gbps.is_none() && o.delay_ns.is_none() {
            return Err(ConfigError::new(&key("rate_gbps"), "is missing: set rate_gbps, delay_ns or both".into()));
        }
        if let Some(r) = o.rate_gbps {
            fabriclab_engine::error::check_positive(&key("rate_gbps"), r)?;
            topo.links[link].rate_bps = (r * 1e9).round() as u64;
        }
        if let Some(d) = o.delay_ns {
            if !(d.is_finite() && d >= 0.0) {
                return Err(ConfigError::value(&key("delay_ns"), d, "a number >= 0"));
            }
            topo.links[link].delay = (d * 1e3).round() as u64;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::fat_tree::FatTree;

    fn ovr(a: &str, b: &str, rate: Option<f64>) -> LinkOverride {
        LinkOverride { between: [a.into(), b.into()], rate_gbps: rate, delay_ns: None }
    }

    #[test]
    fn one_uplink_is_degraded_in_both_directions() {
        let ft =
            FatTree { tiers: 2, k: 4, link_overrides: vec![ovr("spine1", "tor0", Some(200.0))], ..Default::default() };
        ft.validate().unwrap();
        let t = ft.build();
        let slow: Vec<_> = t.links.iter().filter(|l| l.rate_bps == 200_000_000_000).collect();
        assert_eq!(slow.len(), 1);
        assert_eq!((slow[0].a, slow[0].b), (t.node_by_name("tor0").unwrap(), t.node_by_name("spine1").unwrap()));
    }

    #[test]
    fn bad_overrides_name_their_key() {
        let base = FatTree { k: 4, ..Default::default() };
        let cases = [
            (ovr("tor0", "tor1", Some(1.0)), "topology.link_overrides[0].between"),
            (ovr("tor0", "agg9", Some(1.0)), "topology.link_overrides[0].between"),
            (ovr("tor0", "agg0", Some(0.0)), "topology.link_overrides[0].rate_gbps"),
            (ovr("tor0", "agg0", None), "topology.link_overrides[0].rate_gbps"),
        ];
        for (o, key) in cases {
            let e = FatTree { link_overrides: vec![o], ..base.clone() }.validate().unwrap_err();
            assert_eq!(e.key, key, "{}", e.message);
        }
    }
}
