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
    // A trace whose second row names a host the fabric lacks passes the
    // config check (the file exists) and fails when the run reads it.
    let dir = scratch("fail");
    std::fs::write(dir.join("good.csv"), "time_us,src,dst,bytes\n0,1,0,100000\n").unwrap();
    std::fs::write(dir.join("bad.csv"), "time_us,src,dst,bytes\n0,1,0,100000\n1,5000,0,5\n").unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/micro/congested-sender.toml");
    let text = format!(
        "base = {:?}\nseeds = [1, 2]\n[set]\nrun.duration_ms = 0.4\nrun.warmup_ms = 0.1\n\
         [grid]\nworkload.trace_file = [{:?}, {:?}]\n",
        base.to_str().unwrap(),
        dir.join("good.csv").to_str().unwrap(),
        dir.join("bad.csv").to_str().unwrap()
    );
    let f = dir.join("s.toml");
    std::fs::write(&f, text).unwrap();
    let out = dir.join("o");
    let o = sweep(&f, &out, &["--jobs", "2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("2 of 4 points failed") && err.contains("workload.trace_file"), "{err}");
    let t = stable_part(&std::fs::read_to_string(out.join("results.csv")).unwrap());
    let col = |name: &str| t[0].iter().position(|c| c == name).unwrap();
    for r in &t[1..] {
        let bad = r[1].ends_with("bad.csv");
        assert_eq!(r[col("status")], if bad { "failed" } else { "ok" });
        assert_eq!(r[col("error")].contains("workload.trace_file"), bad, "{r:?}");
        assert_eq!(r[col("goodput_gbps")].is_empty(), bad);
    }
}

#[test]
fn points_whose_config_does_not_load_stop_the_sweep_before_anything_runs() {
    let dir = scratch("upfront");
    let f = sweep_file(&dir);
    let out = dir.join("o");
    // The quick overlay's load 7.0 is out of range for 4 of the 8 points.
    let o = sweep(&f, &out, &["--quick", "--jobs", "2"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("4 of the 8 points have a config that does not load, so nothing ran"), "{err}");
    assert!(err.contains("workload.load=7.0") && err.contains("(the same error for all of them)"), "{err}");
    assert!(point_dirs(&out).is_empty(), "a point ran: {:?}", point_dirs(&out));
    // A key that no point knows: one error, not one per point.
    let typo = dir.join("typo.toml");
    let text = std::fs::read_to_string(&f).unwrap().replace("output.messages = false", "output.mesages = false");
    std::fs::write(&typo, text).unwrap();
    let o = sweep(&typo, &dir.join("o2"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).matches("output.mesages").count(), 1, "{}", stderr(&o));
}

#[test]
fn a_sweep_with_a_value_given_twice_is_refused() {
    let dir = scratch("dup");
    let text = std::fs::read_to_string(sweep_file(&dir)).unwrap().replace("seeds = [1, 2]", "seeds = [3, 3, 3]");
    let f = dir.join("dup.toml");
    std::fs::write(&f, text).unwrap();
    let o = sweep(&f, &dir.join("o"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`seeds`: value `3` is given twice"), "{}", stderr(&o));
}

#[test]
fn records_let_a_fresh_folder_resume_and_are_not_reused_across_models_or_configs() {
    let dir = scratch("records");
    let f = small_sweep(&dir, "[0.3, 0.4]");
    let kept = dir.join("kept");
    let first = sweep(&f, &dir.join("a"), &["--records", kept.to_str().unwrap()]);
    assert!(first.status.success(), "{}", stderr(&first));
    let mut recs: Vec<PathBuf> = std::fs::read_dir(&kept).unwrap().map(|e| e.unwrap().path()).collect();
    recs.sort();
    assert_eq!(recs.len(), 2);
    let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&recs[0]).unwrap()).unwrap();
    for k in ["point", "model", "config_sha256", "git_commit", "summary"] {
        assert!(!rec[k].is_null(), "record lacks {k}: {rec}");
    }
    assert!(std::fs::metadata(&recs[0]).unwrap().len() < 20_000, "a record should be a few KB");
    let csv_a = std::fs::read_to_string(dir.join("a/results.csv")).unwrap();

    // A new machine: no output folder, only the records. Nothing runs, same table.
    let b = dir.join("b");
    let second = sweep(&f, &b, &["--records", kept.to_str().unwrap()]);
    assert!(stdout(&second).contains("2 points, 0 run, 2 cached"), "{}", stdout(&second));
    let csv_b = std::fs::read_to_string(b.join("results.csv")).unwrap();
    assert_eq!(stable_part(&csv_a), stable_part(&csv_b));
    assert_eq!(csv_a.lines().next(), csv_b.lines().next(), "a row from a record has the columns of one from a folder");

    // A record of another model, and one of another config, are run again, saying why.
    let mut old = rec.clone();
    old["model"] = "1999-01-01".into();
    std::fs::write(&recs[0], old.to_string()).unwrap();
    let mut other = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&recs[1]).unwrap()).unwrap();
    other["config_sha256"] = "0".repeat(64).into();
    std::fs::write(&recs[1], other.to_string()).unwrap();
    let third = sweep(&f, &dir.join("c"), &["--records", kept.to_str().unwrap()]);
    assert!(stdout(&third).contains("2 points, 2 run, 0 cached"), "{}", stdout(&third));
    assert!(stderr(&third).contains("its record is of model 1999-01-01"), "{}", stderr(&third));
    assert!(stderr(&third).contains("its record is of another resolved config"), "{}", stderr(&third));
    let now: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&recs[0]).unwrap()).unwrap();
    assert_ne!(now["model"], "1999-01-01", "the rerun's record replaces the stale one");
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

/// A 2-point sweep on the quickstart with messages.csv written, its points
/// `duration_ms` long.
fn small_sweep(dir: &Path, durations: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/quickstart.toml");
    let text = format!(
        "base = {:?}\n[set]\nrun.warmup_ms = 0.1\noutput.messages = true\n[grid]\nrun.duration_ms = {durations}\n",
        base.to_str().unwrap()
    );
    let f = dir.join("small.toml");
    std::fs::write(&f, text).unwrap();
    f
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn point_dirs(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("points")).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

#[test]
fn a_truncated_messages_csv_after_summary_is_rerun_and_reported() {
    let dir = scratch("trunc");
    let f = small_sweep(&dir, "[0.4, 0.5]");
    let out = dir.join("o");
    let first = sweep(&f, &out, &["--jobs", "2"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let pts = point_dirs(&out);
    assert_eq!(pts.len(), 2);
    for p in &pts {
        let m = std::fs::read_to_string(p.join("manifest.json")).unwrap();
        for name in ["summary.json", "messages.csv", "queues.csv", "config.resolved.toml", "point.json"] {
            assert!(m.contains(&format!("\"{name}\"")), "{name} not in {m}");
        }
    }
    let messages = pts[1].join("messages.csv");
    let whole = std::fs::read(&messages).unwrap();
    assert!(whole.len() > 200, "too few messages to truncate");

    // What a kill half-way through messages.csv left before: summary.json
    // there, messages.csv cut short. Now the manifest no longer matches.
    std::fs::write(&messages, &whole[..whole.len() / 2]).unwrap();
    let again = sweep(&f, &out, &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("2 points, 1 run, 1 cached, 0 failed; 1 was incomplete and ran again"),
        "{}",
        stdout(&again)
    );
    let id = pts[1].file_name().unwrap().to_str().unwrap();
    let expect = format!(
        "point {id} is incomplete (messages.csv has {} bytes, manifest.json says {})",
        whole.len() / 2,
        whole.len()
    );
    assert!(stderr(&again).contains(&expect), "{}", stderr(&again));
    assert_eq!(std::fs::read(&messages).unwrap(), whole, "the rerun did not write the whole file");

    // The same without the manifest (a run killed before it finished): rerun too.
    std::fs::write(&messages, &whole[..10]).unwrap();
    std::fs::remove_file(pts[1].join("manifest.json")).unwrap();
    let again = sweep(&f, &out, &[]);
    assert!(stdout(&again).contains("1 run, 1 cached, 0 failed; 1 was incomplete"), "{}", stdout(&again));
    let expect = format!("point {id} is incomplete (no manifest.json: the run did not finish)");
    assert!(stderr(&again).contains(&expect), "{}", stderr(&again));
    assert_eq!(std::fs::read(&messages).unwrap(), whole);

    // Complete points are not even reported.
    let again = sweep(&f, &out, &[]);
    assert!(stdout(&again).contains("2 points, 0 run, 2 cached, 0 failed; wrote"), "{}", stdout(&again));
    assert!(!stderr(&again).contains("incomplete"), "{}", stderr(&again));
}

/// A complete point whose config this build resolves differently (here its
/// base file changed; a changed default reads the same) is stale: run again.
#[test]
fn a_point_whose_resolved_config_changed_is_rerun_and_reported() {
    let dir = scratch("stale");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/quickstart.toml");
    let base = dir.join("base.toml");
    std::fs::copy(&src, &base).unwrap();
    let text = format!("base = {:?}\n[set]\nrun.warmup_ms = 0.1\n[grid]\nrun.duration_ms = [0.4, 0.5]\n", "base.toml");
    let f = dir.join("stale.toml");
    std::fs::write(&f, text).unwrap();
    let out = dir.join("o");
    assert!(sweep(&f, &out, &["--jobs", "2"]).status.success());
    let again = sweep(&f, &out, &[]);
    assert!(stdout(&again).contains("2 points, 0 run, 2 cached"), "{}", stdout(&again));

    let edited = std::fs::read_to_string(&base).unwrap().replace("load = 0.5", "load = 0.4");
    std::fs::write(&base, edited).unwrap();
    let again = sweep(&f, &out, &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stdout(&again).contains("2 points, 2 run, 0 cached, 0 failed; 2 were incomplete"), "{}", stdout(&again));
    let id = point_dirs(&out)[0].file_name().unwrap().to_str().unwrap().to_string();
    let expect = format!(
        "point {id} is incomplete (its config.resolved.toml is not what this build resolves: a default or its base \
         changed)"
    );
    assert!(stderr(&again).contains(&expect), "{}", stderr(&again));
    let resolved = std::fs::read_to_string(point_dirs(&out)[0].join("config.resolved.toml")).unwrap();
    assert!(resolved.contains("load = 0.4"), "{resolved}");
}

/// The processes whose parent is `ppid` (from /proc), with their command lines.
fn children_of(ppid: u32) -> Vec<(u32, String)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1).and_then(|s| s.parse::<u32>().ok()) == Some(ppid) {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            v.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    v
}

/// Alive, not a zombie: the process of `pid` exists and has not exited.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !matches!(s[s.rfind(')').map_or(0, |i| i + 1)..].split_whitespace().next(), Some("Z")))
}

/// A hang detector, not a speed claim: polls `f` for up to a minute.
fn within_a_minute<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(x) = f() {
            return x;
        }
        assert!(start.elapsed().as_secs() < 60, "gave up after a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_kills_the_points_and_a_second_sweep_is_refused() {
    let dir = scratch("term");
    // One short point, then one that would take many minutes (10 s simulated: not longer, or
    // its memory estimate, 23 GB at 100 s, exceeds what a loaded machine has and the sweep is
    // refused before it starts).
    let f = small_sweep(&dir, "[0.3, 10000.0]");
    let out = dir.join("o");
    let mut c = Command::new(env!("CARGO_BIN_EXE_fabriclab"));
    c.arg("sweep").arg(&f).arg("--out").arg(&out).args(["-q", "--jobs", "1"]);
    let mut parent = c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let (child, _) = within_a_minute(|| {
        children_of(parent.id()).into_iter().find(|(_, cmd)| cmd.contains("run.duration_ms=10000.0"))
    });

    // The sweep holds the directory: a second one (of short points, so that
    // without the lock it would finish and succeed) is refused, naming it.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let second = sweep(&small_sweep(&other, "[0.3]"), &out, &[]);
    assert_eq!(second.status.code(), Some(2));
    let expect = format!("another sweep (process {}) is writing to {}", parent.id(), out.display());
    assert!(stderr(&second).contains(&expect), "{}", stderr(&second));

    // SAFETY: kill(2) on the sweep we started.
    unsafe { libc::kill(parent.id() as libc::pid_t, libc::SIGTERM) };
    let status = within_a_minute(|| parent.try_wait().unwrap());
    let mut err = String::new();
    std::io::Read::read_to_string(parent.stderr.as_mut().unwrap(), &mut err).unwrap();
    if running(child) {
        // SAFETY: the orphan the sweep should have killed; kill it so the test leaves nothing behind.
        unsafe { libc::kill(child as libc::pid_t, libc::SIGKILL) };
        panic!("the point's process {child} outlived the sweep: {err}");
    }
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    assert!(
        err.contains("stopped by SIGTERM: 1 of the 2 points to run finished; the running ones were killed"),
        "{err}"
    );

    // The finished point is complete; the stopped one has no manifest and says why.
    let pts = point_dirs(&out);
    let (done, stopped): (Vec<_>, Vec<_>) =
        pts.iter().partition(|p| std::fs::read_to_string(p.join("point.json")).unwrap().contains("\"ok\": true"));
    assert_eq!((done.len(), stopped.len()), (1, 1));
    assert!(done[0].join("manifest.json").exists());
    assert!(!stopped[0].join("manifest.json").exists() && !stopped[0].join("summary.json").exists());
    let pj = std::fs::read_to_string(stopped[0].join("point.json")).unwrap();
    assert!(pj.contains("stopped by SIGTERM"), "{pj}");
    // A killed run's lock file stays (its flock went with the process: the next run takes it over).
    let leftovers: Vec<_> = std::fs::read_dir(stopped[0]).unwrap().map(|e| e.unwrap().file_name()).collect();
    let known = ["point.json", "stdout.log", "stderr.log", "config.resolved.toml", "provenance.json", "run.lock"];
    assert!(
        leftovers.iter().all(|n| known.contains(&n.to_str().unwrap()) || n.to_str().unwrap().contains(".partial-")),
        "{leftovers:?}"
    );
    assert!(!out.join("results.csv").exists(), "a table of an interrupted sweep");
    assert!(!out.join("sweep.lock").exists(), "the lock outlived its sweep");
}

#[cfg(target_os = "linux")]
#[test]
fn a_lock_of_a_dead_sweep_is_taken_over() {
    let dir = scratch("dead-lock");
    let f = small_sweep(&dir, "[0.3]");
    let out = dir.join("o");
    std::fs::create_dir_all(&out).unwrap();
    // A pid that is certainly dead: a child we have reaped.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    std::fs::write(out.join("sweep.lock"), format!("{}\n", gone.id())).unwrap();
    let o = sweep(&f, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("was left by process {}, which is no longer running", gone.id())),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("sweep.lock").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn a_sigkilled_sweep_takes_its_points_with_it() {
    let dir = scratch("kill9");
    let f = small_sweep(&dir, "[10000.0]");
    let mut c = Command::new(env!("CARGO_BIN_EXE_fabriclab"));
    c.arg("sweep").arg(&f).arg("--out").arg(dir.join("o")).args(["-q", "--jobs", "1"]);
    let mut parent = c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let (child, _) = within_a_minute(|| children_of(parent.id()).into_iter().find(|(_, cmd)| cmd.contains(" run ")));
    // SAFETY: kill(2) on the sweep we started; SIGKILL runs no handler of its own.
    unsafe { libc::kill(parent.id() as libc::pid_t, libc::SIGKILL) };
    parent.wait().unwrap();
    within_a_minute(|| (!running(child)).then_some(()));
}

#[test]
fn set_fixes_a_key_for_every_point_and_refuses_an_axis() {
    let dir = scratch("set");
    let f = small_sweep(&dir, "[0.3, 0.4]");
    let out = dir.join("o");
    let o = sweep(&f, &out, &["--set", "workload.load=0.2", "--set", "output.messages=false"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for p in point_dirs(&out) {
        let cfg = std::fs::read_to_string(p.join("config.resolved.toml")).unwrap();
        assert!(cfg.contains("load = 0.2") && !p.join("messages.csv").exists(), "{}", p.display());
    }
    let o = sweep(&f, &dir.join("o2"), &["--set", "run.duration_ms=1.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("run.duration_ms") && stderr(&o).contains("is an axis of this sweep"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_point_run_by_another_model_is_rerun_and_reported() {
    let dir = scratch("model");
    let f = small_sweep(&dir, "[0.3]");
    let out = dir.join("o");
    assert!(sweep(&f, &out, &[]).status.success());
    let pj = point_dirs(&out)[0].join("point.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&pj).unwrap()).unwrap();
    assert_eq!(v["model"].as_str().map(str::len), Some(10), "point.json names its model: {v}");
    v["model"] = "1999-01-01".into();
    std::fs::write(&pj, v.to_string()).unwrap();
    // Re-seal, so that only the model differs.
    let m = point_dirs(&out)[0].join("manifest.json");
    let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&m).unwrap()).unwrap()
        ["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    fabriclab::files::seal(&point_dirs(&out)[0], &names).unwrap();
    let o = sweep(&f, &out, &[]);
    assert!(stdout(&o).contains("1 points, 1 run, 0 cached"), "{}", stdout(&o));
    assert!(stderr(&o).contains("it was run by model 1999-01-01"), "{}", stderr(&o));
}
