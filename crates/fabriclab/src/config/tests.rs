//! Fuzzing the config front end: whatever the input, an error or a config, never a panic.

use super::{without_late_defaults, Config};
use proptest::prelude::*;
use std::path::Path;

const KEYS: [&str; 12] = [
    "topology.kind",
    "topology.tors",
    "topology.host_rate_gbps",
    "network.mtu",
    "network.buffer_bytes",
    "network.load_balancing",
    "protocol.name",
    "protocol.sird.b_bdp",
    "protocol.dctcp.g",
    "workload.load",
    "workload.kind",
    "run.duration_ms",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        "[a-z_]{0,12}",
        Just("inf".to_string()),
        Just("nan".to_string()),
        Just("[1, 2]".to_string()),
        Just("\"infinite\"".to_string()),
    ]
}

proptest! {
    #[test]
    fn overrides_never_panic(pairs in proptest::collection::vec((0..KEYS.len(), value()), 0..6)) {
        let o: Vec<String> = pairs.iter().map(|(k, v)| format!("{}={v}", KEYS[*k])).collect();
        if let Ok(cfg) = Config::from_str_with("", &o, Path::new(".")) {
            // Whatever validates must also survive a round trip.
            prop_assert!(Config::from_str_with(&cfg.to_toml(), &[], Path::new(".")).is_ok());
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = Config::from_str_with(&text, &[], Path::new("."));
    }
}

#[test]
fn poisson_sender_lists_take_host_ids_from_zero() {
    let base = "[workload]\nkind = \"poisson\"\nreceivers = [2]\n";
    let cfg = Config::from_str_with(&format!("{base}senders = [0, 1]\n"), &[], Path::new("."));
    assert!(cfg.is_ok(), "host 0 is a sender: {:?}", cfg.err());
    let err = Config::from_str_with(&format!("{base}senders = [0, -1]\n"), &[], Path::new(".")).unwrap_err();
    assert!(err.to_string().contains("workload.senders[1]") && err.to_string().contains("-1"), "{err}");
    let err = Config::from_str_with(&format!("{base}senders = [0, 5000000]\n"), &[], Path::new(".")).unwrap_err();
    assert!(err.to_string().contains("a host id"), "{err}");
}

#[test]
fn identity_names_input_files_by_content_not_by_folder() {
    let root = std::env::temp_dir().join(format!("fabriclab-identity-{}", std::process::id()));
    let text = "[workload]\nkind = \"poisson\"\nsize_cdf_file = \"sizes.txt\"\n";
    let cdf = "100 0.5\n1000 1.0\n";
    let identity_in = |folder: &str, cdf: &str| {
        let dir = root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sizes.txt"), cdf).unwrap();
        let cfg = Config::from_str_with(text, &[], &dir).unwrap();
        (cfg.to_toml(), cfg.identity().unwrap())
    };
    let (toml_a, a) = identity_in("a", cdf);
    let (toml_b, b) = identity_in("b", cdf);
    assert_ne!(toml_a, toml_b, "the resolved text names each folder");
    assert_eq!(a, b, "the same config and file in two folders is the same run");
    let (_, c) = identity_in("c", "100 0.4\n1000 1.0\n");
    assert_ne!(a, c, "an edited CDF is another run");
    let cfg = Config::from_str_with(text, &[], &root.join("c")).unwrap();
    std::fs::remove_file(root.join("c/sizes.txt")).unwrap();
    assert!(cfg.identity().unwrap_err().contains("sizes.txt"), "a missing input names its file");
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_resolved_config_reads_its_input_files_from_anywhere() {
    // A run's config.resolved.toml is read again from the run's folder (compare-ns2, the report),
    // so a path the config gave relative to a relative folder must not stay relative.
    let root = std::env::temp_dir().join(format!("fabriclab-resolved-{}", std::process::id()));
    std::fs::create_dir_all(root.join("configs")).unwrap();
    std::fs::write(root.join("trace.csv"), "time_us,src,dst,bytes\n0,0,1,1000\n").unwrap();
    let text = "[workload]\nkind = \"trace\"\ntrace_file = \"../trace.csv\"\n";
    let relative = relative_to_cwd(&root.join("configs"));
    let cfg = Config::from_str_with(text, &[], &relative).unwrap();
    let again = Config::from_str_with(&cfg.to_toml(), &[], Path::new("/nonexistent"))
        .unwrap_or_else(|e| panic!("the resolved config does not load elsewhere: {e}"));
    assert_eq!(again.identity().unwrap(), cfg.identity().unwrap());
    std::fs::remove_dir_all(&root).ok();
}

/// `dir` as a path relative to the current folder (`../..` up to the root, then down).
fn relative_to_cwd(dir: &Path) -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap();
    let ups = cwd.components().count() - 1;
    let mut p: std::path::PathBuf = std::iter::repeat("..").take(ups).collect();
    p.push(dir.strip_prefix("/").unwrap());
    p
}

#[test]
fn identity_is_unchanged_by_showing_empty_lists() {
    // The default config as it ran before SIRD's UnschT counted wire bytes.
    let cfg = Config::from_str_with(
        "",
        &["protocol.name=\"sird\"".into(), "protocol.sird.unsch_t_bytes=\"payload\"".into()],
        Path::new("."),
    )
    .unwrap();
    assert!(cfg.to_toml().contains("\npcap_hosts = []\n"), "the resolved config shows every list");
    // The default config's key as recorded before the empty lists were shown
    // (the SHA-256 of `fabriclab validate` of an empty file at b201180).
    assert_eq!(cfg.identity().unwrap(), "e8e268ee503e00d815a5312f8798a9fedf60b208c33b709e647bd81bb086d4d3");
}

#[test]
fn identity_leaves_out_late_keys_only_at_their_default() {
    // Issue 44's SIRD keys: at their default the key is the one recorded before they
    // existed (the test above); set, they make another key.
    let text = "[protocol]\nname = \"sird\"\n";
    let set = Config::from_str_with(text, &["protocol.sird.sender_policy=\"deficit\"".into()], Path::new(".")).unwrap();
    let default = Config::from_str_with("", &[], Path::new(".")).unwrap();
    assert!(default.to_toml().contains("\nsender_policy = \"turns\"\n"));
    assert_ne!(set.identity().unwrap(), default.identity().unwrap());
    // The receiver rules (and csn_counts_waiting) likewise.
    for key in [
        "sender_bucket_check=\"before\"",
        "loops_see_control=true",
        "credit_pacing_slack_bytes=562.5",
        "csn_counts_waiting=true",
    ] {
        let set = Config::from_str_with(text, &[format!("protocol.sird.{key}")], Path::new(".")).unwrap();
        assert_ne!(set.identity().unwrap(), default.identity().unwrap(), "{key}");
    }
    for line in ["sender_bucket_check = \"after\"", "loops_see_control = false", "credit_pacing_slack_bytes = 0.0"] {
        assert!(default.to_toml().contains(&format!("\n{line}\n")), "{line}");
    }
}

#[test]
fn a_late_key_of_a_protocol_the_run_does_not_use_keeps_the_key() {
    // The SIRD experiment files set [protocol.dctcp] for the DCTCP runs swept over them: DCTCP's
    // `nic` (2026-12-03) must not change a SIRD run's key, whatever its value; it must change a
    // DCTCP run's, except at the value the runs before it ran with.
    let base = "[protocol]\nname = \"sird\"\n[protocol.dctcp]\ng = 0.08\n";
    let key = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        Config::from_str_with(base, &set, Path::new(".")).unwrap().identity().unwrap()
    };
    let sird = key(&[]);
    assert!(Config::from_str_with(base, &[], Path::new(".")).unwrap().to_toml().contains("\nnic = \"fifo\"\n"));
    assert_eq!(sird, key(&["protocol.dctcp.nic=\"round_robin\""]));
    let fifo = key(&["protocol.name=\"dctcp\""]);
    let rr = key(&["protocol.name=\"dctcp\"", "protocol.dctcp.nic=\"round_robin\""]);
    assert_ne!(fifo, rr);
    assert_ne!(fifo, sird);
    // At round_robin a DCTCP run's key is the one of the text without the key (recorded before it).
    let cfg = Config::from_str_with(
        base,
        &["protocol.name=\"dctcp\"".into(), "protocol.dctcp.nic=\"round_robin\"".into()],
        Path::new("."),
    )
    .unwrap();
    let before: String =
        cfg.to_toml().lines().filter(|l| *l != "nic = \"round_robin\"").map(|l| format!("{l}\n")).collect();
    assert_eq!(rr, crate::files::sha256_hex(without_late_defaults(&before, "dctcp").as_bytes()));
}

#[test]
fn a_protocol_revision_rekeys_that_protocols_configs_only() {
    let key = |name: &str| {
        let cfg = Config::from_str_with("", &[format!("protocol.name=\"{name}\"")], Path::new(".")).unwrap();
        let plain = crate::files::sha256_hex(without_late_defaults(&cfg.to_toml(), name).as_bytes());
        (cfg.identity().unwrap(), plain)
    };
    // Bolt's sender changed on 2026-12-03: its records are run again...
    let (bolt, plain) = key("bolt");
    assert_ne!(bolt, plain);
    // ...and SIRD's, keyed on their resolved config alone, stay.
    let (sird, plain) = key("sird");
    assert_eq!(sird, plain);
}
