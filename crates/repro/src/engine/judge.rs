//! The verdict engine: one set of rules for every paper.
//!
//! A part, over the seeds that ran:
//! - **does not hold** if any seed records that the behaviour did not occur;
//! - **not measured** if a seed has no value (not run, no data, unstable), if
//!   fewer seeds than the mode needs have one, or, for a percentile, if fewer
//!   than [`MIN_BEYOND`] samples lie beyond it across the seeds;
//! - otherwise judged on the mean over seeds: **holds** inside the holds band,
//!   **holds qualitatively** inside the wider band, **does not hold** outside
//!   it or on the wrong side of "no effect" (a ratio of 1, a change of 0%).
//!
//! A claim takes the worst verdict of its headline parts, where "does not
//! hold" is worse than "not measured" (a measured failure decides), which is
//! worse than the rest: missing data never counts as holding.

use super::claims::{Claim, ClaimsFile, Part, Unit};
use super::measure::{Entry, Measurements, Outcome};
use super::stats::{beyond, Estimate, MIN_BEYOND};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    /// The paper's direction, within the wider band.
    Qualitative,
    DoesNotHold,
    /// No data, too few seeds or samples, or not measurable in simulation.
    NotMeasured,
}

impl Verdict {
    /// Rank for "the worst of": does not hold < not measured < qualitative < holds.
    fn rank(self) -> u8 {
        match self {
            Verdict::DoesNotHold => 0,
            Verdict::NotMeasured => 1,
            Verdict::Qualitative => 2,
            Verdict::Holds => 3,
        }
    }

    pub fn worst(parts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
        parts.into_iter().min_by_key(|v| v.rank())
    }

    pub const ALL: [Verdict; 4] = [Verdict::Holds, Verdict::Qualitative, Verdict::DoesNotHold, Verdict::NotMeasured];
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Verdict::Holds => "holds",
            Verdict::Qualitative => "holds qualitatively",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotMeasured => "not measured",
        })
    }
}

/// How much data a verdict needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    /// Seeds that must each give a value (full mode 3, quick mode 1).
    pub min_seeds: usize,
}

/// A unit the rule was not written for: a bug in the measurement code.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitMismatch {
    pub claim: String,
    pub part: String,
    pub rule: Unit,
    pub measured: Unit,
}

impl fmt::Display for UnitMismatch {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "claim {} part {}: its rule is in {} but the measurement is in {}",
            self.claim, self.part, self.rule, self.measured
        )
    }
}

/// A value judged against a part's bands (the mean over seeds).
pub fn judge_value(part: &Part, unit: Unit, v: f64) -> Result<(Verdict, String), UnitMismatch> {
    if unit != part.unit {
        return Err(UnitMismatch { claim: String::new(), part: part.id.clone(), rule: part.unit, measured: unit });
    }
    let (h, q) = (part.holds_band(), part.qualitative_band());
    let shown = part.unit.show(v);
    if let Some(n) = part.neutral() {
        let dir = part.direction();
        if dir != 0 && (v - n) * f64::from(dir) <= 0.0 {
            return Ok((
                Verdict::DoesNotHold,
                format!("{shown} is not on the paper's side of {} (paper {})", part.unit.show(n), paper_value(part)),
            ));
        }
    }
    Ok(if h.contains(v) {
        (Verdict::Holds, String::new())
    } else if q.contains(v) {
        (
            Verdict::Qualitative,
            format!("{shown} is outside the holds band {} but within {}", h.show(part.unit), q.show(part.unit)),
        )
    } else {
        (Verdict::DoesNotHold, format!("{shown} is outside the qualitative band {}", q.show(part.unit)))
    })
}

/// The paper's value as reports print it.
pub fn paper_value(p: &Part) -> String {
    let (lo, hi) = (p.paper.lo(), p.paper.hi());
    let v = if lo == hi { p.unit.show(lo) } else { format!("{} to {}", p.unit.show(lo), p.unit.show(hi)) };
    match p.side {
        super::claims::Side::Both => v,
        super::claims::Side::AtMost => format!("<= {v}"),
        super::claims::Side::AtLeast => format!(">= {v}"),
    }
}

/// One part, judged.
#[derive(Clone, Debug)]
pub struct JudgedPart {
    pub part: Part,
    pub estimate: Option<Estimate>,
    /// Per-message samples behind a percentile, summed over seeds.
    pub samples: Option<u64>,
    /// Seeds with a value.
    pub seeds: usize,
    pub verdict: Verdict,
    /// Why it is not "holds" (empty when it holds).
    pub reason: String,
    /// The entries' notes, one per seed that gave one (deduplicated).
    pub notes: Vec<String>,
    /// Judged as one deterministic scenario ([`Claim::one_scenario`]).
    pub one_scenario: bool,
}

/// One claim, judged.
#[derive(Clone, Debug)]
pub struct JudgedClaim {
    pub claim: Claim,
    pub parts: Vec<JudgedPart>,
    pub verdict: Verdict,
    pub reason: String,
}

fn judge_part(
    claim: &Claim,
    part: &Part,
    entries: &[&Entry],
    seeds: &[u64],
    rules: Rules,
) -> Result<JudgedPart, UnitMismatch> {
    let mut notes: Vec<String> = Vec::new();
    for e in entries {
        if e.unit != part.unit {
            return Err(UnitMismatch {
                claim: claim.id.clone(),
                part: part.id.clone(),
                rule: part.unit,
                measured: e.unit,
            });
        }
        if !e.note.is_empty() && !notes.contains(&e.note) {
            notes.push(e.note.clone());
        }
    }
    let mut j = JudgedPart {
        part: part.clone(),
        estimate: None,
        samples: None,
        seeds: 0,
        verdict: Verdict::NotMeasured,
        reason: String::new(),
        notes,
        one_scenario: claim.one_scenario.is_some(),
    };
    if let Some(why) = &part.not_simulated {
        j.reason = format!("not simulated: {why}");
        return Ok(j);
    }
    if entries.is_empty() {
        j.reason = "no value recorded (not run, or absent from the measurements)".into();
        return Ok(j);
    }
    if let Some(e) = entries.iter().find(|e| matches!(e.outcome, Outcome::Failed(_))) {
        let Outcome::Failed(why) = &e.outcome else { unreachable!() };
        j.verdict = Verdict::DoesNotHold;
        j.reason = format!("seed {}: {why}", e.seed);
        return Ok(j);
    }
    let mut values = Vec::new();
    let mut samples: Option<u64> = Some(0);
    let mut per_seed: Vec<Option<u64>> = Vec::new();
    for &s in seeds {
        match entries.iter().find(|e| e.seed == s) {
            Some(Entry { outcome: Outcome::Value(v), samples: n, .. }) => {
                values.push(*v);
                per_seed.push(*n);
                samples = samples.zip(*n).map(|(a, b)| a + b);
            }
            Some(Entry { outcome: Outcome::Missing(why), .. }) => {
                j.reason = format!("seed {s}: {why}");
                return Ok(j);
            }
            _ => {
                j.reason = format!("seed {s}: no value");
                return Ok(j);
            }
        }
    }
    j.seeds = values.len();
    if values.len() < rules.min_seeds {
        j.estimate = Estimate::of(&values);
        j.reason = format!("{} seed(s) with a value; the rules need {}", values.len(), rules.min_seeds);
        return Ok(j);
    }
    if j.one_scenario {
        // Copies of one run: they must agree, and count once.
        if let Some(other) = values.iter().find(|v| v.to_bits() != values[0].to_bits()) {
            j.reason = format!(
                "the claim rests on one deterministic scenario, but its seeds differ ({} and {}): a seed reaches \
                 the run after all",
                part.unit.show(values[0]),
                part.unit.show(*other)
            );
            return Ok(j);
        }
        values.truncate(1);
        // One run's samples: its copies add none.
        samples = per_seed.first().copied().flatten();
    }
    j.estimate = Estimate::of(&values);
    if let Some(q) = part.percentile {
        j.samples = samples;
        let Some(n) = samples else {
            j.reason = format!("the sample count behind the p{q} is unknown");
            return Ok(j);
        };
        let over = beyond(n, q);
        if over < MIN_BEYOND {
            j.reason = format!(
                "insufficient samples: {n} over {} seed(s) leave {over:.1} beyond the p{q} (need {MIN_BEYOND}); run longer",
                values.len()
            );
            return Ok(j);
        }
    }
    let Some(e) = j.estimate else {
        j.reason = "no finite value".into();
        return Ok(j);
    };
    let (v, why) = judge_value(part, part.unit, e.mean).map_err(|mut m| {
        m.claim = claim.id.clone();
        m
    })?;
    j.verdict = v;
    j.reason = why;
    Ok(j)
}

/// A part whose entries name conditions (loads) is judged at each condition
/// on its own, and gets the worst verdict of the conditions that were
/// measured (ties: the first condition); "not measured" only if none was.
/// Entries without a condition are one condition. `one` judges one
/// condition's entries ([`judge_part`]); `unit` shows the values.
fn judge_at_conditions(
    entries: &[&Entry],
    unit: Unit,
    one: impl Fn(&[&Entry]) -> Result<JudgedPart, UnitMismatch>,
) -> Result<JudgedPart, UnitMismatch> {
    let mut conditions: Vec<&str> = Vec::new();
    for e in entries {
        if !conditions.contains(&e.condition.as_str()) {
            conditions.push(&e.condition);
        }
    }
    if conditions.len() <= 1 && conditions.first().is_none_or(|c| c.is_empty()) {
        return one(entries);
    }
    let mut judged = Vec::new();
    for &c in &conditions {
        let at: Vec<&Entry> = entries.iter().copied().filter(|e| e.condition == c).collect();
        judged.push((c, one(&at)?));
    }
    let summary: Vec<String> = judged
        .iter()
        .map(|(c, j)| match &j.estimate {
            Some(e) if j.verdict != Verdict::NotMeasured => format!("{c}: {} ({})", unit.show(e.mean), j.verdict),
            _ => format!("{c}: not measured ({})", j.reason),
        })
        .collect();
    let measured = || judged.iter().filter(|(_, j)| j.verdict != Verdict::NotMeasured);
    let worst = Verdict::worst(measured().map(|(_, j)| j.verdict));
    let (c, mut j) = match worst {
        Some(w) => judged.iter().find(|(_, j)| j.verdict == w).cloned().expect("a measured condition"),
        None => {
            let (_, mut j) = judged.swap_remove(0);
            j.reason = format!("not measured at any condition: {}", summary.join("; "));
            j.notes.push(format!("judged at each of {}", conditions.join(", ")));
            return Ok(j);
        }
    };
    if !j.reason.is_empty() {
        j.reason = format!("at {c}: {}", j.reason);
    }
    j.notes = vec![format!("judged at each condition, the worst counts (shown: {c}): {}", summary.join("; "))];
    Ok(j)
}

/// Judges every claim of `file` on `m`. Errors: an entry names a claim or part
/// the file does not have, or is in another unit than its rule.
pub fn judge(file: &ClaimsFile, m: &Measurements, rules: Rules) -> Result<Vec<JudgedClaim>, String> {
    for e in &m.entries {
        let known = file.claims.iter().any(|c| c.id == e.claim && c.parts.iter().any(|p| p.id == e.part));
        if !known {
            return Err(format!(
                "a measurement names claim {} part {}, which {}'s claims file does not have",
                e.claim, e.part, file.paper
            ));
        }
    }
    let mut out = Vec::new();
    for c in &file.claims {
        if let Some(why) = &c.not_simulated {
            out.push(JudgedClaim {
                claim: c.clone(),
                parts: vec![],
                verdict: Verdict::NotMeasured,
                reason: why.clone(),
            });
            continue;
        }
        let mut parts = Vec::new();
        for p in &c.parts {
            let entries: Vec<&Entry> = m.entries.iter().filter(|e| e.claim == c.id && e.part == p.id).collect();
            let one = |at: &[&Entry]| judge_part(c, p, at, &m.seeds, rules);
            parts.push(judge_at_conditions(&entries, p.unit, one).map_err(|e| e.to_string())?);
        }
        // The headline parts decide, but for those simulation cannot measure.
        let deciding = || parts.iter().filter(|p| p.part.headline && p.part.not_simulated.is_none());
        let verdict = Verdict::worst(deciding().map(|p| p.verdict)).unwrap_or(Verdict::NotMeasured);
        let mut reason = deciding()
            .find(|p| p.verdict == verdict && verdict != Verdict::Holds)
            .map(|p| format!("{}: {}", p.part.id, p.reason))
            .unwrap_or_default();
        let unsimulated: Vec<&str> = parts
            .iter()
            .filter(|p| p.part.headline && p.part.not_simulated.is_some())
            .map(|p| p.part.id.as_str())
            .collect();
        if !unsimulated.is_empty() {
            let sep = if reason.is_empty() { "" } else { "; " };
            reason = format!("{reason}{sep}not simulated, so not judged: {}", unsimulated.join(", "));
        }
        out.push(JudgedClaim { claim: c.clone(), parts, verdict, reason });
    }
    Ok(out)
}

/// How many claims got each verdict, in [`Verdict::ALL`]'s order.
pub fn counts(claims: &[JudgedClaim]) -> [usize; 4] {
    Verdict::ALL.map(|v| claims.iter().filter(|c| c.verdict == v).count())
}

#[cfg(test)]
mod tests;
