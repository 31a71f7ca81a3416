//! The measurement code on a small fixed Fig. 3.2 table, judged by the engine.

use crate::engine::Verdict;
use crate::Tables;
use fabriclab::sweep::{Cell, Table};

/// A run of `protocol` at data buffer `buffer` with mean slowdown `sd` and mean queue `q`.
fn run(protocol: &str, buffer: f64, sd: f64, q: f64, stable: bool, done: f64) -> Vec<(String, Cell)> {
    [
        ("run.seed", Cell::Int(1)),
        ("status", Cell::Str("ok".into())),
        ("protocol", Cell::Str(protocol.into())),
        ("stable", Cell::Bool(stable)),
        ("network.buffer_bytes", Cell::Float(buffer)),
        ("messages_completed", Cell::Float(done)),
        ("slowdown_all_mean", Cell::Float(sd)),
        ("tor_queue_mean_bytes", Cell::Float(q)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn judge(rows: &[Vec<(String, Cell)>]) -> Vec<crate::engine::JudgedClaim> {
    let t = Tables::from([("fig3_2_homa".to_string(), Table::from_records(rows))]);
    let m = crate::measure(&super::PAPER, &t, "test");
    crate::judge(&super::PAPER, &m, 1).unwrap_or_else(|e| panic!("{e}"))
}

fn verdict(j: &[crate::engine::JudgedClaim], id: &str) -> Verdict {
    j.iter().find(|c| c.claim.id == id).map(|c| c.verdict).unwrap()
}

#[test]
fn incast_claims_judge_to_the_expected_verdicts() {
    // As the thesis says: Homa better with the large buffer, NDP with the small
    // one, Homa-Tr as Homa (large), 2x Homa and 1.5x NDP (small).
    let thesis = [
        run("ndp", 256e3, 3.0, 40e3, true, 10.0),
        run("homa", 256e3, 2.0, 10e3, true, 10.0),
        run("homa_tr", 256e3, 2.0, 10e3, true, 10.0),
        run("ndp", 108e3, 3.0, 40e3, true, 10.0),
        run("homa", 108e3, 2.0, 10e3, true, 10.0),
        run("homa_tr", 108e3, 2.0, 10e3, true, 10.0),
        run("ndp", 54e3, 3.0, 30e3, true, 10.0),
        run("homa", 54e3, 4.0, 30e3, true, 10.0),
        run("homa_tr", 54e3, 2.0, 30e3, true, 10.0),
    ];
    let j = judge(&thesis);
    assert_eq!(verdict(&j, "N6"), Verdict::Holds);
    assert_eq!(verdict(&j, "N7"), Verdict::Holds);
    assert_eq!(verdict(&j, "N1"), Verdict::NotMeasured, "hardware");

    // Homa 131x Homa-Tr's slowdown at 54 KB: far outside "~2x".
    let mut overshoot = thesis.clone();
    overshoot[7] = run("homa", 54e3, 262.0, 30e3, true, 10.0);
    let j = judge(&overshoot);
    assert_eq!(verdict(&j, "N6"), Verdict::DoesNotHold);

    // An unstable run, or one whose messages did not all complete, leaves the part not measured.
    let mut unstable = thesis.clone();
    unstable[1] = run("homa", 256e3, 2.0, 10e3, false, 10.0);
    let j = judge(&unstable);
    assert_eq!(verdict(&j, "N7"), Verdict::NotMeasured);
    let n7 = j.iter().find(|c| c.claim.id == "N7").unwrap();
    assert!(n7.reason.contains("run unstable"), "{}", n7.reason);
    let mut short = thesis.clone();
    short[8] = run("homa_tr", 54e3, 2.0, 30e3, true, 9.0);
    assert_eq!(verdict(&judge(&short), "N6"), Verdict::NotMeasured);
}
