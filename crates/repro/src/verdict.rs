//! How a measured value is judged against the paper's. Three shapes of claim:
//! "A beats B by a factor p" ([`factor`]), "a value lies in a range"
//! ([`range`]), and claims made of several parts ([`combine`]).

use std::fmt;

/// One claim of a paper, judged.
#[derive(Clone, Debug)]
pub struct Claim {
    pub id: &'static str,
    /// Where the paper states it (figure, section).
    pub source: &'static str,
    /// The claim, with the paper's numbers.
    pub paper: &'static str,
    pub measured: String,
    pub verdict: Verdict,
    /// Why it differs, or what the comparison rests on.
    pub discussion: String,
}

/// a / b, if both are known and the quotient is finite.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a / b).filter(|r| r.is_finite())
}

/// A ratio as the reports print it ("2.50x", or "n/a").
pub fn x(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.2}x"))
}

/// A claim not measured yet.
pub fn claim(id: &'static str, source: &'static str, paper: &'static str) -> Claim {
    Claim { id, source, paper, measured: String::new(), verdict: Verdict::NotMeasured, discussion: String::new() }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// No data (figure not run, or every run of it unstable or failed).
    NotMeasured,
    DoesNotHold,
    /// The direction holds, the size does not.
    Qualitative,
    Holds,
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

/// A claim "better by a factor `paper`" (> 1) where we measured `measured`
/// (same orientation: > 1 means better). It holds if we see at least half the
/// paper's factor and at least half its effect in log terms (so 12x needs 6x,
/// +9% needs +4.4%); qualitatively if we see any advantage (> 1%).
pub fn factor(measured: Option<f64>, paper: f64) -> Verdict {
    let Some(m) = measured.filter(|m| !m.is_nan()) else { return Verdict::NotMeasured };
    if m >= (paper / 2.0).max(paper.sqrt()) {
        Verdict::Holds
    } else if m > 1.01 {
        Verdict::Qualitative
    } else {
        Verdict::DoesNotHold
    }
}

/// "The values lie in [lo, hi]": holds if all are within 10% of the range,
/// qualitatively if all are within a factor 2 of it.
pub fn range(values: &[f64], lo: f64, hi: f64) -> Verdict {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Verdict::NotMeasured;
    }
    let within = |a: f64, b: f64| v.iter().all(|&x| x >= a && x <= b);
    if within(lo * 0.9, hi * 1.1) {
        Verdict::Holds
    } else if within(lo / 2.0, hi * 2.0) {
        Verdict::Qualitative
    } else {
        Verdict::DoesNotHold
    }
}

/// A claim of several parts: it holds if every measured part holds, does not
/// hold if more than half the measured parts fail, and holds qualitatively
/// otherwise. Unmeasured parts are left out (all unmeasured: not measured).
pub fn combine(parts: &[Verdict]) -> Verdict {
    let measured: Vec<Verdict> = parts.iter().copied().filter(|v| *v != Verdict::NotMeasured).collect();
    if measured.is_empty() {
        return Verdict::NotMeasured;
    }
    let failed = measured.iter().filter(|v| **v == Verdict::DoesNotHold).count();
    if measured.iter().all(|v| *v == Verdict::Holds) {
        Verdict::Holds
    } else if 2 * failed > measured.len() {
        Verdict::DoesNotHold
    } else {
        Verdict::Qualitative
    }
}

/// "The value stays at or below a bound": holds at or below `holds_at_most`,
/// qualitatively at or below `qualitative_at_most`.
pub fn threshold(value: Option<f64>, holds_at_most: f64, qualitative_at_most: f64) -> Verdict {
    match value.filter(|v| !v.is_nan()) {
        None => Verdict::NotMeasured,
        Some(v) if v <= holds_at_most => Verdict::Holds,
        Some(v) if v <= qualitative_at_most => Verdict::Qualitative,
        Some(_) => Verdict::DoesNotHold,
    }
}

#[cfg(test)]
mod tests {
    use super::Verdict::*;
    use super::*;

    #[test]
    fn factor_claims() {
        // 12x: 6x is enough, 5x is only the direction.
        assert_eq!(factor(Some(12.0), 12.0), Holds);
        assert_eq!(factor(Some(30.0), 12.0), Holds);
        assert_eq!(factor(Some(6.0), 12.0), Holds);
        assert_eq!(factor(Some(5.0), 12.0), Qualitative);
        assert_eq!(factor(Some(1.0), 12.0), DoesNotHold);
        assert_eq!(factor(Some(0.5), 12.0), DoesNotHold);
        // +9%: half the effect (+4.4%) holds.
        assert_eq!(factor(Some(1.05), 1.09), Holds);
        assert_eq!(factor(Some(1.03), 1.09), Qualitative);
        assert_eq!(factor(Some(1.005), 1.09), DoesNotHold);
        assert_eq!(factor(None, 2.0), NotMeasured);
        assert_eq!(factor(Some(f64::NAN), 2.0), NotMeasured);
        assert_eq!(factor(Some(f64::INFINITY), 14.0), Holds);
    }

    #[test]
    fn range_claims() {
        assert_eq!(range(&[1.26, 1.30], 1.25, 1.31), Holds);
        assert_eq!(range(&[1.14, 1.40], 1.25, 1.31), Holds);
        assert_eq!(range(&[1.0, 2.5], 1.25, 1.31), Qualitative);
        assert_eq!(range(&[0.5, 1.3], 1.25, 1.31), DoesNotHold);
        assert_eq!(range(&[], 1.0, 2.0), NotMeasured);
        assert_eq!(range(&[f64::NAN], 1.0, 2.0), NotMeasured);
    }

    #[test]
    fn combined_claims() {
        assert_eq!(combine(&[Holds, Holds, NotMeasured]), Holds);
        assert_eq!(combine(&[Holds, Qualitative]), Qualitative);
        assert_eq!(combine(&[Holds, Holds, DoesNotHold]), Qualitative);
        assert_eq!(combine(&[Holds, DoesNotHold]), Qualitative);
        assert_eq!(combine(&[Holds, DoesNotHold, DoesNotHold]), DoesNotHold);
        assert_eq!(combine(&[NotMeasured, NotMeasured]), NotMeasured);
        assert_eq!(combine(&[]), NotMeasured);
    }

    #[test]
    fn threshold_claims() {
        assert_eq!(threshold(Some(0.7e6), 0.8e6, 1.6e6), Holds);
        assert_eq!(threshold(Some(1.0e6), 0.8e6, 1.6e6), Qualitative);
        assert_eq!(threshold(Some(2.0e6), 0.8e6, 1.6e6), DoesNotHold);
        assert_eq!(threshold(None, 0.8e6, 1.6e6), NotMeasured);
    }
}
