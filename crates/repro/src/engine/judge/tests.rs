//! Every rule shape returning each of the four verdicts, with units kept apart.

use super::Verdict::*;
use super::*;
use crate::engine::claims::parse;
use crate::engine::measure::Record;

/// A claims file of one claim per rule shape:
/// F: "12x less queuing" (a factor: holds within 1.5x, qualitatively within 2x);
/// C: "+9% goodput" (a change near no effect: percent, plus or minus points);
/// R: "median slowdown in [1.25, 1.31]" (a range, a p50);
/// M: "never above 0.8 MB" (a one-sided bound);
/// P: "p99 slowdown about 4" (a percentile: the sample rule applies);
/// T: two headline parts and a side part; N: not simulated.
const FILE: &str = r#"
paper = "Test"
source = "a unit test"

[[claim]]
id = "F"
where = "Fig. 1"
statement = "A queues 12x less than B."
[[claim.part]]
id = "queue"
measures = "B / A peak queue"
unit = "ratio"
paper = 12.0
holds = { factor = 1.5, why = "test" }
qualitative = { factor = 2.0, why = "test" }

[[claim]]
id = "C"
where = "Fig. 2"
statement = "+9% goodput."
[[claim.part]]
id = "gain"
measures = "goodput change"
unit = "percent"
paper = 9.0
holds = { plus_minus = 4.5, why = "half the effect" }
qualitative = { band = [4.5, 25.0], why = "at least half the gain, up to 25%" }

[[claim]]
id = "R"
where = "§5"
statement = "Median slowdown in [1.25, 1.31]."
[[claim.part]]
id = "p50"
measures = "median slowdown"
unit = "slowdown"
paper = [1.25, 1.31]
percentile = 50
holds = { plus_minus = 0.05, why = "test" }
qualitative = { plus_minus = 0.3, why = "test" }

[[claim]]
id = "M"
where = "§5"
statement = "Never above 0.8 MB."
[[claim.part]]
id = "peak"
measures = "peak queue"
unit = "MB"
paper = 0.8
side = "at_most"
holds = { factor = 1.1, why = "test" }
qualitative = { factor = 2.0, why = "test" }

[[claim]]
id = "P"
where = "Fig. 6"
statement = "p99 slowdown about 4."
[[claim.part]]
id = "p99"
measures = "p99 slowdown"
unit = "slowdown"
paper = 4.0
percentile = 99
holds = { factor = 1.25, why = "test" }

[[claim]]
id = "T"
where = "Fig. 4"
statement = "Two headline parts and a side remark."
[[claim.part]]
id = "a"
measures = "a"
unit = "ratio"
paper = 2.0
holds = { factor = 1.2, why = "test" }
[[claim.part]]
id = "b"
measures = "b"
unit = "ratio"
paper = 3.0
holds = { factor = 1.2, why = "test" }
[[claim.part]]
id = "side"
measures = "c"
unit = "us"
paper = 5.0
headline = false
holds = { factor = 1.2, why = "test" }

[[claim]]
id = "D"
where = "Fig. 9"
statement = "A is slower than B (no size given)."
[[claim.part]]
id = "slower"
measures = "A / B completion time"
unit = "ratio"
paper = 1.0
side = "at_least"
direction_only = true
holds = { factor = 1.0, why = "a direction only" }
qualitative = { factor = 1.0, why = "a direction only" }

[[claim]]
id = "N"
where = "§6"
statement = "The NIC runs at line rate."
not_simulated = "a hardware property of the prototype"
"#;

fn file() -> ClaimsFile {
    parse(FILE, "test").unwrap()
}

fn part(claim: &str) -> Part {
    file().claims.into_iter().find(|c| c.id == claim).unwrap().parts.remove(0)
}

fn v(claim: &str, x: f64) -> Verdict {
    let p = part(claim);
    judge_value(&p, p.unit, x).unwrap().0
}

/// Judges `claim`'s first part at each value: the ones that hold, hold qualitatively, and do not
/// hold. One table per rule shape, and a failure names the value.
fn bands(claim: &str, holds: &[f64], qualitative: &[f64], does_not_hold: &[f64]) {
    let cases = [(Holds, holds), (Qualitative, qualitative), (DoesNotHold, does_not_hold)];
    for (want, xs) in cases {
        for &x in xs {
            assert_eq!(v(claim, x), want, "claim {claim} at {x}");
        }
    }
}

#[test]
fn a_factor_claim_is_bounded_on_both_sides() {
    // An overshoot is not "the direction": 111.7x against 12x does not hold (30.0 here).
    bands("F", &[12.0, 17.9], &[7.0], &[30.0, 5.0, 0.9]);
}

#[test]
fn a_change_near_no_effect_needs_the_papers_direction() {
    // Qualitatively means at least half the effect: +2% of a claimed +9% does not hold.
    bands("C", &[9.0, 5.0], &[20.0], &[0.0, -3.0, 2.0, 40.0]);
}

#[test]
fn a_direction_only_claim_needs_a_value_strictly_beyond_no_effect() {
    bands("D", &[1.3], &[], &[1.0, 0.8]);
    let e = parse(&FILE.replacen("direction_only = true", "direction_only = true\nneutral = 2.0", 1), "c").unwrap_err();
    assert!(e.contains("claim D part slower") && e.contains("direction_only"), "{e}");
}

#[test]
fn small_values_keep_three_significant_digits() {
    assert_eq!(Unit::Fraction.show(0.000412), "0.000412");
    assert_eq!(Unit::Fraction.show(0.25), "0.25");
    assert_eq!(Unit::Ratio.show(12.0), "12.0x");
    assert_eq!(Unit::Percent.show(-43.0), "-43.0%");
}

#[test]
fn range_and_bound_claims() {
    bands("R", &[1.28, 1.21], &[1.5], &[1.7]);
    bands("M", &[0.1, 0.88], &[1.2], &[1.7]);
}

#[test]
fn a_ratio_rule_cannot_judge_microseconds() {
    let p = part("F");
    let e = judge_value(&p, Unit::Us, 185.0).unwrap_err();
    assert_eq!((e.rule, e.measured), (Unit::Ratio, Unit::Us));
    // Through the engine: the whole judgement is refused, naming the claim and part.
    let mut m = measurements(&[1]);
    Record::new(1, &mut m.entries).value("F", "queue", Unit::Us, Some(185.0));
    let err = judge(&file(), &m, Rules { min_seeds: 1 }).unwrap_err();
    assert!(err.contains("claim F part queue") && err.contains("ratio") && err.contains("us"), "{err}");
}

fn measurements(seeds: &[u64]) -> Measurements {
    Measurements { paper: "test".into(), mode: "full".into(), seeds: seeds.to_vec(), entries: vec![] }
}

fn verdict_of(m: &Measurements, id: &str, min_seeds: usize) -> (Verdict, String) {
    let j = judge(&file(), m, Rules { min_seeds }).unwrap();
    let c = j.into_iter().find(|c| c.claim.id == id).unwrap();
    (c.verdict, c.reason)
}

#[test]
fn missing_data_and_too_few_seeds_are_not_measured() {
    let mut m = measurements(&[1, 2, 3]);
    // Not run at all.
    assert_eq!(verdict_of(&m, "F", 3).0, NotMeasured);
    for s in [1, 2] {
        Record::new(s, &mut m.entries).value("F", "queue", Unit::Ratio, Some(12.0));
    }
    // Seed 3 gave nothing: not measured, never "holds" from the other two.
    let (v, why) = verdict_of(&m, "F", 3);
    assert_eq!(v, NotMeasured);
    assert!(why.contains("seed 3"), "{why}");
    Record::new(3, &mut m.entries).missing("F", "queue", Unit::Ratio, "max stable peak: n/a");
    let (v, why) = verdict_of(&m, "F", 3);
    assert_eq!(v, NotMeasured);
    assert!(why.contains("n/a"), "{why}");
    // A NaN is recorded as missing.
    let mut m = measurements(&[1]);
    Record::new(1, &mut m.entries).value("F", "queue", Unit::Ratio, Some(f64::NAN));
    assert_eq!(verdict_of(&m, "F", 1).0, NotMeasured);
    // One seed is enough in quick mode, not in full mode.
    let mut m = measurements(&[1]);
    Record::new(1, &mut m.entries).value("F", "queue", Unit::Ratio, Some(12.0));
    assert_eq!(verdict_of(&m, "F", 1).0, Holds);
    assert_eq!(verdict_of(&m, "F", 3).0, NotMeasured);
}

#[test]
fn a_behaviour_that_never_occurred_does_not_hold() {
    // "Never reached 95% of the link" is a failure, not an infinite success.
    let mut m = measurements(&[1, 2, 3]);
    for s in [1, 2, 3] {
        let mut r = Record::new(s, &mut m.entries);
        if s == 2 {
            r.failed("F", "queue", Unit::Ratio, "never reached 95% of the link");
        } else {
            r.value("F", "queue", Unit::Ratio, Some(12.0));
        }
    }
    let (v, why) = verdict_of(&m, "F", 3);
    assert_eq!(v, DoesNotHold);
    assert!(why.contains("never reached"), "{why}");
}

#[test]
fn the_mean_over_seeds_is_judged() {
    let mut m = measurements(&[1, 2, 3]);
    for (s, x) in [(1, 6.0), (2, 8.0), (3, 10.0)] {
        Record::new(s, &mut m.entries).value("F", "queue", Unit::Ratio, Some(x));
    }
    // Mean 8 = 12 / 1.5: holds at the edge of the band.
    let j = judge(&file(), &m, Rules { min_seeds: 3 }).unwrap();
    let f = j.iter().find(|c| c.claim.id == "F").unwrap();
    assert_eq!(f.verdict, Holds);
    let e = f.parts[0].estimate.unwrap();
    assert_eq!((e.n, e.mean), (3, 8.0));
    assert!(e.half_width.unwrap() > 4.0);
}

/// Issue 47: three copies of one deterministic run are one measurement with no
/// interval, and copies that differ are not measured (a seed reached the run).
#[test]
fn one_scenario_counts_once_and_its_copies_must_agree() {
    let mut f = file();
    let c = f.claims.iter_mut().find(|c| c.id == "F").unwrap();
    c.one_scenario = Some("a trace on a fixed topology".into());
    let mut m = measurements(&[1, 2, 3]);
    for s in [1, 2, 3] {
        Record::new(s, &mut m.entries).value("F", "queue", Unit::Ratio, Some(11.0));
    }
    let j = judge(&f, &m, Rules { min_seeds: 3 }).unwrap();
    let p = &j.iter().find(|c| c.claim.id == "F").unwrap().parts[0];
    assert_eq!(p.verdict, Holds);
    let e = p.estimate.unwrap();
    assert_eq!((e.n, e.mean, e.half_width), (1, 11.0, None));
    assert_eq!(p.seeds, 3);
    // The same values without the flag: three seeds and an interval (of zero width).
    let plain = judge(&file(), &m, Rules { min_seeds: 3 }).unwrap();
    let e = plain.iter().find(|c| c.claim.id == "F").unwrap().parts[0].estimate.unwrap();
    assert_eq!((e.n, e.half_width), (3, Some(0.0)));
    // Copies that differ.
    m.entries[1].outcome = Outcome::Value(11.5);
    let j = judge(&f, &m, Rules { min_seeds: 3 }).unwrap();
    let c = j.iter().find(|c| c.claim.id == "F").unwrap();
    assert_eq!(c.verdict, NotMeasured);
    assert!(c.reason.contains("seeds differ (11.0x and 11.5x)"), "{}", c.reason);
    // Still every seed must have run.
    m.entries.truncate(1);
    m.entries[0].outcome = Outcome::Value(11.0);
    assert_eq!(
        judge(&f, &m, Rules { min_seeds: 3 }).unwrap().iter().find(|c| c.claim.id == "F").unwrap().verdict,
        NotMeasured
    );
    // A percentile's samples are one copy's: 400 per run leave 4 beyond the p99, not 12.
    let mut pf = file();
    pf.claims.iter_mut().find(|c| c.id == "P").unwrap().one_scenario = Some("one trace".into());
    let mut m = measurements(&[1, 2, 3]);
    for s in [1, 2, 3] {
        Record::new(s, &mut m.entries).value("P", "p99", Unit::Slowdown, Some(4.0)).samples(400.0);
    }
    let p = judge(&pf, &m, Rules { min_seeds: 3 }).unwrap().into_iter().find(|c| c.claim.id == "P").unwrap();
    assert_eq!((p.verdict, p.parts[0].samples), (NotMeasured, Some(400)), "{}", p.reason);
    assert!(p.reason.contains("insufficient samples"), "{}", p.reason);
    assert_eq!(verdict_of(&m, "P", 3).0, Holds, "three seeds of 400 are 1,200 samples");
    // An empty reason is refused by the loader.
    let bad = FILE.replacen("statement = \"A queues 12x less than B.\"", "statement = \"x\"\none_scenario = \" \"", 1);
    let e = parse(&bad, "t").unwrap_err();
    assert!(e.contains("claim F: one_scenario"), "{e}");
}

#[test]
fn percentiles_need_ten_samples_beyond_them() {
    let mut m = measurements(&[1, 2, 3]);
    for s in [1, 2, 3] {
        // 300 messages per seed: 9 beyond the p99 over three seeds.
        Record::new(s, &mut m.entries).value("P", "p99", Unit::Slowdown, Some(4.0)).samples(300.0);
    }
    let (v, why) = verdict_of(&m, "P", 3);
    assert_eq!(v, NotMeasured);
    assert!(why.contains("insufficient samples"), "{why}");
    for e in &mut m.entries {
        e.samples = Some(400);
    }
    assert_eq!(verdict_of(&m, "P", 3).0, Holds);
    // Unknown counts are not assumed sufficient.
    for e in &mut m.entries {
        e.samples = None;
    }
    assert_eq!(verdict_of(&m, "P", 3).0, NotMeasured);
}

#[test]
fn a_claim_takes_its_worst_headline_part() {
    let run = |a: Option<f64>, b: Option<f64>, side: f64| {
        let mut m = measurements(&[1]);
        let mut r = Record::new(1, &mut m.entries);
        if let Some(a) = a {
            r.value("T", "a", Unit::Ratio, Some(a));
        }
        if let Some(b) = b {
            r.value("T", "b", Unit::Ratio, Some(b));
        }
        r.value("T", "side", Unit::Us, Some(side));
        verdict_of(&m, "T", 1).0
    };
    assert_eq!(run(Some(2.0), Some(3.0), 5.0), Holds);
    // The side part does not decide.
    assert_eq!(run(Some(2.0), Some(3.0), 500.0), Holds);
    assert_eq!(run(Some(2.0), Some(5.0), 5.0), Qualitative);
    // One failing headline part of two fails the claim (no majority vote).
    assert_eq!(run(Some(2.0), Some(0.5), 5.0), DoesNotHold);
    // A part not measured leaves the claim not measured; a failure elsewhere still decides.
    assert_eq!(run(Some(2.0), None, 5.0), NotMeasured);
    assert_eq!(run(Some(0.5), None, 5.0), DoesNotHold);
    // Not simulated: always not measured.
    assert_eq!(verdict_of(&measurements(&[1]), "N", 1).0, NotMeasured);
}

#[test]
fn unknown_parts_in_measurements_are_refused() {
    let mut m = measurements(&[1]);
    Record::new(1, &mut m.entries).value("F", "nope", Unit::Ratio, Some(1.0));
    assert!(judge(&file(), &m, Rules { min_seeds: 1 }).unwrap_err().contains("part nope"));
}

#[test]
fn measurements_round_trip_through_toml() {
    let mut m = measurements(&[1, 2]);
    Record::new(1, &mut m.entries).value("P", "p99", Unit::Slowdown, Some(4.25)).samples(1234.0).note("WKc");
    Record::new(2, &mut m.entries).missing("P", "p99", Unit::Slowdown, "unstable");
    Record::new(2, &mut m.entries).failed("F", "queue", Unit::Ratio, "never");
    let back = Measurements::parse(&m.to_toml(), "m.toml").unwrap();
    assert_eq!(back, m);
}

/// A headline part simulation cannot measure is reported, and the claim is judged on the others.
#[test]
fn a_part_not_simulated_does_not_decide_its_claim() {
    let text = FILE.replacen(
        "id = \"b\"\nmeasures = \"b\"",
        "id = \"b\"\nmeasures = \"b\"\nnot_simulated = \"no run records it\"",
        1,
    );
    let file = parse(&text, "c").unwrap();
    let mut m = measurements(&[1]);
    Record::new(1, &mut m.entries).value("T", "a", Unit::Ratio, Some(2.0));
    let t = judge(&file, &m, Rules { min_seeds: 1 }).unwrap().into_iter().find(|c| c.claim.id == "T").unwrap();
    assert_eq!(t.verdict, Holds, "{t:?}");
    assert!(t.reason.contains("not simulated, so not judged: b"), "{}", t.reason);
    let b = t.parts.iter().find(|p| p.part.id == "b").unwrap();
    assert_eq!((b.verdict, b.reason.as_str()), (NotMeasured, "not simulated: no run records it"));
}

#[test]
fn bad_claims_files_are_refused_with_the_key() {
    let bad = |from: &str, to: &str| parse(&FILE.replacen(from, to, 1), "claims.toml").unwrap_err();
    // A holds band that contains "no effect" while the paper reports +9%.
    let wide = FILE.replacen("holds = { plus_minus = 4.5", "holds = { plus_minus = 10.0", 1).replacen(
        "[4.5, 25.0]",
        "[-5.0, 25.0]",
        1,
    );
    let e = parse(&wide, "claims.toml").unwrap_err();
    assert!(e.contains("claim C part gain") && e.contains("no effect"), "{e}");
    // A qualitative band narrower than the holds band.
    let e = bad("qualitative = { factor = 2.0, why = \"test\" }", "qualitative = { factor = 1.2, why = \"test\" }");
    assert!(e.contains("claim F part queue") && e.contains("must contain"), "{e}");
    // Two tolerances at once, none, or no reason.
    let e = bad("holds = { factor = 1.5, why", "holds = { factor = 1.5, plus_minus = 1.0, why");
    assert!(e.contains("exactly one"), "{e}");
    let e = bad("holds = { factor = 1.5, why = \"test\" }", "holds = { factor = 1.5, why = \" \" }");
    assert!(e.contains("holds.why"), "{e}");
    // An unknown key or unit names where it is.
    let e = bad("measures = \"B / A peak queue\"", "measures = \"x\"\nflavour = 1");
    assert!(e.contains("flavour"), "{e}");
    let e = bad("unit = \"ratio\"", "unit = \"furlongs\"");
    assert!(e.contains("furlongs") || e.contains("unit"), "{e}");
    // A factor on a negative value.
    let e = bad("paper = 12.0", "paper = -12.0");
    assert!(e.contains("positive paper value"), "{e}");
    let e = bad("id = \"C\"", "id = \"F\"");
    assert!(e.contains("claim F is listed twice"), "{e}");
    // A direction written as a band at no effect, without direction_only: a tie would hold.
    let e = bad("direction_only = true\n", "");
    assert!(e.contains("claim D part slower") && e.contains("write direction_only = true"), "{e}");
    // A qualitative band that reaches nearer to no effect than halfway (sqrt(12) = 3.46x for 12x).
    let e =
        bad("qualitative = { factor = 2.0, why = \"test\" }", "qualitative = { band = [2.0, 24.0], why = \"test\" }");
    assert!(e.contains("claim F part queue") && e.contains("reaches nearer to no effect than 3.46x"), "{e}");
    // So does a holds band.
    let e = bad("holds = { factor = 1.2, why = \"test\" }", "holds = { band = [1.2, 2.4], why = \"test\" }");
    assert!(e.contains("claim T part a") && e.contains("the holds band [1.20x, 2.40x] reaches nearer"), "{e}");
}

#[test]
fn a_part_judged_at_several_loads_gets_the_worst_measured_verdict() {
    fn put(m: &mut Measurements, load: &str, s: u64, v: Option<f64>) {
        let mut r = Record::new(s, &mut m.entries);
        match v {
            Some(v) => r.value("F", "queue", Unit::Ratio, Some(v)).condition(load),
            None => r.missing("F", "queue", Unit::Ratio, "run unstable").condition(load),
        };
    }
    let mut m = measurements(&[1, 2]);
    // Holds at 0.3 (12x), qualitatively at 0.5 (7x); 0.7 unstable on one seed: not judged there.
    for s in [1, 2] {
        put(&mut m, "load 0.3", s, Some(12.0));
        put(&mut m, "load 0.5", s, Some(7.0));
    }
    put(&mut m, "load 0.7", 1, Some(30.0));
    put(&mut m, "load 0.7", 2, None);
    let j = judge(&file(), &m, Rules { min_seeds: 2 }).unwrap();
    let p = &j.iter().find(|c| c.claim.id == "F").unwrap().parts[0];
    assert_eq!(p.verdict, Qualitative, "the worst of holds and qualitatively; 0.7 was not measured");
    assert_eq!(p.estimate.unwrap().mean, 7.0, "the value shown is the deciding condition's");
    assert!(p.reason.starts_with("at load 0.5:"), "{}", p.reason);
    let n = p.notes.join(" ");
    assert!(
        n.contains("load 0.3: 12.0x (holds)") && n.contains("load 0.7: not measured (seed 2: run unstable)"),
        "{n}"
    );
    // A load where it does not hold decides, whatever the others give.
    m.entries.retain(|e| !(e.condition == "load 0.7" && e.seed == 2));
    put(&mut m, "load 0.7", 2, Some(30.0));
    assert_eq!(verdict_of(&m, "F", 2).0, DoesNotHold);
    // Unstable at every load: not measured.
    let mut m = measurements(&[1]);
    for load in ["load 0.3", "load 0.5"] {
        Record::new(1, &mut m.entries).missing("F", "queue", Unit::Ratio, "run unstable").condition(load);
    }
    let (v, why) = verdict_of(&m, "F", 1);
    assert_eq!(v, NotMeasured);
    assert!(why.contains("not measured at any condition"), "{why}");
}
