//! The SMaRTT-REPS fabric (experiments/smartt/fat-tree-800g.toml): its base
//! RTT per hop count, and per-link overrides written in TOML.

mod common;

use fabriclab::config::Config;
use fabriclab::sim::base_rtts;
use std::path::Path;

fn preset(set: &[&str]) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/smartt/fat-tree-800g.toml");
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Config::load(&path, &set).unwrap_or_else(|e| panic!("{e}"))
}

/// Exact arithmetic (docs/network.md): a 4,134 B frame takes 41.34 ns at
/// 800 Gbps, an 84 B control frame 0.84 ns; every link adds 600 ns and every
/// switch 400 ns. Six links each way (across pods): 11.453080 us.
#[test]
fn base_rtt_per_hop_count_is_the_documented_arithmetic() {
    let cfg = preset(&[]);
    assert_eq!(cfg.topology.build().n_hosts, 1024);
    let rtt = |links: u64| {
        let switches = links - 1;
        let out = links * (41_340 + 600_000) + switches * 400_000;
        let back = links * (840 + 600_000) + switches * 400_000;
        out + back
    };
    let got = base_rtts(&cfg).unwrap();
    assert_eq!(got, vec![(2, rtt(2)), (4, rtt(4)), (6, rtt(6))]);
    assert_eq!(rtt(6), 11_453_080);
}

#[test]
fn a_degraded_uplink_in_toml_slows_only_its_link() {
    let text = r#"
[topology]
kind = "leaf_spine"
tors = 2
hosts_per_tor = 8
spines = 2
host_rate_gbps = 100.0
fabric_rate_gbps = 400.0
[[topology.link_overrides]]
between = ["tor0", "spine1"]
rate_gbps = 200.0
"#;
    let cfg = common::config(text, &[]);
    let topo = cfg.topology.build();
    let rates: Vec<u64> = topo.links[16..].iter().map(|l| l.rate_bps / 1_000_000_000).collect();
    assert_eq!(rates, [400, 200, 400, 400]);
    // The resolved config shows the override and loads again.
    assert_eq!(common::config(&cfg.to_toml(), &[]), cfg);
}

#[test]
fn override_errors_name_the_key_and_the_names_allowed() {
    let text = "[topology]\nkind = \"fat_tree\"\nk = 4\n[[topology.link_overrides]]\nbetween = [\"tor0\", \"spine0\"]\nrate_gbps = 1.0\n";
    let e = Config::from_str_with(text, &[], Path::new(".")).unwrap_err();
    assert_eq!(e.key, "topology.link_overrides[0].between");
    assert!(e.message.contains("\"spine0\"") && e.message.contains("agg0..agg7"), "{}", e.message);
    let text = text.replace("spine0", "agg0").replace("rate_gbps = 1.0", "rate_gbps = -1.0");
    let e = Config::from_str_with(&text, &[], Path::new(".")).unwrap_err();
    assert_eq!(e.key, "topology.link_overrides[0].rate_gbps");
}

#[test]
fn the_32_mib_scale_experiment_is_a_cross_pod_permutation_of_8_million_packets() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/smartt/permutation-32mib.toml");
    let cfg = Config::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let fabriclab::workload::WorkloadConfig::Permutation(p) = &cfg.workload else { panic!("a permutation") };
    assert!(p.cross_pod);
    let packets = p.bytes.div_ceil(fabriclab::net::wire::mss(cfg.network.mtu) as u64) * 1024;
    assert_eq!(packets, 8_471_552);
}
