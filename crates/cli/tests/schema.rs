//! `fabriclab schema`: every experiment in experiments/ validates against the
//! schema the binary writes, under an independent validator (the `jsonschema`
//! crate), and files the parser rejects for an unknown key or a wrong enum
//! value are rejected by the schema too.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The schema as `fabriclab schema --out FILE` writes it (once per test binary).
fn schema() -> Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(write_schema).clone()
}

fn write_schema() -> Value {
    let dir = std::env::temp_dir().join(format!("fabriclab-schema-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("experiment.schema.json");
    let out = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["schema", "--out"]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    v
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema is a valid draft 2020-12 schema")
}

fn json_of(text: &str) -> Value {
    fabriclab::config::schema::toml_to_json(&toml::from_str::<toml::Value>(text).unwrap())
}

fn errors(v: &jsonschema::Validator, text: &str) -> Vec<String> {
    v.iter_errors(&json_of(text)).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn schema_is_draft_2020_12_and_closed_where_the_parser_is() {
    let s = schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["additionalProperties"], false);
    for def in ["RunConfig", "OutputConfig", "NetworkConfig", "ProtocolConfig", "SirdParams", "HomaParams"] {
        assert_eq!(s["$defs"][def]["additionalProperties"], false, "{def}");
    }
    // Enums as enums: every protocol name, and nothing else.
    let names: Vec<String> = fabriclab::config::ProtocolName::ALL.iter().map(|n| n.as_str().to_string()).collect();
    let mut listed: Vec<String> =
        s["$defs"]["ProtocolName"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
    listed.sort();
    let mut want = names.clone();
    want.sort();
    assert_eq!(listed, want);
    // Each protocol table carries its ParamDoc descriptions, defaults and bounds.
    let b = &s["$defs"]["SirdParams"]["properties"]["b_bdp"];
    assert!(b["description"].as_str().unwrap().contains("SIRD"), "{b}");
    assert_eq!(b["default"], 1.5);
    assert_eq!(b["exclusiveMinimum"], 0, "B must be above 0: {b}");
    assert!(b["maximum"].is_number(), "{b}");
    // A bound the protocol's own table narrows, not its unit's (a gain, not any number).
    let g = &s["$defs"]["SirdParams"]["properties"]["g"];
    assert_eq!((g["minimum"].as_f64(), g["maximum"].as_f64()), (Some(1e-6), Some(1.0)), "{g}");
    for &name in fabriclab::config::ProtocolName::ALL {
        let def = s["$defs"]["ProtocolConfig"]["properties"][name.as_str()].to_string();
        let mut r = def.split("#/$defs/").nth(1).and_then(|r| r.split('"').next()).unwrap().to_string();
        // `homa_tr` and the Aeolus variants wrap their base's table (serde `transparent`).
        while let Some(inner) = s["$defs"][&r]["$ref"].as_str() {
            r = inner.trim_start_matches("#/$defs/").to_string();
        }
        for d in name.docs() {
            // A dotted key (`lb.kind`) is a property of the table its head refers to.
            let mut def = r.clone();
            let mut parts = d.key.split('.').peekable();
            let mut p = &Value::Null;
            while let Some(part) = parts.next() {
                p = &s["$defs"][&def]["properties"][part];
                if parts.peek().is_some() {
                    def = p.to_string().split("#/$defs/").nth(1).and_then(|x| x.split('"').next()).unwrap().into();
                }
            }
            assert!(!p.is_null(), "{}: documented key {} is not in the schema", name.as_str(), d.key);
            assert!(p.get("description").is_some(), "{}.{} has no description", name.as_str(), d.key);
        }
    }
}

#[test]
fn every_experiment_validates_against_the_schema() {
    let v = validator();
    let mut files = Vec::new();
    toml_files(&root().join("experiments"), &mut files);
    files.sort();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let table: toml::Table = toml::from_str(&text).unwrap();
        // Sweeps (a `base`), claim tables and recorded measurements are not experiments;
        // the sweeps' bases are, and are checked as files here.
        let name = f.file_name().unwrap().to_string_lossy();
        if table.contains_key("base") || name == "claims.toml" || f.components().any(|c| c.as_os_str() == "recorded") {
            continue;
        }
        let errs = errors(&v, &text);
        assert!(errs.is_empty(), "{} does not validate: {errs:#?}", f.display());
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} experiments found");
}

#[test]
fn every_protocols_resolved_defaults_validate() {
    // What `fabriclab validate` prints, for every protocol: each default inside its bound.
    let v = validator();
    for &name in fabriclab::config::ProtocolName::ALL {
        let mut cfg = fabriclab::config::Config::default();
        cfg.protocol.name = name;
        cfg.resolve();
        let errs = errors(&v, &cfg.to_toml());
        assert!(errs.is_empty(), "{}: {errs:#?}", name.as_str());
    }
}

#[test]
fn unknown_keys_and_wrong_enum_values_do_not_validate() {
    let v = validator();
    let base = std::fs::read_to_string(root().join("experiments/quickstart.toml")).unwrap();
    assert!(errors(&v, &base).is_empty());
    let bad = [
        ("[run]\nduration_ms = 1.0\nwarmup_ms = 0.1\nsede = 3\n", "sede"),
        ("[protocol]\nname = \"tcp\"\n", "tcp"),
        ("[protocol]\nname = \"sird\"\n[protocol.sird]\nb_bdpp = 2.0\n", "b_bdpp"),
        ("[protocol]\nname = \"sird\"\n[protocol.sird]\nb_bdp = -1.0\n", "-1"),
        ("[topology]\nkind = \"torus\"\n", "torus"),
        ("[topology]\nkind = \"dumbbell\"\ntors = 4\n", "tors"),
        ("[workload]\nkind = \"poisson\"\nsize_dist = \"wkz\"\n", "wkz"),
        ("[output]\ntraces = [\"queue\"]\n", "queue"),
        ("[network]\nbuffer_bytes = \"big\"\n", "big"),
        ("[outputs]\nmessages = false\n", "outputs"),
    ];
    for (text, what) in bad {
        // The parser rejects each (so the schema is not stricter than it)...
        let dir = std::env::temp_dir();
        assert!(fabriclab::config::Config::from_str_with(text, &[], &dir).is_err(), "parser accepted {what}");
        // ...and so does the schema.
        let errs = errors(&v, text);
        assert!(!errs.is_empty(), "schema accepted {what}:\n{text}");
    }
}

/// The schema bounds each protocol parameter as `fabriclab protocols` states it (and validation
/// enforces it: crates/fabriclab/tests/config_errors.rs): a value just outside the stated range
/// does not validate, the range's edges (or a value just inside an excluded edge) do. An editor
/// reading the schema then accepts what a run accepts, e.g. `protocol.sird.g` up to 1, not 1e6.
#[test]
fn the_schema_bounds_protocol_parameters_as_protocols_states_them() {
    use fabriclab::config::{limits, Config, ProtocolName};
    let v = validator();
    let mut wrong = Vec::new();
    for &p in ProtocolName::ALL {
        let name = p.as_str();
        let mut cfg = Config::default();
        cfg.protocol.name = p;
        cfg.protocol.fill_defaults();
        let defaults = toml::Value::try_from(&cfg.protocol).unwrap();
        for d in p.docs() {
            let shown = limits::describe(&format!("protocol.{name}.{}", d.key), &d.default);
            let Some(start) = shown.rfind(['[', '(']) else { continue };
            let r = shown[start..].trim_end_matches(" or inf");
            let (lo, hi) = r[1..r.len() - 1].split_once(", ").unwrap();
            let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
            let (lo_open, hi_open) = (r.starts_with('('), r.ends_with(')'));
            let default = d.key.split('.').try_fold(&defaults[name], |t, k| t.get(k));
            let int = matches!(default, Some(toml::Value::Integer(_)));
            let fmt = |x: f64| if int { format!("{}", x as i64) } else { format!("{x:?}") };
            let step = |x: f64| if int { 1.0 } else { (x.abs() * 1e-9).max(1e-12) };
            let text = |x: f64| format!("[protocol]\nname = \"{name}\"\n[protocol.{name}]\n{} = {}\n", d.key, fmt(x));
            let (out_lo, in_lo) = if lo_open { (lo, lo + step(lo)) } else { (lo - step(lo), lo) };
            let (out_hi, in_hi) = if hi_open { (hi, hi - step(hi)) } else { (hi + step(hi), hi) };
            // JSON has no infinity, so a bound that allows `inf` has no maximum in the schema.
            let outside = if shown.ends_with(" or inf") { vec![out_lo] } else { vec![out_lo, out_hi] };
            for x in outside {
                if errors(&v, &text(x)).is_empty() {
                    wrong.push(format!("{name}.{} = {} validates, shown as {shown}", d.key, fmt(x)));
                }
            }
            for x in [in_lo, in_hi] {
                let errs = errors(&v, &text(x));
                if !errs.is_empty() {
                    wrong.push(format!("{name}.{} = {} does not validate, shown as {shown}: {errs:?}", d.key, fmt(x)));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} schema bounds differ from those shown:\n{}", wrong.len(), wrong.join("\n"));
}
