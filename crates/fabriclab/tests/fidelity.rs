//! Fidelity guard for performance work: fixed scenarios, one per protocol and
//! topology family, must give exactly the summaries recorded in
//! tests/golden/fidelity.json (every field but the wall clock and the event
//! count, which an optimisation may legitimately lower). An intended change of
//! the model bumps `fabriclab::MODEL`, re-records them with `FABRICLAB_BLESS=1
//! cargo test --release --test fidelity` and says why in its commit; the file
//! names the model it was recorded under, and each scenario's config identity
//! (`Config::identity`, what point records are keyed on): a changed default
//! changes the identities of the configs it touches, and their results may
//! then change without a new model version, as their records' keys do.

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

fn identity(text: &str, set: &[String]) -> Value {
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    Value::String(common::config(text, &set).identity().unwrap())
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

/// The golden file: the model version its summaries were recorded under, the
/// summaries, and the scenarios' config identities.
fn recorded(path: &std::path::Path) -> (String, Map<String, Value>, Map<String, Value>) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let map = |k: &str| v[k].as_object().cloned().unwrap_or_default();
    (v["model"].as_str().unwrap_or_default().to_string(), map("scenarios"), map("identities"))
}

#[test]
fn summaries_match_the_recorded_ones() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/fidelity.json");
    let got: Map<String, Value> =
        scenarios().into_iter().map(|(name, text, set)| (name, summary_without_clock(text, &set))).collect();
    let ids: Map<String, Value> =
        scenarios().into_iter().map(|(name, text, set)| (name, identity(text, &set))).collect();
    let (model, want, want_ids) = recorded(&path);
    if std::env::var_os("FABRICLAB_BLESS").is_some() {
        // Recorded points (a reproduction's points/) are reused under the
        // model and config identity that made them: a scenario whose results
        // changed under the same identity needs a new model version.
        for (name, g) in &got {
            let same_config = want_ids.get(name) == ids.get(name);
            assert!(
                want.get(name) == Some(g) || !same_config || model != fabriclab::MODEL,
                "{name}: the results changed but neither its config identity nor fabriclab::MODEL ({model}) \
                 did: bump MODEL (crates/fabriclab/src/lib.rs) before re-recording, so that points recorded \
                 by the old model are not reused"
            );
        }
        let v = serde_json::json!({ "model": fabriclab::MODEL, "scenarios": got, "identities": ids });
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
        return;
    }
    assert_eq!(
        model,
        fabriclab::MODEL,
        "fabriclab::MODEL changed: re-record with FABRICLAB_BLESS=1 cargo test --release --test fidelity"
    );
    assert_eq!(want.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>());
    assert_eq!(want_ids, ids, "a scenario's config identity changed (a default did): re-record");
    for (name, w) in &want {
        let g = &got[name];
        for (k, wv) in w.as_object().unwrap() {
            assert_eq!(Some(wv), g.get(k), "{name}: field {k} changed (an intended change bumps fabriclab::MODEL)");
        }
        assert_eq!(w, g, "{name}: summary changed");
    }
}
