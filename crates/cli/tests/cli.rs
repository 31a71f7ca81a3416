//! The CLI contract of DESIGN.md §4: run, validate, protocols, bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabriclab"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabriclab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn run_quickstart(out: &Path, extra: &[&str]) -> Output {
    let exp = repo().join("experiments/quickstart.toml");
    let mut c = bin();
    c.arg("run").arg(&exp).arg("--out").arg(out).arg("-q").args(["--set", "run.duration_ms=1.0"]);
    c.args(extra).output().unwrap()
}

#[test]
fn run_writes_summary_and_messages() {
    let out = scratch("run");
    let o = run_quickstart(&out, &["--set", "protocol.name=dctcp", "--seed", "3"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("dctcp | seed 3") && stdout.contains("goodput"), "{stdout}");
    assert!(!text(&o.stderr).contains("estimated at"), "a short run says nothing: {}", text(&o.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "protocol",
        "seed",
        "sim_time_s",
        "wall_time_s",
        "events",
        "stable",
        "offered_load",
        "goodput_gbps",
        "goodput_fraction",
        "tor_queue_max_bytes",
        "tor_queue_mean_bytes",
        "switch_queue_max_bytes",
        "messages_started",
        "messages_completed",
        "bytes_delivered",
        "drops",
        "trims",
        "pfc_pauses",
    ] {
        assert!(s.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(s["protocol"], "dctcp");
    assert_eq!(s["seed"], 3);
    for g in ["all", "A", "B", "C", "D"] {
        for f in ["count", "mean", "p50", "p99"] {
            assert!(s["slowdown"][g].get(f).is_some(), "slowdown.{g}.{f} missing");
        }
    }
    let csv = std::fs::read_to_string(out.join("messages.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("id,src,dst,size_bytes"));
    assert_eq!(lines.len() as u64 - 1, s["messages_started"].as_u64().unwrap());
    // queues.csv: one row per switch port; no port holds more than its whole switch did.
    let q = std::fs::read_to_string(out.join("queues.csv")).unwrap();
    let rows: Vec<Vec<&str>> = q.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // 32 ToR ports to hosts, and both ends of 8 ToR-spine links.
    assert_eq!(rows.len(), 32 + 2 * 8);
    let port_max = rows.iter().map(|r| r[3].parse::<u64>().unwrap()).max().unwrap();
    assert!(port_max > 0 && port_max <= s["switch_queue_max_bytes"].as_u64().unwrap());
}

#[test]
fn a_second_run_into_a_folder_in_use_is_refused_naming_the_first() {
    let out = scratch("busy");
    let exp = repo().join("experiments/quickstart.toml");
    let mut first = bin()
        .arg("run")
        .arg(&exp)
        .arg("--out")
        .arg(&out)
        .args(["-q", "--set", "run.duration_ms=5000"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = out.join("run.lock");
    let start = std::time::Instant::now();
    while !lock.exists() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(lock.exists(), "the first run never took {}", lock.display());
    // A short run that, unlocked, would finish first and leave its results beside the first's.
    let second = run_quickstart(&out, &["--force"]);
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(!second.status.success());
    let expect = format!("another run (process {}) is writing to {}", first.id(), out.display());
    assert!(text(&second.stderr).contains(&expect), "{}", text(&second.stderr));
    assert!(!out.join("summary.json").exists(), "the refused run wrote nothing");
    // The killed run's lock file is stale: the next run takes it over and finishes.
    let third = run_quickstart(&out, &[]);
    assert!(third.status.success(), "{}", text(&third.stderr));
    assert!(!lock.exists(), "a finished run removes its lock");
}

#[test]
fn runs_are_reproducible_through_the_cli() {
    let strip = |p: &Path| {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["wall_time_s"] = 0.into();
        v["events_per_s"] = 0.into();
        v
    };
    let (a, b) = (scratch("det-a"), scratch("det-b"));
    assert!(run_quickstart(&a, &[]).status.success());
    assert!(run_quickstart(&b, &[]).status.success());
    assert_eq!(strip(&a.join("summary.json")), strip(&b.join("summary.json")));
    assert_eq!(std::fs::read(a.join("messages.csv")).unwrap(), std::fs::read(b.join("messages.csv")).unwrap());
}

#[test]
fn validate_prints_the_resolved_config() {
    let o = bin().arg("validate").arg(repo().join("experiments/sird/core-wkc.toml")).output().unwrap();
    assert!(o.status.success());
    let t = text(&o.stdout);
    for needle in ["fabric_rate_gbps = 200.0", "load_reference = \"core\"", "b_bdp = 1.5", "load_balancing = \"spray\""]
    {
        assert!(t.contains(needle), "missing `{needle}` in\n{t}");
    }
}

#[test]
fn every_shipped_experiment_validates() {
    let mut n = 0;
    for dir in ["experiments", "experiments/sird", "experiments/micro", "experiments/bench", "experiments/fidelity"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let o = bin().arg("validate").arg(&p).output().unwrap();
                assert!(o.status.success(), "{}: {}", p.display(), text(&o.stderr));
                n += 1;
            }
        }
    }
    assert!(n >= 19);
}

/// The cross-validation scenarios (docs/xval.md): the four generated ones validate, and the
/// trace one reads back the matrix `export-cm` writes from mixed-k8.toml, the same messages.
#[test]
fn xval_experiments_validate_and_the_trace_reads_the_exported_matrix() {
    let dir = repo().join("experiments/xval");
    for f in ["perm-k8", "perm-k16", "incast-k8", "mixed-k8"] {
        let o = bin().arg("validate").arg(dir.join(format!("{f}.toml"))).output().unwrap();
        assert!(o.status.success(), "{f}: {}", text(&o.stderr));
    }
    let tmp = scratch("xval-trace");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(dir.join("mixed-k8-trace.toml"), tmp.join("mixed-k8-trace.toml")).unwrap();
    let cm = tmp.join("mixed-k8.cm");
    let o = bin().arg("export-cm").arg(dir.join("mixed-k8.toml")).arg("--out").arg(&cm).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let again = tmp.join("again.cm");
    let o = bin().arg("export-cm").arg(tmp.join("mixed-k8-trace.toml")).arg("--out").arg(&again).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let body = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (a, b) = (body(&cm), body(&again));
    assert!(a.len() > 1000, "{} lines", a.len());
    assert_eq!(a, b, "the trace experiment must inject exactly the exported messages");
}

#[test]
fn protocols_lists_parameters_and_sources() {
    let o = bin().arg("protocols").output().unwrap();
    let t = text(&o.stdout);
    for needle in ["sird", "dctcp", "b_bdp", "sthr_bdp", "Table 2", "connections_per_pair"] {
        assert!(t.contains(needle), "missing {needle}");
    }
    // --names: exactly the names, one per line, each accepted as protocol.name.
    let o = bin().args(["protocols", "--names"]).output().unwrap();
    let names: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    assert!(
        names.len() >= 18 && names.contains(&"sird".to_string()) && names.contains(&"bbr".to_string()),
        "{names:?}"
    );
    let exp = repo().join("experiments/quickstart.toml");
    for n in &names {
        let o = bin().arg("validate").arg(&exp).args(["--set", &format!("protocol.name={n}")]).output().unwrap();
        assert!(o.status.success(), "{n}: {}", text(&o.stderr));
    }
}

#[test]
fn bad_input_fails_cleanly_naming_the_key() {
    let exp = repo().join("experiments/quickstart.toml");
    let cases: [(&[&str], &str); 4] = [
        (&["--set", "workload.laod=0.5"], "laod"),
        (&["--set", "topology.host_rate_gbps=0"], "topology.host_rate_gbps"),
        (&["--set", "protocol.name=quic"], "protocol.name"),
        (&["--set", "run.duration_ms=abc"], "run.duration_ms"),
    ];
    for (args, key) in cases {
        let o = bin().arg("validate").arg(&exp).args(args).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err.contains(key) && !err.contains("panicked"), "{args:?}: {err}");
    }
    let o = bin().arg("run").arg("/nonexistent.toml").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("/nonexistent.toml"));
}

/// As `fl.run("sird/balanced-wkc")`: a name under experiments/ when no such file exists.
#[test]
fn bundled_experiment_names_resolve_when_no_such_file_exists() {
    let elsewhere = scratch("bundled");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let o = bin().current_dir(&elsewhere).args(["validate", "sird/balanced-wkc.toml"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("name = \"sird\""));
    // A file of that name comes first.
    std::fs::create_dir_all(elsewhere.join("sird")).unwrap();
    std::fs::write(elsewhere.join("sird/balanced-wkc.toml"), "[protocol]\nname = \"homa\"\n").unwrap();
    let o = bin().current_dir(&elsewhere).args(["validate", "sird/balanced-wkc.toml"]).output().unwrap();
    assert!(text(&o.stdout).contains("name = \"homa\""), "{}", text(&o.stderr));
    let o = bin().current_dir(&elsewhere).args(["run", "sird/balanced-wk", "--out", "o"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("neither a file nor an experiment shipped with fabriclab"), "{err}");
    assert!(err.contains("close names: sird/balanced-wka, sird/balanced-wkb, sird/balanced-wkc"), "{err}");
    assert!(!elsewhere.join("o").exists());
}

#[test]
fn export_cm_writes_the_runs_messages_for_htsim_and_run_reads_them_back() {
    let dir = scratch("export-cm");
    std::fs::create_dir_all(&dir).unwrap();
    let cm = dir.join("incast.cm");
    let incast = repo().join("experiments/micro/incast.toml");
    let o = bin().arg("export-cm").arg(&incast).arg("--out").arg(&cm).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("wrote 8 connections for 9 hosts"), "{}", text(&o.stderr));
    let written = std::fs::read_to_string(&cm).unwrap();
    assert!(
        written.contains("\nNodes 9\nConnections 8\n") && written.contains(" id 8 start 0 size 2000000\n"),
        "{written}"
    );
    // The same experiment with the matrix as its workload runs the same messages.
    let exp = dir.join("from-cm.toml");
    let base = std::fs::read_to_string(&incast).unwrap();
    let base = &base[..base.find("[workload]").unwrap()];
    let tail = "[workload]\nkind = \"trace\"\ntrace_file = \"incast.cm\"\ntrace_format = \"htsim\"\n";
    std::fs::write(&exp, format!("{base}{tail}")).unwrap();
    let o = bin().arg("run").arg(&exp).arg("--out").arg(dir.join("out")).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("messages 8 started, 8 completed"), "{}", text(&o.stdout));
    // Standard output by default; a Poisson run's messages start at arbitrary picoseconds.
    let exp = repo().join("experiments/quickstart.toml");
    let short = ["--set", "run.duration_ms=0.1", "--set", "run.warmup_ms=0"];
    let o = bin().arg("export-cm").arg(&exp).args(short).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("# fabriclab export-cm") && text(&o.stdout).contains("\nNodes 32\n"));
    // Closed-loop workloads have no list of messages before the run.
    let closed = ["--set", "workload={kind=\"all_to_all\", bytes=1000, window=1}"];
    let o = bin().arg("export-cm").arg(&exp).args(closed).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("workload.kind") && text(&o.stderr).contains("closed-loop"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn export_ns2_and_compare_ns2_pair_each_message_with_the_artifacts_request() {
    let dir = scratch("ns2");
    std::fs::create_dir_all(&dir).unwrap();
    let incast = repo().join("experiments/micro/incast.toml");
    let req = dir.join("incast.ns2");
    let o = bin().arg("export-ns2").arg(&incast).arg("--out").arg(&req).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("wrote 8 requests of 8 hosts (of 9)"), "{}", text(&o.stderr));
    let written = std::fs::read_to_string(&req).unwrap();
    assert_eq!(written.lines().count(), 8);
    assert!(written.starts_with("1,0.000000000000|0|2000000\n"), "{written}");
    let ours = dir.join("ours");
    let o = bin().arg("run").arg(&incast).arg("--out").arg(&ours).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    // An artifact run (its trace format) in which each message takes twice as long as ours and
    // host 8's never arrives; one queue monitor of ToR 0 holding 5,000 then 7,000 bytes.
    let csv = std::fs::read_to_string(ours.join("messages.csv")).unwrap();
    let mut trace = String::new();
    for row in csv.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let (src, fct_us): (u32, f64) = (f[1].parse().unwrap(), f[7].parse().unwrap());
        trace.push_str(&format!("10.000000000 srq {src} 0 1 -1 0 -1.000000000 2000000 -1 0 0\n"));
        if src != 8 {
            trace.push_str(&format!("10.1 rrq 0 {src} 1 7 0 {:.9} 2000000 -1 0 0\n", 2.0 * fct_us / 1e6));
        }
    }
    let ns2 = dir.join("ns2/run1");
    std::fs::create_dir_all(ns2.join("qmon/tor_host")).unwrap();
    std::fs::write(ns2.join("applications_trace.str"), &trace).unwrap();
    std::fs::write(
        ns2.join("qmon/tor_host/9_1.q"),
        "10.00001 9 1 5000 4 0 0 0 0 0 0\n10.00002 9 1 7000 5 0 0 0 0 0 0\n",
    )
    .unwrap();
    let o =
        bin().arg("compare-ns2").arg(&ours).arg(dir.join("ns2")).arg("--out").arg(dir.join("theirs")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    let all = table.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{table}"));
    let f: Vec<&str> = all.split_whitespace().collect();
    assert_eq!(&f[1..6], ["7", "1", "0", "2.000", "2.000*"], "{table}");
    assert!(table.contains("8 messages, 8 of them started after the warm-up (0 us) and counted"), "{table}");
    assert!(table.contains("ns-2 max 7.0 KB, mean 6.0 KB (queue-monitor samples)"), "{table}");
    // Our run stopped when its last message completed, before the 5 ms the artifact's monitors
    // cover: our mean counts the rest of the window as empty, as the artifact's samples would.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ours.join("summary.json")).unwrap()).unwrap();
    let (sim_s, mean) = (summary["sim_time_s"].as_f64().unwrap(), summary["tor_queue_mean_bytes"].as_f64().unwrap());
    assert!(sim_s < 4e-3, "the incast ends well before its 5 ms: {sim_s}");
    let ours_mean = format!("mean {:.1} KB (exact)", mean * sim_s / 5e-3 / 1e3);
    assert!(table.contains(&ours_mean), "{ours_mean} in {table}");
    let theirs = std::fs::read_to_string(dir.join("theirs/messages.csv")).unwrap();
    assert_eq!(theirs.lines().count(), 9, "{theirs}");
    // Our own columns, so that the tools that read a run read it; host 8's never arrived.
    assert!(theirs.starts_with("id,src,dst,size_bytes,delivered_bytes,start_us,end_us,fct_us,"), "{theirs}");
    assert!(theirs.lines().any(|l| l.contains(",8,0,2000000,0,0.000000,,,")), "{theirs}");
    let ports = std::fs::read_to_string(dir.join("theirs/queues.csv")).unwrap();
    assert_eq!(ports, "switch,peer,tor,max_bytes,mean_bytes,drops\n9,1,1,7000.0,6000.0,0\n");
    // Under ns-2's accounting our averages leave the packet in service out, and say so.
    let avg = dir.join("ours-avg");
    let o = bin()
        .arg("run")
        .arg(&incast)
        .args(["--set", "output.tor_queue_average_us=10", "--set", "network.queue_accounting=until_first_bit"])
        .args(["-q", "--out"])
        .arg(&avg)
        .output();
    assert!(o.unwrap().status.success());
    let o = bin().arg("compare-ns2").arg(&avg).arg(dir.join("ns2")).output().unwrap();
    let table = text(&o.stdout);
    assert!(table.contains("(interval averages, the packet in service not counted)"), "{table}");
    // Messages that start in the warm-up are left out, as the summary's slowdowns leave them out.
    let late = dir.join("ours-warm");
    let o = bin().arg("run").arg(&incast).args(["--set", "run.warmup_ms=0.001", "-q", "--out"]).arg(&late).output();
    assert!(o.unwrap().status.success());
    let o = bin().arg("compare-ns2").arg(&late).arg(dir.join("ns2")).output().unwrap();
    let table = text(&o.stdout);
    assert!(table.contains("8 messages, 0 of them started after the warm-up (1 us)"), "{table}");
    assert!(table.lines().any(|l| l.split_whitespace().take(2).eq(["all", "0"])), "{table}");
    // A trace of other messages is refused, naming the first that differs.
    std::fs::write(
        ns2.join("applications_trace.str"),
        trace.replace("srq 3 0 1 -1 0 -1.000000000 2000000", "srq 3 0 1 -1 0 -1.000000000 1000000"),
    )
    .unwrap();
    let o = bin().arg("compare-ns2").arg(&ours).arg(dir.join("ns2")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("(3 -> 0, 2000000 B) is host 3's request 0"), "{}", text(&o.stderr));
}

#[test]
fn bench_runs_a_scenario_in_a_child_process_and_reports_json() {
    let o = bin().args(["bench", "--only", "e-sird"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let line = text(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["scenario"], "e-sird-incast64-1MB");
    assert_eq!(v["messages_completed"], 64);
    for key in ["wall_time_s", "events_per_s", "data_packets_per_s", "packet_hops_per_s", "peak_rss_mb"] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key} missing or zero");
    }
    let o = bin().args(["bench", "--only", "nope"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("a-sird-leafspine144-wkc50"));
}

/// CI runs the whole suite in quick mode: every scenario must work, small.
#[test]
fn bench_quick_runs_every_scenario() {
    let o = bin().args(["bench", "--quick"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let records: Vec<serde_json::Value> = text(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 7);
    for r in &records {
        assert_eq!(r["scale"], 0.02);
        assert!(r["messages_completed"].as_u64().unwrap() > 0, "{r}");
        assert!(r["wall_time_min_s"].as_f64().unwrap() <= r["wall_time_max_s"].as_f64().unwrap());
    }
}

#[test]
fn bench_scaling_fits_an_exponent_and_rejects_bad_options() {
    let o = bin().args(["bench", "--only", "e-dctcp", "--scaling", "--scale", "0.05"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 4);
    let packets: Vec<f64> =
        v["points"].as_array().unwrap().iter().map(|p| p["data_packets"].as_f64().unwrap()).collect();
    assert!(packets.windows(2).all(|w| w[0] < w[1]), "sizes must grow: {packets:?}");
    assert!(v["exponent"].as_f64().unwrap().is_finite());
    let o = bin().args(["bench", "--scaling"]).output().unwrap();
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("exactly one scenario"));
    let o = bin().args(["bench", "--scale", "0"]).output().unwrap();
    assert!(text(&o.stderr).contains("--scale must be a positive number, got 0"));
}

/// `udp serve --messages N` must not leave while a sender still waits for a
/// lost DONE: with 20% loss each way, every message is confirmed at the sender
/// (a receiver that left after the N-th delivery failed some of them).
#[test]
fn udp_serve_stays_until_every_sender_is_confirmed() {
    let loss = "faults.loss=0.2";
    let (mut serve, addr, _err) = udp_serve(&["--messages", "100", "--duration", "30", "--set", loss]);
    let o = bin()
        .args(["udp", "bench", "--bind", "127.0.0.1:0", "--to", &addr, "--dist", "wkb", "--window", "8"])
        // Retries enough that 20% loss never exhausts them: only a receiver that left fails a message.
        .args(["--count", "100", "--duration", "25", "--set", loss, "--set", "max_retries=20"])
        .output()
        .unwrap();
    let _ = serve.wait();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(out.contains("100 messages confirmed (0 failed)"), "{out}");
}

#[test]
fn run_out_onto_an_earlier_run_is_refused_without_force() {
    let out = scratch("again");
    assert!(run_quickstart(&out, &["--seed", "1"]).status.success());
    let first = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let o = run_quickstart(&out, &["--seed", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    let expect = format!(
        "--out {} holds the results of an earlier run (manifest.json, summary.json); pass --force",
        out.display()
    );
    assert!(err.contains(&expect), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("summary.json")).unwrap(), first, "overwritten without --force");

    let o = run_quickstart(&out, &["--seed", "2", "--force", "--set", "output.messages=false"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("seed 2"));
    // The earlier run's files are gone, not left beside the new ones.
    assert!(!out.join("messages.csv").exists(), "a stale messages.csv of the earlier run");
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(!m.contains("messages.csv") && m.contains("summary.json"), "{m}");
}

#[test]
fn run_out_is_checked_before_the_run() {
    let dir = scratch("outfile");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("taken");
    std::fs::write(&file, "mine").unwrap();
    // A run this long would not finish within the test: the error must come first. (Not so long
    // that the memory estimate, checked before the run too, exceeds what a loaded machine has
    // available: at 100 s the message table alone was 23.2 GB, and that error came first.)
    let o = run_quickstart(&file, &["--set", "run.duration_ms=10000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(&format!("--out {} is a file, not a directory", file.display())),
        "{}",
        text(&o.stderr)
    );
    let o = run_quickstart(&file.join("sub"), &["--set", "run.duration_ms=10000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot create --out"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn a_run_directory_carries_its_provenance() {
    let out = scratch("prov");
    let sets = ["--set", "protocol.name=homa", "--set", "workload.load=0.4"];
    let o = run_quickstart(&out, &[&sets[..], &["--seed", "9"]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));

    // The resolved config is exactly what `validate` prints for the same inputs.
    let exp = repo().join("experiments/quickstart.toml");
    let v = bin()
        .arg("validate")
        .arg(&exp)
        .args(["--set", "run.duration_ms=1.0"])
        .args(sets)
        .args(["--set", "run.seed=9"])
        .output()
        .unwrap();
    assert!(v.status.success());
    assert_eq!(std::fs::read_to_string(out.join("config.resolved.toml")).unwrap(), text(&v.stdout));

    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("provenance.json")).unwrap()).unwrap();
    assert_eq!(p["seed"], 9);
    assert_eq!(p["fabriclab_version"], env!("CARGO_PKG_VERSION"));
    let commit = p["git_commit"].as_str().unwrap();
    assert!(commit == "unknown" || (commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit())), "{commit}");
    let cmd: Vec<&str> = p["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(cmd[1], "run");
    assert!(cmd.contains(&"protocol.name=homa") && cmd.contains(&"9"), "{cmd:?}");

    // The manifest, written last, lists every file with its size.
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let listed: Vec<(String, u64)> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f["bytes"].as_u64().unwrap()))
        .collect();
    let mut names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    let expect = ["config.resolved.toml", "messages.csv", "provenance.json", "queues.csv", "summary.json"];
    assert_eq!(names, expect);
    for (n, bytes) in &listed {
        assert_eq!(std::fs::metadata(out.join(n)).unwrap().len(), *bytes, "{n}");
    }
    let on_disk: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(on_disk.len(), expect.len() + 1, "stray files (a temporary one left?): {on_disk:?}");
}

/// The memory estimate: `validate` prints it, `run` refuses what cannot fit
/// (here: SIRD's per-peer tables at 1,048,576 hosts, over 8 TB) at once, naming
/// the term and the way out, and never builds the fabric to find out.
#[test]
fn validate_prints_the_estimate_and_run_refuses_work_too_big() {
    let exp = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/quickstart.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["validate", exp]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("# estimated peak memory"), "{text}");
    if !std::path::Path::new("/proc/meminfo").exists() {
        return; // no MemAvailable to compare with: the check is skipped
    }
    let dir = std::env::temp_dir().join(format!("fabriclab-refuse-{}", std::process::id()));
    let file = std::env::temp_dir().join(format!("fabriclab-ft-{}.toml", std::process::id()));
    // 2^20 hosts (the largest fabric validation accepts) on a single spine: SIRD's per-peer tables
    // alone need 8 B x 2^40.
    let topo = "[topology]\nkind = \"leaf_spine\"\ntors = 1024\nhosts_per_tor = 1024\nspines = 1\n";
    std::fs::write(&file, format!("{topo}[protocol]\nname = \"sird\"\n")).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("run").arg(&file).arg("--out").arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for want in ["needs an estimated", "per-host transport state", "topology.k", "--force"] {
        assert!(err.contains(want), "{want} not in {err}");
    }
    assert!(!dir.join("summary.json").exists());
    let _ = std::fs::remove_file(&file);
}

/// A UDP port on loopback with nobody listening (bound, then released).
fn dead_udp_port() -> String {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().to_string()
}

/// Fast failure against a dead port: one retry of 10 ms.
const FAIL_FAST: [&str; 6] =
    ["--set", "max_retries=1", "--set", "retry_timeout_ms=10", "--set", "sird.timeout_us=1000"];

/// `udp send --size 1e12` is refused against max_message_bytes before anything is allocated.
#[test]
fn udp_send_refuses_oversized_messages_before_allocating() {
    let o = bin().args(["udp", "send", "--to", &dead_udp_port(), "--size", "1e12"]).output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--size: got 1000000000000 bytes, more than max_message_bytes = 67108864"), "{err}");
    let o = bin().args(["udp", "send", "--to", "127.0.0.1:9", "--size", "1.5"]).output().unwrap();
    assert!(text(&o.stderr).contains("expected a whole number"), "{}", text(&o.stderr));
}

/// `--count 1e7` makes messages as the window frees, not all up front: under a
/// 1 GiB address-space limit the sender (10 GB if eager) is still running after 3 s.
#[test]
fn udp_send_generates_messages_lazily() {
    use std::os::unix::process::CommandExt;
    let mut c = bin();
    c.args(["udp", "send", "--to", &dead_udp_port(), "--count", "1e7", "--size", "1000"]);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let status = child.try_wait().unwrap();
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    assert!(status.is_none(), "sender exited early ({status:?}): {}", text(&o.stderr));
}

/// Failures say why; `bench` and `probe` exit non-zero when every message failed.
#[test]
fn udp_tools_fail_loudly_when_nothing_is_confirmed() {
    let dead = dead_udp_port();
    let o = bin().args(["udp", "send", "--to", &dead, "--size", "100"]).args(FAIL_FAST).output().unwrap();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("message 0 failed: no DONE from") && out.contains("max_retries = 1"), "{out}");
    let probe: &[&str] = &["udp", "probe", "--to", &dead, "--interval-us", "20000", "--duration", "0.1"];
    let bench: &[&str] = &["udp", "bench", "--to", &dead, "--dist", "fixed:1000", "--window", "2", "--duration", "0.1"];
    for args in [probe, bench] {
        let o = bin().args(args).args(FAIL_FAST).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("none of") && err.contains("was confirmed"), "{args:?}: {err}");
    }
}

/// `udp serve` checks its arguments before it binds and says "serving on".
#[test]
fn udp_serve_validates_arguments_before_binding() {
    for arg in ["--duration=-1", "--duration=nan", "--report-every=inf", "--messages=0", "--echo=0"] {
        let o = bin().args(["udp", "serve", "--bind", "127.0.0.1:0", arg]).output().unwrap();
        let err = text(&o.stderr);
        let key = arg.split('=').next().unwrap();
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(!err.contains("serving on") && err.contains(&format!("error: {key}: got")), "{arg}: {err}");
    }
}

/// `udp serve ARGS` on a free loopback port, once it says "serving on": the
/// child (stdout piped), its address and the rest of its stderr.
fn udp_serve(args: &[&str]) -> (std::process::Child, String, std::io::BufReader<std::process::ChildStderr>) {
    use std::io::BufRead;
    let mut serve = bin()
        .args(["udp", "serve", "--bind", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(serve.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first.trim().strip_prefix("serving on ").unwrap_or_else(|| panic!("unexpected: {first}")).to_string();
    (serve, addr, err)
}

/// Sends `sig` to `serve` and returns its exit status, stdout and the rest of its stderr.
fn stop_serve(
    serve: std::process::Child,
    mut err: std::io::BufReader<std::process::ChildStderr>,
    sig: libc::c_int,
) -> (std::process::ExitStatus, String, String) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(serve.id() as libc::pid_t, sig) };
    let o = serve.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    (o.status, text(&o.stdout), rest)
}

/// On SIGINT `udp serve` prints its counters before it exits.
#[test]
fn udp_serve_prints_counters_on_sigint() {
    let (serve, _, err) = udp_serve(&[]);
    let (status, out, rest) = stop_serve(serve, err, libc::SIGINT);
    assert!(status.success(), "{status:?}: {rest}");
    assert!(out.contains("\"stats\"") && out.contains("messages_delivered"), "{out}");
    assert!(rest.contains("stopped by SIGINT"), "{rest}");
}

/// The last line of `serve`'s stdout: its final report.
fn final_report(out: &str) -> serde_json::Value {
    serde_json::from_str(out.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// issue 46: `serve --verify` checks what every sender sends (`send --size` and `bench`
/// send patterns, `send --file` the file after its SHA-256, printed by both ends), and a
/// SIGINT then ends it with exit 0 and its report. Before, every `send` message was
/// counted corrupt and the SIGINT exit was 2.
#[test]
fn udp_serve_verifies_every_sender_and_exits_0_on_sigint() {
    let (serve, addr, err) = udp_serve(&["--verify"]);
    let file = scratch("udp-file");
    let body: Vec<u8> = (0..100_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&file, &body).unwrap();
    let sha = fabriclab::files::sha256_hex(&body);
    let sends: [&[&str]; 3] = [
        &["send", "--size", "5000", "--count", "3"],
        &["send", "--file", file.to_str().unwrap()],
        &["bench", "--dist", "wkb", "--count", "5", "--window", "2", "--duration", "20"],
    ];
    for args in sends {
        let o = bin().arg("udp").args(args).args(["--bind", "127.0.0.1:0", "--to", &addr]).output().unwrap();
        let out = text(&o.stdout) + &text(&o.stderr);
        assert!(o.status.success(), "{args:?}: {out}");
        if args.contains(&"--file") {
            assert!(out.contains(&format!("(100000 bytes, sha256 {sha})")), "{out}");
        }
    }
    let (status, out, rest) = stop_serve(serve, err, libc::SIGINT);
    assert_eq!(status.code(), Some(0), "{rest}\n{out}");
    assert!(rest.contains("stopped by SIGINT"), "{rest}");
    let r = final_report(&out);
    assert_eq!((r["verified"].as_u64(), r["corrupt"].as_u64()), (Some(9), Some(0)), "{out}");
    let line = "\"bytes\":100000,\"from\":";
    let file_line = out.lines().find(|l| l.contains(line)).unwrap_or_else(|| panic!("no line for the file: {out}"));
    assert!(
        file_line.contains(&format!("\"sha256\":\"{sha}\"")) && file_line.contains("\"verified\":true"),
        "{file_line}"
    );
    let _ = std::fs::remove_file(&file);
}

/// A message that is neither a pattern nor a digest message (one DATA datagram of 100 bytes
/// 0x5A, what `send` sent before) is reported corrupt beside a verified one; SIGTERM ends the
/// report, and the corrupt message makes the exit 2.
#[test]
fn udp_serve_verify_reports_a_corrupt_message_and_exits_2() {
    use fabriclab_udp::wire::{encode, Header, Kind};
    let (serve, addr, err) = udp_serve(&["--verify"]);
    let mut d = Vec::new();
    encode(&Header::new(Kind::Data, 1, 0, 0, 100, 0), &[0x5A; 100], &mut d);
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.send_to(&d, &addr).unwrap();
    let o = bin().args(["udp", "send", "--bind", "127.0.0.1:0", "--to", &addr, "--size", "3000"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (status, out, rest) = stop_serve(serve, err, libc::SIGTERM);
    assert_eq!(status.code(), Some(2), "{rest}\n{out}");
    assert!(rest.contains("stopped by SIGTERM") && rest.contains("1 of 2 messages corrupt"), "{rest}");
    let r = final_report(&out);
    assert_eq!((r["verified"].as_u64(), r["corrupt"].as_u64()), (Some(1), Some(1)), "{out}");
    let from = s.local_addr().unwrap().to_string();
    assert!(out.contains(&format!("{{\"bytes\":100,\"from\":\"{from}\",\"message\":0,\"verified\":false}}")), "{out}");
}

/// issue 46: `send` with another `mtu` than `serve` fails at once, naming both and the key;
/// `serve` names both too. Before: "no DONE" after every retry, and no hint.
#[test]
fn udp_mtu_mismatch_names_both_mtus() {
    let (serve, addr, err) = udp_serve(&["--set", "mtu=1500"]);
    let started = std::time::Instant::now();
    let o = bin()
        .args(["udp", "send", "--bind", "127.0.0.1:0", "--to", &addr, "--size", "20000", "--set", "mtu=9000"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let why = format!("the receiver {addr} has mtu = 1500 and this sender mtu = 9000");
    assert!(out.contains(&why) && out.contains("--set mtu=1500") && !out.contains("no DONE"), "{out}");
    let (_, _, rest) = stop_serve(serve, err, libc::SIGINT);
    assert!(rest.contains("sends DATA packets cut for mtu = 9000, but this receiver has mtu = 1500"), "{rest}");
    // Failing by silence takes max_retries = 5 retries of 100 ms.
    assert!(took < std::time::Duration::from_millis(500), "{took:?}");
}

/// issue 46: a trace whose messages start after the end of the run is not dropped without a
/// word. One row at 5,000 us in a 1 ms run: an error naming the file and the run's duration;
/// 100 rows over 5 ms: a warning on stderr with the count, the first start and the run's end.
#[test]
fn trace_messages_after_the_end_of_the_run_are_reported() {
    let dir = scratch("after-end");
    std::fs::create_dir_all(&dir).unwrap();
    let exp = dir.join("exp.toml");
    std::fs::write(
        &exp,
        "[topology]\nkind = \"star\"\nhosts = 4\n[run]\nduration_ms = 1\nwarmup_ms = 0\n\
         [workload]\nkind = \"trace\"\ntrace_file = \"t.csv\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("t.csv"), "time_us,src,dst,bytes\n5000,1,0,1000\n").unwrap();
    let o = bin().arg("run").arg(&exp).arg("--out").arg(dir.join("a")).arg("-q").output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("t.csv") && err.contains("run.duration_ms = 1") && err.contains("inject nothing"), "{err}");
    let rows: String = (0..100).map(|i| format!("{},{},0,1000\n", i * 50, 1 + i % 3)).collect();
    std::fs::write(dir.join("t.csv"), format!("time_us,src,dst,bytes\n{rows}")).unwrap();
    let o = bin().arg("run").arg(&exp).arg("--out").arg(dir.join("b")).arg("-q").output().unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: 80 of the 100 messages of") && err.contains("the first at 1000 us"), "{err}");
    let s = std::fs::read_to_string(dir.join("b/summary.json")).unwrap();
    assert!(s.contains("\"trace_messages_after_end\": 80"), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// issue 46: a run estimated at a long wall time says so on stderr before it starts, even with
/// -q (which hides the progress bar's ETA). The run is stopped by its bad --out right after.
#[test]
fn a_run_estimated_long_says_so_even_when_quiet() {
    let dir = scratch("long-run");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("taken");
    std::fs::write(&file, "mine").unwrap();
    let o = run_quickstart(&file, &["--set", "run.duration_ms=10000"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("warning: this run is estimated at") && err.contains("of wall time"), "{err}");
    assert!(err.contains("is a file, not a directory"), "{err}");
}
