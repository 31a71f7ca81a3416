//! `fabriclab repro sird --quick` and `repro smartt --quick`: every figure and the report are produced.

use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabriclab-repro-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn repro(args: &[&str]) -> Command {
    repro_of("sird", args)
}

fn repro_of(paper: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fabriclab"));
    c.args(["repro", paper]).args(args);
    c
}

/// matplotlib present? CI installs it (.ci/run), so there a missing one is a failure, not a skip.
fn plotting_available() -> bool {
    let ok = Command::new("python3").args(["-c", "import matplotlib"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "matplotlib is missing in CI; .ci/run should install it");
        eprintln!("SKIPPED: python3 with matplotlib is not available (pip install matplotlib)");
    }
    ok
}

#[test]
fn quick_reproduction_produces_every_figure_and_the_report() {
    if !plotting_available() {
        return;
    }
    let out = scratch("quick");
    let o = repro(&["--quick", "--jobs", "2", "--out"]).arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    for n in [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] {
        for ext in ["png", "svg", "csv"] {
            let f = out.join(format!("fig{n}.{ext}"));
            assert!(std::fs::metadata(&f).is_ok_and(|m| m.len() > 100), "missing or empty {}", f.display());
        }
    }
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    let verdicts = ["holds", "holds qualitatively", "does not hold", "not measured"];
    for id in (1..=17).map(|i| format!("S{i}")).chain(["F2".to_string()]) {
        let heading = md
            .lines()
            .find(|l| l.starts_with(&format!("### {id}: ")))
            .unwrap_or_else(|| panic!("REPORT.md lacks {id}"));
        assert!(verdicts.iter().any(|v| heading == format!("### {id}: {v}")), "{heading}");
    }
    // The generated count line: N hold, N hold qualitatively, N do not hold, N not measured (18 in all).
    let counts = md.lines().find(|l| l.contains(" hold qualitatively, ")).expect("count line");
    let n: Vec<usize> =
        counts.split(',').filter_map(|p| p.trim_matches(['*', ' ', '.']).split(' ').next()?.parse().ok()).collect();
    assert_eq!((n.len(), n.iter().sum::<usize>()), (4, 18), "{counts}");
    assert!(counts.contains(" do not hold, ") && counts.ends_with("not measured.**"), "{counts}");
    assert!(out.join("measurements.toml").exists());
    assert!(md.contains("Mode: **quick") && md.contains("![Fig. 5"));
    assert!(!md.contains("## Failed points"), "some points failed:\n{md}");
    let html = std::fs::read_to_string(out.join("REPORT.html")).unwrap();
    assert!(html.contains("<table>") && html.contains("fig10.png"));
    let t4 = std::fs::read_to_string(out.join("table4.csv")).unwrap();
    assert_eq!(t4.lines().count(), 1 + 9 * 6, "Table 4: 9 scenarios x 6 protocols");
    // The congested-sender analogue is measured even in quick mode.
    assert!(md.contains("### S16: ") && !md.contains("### S16: not measured"));
}

#[test]
fn only_runs_the_chosen_figure_and_rejects_unknown_ones() {
    if !plotting_available() {
        return;
    }
    let out = scratch("only");
    let kept = scratch("only-records");
    let o = repro(&["--quick", "--only", "10", "--out"]).arg(&out).arg("--records").arg(&kept).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("fig10.png").exists() && !out.join("fig5.png").exists());
    // Each point's record, by sweep; a fresh output folder resumes from them alone.
    let recorded = std::fs::read_dir(kept.join("fig10")).unwrap().count();
    let again = scratch("only-again");
    let o = repro(&["--quick", "--only", "10", "--out"]).arg(&again).arg("--records").arg(&kept).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(again.join("REPORT.md")).unwrap();
    assert!(recorded > 0 && md.contains(&format!("{recorded} points (0 run now, {recorded} reused)")), "{md}");
    assert!(out.join("sweeps/fig10/results.parquet").exists() && !out.join("sweeps/evaluation").exists());
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(md.contains("### S1: not measured") && !md.contains("### S16: not measured"));
    // Quick mode's caveat stands under the count in the terminal, as in REPORT.md.
    let stdout = String::from_utf8_lossy(&o.stdout);
    let caveat = fabriclab_repro::QUICK_CAVEAT;
    assert!(stdout.contains(&format!("not measured\nwarning: {caveat}\n")), "{stdout}");
    assert!(md.contains(&format!("**Warning: {caveat}.**")), "{md}");
    // A figure that did not run leaves its claims "not run", never holding.
    assert!(md.contains("| S1 |") && md.contains("not run"), "{md}");

    let o = repro(&["--only", "fig99"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("fig99") && err.contains("fig10"), "{err}");
}

#[test]
fn a_missing_python_is_a_clear_error() {
    let o = repro(&["--quick", "--out"]).arg(scratch("nopy")).env("PYTHON", "/nonexistent/python3").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("python3") && err.contains("matplotlib") && !err.contains("panicked"), "{err}");
}

#[test]
fn smartt_quick_reproduction_produces_every_figure_and_claim() {
    if !plotting_available() {
        return;
    }
    let out = scratch("smartt-quick");
    let o = repro_of("smartt", &["--quick", "--jobs", "2", "--out"]).arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    for n in ["1", "2", "6", "7", "8", "9", "10", "11", "11q", "12", "13"] {
        for ext in ["png", "svg", "csv"] {
            let f = out.join(format!("fig{n}.{ext}"));
            assert!(std::fs::metadata(&f).is_ok_and(|m| m.len() > 100), "missing or empty {}", f.display());
        }
    }
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(md.contains("Mode: **quick"), "{md}");
    assert!(!md.contains("## Failed points"), "some points failed:\n{md}");
    // Every claim has its section, and the count line adds up the sections' verdicts.
    let verdicts: Vec<&str> = (1..=22)
        .map(|i| {
            let head = format!("### R{i}: ");
            let at = md.find(&head).unwrap_or_else(|| panic!("REPORT.md lacks R{i}")) + head.len();
            md[at..].lines().next().unwrap()
        })
        .collect();
    let n = |v: &str| verdicts.iter().filter(|&&x| x == v).count();
    let line = format!(
        "**{} hold, {} hold qualitatively, {} do not hold, {} not measured.**",
        n("holds"),
        n("holds qualitatively"),
        n("does not hold"),
        n("not measured")
    );
    assert!(md.contains(&line), "REPORT.md lacks {line}:\n{md}");
    // Claims measured from completion times, losses and trims are judged even on quick mode's small
    // tree (those resting on a p99 over 16 flows, or on Fig. 5b's 32 MiB point, are not).
    for id in ["R1", "R3", "R4", "R8", "R9", "R11", "R13", "R16", "R17", "R18", "R19", "R20"] {
        assert!(!md.contains(&format!("### {id}: not measured")), "{id} not measured:\n{md}");
    }
    // The paper's own arithmetic is not simulated.
    for id in ["R21", "R22"] {
        assert!(md.contains(&format!("### {id}: not measured")), "{id} should not be measured");
    }
    // BBR runs in Figs. 1, 10 and 11.
    for n in ["1", "10", "11"] {
        let csv = std::fs::read_to_string(out.join(format!("fig{n}.csv"))).unwrap();
        assert!(csv.contains(",BBR,"), "fig{n}.csv lacks BBR");
    }
    let fig11 = std::fs::read_to_string(out.join("fig11.csv")).unwrap();
    for case in ["(a) 2:1", "(b) 4:1", "(c) 4 parallel", "(d) one 4 MiB flow"] {
        assert!(fig11.contains(case), "fig11.csv lacks {case}");
    }
    // R15's two parts on the authors' queues are measured from fig11q's points.
    for part in ["fastest_2to1_authors_queues", "fastest_4to1_authors_queues"] {
        let row =
            md.lines().find(|l| l.starts_with(&format!("| {part} (side) |"))).unwrap_or_else(|| panic!("no {part}"));
        assert!(!row.contains("not measured"), "{row}");
    }
}

#[test]
fn quick_paydebt_reproduction_produces_every_figure_and_claim() {
    if !plotting_available() {
        return;
    }
    let out = scratch("paydebt");
    let o = repro_of("paydebt", &["--quick", "--jobs", "2", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let figures = [
        "fig3", "fig8", "fig8c", "fig9a", "fig9b", "fig9c", "fig9d", "fig9e", "fig10", "fig11", "fig11c", "fig12",
        "fig13", "fig14a", "fig14b", "fig14c", "fig15", "fig16a", "fig16b", "fig16c", "fig16d",
    ];
    for f in figures {
        for ext in ["png", "svg", "csv"] {
            let p = out.join(format!("{f}.{ext}"));
            assert!(std::fs::metadata(&p).is_ok_and(|m| m.len() > 100), "missing or empty {}", p.display());
        }
    }
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    for id in ["H1", "H2", "H3", "H4", "M1", "T1", "T2"]
        .into_iter()
        .map(String::from)
        .chain((1..=15).map(|i| format!("S{i}")))
    {
        assert!(md.contains(&format!("### {id}: ")), "REPORT.md lacks {id}");
    }
    assert!(!md.contains("## Failed points"), "some points failed:\n{md}");
    assert!(
        md.lines().any(|l| l.contains("hold,") && l.contains("hold qualitatively,") && l.contains("not measured")),
        "REPORT.md lacks the count line:\n{md}"
    );
    // Every claim part is recorded (a value, or why there is none) in measurements.toml.
    let m = std::fs::read_to_string(out.join("measurements.toml")).unwrap();
    for id in ["S5", "S13", "S14", "T1", "T2"] {
        assert!(m.contains(&format!("claim = \"{id}\"")), "measurements.toml lacks {id}");
    }
    // Fig. 11: PayDebt's Jain index is recorded from the tapped re-run.
    assert!(m.contains("part = \"paydebt_fairer\""), "no S5 fairness measurement");
    // Fig. 11c: the token queue is measured from the fig11 point's queue series (a value, not a reason).
    let token =
        m.split("[[entry]]").find(|e| e.contains("part = \"token_queue_near_kt\"")).expect("no token queue part");
    assert!(!token.contains("missing"), "S5's token queue was not measured:\n{token}");
    let series = std::fs::read_to_string(out.join("fig11c.csv")).unwrap();
    assert!(series.starts_with("time_us,token_queue_bytes,") && series.lines().count() > 100, "fig11c.csv");
    // Figs. 9d, 9e and 10: FCT per flow-size bin, from the Fig. 9 sweeps' summaries.
    for (f, col) in
        [("fig9d", "fct_us_le_10_mean"), ("fig9e", "fct_us_gt_10000000_mean"), ("fig10", "fct_us_le_1460_p99")]
    {
        let csv = std::fs::read_to_string(out.join(format!("{f}.csv"))).unwrap();
        assert!(csv.lines().next().is_some_and(|h| h.split(',').any(|c| c == col)), "{f}.csv lacks {col}");
    }
}
