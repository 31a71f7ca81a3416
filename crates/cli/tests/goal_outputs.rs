//! What a GOAL run writes: summary.json's `goal` object, ops.csv joined to
//! messages.csv, the warning of a schedule that cannot finish, and the
//! report's timeline; and that other runs write none of it.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabriclab-goal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `schedule` on a 3-host star (SIRD), with `extra` config lines; the run directory and output.
fn run_goal(name: &str, schedule: &str, extra: &str) -> (PathBuf, Output) {
    let dir = tmp(name);
    std::fs::write(dir.join("s.goal"), schedule).unwrap();
    let exp = format!(
        "[topology]\nkind = \"star\"\nhosts = 3\n[protocol]\nname = \"sird\"\n\
         [workload]\nkind = \"goal\"\ngoal_file = \"s.goal\"\nstart_us = 2.0\n[run]\nduration_ms = 1.0\n\
         warmup_ms = 0.0\n{extra}"
    );
    std::fs::write(dir.join("exp.toml"), exp).unwrap();
    let out = dir.join("run");
    let r = Command::new(env!("CARGO_BIN_EXE_fabriclab"))
        .arg("run")
        .arg(dir.join("exp.toml"))
        .arg("--out")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    (out, r)
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// A CSV file of ours as header-keyed rows.
fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn num(v: &str) -> f64 {
    v.parse().unwrap_or_else(|_| panic!("not a number: {v:?}"))
}

/// Rank 0 sends 1000 B to rank 1, which computes 200 ns and answers 10 B; rank 0 then computes 50 ns.
const PING_PONG: &str = "num_ranks 2\n\
    rank 0 {\n  a: send 1000b to 1 tag 1\n  b: recv 10b from 1 tag 2\n  c: calc 50\n  c requires b\n}\n\
    rank 1 {\n  a: recv 1000b from 0 tag 1\n  b: calc 200\n  c: send 10b to 0 tag 2\n  b requires a\n  c requires b\n}\n";

#[test]
fn a_goal_run_reports_its_completion_and_critical_path_from_its_messages() {
    let (dir, _) = run_goal("pingpong", PING_PONG, "");
    let msgs = rows(&dir.join("messages.csv"));
    assert_eq!(msgs.len(), 2);
    let fct = |i: usize| num(&msgs[i]["fct_us"]);
    // By hand: start, the ping's flight, 0.2 us of calc, the pong's flight, 0.05 us of calc.
    let completion = 2.0 + fct(0) + 0.2 + fct(1) + 0.05;
    let g = &summary(&dir)["goal"];
    let close = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-6;
    assert_eq!((g["ranks"].as_u64(), g["ops"].as_u64(), g["complete"].as_bool()), (Some(2), Some(6), Some(true)));
    assert!(close(&g["completion_us"], completion) && close(&g["makespan_us"], completion - 2.0), "{g}");
    assert_eq!(g["ranks_waiting"], 0);
    let f = &g["rank_finish_us"];
    assert!(close(&f["max"], completion) && close(&f["min"], completion - 0.05), "{f}");
    assert_eq!(f["last_rank"], 0);
    assert_eq!(g["op_counts"], serde_json::json!({"send": 2, "recv": 2, "calc": 2}));
    let p = &g["critical_path"];
    assert_eq!(p["ops"], 6, "every op of the ping-pong is on its path");
    assert!(close(&p["network_us"], fct(0) + fct(1)) && close(&p["calc_us"], 0.25), "{p}");
    assert_eq!(p["cpu_wait_us"], 0.0);

    let ops = rows(&dir.join("ops.csv"));
    let header = std::fs::read_to_string(dir.join("ops.csv")).unwrap().lines().next().unwrap().to_string();
    assert_eq!(
        header,
        "op,rank,host,label,kind,peer,tag,bytes,calc_ns,ready_us,start_us,end_us,msg_id,on_critical_path"
    );
    assert_eq!(ops.len(), 6);
    assert!(ops.iter().all(|o| o["on_critical_path"] == "1"));
    let kinds: Vec<(&str, &str, &str)> =
        ops.iter().map(|o| (o["label"].as_str(), o["kind"].as_str(), o["msg_id"].as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("a", "send", "0"),
            ("b", "recv", ""),
            ("c", "calc", ""),
            ("a", "recv", ""),
            ("b", "calc", ""),
            ("c", "send", "1")
        ]
    );
    // Each send joins its message: same start and end.
    for o in ops.iter().filter(|o| !o["msg_id"].is_empty()) {
        let m = &msgs[num(&o["msg_id"]) as usize];
        assert_eq!((num(&o["start_us"]), num(&o["end_us"])), (num(&m["start_us"]), num(&m["end_us"])), "{o:?}");
    }
    assert_eq!((ops[4]["calc_ns"].as_str(), ops[4]["peer"].as_str(), ops[5]["peer"].as_str()), ("200", "", "0"));
    let last_end = ops.iter().map(|o| num(&o["end_us"])).fold(0.0, f64::max);
    assert!((last_end - completion).abs() < 1e-6);
}

#[test]
fn a_schedule_that_cannot_finish_has_no_completion_and_warns() {
    let stuck = "num_ranks 3\nrank 0 {\nr: recv 8b from 1\ns: send 8b to 1\ns requires r\n}\n\
                 rank 1 {\nr: recv 8b from 0\ns: send 8b to 0\ns requires r\n}\nrank 2 {\nc: calc 10\n}\n";
    let (dir, out) = run_goal("stuck", stuck, "");
    let g = &summary(&dir)["goal"];
    assert_eq!((g["complete"].as_bool(), g["ranks_waiting"].as_u64()), (Some(false), Some(2)), "{g}");
    assert!(g["completion_us"].is_null() && g["makespan_us"].is_null() && g["critical_path"].is_null(), "{g}");
    assert_eq!(g["rank_finish_us"]["last_rank"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: the GOAL schedule did not finish by the end of the run; 2 of 3 ranks"),
        "{stderr}"
    );
    assert!(stderr.contains("rank 0 r (line 3): recv from rank 1 tag 0, posted at 2 us, has no message"), "{stderr}");
    let ops = rows(&dir.join("ops.csv"));
    assert_eq!((ops[0]["end_us"].as_str(), ops[1]["start_us"].as_str()), ("", ""), "a posted recv, a send not ready");
    assert!(ops.iter().all(|o| o["on_critical_path"] == "0"));
}

#[test]
fn ops_csv_follows_output_ops_and_other_runs_have_no_goal_outputs() {
    let (dir, _) = run_goal("no-ops", PING_PONG, "[output]\nops = false\n");
    assert!(!dir.join("ops.csv").exists());
    assert!(summary(&dir)["goal"].is_object());
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(!manifest.contains("ops.csv"));
    let (with, _) = run_goal("with-ops", PING_PONG, "");
    assert!(std::fs::read_to_string(with.join("manifest.json")).unwrap().contains("\"ops.csv\""));

    let other = tmp("other").join("run");
    let exp = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/micro/one-message.toml");
    let r =
        Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["run", exp, "-q", "--out"]).arg(&other).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(summary(&other).get("goal").is_none() && !other.join("ops.csv").exists());
}

#[test]
fn a_bad_output_ops_names_the_key() {
    let dir = tmp("bad");
    std::fs::write(dir.join("s.goal"), PING_PONG).unwrap();
    let exp = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/micro/one-message.toml");
    let r = Command::new(env!("CARGO_BIN_EXE_fabriclab"))
        .args(["validate", exp, "--set", "output.ops=3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        !r.status.success() && err.contains("output.ops") && err.contains("expected true or false, got 3"),
        "{err}"
    );
}

#[test]
fn the_report_draws_each_rank_and_outlines_the_critical_path() {
    let (dir, _) = run_goal("report", PING_PONG, "");
    let r = Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("report").arg(&dir).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>GOAL schedule</h2>") && html.contains("aria-label=\"GOAL ranks' timeline\""));
    assert!(html.contains("<th>critical_path.calc_us</th><td>0.2500</td>"), "the goal object as a table");
    assert!(html.contains("all 2 ranks are drawn"));
    assert!(html.contains(">rank 0</text>") && html.contains(">rank 1</text>"));
    assert_eq!(html.matches("<title>critical path:").count(), 6, "each op of the path outlined");
    // Without ops.csv the section says why; a run that is not GOAL has no section.
    std::fs::remove_file(dir.join("ops.csv")).unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("report").arg(&dir).output().unwrap();
    assert!(r.status.success());
    assert!(std::fs::read_to_string(dir.join("report.html")).unwrap().contains("No ops.csv in this run"));
}
