//! Fidelity guard for performance work: fixed scenarios, one per protocol and
//! topology family, must give exactly the summaries recorded in
//! tests/golden/fidelity.json (every field but the wall clock and the event
//! count, which an optimisation may legitimately lower). An intended change of
//! the model re-records them with `FABRICLAB_BLESS=1 cargo test --release
//! --test fidelity` and says why in its commit.

mod common;

use serde_json::{Map, Value};

const LEAF_SPINE: &str = include_str!("../../../experiments/fidelity/leaf-spine-wkc.toml");

const FAT_TREE_PERMUTATION: &str = include_str!("../../../experiments/fidelity/fat-tree-permutation.toml");

const INCAST: &str = include_str!("../../../experiments/fidelity/incast.toml");

fn scenarios() -> Vec<(String, &'static str, Vec<String>)> {
    let mut v = Vec::new();
    for p in ["sird", "dctcp", "homa", "dcpim", "expresspass", "swift"] {
        v.push((format!("leaf_spine-wkc-{p}"), LEAF_SPINE, vec![format!("protocol.name={p}")]));
    }
    v.push(("fat_tree-permutation-dctcp-ecmp".into(), FAT_TREE_PERMUTATION, vec!["protocol.name=dctcp".into()]));
    v.push(("fat_tree-permutation-sird-spray".into(), FAT_TREE_PERMUTATION, vec!["protocol.name=sird".into()]));
    v.push(("fat_tree-incast-homa".into(), INCAST, vec!["protocol.name=homa".into()]));
    v.push(("fat_tree-incast-dctcp".into(), INCAST, vec!["protocol.name=dctcp".into()]));
    v
}

fn summary_without_clock(text: &str, set: &[String]) -> Value {
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    let out = common::simulate(text, &set);
    let mut v: Value = serde_json::from_str(&out.summary.to_json()).unwrap();
    let m = v.as_object_mut().unwrap();
    for k in ["wall_time_s", "events", "events_per_s"] {
        m.remove(k);
    }
    v
}

#[test]
fn summaries_match_the_recorded_ones() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/fidelity.json");
    let got: Map<String, Value> =
        scenarios().into_iter().map(|(name, text, set)| (name, summary_without_clock(text, &set))).collect();
    if std::env::var_os("FABRICLAB_BLESS").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(want.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>());
    for (name, w) in &want {
        let g = &got[name];
        for (k, wv) in w.as_object().unwrap() {
            assert_eq!(Some(wv), g.get(k), "{name}: field {k} changed");
        }
        assert_eq!(w, g, "{name}: summary changed");
    }
}
