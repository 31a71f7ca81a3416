use super::*;

fn spec(text: &str) -> SweepSpec {
    SweepSpec::parse(text).unwrap()
}

fn swept(p: &Point) -> Vec<String> {
    p.swept.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

#[test]
fn grid_is_a_cartesian_product_in_file_order_last_axis_fastest() {
    let s = spec(
        "base = \"x.toml\"\n[set]\nrun.duration_ms = 2.0\n[grid]\nworkload.load = [0.25, 0.5]\n\
         \"protocol.name\" = [\"sird\", \"homa\", \"dctcp\"]\n",
    );
    let pts = expand(&s).unwrap();
    assert_eq!(pts.len(), 6);
    assert_eq!(swept(&pts[0]), ["workload.load=0.25", "protocol.name=\"sird\""]);
    assert_eq!(swept(&pts[1]), ["workload.load=0.25", "protocol.name=\"homa\""]);
    assert_eq!(swept(&pts[5]), ["workload.load=0.5", "protocol.name=\"dctcp\""]);
    assert_eq!(pts[4].overrides, ["run.duration_ms=2.0", "workload.load=0.5", "protocol.name=\"homa\""]);
    assert!(pts.iter().enumerate().all(|(i, p)| p.index == i && p.base.ends_with("x.toml")));
    let mut ids: Vec<&str> = pts.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 6, "ids must differ between points");
}

#[test]
fn nested_keys_keep_their_order() {
    let s = spec("base = \"x.toml\"\n[grid.protocol.sird]\nsthr_bdp = [0.5, inf]\nb_bdp = [1.0, 2.0]\n");
    let pts = expand(&s).unwrap();
    assert_eq!(swept(&pts[1]), ["protocol.sird.sthr_bdp=0.5", "protocol.sird.b_bdp=2.0"]);
    assert_eq!(swept(&pts[2]), ["protocol.sird.sthr_bdp=inf", "protocol.sird.b_bdp=1.0"]);
}

#[test]
fn zip_axes_vary_together_and_seeds_are_innermost() {
    let s = spec(
        "base = [\"a.toml\", \"b.toml\"]\nseeds = [1, 2]\n[grid]\nworkload.load = [0.5]\n\
         [[zip]]\nprotocol.name = [\"homa\", \"sird\"]\n\"protocol.homa.overcommitment\" = [1, 2]\n",
    );
    let pts = expand(&s).unwrap();
    assert_eq!(pts.len(), 2 * 2 * 2);
    assert_eq!(
        swept(&pts[3]),
        [
            "base=\"a.toml\"",
            "workload.load=0.5",
            "protocol.name=\"sird\"",
            "protocol.homa.overcommitment=2",
            "run.seed=2"
        ]
    );
    assert!(pts[4].base.ends_with("b.toml") && !pts[4].overrides.iter().any(|o| o.starts_with("base")));
    assert_ne!(pts[0].id, pts[4].id, "the base path is part of the id");
}

#[test]
fn ids_depend_on_values_not_on_axis_order() {
    let a = expand(&spec("base = \"x.toml\"\n[grid]\nworkload.load = [0.5]\nprotocol.name = [\"sird\"]\n")).unwrap();
    let b = expand(&spec("base = \"x.toml\"\n[grid]\nprotocol.name = [\"sird\"]\nworkload.load = [0.5]\n")).unwrap();
    assert_eq!(a[0].id, b[0].id);
    assert_eq!(a[0].id, point_id("x.toml", &["workload.load=0.5".into(), "protocol.name=\"sird\"".into()]));
    assert_eq!(a[0].id.len(), 16);
}

#[test]
fn errors_name_the_offending_keys() {
    let err = |t: &str| SweepSpec::parse(t).and_then(|s| expand(&s)).unwrap_err().to_string();
    let e = err("base = \"x.toml\"\n[[zip]]\na.b = [1, 2]\nc.d = [1, 2, 3]\n");
    assert!(e.contains("zip[0]") && e.contains("a.b (2)") && e.contains("c.d (3)"), "{e}");
    let e = err("base = \"x.toml\"\n[grid]\nworkload.load = 0.5\n");
    assert!(e.contains("grid.workload.load") && e.contains("list"), "{e}");
    let e = err("base = \"x.toml\"\n[grid]\nworkload.load = []\n");
    assert!(e.contains("grid.workload.load"), "{e}");
    let e = err("base = \"x.toml\"\n[set]\nworkload.load = 0.3\n[grid]\nworkload.load = [0.5]\n");
    assert!(e.contains("workload.load") && e.contains("more than once"), "{e}");
    let e = err("base = \"x.toml\"\ngird = 1\n");
    assert!(e.contains("gird"), "{e}");
    let e = err("[grid]\nworkload.load = [0.5]\n");
    assert!(e.contains("base"), "{e}");
    let e = err("base = \"x.toml\"\nseeds = [\"one\"]\n");
    assert!(e.contains("seeds"), "{e}");
}

#[test]
fn quick_overlay_replaces_axes_and_merges_overrides() {
    let s = spec(
        "base = \"x.toml\"\nseeds = [1, 2, 3]\n[set]\nrun.duration_ms = 20.0\noutput.messages = false\n\
         [grid]\nworkload.load = [0.25, 0.5, 0.75]\nprotocol.name = [\"sird\", \"homa\"]\n\
         [quick]\nseeds = [1]\n[quick.set]\nrun.duration_ms = 1.0\n[quick.grid]\nworkload.load = [0.5]\n",
    )
    .quick();
    let pts = expand(&s).unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0].overrides[..2], ["run.duration_ms=1.0".to_string(), "output.messages=false".into()]);
    assert_eq!(s.seeds, [1]);
}

#[test]
fn flattening_and_csv() {
    let v: serde_json::Value =
        serde_json::from_str(r#"{"protocol":"sird","stable":true,"slowdown":{"A":{"p99":1.5,"count":3}},"x":null}"#)
            .unwrap();
    let f = flatten_json(&v);
    let names: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["protocol", "slowdown_A_count", "slowdown_A_p99", "stable", "x"]);
    let t = Table::from_records(&[
        f,
        vec![("protocol".into(), Cell::Str("a,\"b\"".into())), ("y".into(), Cell::Float(f64::INFINITY))],
    ]);
    assert_eq!(
        t.to_csv(),
        "protocol,slowdown_A_count,slowdown_A_p99,stable,x,y\nsird,3,1.5,true,,\n\"a,\"\"b\"\"\",,,,,inf\n"
    );
    assert_eq!(t.get(0, "slowdown_A_p99").as_f64(), Some(1.5));
    assert_eq!(t.get(1, "nope"), &Cell::Null);
}

#[test]
fn a_grid_beyond_the_bound_is_refused_before_its_points_exist() {
    // 10^7 points: seven axes of ten values (held, they took 12.6 GB).
    let axis = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    let keys: String = (0..7).map(|i| format!("a.k{i} = {axis}\n")).collect();
    let e = expand(&spec(&format!("base = \"x.toml\"\n[grid]\n{keys}"))).unwrap_err();
    assert_eq!(e.key, "grid");
    assert!(e.message.contains("1.000e7 points") && e.message.contains("100000"), "{}", e.message);
    // Exactly at the bound: accepted (10^5 points).
    let keys: String = (0..5).map(|i| format!("a.k{i} = {axis}\n")).collect();
    let axes = grid::axes(&spec(&format!("base = \"x.toml\"\n[grid]\n{keys}"))).unwrap();
    assert_eq!(grid::count_points(&axes).unwrap(), grid::MAX_POINTS);
}

#[test]
fn when_overrides_only_the_matching_points_and_wins_over_set() {
    let s = spec(
        "base = [\"a.toml\", \"c.toml\"]\n[set]\nrun.duration_ms = 20.0\n[grid]\nworkload.load = [0.5, 0.75]\n\
         [[when]]\nmatch = { base = \"c.toml\", \"workload.load\" = [0.75] }\nset = { run.duration_ms = 200.0, run.warmup_ms = 20.0 }\n",
    );
    let pts = expand(&s).unwrap();
    let dur = |p: &Point| p.overrides.iter().filter(|o| o.starts_with("run.")).cloned().collect::<Vec<_>>();
    for p in &pts[..3] {
        assert_eq!(dur(p), ["run.duration_ms=20.0"], "{:?}", p.swept);
    }
    assert_eq!(dur(&pts[3]), ["run.duration_ms=200.0", "run.warmup_ms=20.0"]);
    // A point no `when` touches keeps the id it had without the table (resumed sweeps find it).
    let plain =
        spec("base = [\"a.toml\", \"c.toml\"]\n[set]\nrun.duration_ms = 20.0\n[grid]\nworkload.load = [0.5, 0.75]\n");
    let before = expand(&plain).unwrap();
    assert_eq!(pts[0].id, before[0].id);
    assert_ne!(pts[3].id, before[3].id);
}

#[test]
fn when_that_could_never_apply_is_an_error_naming_it() {
    let head = "base = \"x.toml\"\n[grid]\nworkload.load = [0.5, 0.75]\n[[when]]\n";
    let err = |w: &str| expand(&spec(&format!("{head}{w}"))).unwrap_err().to_string();
    let e = err("match = { \"protocol.name\" = \"sird\" }\nset = { run.duration_ms = 1.0 }\n");
    assert!(e.contains("when[0].match.protocol.name") && e.contains("not swept"), "{e}");
    let e = err("match = { \"workload.load\" = [0.65] }\nset = { run.duration_ms = 1.0 }\n");
    assert!(e.contains("`0.65`") && e.contains("never matches"), "{e}");
    let e = err("match = { \"workload.load\" = 0.5 }\nset = { \"workload.load\" = 0.6 }\n");
    assert!(e.contains("when[0].set.workload.load") && e.contains("is an axis"), "{e}");
    let e = err("match = { \"workload.load\" = 0.5 }\nset = {}\n");
    assert!(e.contains("when[0]") && e.contains("non-empty"), "{e}");
}

#[test]
fn quick_may_replace_the_when_list() {
    let s = spec(
        "base = \"x.toml\"\n[grid]\nworkload.load = [0.5]\n[[when]]\nmatch = { \"workload.load\" = 0.5 }\n\
         set = { run.duration_ms = 100.0 }\n[quick]\nwhen = []\n",
    );
    assert!(expand(&s).unwrap()[0].overrides.contains(&"run.duration_ms=100.0".to_string()));
    assert_eq!(expand(&s.quick()).unwrap()[0].overrides, ["workload.load=0.5"]);
}

#[test]
fn a_value_given_twice_is_refused_naming_the_axis_and_the_value() {
    let err = |text: &str| expand(&spec(text)).unwrap_err().to_string();
    let e = err("base = \"x.toml\"\nseeds = [3, 3]\n");
    assert!(e.contains("seeds") && e.contains("`3` is given twice (positions 1 and 2)"), "{e}");
    let e = err("base = \"x.toml\"\n[grid]\nworkload.load = [0.5, 0.25, 0.5]\n");
    assert!(e.contains("grid.workload.load") && e.contains("positions 1 and 3"), "{e}");
    // 5 and 5.0 set the same value.
    let e = err("base = \"x.toml\"\n[grid]\nrun.duration_ms = [5, 5.0]\n");
    assert!(e.contains("given twice"), "{e}");
    let e = err("base = [\"a.toml\", \"a.toml\"]\n");
    assert!(e.contains("base") && e.contains("given twice"), "{e}");
    // A zip group repeats a value of one key freely; only a whole tuple twice is a repeat.
    let ok = "base = \"x.toml\"\n[[zip]]\nworkload.load = [0.5, 0.5]\n\"protocol.name\" = [\"sird\", \"homa\"]\n";
    assert_eq!(expand(&spec(ok)).unwrap().len(), 2);
    let e = err("base = \"x.toml\"\n[[zip]]\nworkload.load = [0.5, 0.5]\n\"protocol.name\" = [\"sird\", \"sird\"]\n");
    assert!(e.contains("zip[0]") && e.contains("`0.5, \"sird\"`"), "{e}");
}
