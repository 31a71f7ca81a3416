//! The measurement code on small fixed tables, judged by the engine: the
//! verdicts it gives, and (the judge returning Ok) that every recorded part
//! exists in claims.toml in the unit recorded.

use crate::engine::judge::{JudgedClaim, Verdict};
use crate::engine::measure::Outcome;
use crate::engine::Measurements;
use crate::smartt::PAPER;
use crate::Tables;
use fabriclab::sweep::{Cell, Table};

/// One successful, stable run with these columns.
fn run(cells: &[(&str, Cell)]) -> Vec<(String, Cell)> {
    let mut r = vec![("status".to_string(), Cell::from("ok")), ("stable".to_string(), Cell::Bool(true))];
    for (k, v) in cells {
        r.retain(|(name, _)| name != k);
        r.push((k.to_string(), v.clone()));
    }
    r
}

fn f(v: f64) -> Cell {
    Cell::Float(v)
}

/// A permutation point of Fig. 1 or 11: protocol, completion time (us), spread and flows.
fn perm(proto: &str, us: f64, extra: &[(&str, Cell)]) -> Vec<(String, Cell)> {
    let mut cells = vec![
        ("protocol.name", Cell::from(proto)),
        ("sim_time_s", f(us * 1e-6)),
        ("slowdown_all_p50", f(1.0)),
        ("slowdown_all_p99", f(1.2)),
        ("slowdown_all_count", f(1024.0)),
        ("trims", f(1000.0)),
    ];
    cells.extend(extra.iter().cloned());
    run(&cells)
}

/// Fig. 1 at 2 and 32 MiB, with these completion times (us) for SMaRTT, EQDS, Swift, BBR, MPRDMA.
fn fig1(times: [f64; 5]) -> Table {
    let mut rows = Vec::new();
    for b in [2.0, 32.0] {
        for (p, t) in ["smartt", "eqds", "swift", "bbr", "mprdma"].iter().zip(times) {
            rows.push(perm(p, t * b, &[("workload.bytes", f(b * 1048576.0))]));
        }
    }
    Table::from_records(&rows)
}

/// Fig. 11's four cases with these completion times; `unstable` marks one (case, protocol).
fn fig11(times: [f64; 5], unstable: Option<(&str, &str)>) -> Table {
    let cases = [("a", 400.0, 1.0, 2.0), ("b", 200.0, 1.0, 2.0), ("c", 100.0, 4.0, 2.0), ("d", 100.0, 1.0, 4.0)];
    let mut rows = Vec::new();
    for (name, rate, count, large) in cases {
        for (p, t) in ["smartt", "eqds", "swift", "bbr", "mprdma"].iter().zip(times) {
            let stable = unstable != Some((name, p));
            rows.push(perm(
                p,
                t,
                &[
                    ("topology.fabric_rate_gbps", f(rate)),
                    ("workload.count", f(count)),
                    ("workload.large_bytes", f(large * 1048576.0)),
                    ("stable", Cell::Bool(stable)),
                ],
            ));
        }
    }
    Table::from_records(&rows)
}

fn judge(t: &Tables) -> (Measurements, Vec<JudgedClaim>) {
    let m = crate::measure(&PAPER, t, "test");
    let j = crate::judge(&PAPER, &m, 1).unwrap_or_else(|e| panic!("{e}"));
    (m, j)
}

fn verdict(j: &[JudgedClaim], id: &str) -> (Verdict, String) {
    let c = j.iter().find(|c| c.claim.id == id).unwrap_or_else(|| panic!("no claim {id}"));
    (c.verdict, c.reason.clone())
}

fn value(m: &Measurements, claim: &str, part: &str) -> Option<f64> {
    let e = m.entries.iter().find(|e| e.claim == claim && e.part == part)?;
    match e.outcome {
        Outcome::Value(v) => Some(v),
        _ => None,
    }
}

#[test]
fn smartt_beaten_by_a_named_baseline_does_not_hold_r1() {
    // MPRDMA finishes in 0.59x of SMaRTT's time: "outperforms or matches" fails for it.
    let times = [100.0, 150.0, 110.0, 105.0, 59.0];
    let t = Tables::from([("fig1".into(), fig1(times)), ("fig11".into(), fig11(times, None))]);
    let (m, j) = judge(&t);
    assert!((value(&m, "R1", "vs_mprdma").unwrap() - 0.59).abs() < 1e-9);
    assert!((value(&m, "R1", "vs_swift").unwrap() - 1.10).abs() < 1e-9);
    assert!((value(&m, "R1", "up_to").unwrap() - 1.5).abs() < 1e-9);
    let (v, why) = verdict(&j, "R1");
    assert_eq!(v, Verdict::DoesNotHold);
    assert!(why.starts_with("vs_mprdma"), "{why}");
    // R4: EQDS 1.36x Swift's and 2.5x MPRDMA's time at 32 MiB.
    assert_eq!(verdict(&j, "R4").0, Verdict::Holds);
    // R14: the fastest other is MPRDMA, ahead of SMaRTT.
    assert_eq!(verdict(&j, "R14").0, Verdict::DoesNotHold);
    // R16: EQDS's 1.5x holds, but the other senders are not 10% slower (MPRDMA is ahead).
    let (v, why) = verdict(&j, "R16");
    assert_eq!(v, Verdict::DoesNotHold);
    assert!(why.starts_with("senders_gap"), "{why}");
    // R18: equal trims, 1x against 155x.
    assert_eq!(verdict(&j, "R18").0, Verdict::DoesNotHold);
}

#[test]
fn smartt_ahead_of_every_baseline_holds_r1_and_r15() {
    let times = [100.0, 140.0, 120.0, 130.0, 125.0];
    let t = Tables::from([("fig1".into(), fig1(times)), ("fig11".into(), fig11(times, None))]);
    let (m, j) = judge(&t);
    assert_eq!(verdict(&j, "R1").0, Verdict::Holds, "{:?}", verdict(&j, "R1"));
    assert_eq!(verdict(&j, "R15").0, Verdict::Holds);
    // R17: the other senders 1.2x behind SMaRTT, where the paper says almost 30%: within [1.15, 1.45].
    assert!((value(&m, "R17", "senders_gap").unwrap() - 1.2).abs() < 1e-9);
    // ... but EQDS (1.4x) does not beat them: R17 does not hold on its second part.
    let (v, why) = verdict(&j, "R17");
    assert_eq!(v, Verdict::DoesNotHold);
    assert!(why.starts_with("eqds_beats_senders"), "{why}");
}

#[test]
fn an_unstable_run_leaves_its_parts_not_measured() {
    // Every claim on these cases would hold: EQDS is ahead of the other senders in 11d.
    let times = [100.0, 110.0, 120.0, 130.0, 125.0];
    let t = Tables::from([("fig1".into(), fig1(times)), ("fig11".into(), fig11(times, Some(("d", "smartt"))))]);
    let (m, j) = judge(&t);
    let (v, why) = verdict(&j, "R17");
    assert_eq!(v, Verdict::NotMeasured);
    assert!(why.contains("run unstable: smartt, Fig. 11d"), "{why}");
    // R1 needs every case: not measured either, while R15 (cases a and b) still holds.
    assert_eq!(verdict(&j, "R1").0, Verdict::NotMeasured, "{:?}", verdict(&j, "R1"));
    assert_eq!(verdict(&j, "R15").0, Verdict::Holds, "{:?}", verdict(&j, "R15"));
    assert_eq!(value(&m, "R1", "vs_eqds"), None);
}

#[test]
fn a_percentile_on_too_few_flows_is_not_measured() {
    // Quick mode's 16 flows leave 0.16 beyond the p99 of Swift's spread.
    let mut rows = Vec::new();
    for p in ["smartt", "eqds", "swift", "bbr", "mprdma"] {
        rows.push(perm(p, 100.0, &[("workload.bytes", f(2.0 * 1048576.0)), ("slowdown_all_count", f(16.0))]));
    }
    let t = Tables::from([("fig1".into(), Table::from_records(&rows))]);
    let (_, j) = judge(&t);
    let (v, why) = verdict(&j, "R2");
    assert_eq!(v, Verdict::NotMeasured);
    assert!(why.contains("insufficient samples"), "{why}");
}

#[test]
fn nothing_run_records_every_part_missing_and_judges_nothing() {
    let (m, j) = judge(&Tables::new());
    assert!(m.entries.iter().all(|e| matches!(e.outcome, Outcome::Missing(_))));
    let file = PAPER.claims_file().unwrap();
    for c in &file.claims {
        for p in &c.parts {
            assert!(m.entries.iter().any(|e| e.claim == c.id && e.part == p.id), "{} {} is not recorded", c.id, p.id);
        }
    }
    assert!(j.iter().all(|c| c.verdict == Verdict::NotMeasured));
    assert_eq!(j.len(), 22);
}

#[test]
fn windows_that_never_halve_fail_r5_and_r6_is_judged_on_its_bound() {
    let sig = |signals: &str, every: f64, us: f64, halved: f64, jain: f64| {
        run(&[
            ("protocol.smartt.signals", Cell::from(signals)),
            ("protocol.smartt.react_every", f(every)),
            ("sim_time_s", f(us * 1e-6)),
            ("cwnd_flows", f(8.0)),
            ("cwnd_halved_flows", f(halved)),
            ("cwnd_halving_us", f(25.0)),
            ("cwnd_jain", f(jain)),
            ("slowdown_all_p50", f(1.0)),
            ("slowdown_all_p99", f(1.1)),
            ("slowdown_all_count", f(8.0)),
        ])
    };
    let fig2 = Table::from_records(&[
        sig("smartt", 1.0, 100.0, 8.0, 0.99),
        sig("ecn_only", 1.0, 120.0, 7.0, 0.8),
        sig("rtt_only", 1.0, 130.0, 8.0, 0.9),
        sig("smartt", 50.0, 103.0, 8.0, 0.99),
    ]);
    let (m, j) = judge(&Tables::from([("fig2".into(), fig2)]));
    let (v, why) = verdict(&j, "R5");
    assert_eq!(v, Verdict::DoesNotHold);
    assert!(why.contains("ECN-only's windows did not all fall to half"), "{why}");
    assert!((value(&m, "R6", "within").unwrap() - 1.03).abs() < 1e-9);
    assert_eq!(verdict(&j, "R6").0, Verdict::Holds);
}

#[test]
fn r10_is_judged_on_its_drops_and_says_its_adaptation_time_is_not_simulated() {
    let lb = |kind: &str, scope: &str, reuse: &str, lost: f64| {
        run(&[
            ("protocol.smartt.lb.kind", Cell::from(kind)),
            ("protocol.smartt.lb.scope", Cell::from(scope)),
            ("protocol.smartt.lb.reuse", Cell::from(reuse)),
            ("link_down_drops", f(lost)),
        ])
    };
    let fig7c = Table::from_records(&[
        lb("reps", "message", "cached", 10_281.0),
        lb("reps", "connection", "cached", 339.0),
        lb("reps", "connection", "once", 1_411.0),
        lb("spray", "message", "cached", 15_818.0),
    ]);
    let (m, j) = judge(&Tables::from([("fig7c".into(), fig7c)]));
    assert!((value(&m, "R10", "fewer_drops").unwrap() - 15_818.0 / 339.0).abs() < 1e-9);
    let c = j.iter().find(|c| c.claim.id == "R10").unwrap();
    assert_eq!(c.parts[0].verdict, Verdict::Qualitative, "46.7x: more than an order of magnitude");
    // The adaptation time is not simulated: the drops decide, and the reason says what was left out.
    assert_eq!(c.verdict, Verdict::Qualitative);
    assert!(c.reason.contains("not simulated, so not judged: adapts_within"), "{}", c.reason);
    for id in ["R21", "R22"] {
        assert_eq!(verdict(&j, id).0, Verdict::NotMeasured);
    }
}
