//! `fabriclab repro nanotransport --quick` and `fabriclab repro bolt --quick`
//! (Arslan thesis, ch. 3 and 4): every figure, and a REPORT with every claim.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run_quick(paper: &str) -> Option<PathBuf> {
    let ok = Command::new("python3").args(["-c", "import matplotlib"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "matplotlib is missing in CI; .ci/run should install it");
        eprintln!("SKIPPED: python3 with matplotlib is not available (pip install matplotlib)");
        return None;
    }
    let out = std::env::temp_dir().join(format!("fabriclab-repro-{}-{paper}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab"))
        .args(["repro", paper, "--quick", "--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(out)
}

fn check(out: &Path, figures: &[&str], claims: &[&str], measured: &[&str]) {
    for f in figures {
        for ext in ["png", "svg", "csv"] {
            let p = out.join(format!("{f}.{ext}"));
            assert!(std::fs::metadata(&p).is_ok_and(|m| m.len() > 100), "missing or empty {}", p.display());
        }
    }
    let md = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    for c in claims {
        assert!(md.contains(&format!("### {c}: ")), "REPORT.md lacks {c}");
    }
    for c in measured {
        assert!(!md.contains(&format!("### {c}: not measured")), "{c} is not measured:\n{md}");
    }
    assert!(!md.contains("## Failed points"), "some points failed:\n{md}");
    let counts =
        md.lines().any(|l| l.contains(" hold, ") && l.contains(" hold qualitatively, ") && l.contains(" not measured"));
    assert!(counts, "REPORT.md lacks the count line:\n{md}");
}

#[test]
fn nanotransport_quick_reproduction() {
    let Some(out) = run_quick("nanotransport") else { return };
    let claims = ["N1", "N2", "N3", "N4", "N5", "N6", "N7", "N8", "N9"];
    // The incast is the same size in quick and full mode: both claims are measured.
    check(&out, &["fig3.2a", "fig3.2b"], &claims, &["N6", "N7"]);
}

#[test]
fn bolt_quick_reproduction() {
    let Some(out) = run_quick("bolt") else { return };
    let claims: Vec<String> = (1..=21).map(|i| format!("R{i}")).collect();
    let claims: Vec<&str> = claims.iter().map(String::as_str).collect();
    let figures = [
        "table4.1", "table4.2", "fig4.2", "fig4.10", "fig4.11", "fig4.12", "fig4.13", "fig4.14", "fig4.15", "fig4.16",
        "fig4.17",
    ];
    // Quick mode's fat-tree runs (0.6 ms) are unstable and its 100-flow incast
    // leaves one flow beyond the p99: R6-R9 are not measured there. Its lone
    // sender of Fig. 4.13 is unstable over 20 ms (R10's queue part), its 63
    // senders are not (R11). The tapped runs are the same as in full mode
    // (R12-R17 and R19).
    check(&out, &figures, &claims, &["R11", "R12", "R13", "R14", "R15", "R16", "R17", "R19"]);
    // The tapped re-runs wrote their tables.
    let t41 = std::fs::read_to_string(out.join("table4_1.csv")).unwrap();
    assert_eq!(t41.lines().count(), 1 + 4, "PRU x SM");
    let f412 = std::fs::read_to_string(out.join("fig4_12.csv")).unwrap();
    assert_eq!(f412.lines().count(), 1 + 2, "SM on and off");
    // SM takes the bandwidth a reroute frees at least twice as fast as
    // additive increase alone. (Whether it does so in the thesis's 23 us is R14's
    // verdict: since the fail-safe increase waits a packet's round trip, as the
    // artifact's AI flag, it does not: docs/repro.md, "R14".)
    let mut lines = f412.lines().map(|l| l.split(',').collect::<Vec<_>>());
    let cols = lines.next().unwrap();
    let col = |name: &str| cols.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no {name} in {cols:?}"));
    let (sm, us) = (col("protocol.bolt.sm"), col("capture_us"));
    let rows: Vec<Vec<&str>> = lines.collect();
    let capture = |on: &str| -> f64 {
        let row = rows.iter().find(|r| r[sm] == on).unwrap_or_else(|| panic!("no SM {on} row: {f412}"));
        row[us].parse().unwrap_or_else(|_| panic!("SM {on}: no capture time ({:?})", row[us]))
    };
    let (on, off) = (capture("true"), capture("false"));
    assert!(on * 2.0 < off, "SM on captures in {on} us, SM off in {off} us");
}
