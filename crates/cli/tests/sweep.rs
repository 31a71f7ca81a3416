//! `fabriclab sweep`: failure isolation, resume, determinism across job counts, Parquet output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabriclab-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 8-point sweep on the 32-host quickstart, one point of which has an invalid load.
fn sweep_file(dir: &Path) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/quickstart.toml");
    let text = format!(
        "base = {:?}\nseeds = [1, 2]\n[set]\nrun.duration_ms = 0.4\nrun.warmup_ms = 0.1\noutput.messages = false\n\
         [grid]\nworkload.load = [0.3, 0.6]\n[[zip]]\nprotocol.name = [\"sird\", \"dctcp\"]\n\
         \"protocol.sird.b_bdp\" = [1.5, 2.0]\n[quick.grid]\nworkload.load = [0.3, 7.0]\n",
        base.to_str().unwrap()
    );
    let f = dir.join("s.toml");
    std::fs::write(&f, text).unwrap();
    f
}

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fabriclab"));
    c.arg("sweep").arg(file).arg("--out").arg(out).arg("-q").args(extra).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The table without the columns that measure the machine, not the simulation.
fn stable_part(csv: &str) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> = csv.lines().map(|l| l.split(',').map(str::to_string).collect()).collect();
    let drop: Vec<usize> = rows[0]
        .iter()
        .enumerate()
        .filter(|(_, c)| ["wall_time_s", "events_per_s", "peak_rss_mb"].contains(&c.as_str()))
        .map(|(i, _)| i)
        .collect();
    rows.into_iter()
        .map(|r| r.into_iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, c)| c).collect())
        .collect()
}

#[test]
fn sweep_is_deterministic_across_job_counts_and_resumes() {
    let dir = scratch("det");
    let f = sweep_file(&dir);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let oa = sweep(&f, &a, &["--jobs", "1"]);
    assert!(oa.status.success(), "{}", String::from_utf8_lossy(&oa.stderr));
    assert!(stdout(&oa).contains("8 points, 8 run, 0 cached, 0 failed"), "{}", stdout(&oa));
    assert!(sweep(&f, &b, &["--jobs", "2"]).status.success());
    let csv_a = std::fs::read_to_string(a.join("results.csv")).unwrap();
    let csv_b = std::fs::read_to_string(b.join("results.csv")).unwrap();
    assert_eq!(stable_part(&csv_a), stable_part(&csv_b));
    let t = stable_part(&csv_a);
    assert_eq!(t.len(), 1 + 8);
    assert_eq!(t[0][..5], ["point", "workload.load", "protocol.name", "protocol.sird.b_bdp", "run.seed"]);
    // Grid order: load outermost, then the zipped protocol axis, seeds innermost.
    assert_eq!(t[4][1..5], ["0.3", "dctcp", "2", "2"]);
    let col = |name: &str| t[0].iter().position(|c| c == name).unwrap();
    assert!(t[1..].iter().all(|r| r[col("status")] == "ok" && r[col("error")].is_empty()));
    assert_eq!(t[4][col("protocol")], "dctcp");
    assert!(t[5][col("slowdown_all_count")].parse::<u64>().unwrap() > 0);
    let rows: Vec<Vec<&str>> = csv_a.lines().map(|l| l.split(',').collect()).collect();
    let rss = rows[0].iter().position(|c| *c == "peak_rss_mb").unwrap();
    assert!(rows[1..].iter().all(|r| r[rss].parse::<f64>().unwrap() > 1.0), "peak RSS missing");

    // Resume: nothing reruns, the table is the same byte for byte; a removed
    // summary reruns just that point.
    let again = sweep(&f, &a, &["--jobs", "2"]);
    assert!(stdout(&again).contains("8 points, 0 run, 8 cached"), "{}", stdout(&again));
    assert_eq!(std::fs::read_to_string(a.join("results.csv")).unwrap(), csv_a);
    let id = &t[3][0];
    std::fs::remove_file(a.join("points").join(id).join("summary.json")).unwrap();
    let again = sweep(&f, &a, &[]);
    assert!(stdout(&again).contains("8 points, 1 run, 7 cached"), "{}", stdout(&again));
    assert_eq!(stable_part(&std::fs::read_to_string(a.join("results.csv")).unwrap()), t);
    let pq = std::fs::read(a.join("results.parquet")).unwrap();
    assert!(pq.starts_with(b"PAR1") && pq.ends_with(b"PAR1"));
}

#[test]
fn a_failing_point_is_reported_and_does_not_stop_the_others() {
    let dir = scratch("fail");
    let f = sweep_file(&dir);
    let out = dir.join("o");
    let o = sweep(&f, &out, &["--quick", "--jobs", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("4 of 8 points failed") && err.contains("workload.load"), "{err}");
    let t = stable_part(&std::fs::read_to_string(out.join("results.csv")).unwrap());
    let col = |name: &str| t[0].iter().position(|c| c == name).unwrap();
    for r in &t[1..] {
        let bad = r[1] == "7";
        assert_eq!(r[col("status")], if bad { "failed" } else { "ok" });
        assert_eq!(r[col("error")].contains("workload.load"), bad, "{r:?}");
        assert_eq!(r[col("goodput_gbps")].is_empty(), bad);
    }
}

#[test]
fn sweep_file_errors_name_the_key() {
    let dir = scratch("bad");
    let f = dir.join("s.toml");
    std::fs::write(&f, "base = \"x.toml\"\n[[zip]]\na.b = [1]\nc = [1, 2]\n").unwrap();
    let o = sweep(&f, &dir.join("o"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("zip[0]") && err.contains("a.b (1)") && !err.contains("panicked"), "{err}");
}
