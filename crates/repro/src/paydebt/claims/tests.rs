//! The measure code on small fixed tables, judged by the engine: the judge
//! accepting the records also proves every (claim, part, unit) matches
//! claims.toml.

use crate::engine::{JudgedClaim, Verdict};
use crate::paydebt::PAPER;
use crate::Tables;
use fabriclab::sweep::{Cell, Table};

/// One successful run: `stable` as given, the other columns as listed.
fn run(stable: bool, cols: &[(&str, Cell)]) -> Vec<(String, Cell)> {
    let mut r = vec![("status".to_string(), Cell::Str("ok".into())), ("stable".to_string(), Cell::Bool(stable))];
    r.extend(cols.iter().map(|(k, v)| (k.to_string(), v.clone())));
    r
}

/// The debt-timing ablation (fig16b): max buffer per debt mode.
fn fig16b(bufs: &[(&str, f64, bool)]) -> Table {
    let rows: Vec<_> = bufs
        .iter()
        .map(|&(mode, b, stable)| {
            run(stable, &[("protocol.paydebt.debt", mode.into()), ("shared_buffer_max_bytes", Cell::Float(b))])
        })
        .collect();
    Table::from_records(&rows)
}

fn judged(tables: Tables) -> Vec<JudgedClaim> {
    let m = crate::measure(&PAPER, &tables, "test");
    crate::judge(&PAPER, &m, 1).unwrap_or_else(|e| panic!("{e}"))
}

fn claim<'a>(j: &'a [JudgedClaim], id: &str) -> &'a JudgedClaim {
    j.iter().find(|c| c.claim.id == id).unwrap_or_else(|| panic!("no claim {id}"))
}

#[test]
fn debt_timing_holds_at_the_papers_ratios() {
    let t = fig16b(&[("paydebt", 100e3, true), ("none", 372e3, true), ("late", 214e3, true), ("early", 102e3, true)]);
    let j = judged(Tables::from([("fig16b".to_string(), t)]));
    let s13 = claim(&j, "S13");
    assert_eq!(s13.verdict, Verdict::Holds, "{}", s13.reason);
    // Claims whose sweeps did not run are not measured, never held.
    assert_eq!(claim(&j, "S3").verdict, Verdict::NotMeasured);
    assert_eq!(claim(&j, "M1").verdict, Verdict::NotMeasured);
}

#[test]
fn late_debt_worse_than_no_debt_does_not_hold() {
    // The full run's ordering: no debt 1.39x, late debt 1.65x PayDebt's buffer.
    let t = fig16b(&[("paydebt", 100e3, true), ("none", 139e3, true), ("late", 165e3, true), ("early", 97e3, true)]);
    let j = judged(Tables::from([("fig16b".to_string(), t)]));
    let s13 = claim(&j, "S13");
    assert_eq!(s13.verdict, Verdict::DoesNotHold);
    let late_beats_none = s13.parts.iter().find(|p| p.part.id == "late_beats_none").unwrap();
    assert_eq!(late_beats_none.verdict, Verdict::DoesNotHold);
}

#[test]
fn an_unstable_run_is_read_only_in_sweeps_overloaded_by_construction() {
    // fig16b runs Hadoop on the 4:1 fabric at the paper's (host-link) load: overloaded, read as is.
    let t = fig16b(&[("paydebt", 100e3, false), ("none", 372e3, true), ("late", 214e3, true), ("early", 100e3, true)]);
    let j = judged(Tables::from([("fig16b".to_string(), t.clone())]));
    let s13 = claim(&j, "S13");
    assert_eq!(s13.verdict, Verdict::Holds, "{}", s13.reason);
    // The same unstable run in a sweep the load does not overload (the non-blocking fabric of
    // Fig. 14c, the testbed) leaves its parts not measured.
    let sel: &[(&str, Cell)] = &[("protocol.paydebt.debt", "paydebt".into())];
    for name in ["fig14c", "fig8", "fig16a"] {
        let why = super::Sweep { name, t: Some(&t) }.row(sel).unwrap_err();
        assert!(why.contains("run unstable"), "{name}: {why}");
    }
    assert!(super::Sweep { name: "fig16b", t: Some(&t) }.row(sel).is_ok());
}

/// Fig. 15 rows: PayDebt and Homa at 8 MB, 4 MB and 800 KB (Hadoop).
fn fig15(small_count: f64, homa_4mb_small_mean: f64) -> Table {
    let mut rows = Vec::new();
    for (p, bytes, drops, mean, p99, buf) in [
        ("paydebt", 8e6, 0.0, 100.0, 1000.0, 1.0e6),
        ("paydebt", 4e6, 0.0, 100.0, 1000.0, 1.0e6),
        ("paydebt", 8e5, 10.0, 103.5, 1000.0, 0.8e6),
        ("homa", 8e6, 0.0, 80.0, 500.0, 6.0e6),
        ("homa", 4e6, 30.0, homa_4mb_small_mean, 900.0, 4.0e6),
        ("homa", 8e5, 500.0, 200.0, 2000.0, 0.8e6),
    ] {
        rows.push(run(
            true,
            &[
                ("protocol.name", p.into()),
                ("network.shared_buffer.bytes", Cell::Float(bytes)),
                ("drops", Cell::Float(drops)),
                ("packets_sent", Cell::Float(100_000.0)),
                ("fct_us_small_mean", Cell::Float(mean)),
                ("fct_us_small_p99", Cell::Float(p99)),
                ("fct_us_small_count", Cell::Float(small_count)),
                ("fct_us_all_mean", Cell::Float(mean * 2.0)),
                ("fct_us_all_p99", Cell::Float(p99 * 2.0)),
                ("fct_us_all_count", Cell::Float(small_count * 1.2)),
                ("shared_buffer_max_bytes", Cell::Float(buf)),
            ],
        ));
    }
    Table::from_records(&rows)
}

fn part<'a>(c: &'a JudgedClaim, id: &str) -> &'a crate::engine::judge::JudgedPart {
    c.parts.iter().find(|p| p.part.id == id).unwrap_or_else(|| panic!("{}: no part {id}", c.claim.id))
}

#[test]
fn homa_that_does_not_degrade_at_4mb_does_not_hold_and_few_samples_are_not_measured() {
    // Homa's small flows 15% slower at 4 MB (inside 10.6%-19.0%), 2,000 small flows.
    let j = judged(Tables::from([("fig15".to_string(), fig15(2000.0, 92.0))]));
    let s10 = claim(&j, "S10");
    assert_eq!(part(s10, "homa_small_mean_4mb").verdict, Verdict::Holds);
    assert_eq!(part(s10, "homa_tail_4mb").verdict, Verdict::Holds);
    assert_eq!(part(s10, "homa_tail_4mb").samples, Some(2000));
    // No degradation at all: the range claim fails instead of holding.
    let j = judged(Tables::from([("fig15".to_string(), fig15(2000.0, 80.0))]));
    let s10 = claim(&j, "S10");
    assert_eq!(part(s10, "homa_small_mean_4mb").verdict, Verdict::DoesNotHold);
    assert_eq!(s10.verdict, Verdict::DoesNotHold);
    // 500 small flows leave 5 beyond the p99: not measured.
    let j = judged(Tables::from([("fig15".to_string(), fig15(500.0, 92.0))]));
    let tail = part(claim(&j, "S10"), "homa_tail_4mb");
    assert_eq!(tail.verdict, Verdict::NotMeasured);
    assert!(tail.reason.contains("insufficient samples"), "{}", tail.reason);
    // S11 on the same rows: 0.01% loss and +3.5% small-flow mean hold.
    let s11 = claim(&j, "S11");
    assert_eq!(part(s11, "paydebt_loss").verdict, Verdict::Holds);
    assert_eq!(part(s11, "small_mean").verdict, Verdict::Holds);
    assert_eq!(part(s11, "better_than_homa").verdict, Verdict::Holds);
}

#[test]
fn aeolus_loss_that_never_occurs_is_a_failure_not_a_value() {
    let mut rows = Vec::new();
    for p in ["paydebt", "dcqcn", "hpcc", "homa", "homa_aeolus", "expresspass_aeolus"] {
        for load in [0.2, 0.8] {
            rows.push(run(
                true,
                &[
                    ("protocol.name", p.into()),
                    ("workload.load", Cell::Float(load)),
                    ("drops", Cell::Float(0.0)),
                    ("packets_sent", Cell::Float(1000.0)),
                    ("shared_buffer_max_bytes", Cell::Float(180e3 * (1.0 + load))),
                ],
            ));
        }
    }
    let j = judged(Tables::from([("fig12".to_string(), Table::from_records(&rows))]));
    let s6 = claim(&j, "S6");
    assert_eq!(part(s6, "paydebt_buffer_min").verdict, Verdict::Holds);
    assert_eq!(part(s6, "homa_buffer_grows").verdict, Verdict::Holds);
    assert_eq!(part(s6, "homa_aeolus_loss_grows").verdict, Verdict::DoesNotHold);
    assert_eq!(s6.verdict, Verdict::DoesNotHold);
}
