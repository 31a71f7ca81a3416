//! A paper's claims as data (`experiments/repro/<paper>/claims.toml`), fixed
//! before the runs they judge: per claim the paper's statement and where it
//! stands, and per measured part the paper's value, its unit, and the two
//! bands ("holds" and the wider "holds qualitatively"), each with its reason.
//!
//! Loading checks what a reader would otherwise have to trust: every band is
//! finite on a two-sided claim, the qualitative band contains the holds band,
//! and a holds band never contains "no effect" when the paper reports one.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The unit of a paper's value and of what we measure. A rule judges only a
/// measurement of its own unit.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum Unit {
    /// A quotient of two like quantities (no effect: 1).
    #[serde(rename = "ratio")]
    Ratio,
    /// A relative change in percent (no effect: 0).
    #[serde(rename = "percent")]
    Percent,
    /// A share of something, 0 to 1 (of line rate, of messages).
    #[serde(rename = "fraction")]
    Fraction,
    #[serde(rename = "ns")]
    Ns,
    #[serde(rename = "us")]
    Us,
    #[serde(rename = "ms")]
    Ms,
    #[serde(rename = "KB")]
    KB,
    #[serde(rename = "MB")]
    MB,
    #[serde(rename = "Gbps")]
    Gbps,
    #[serde(rename = "packets")]
    Packets,
    /// Round-trip times.
    #[serde(rename = "RTTs")]
    Rtts,
    /// A message's completion time over its ideal (>= 1).
    #[serde(rename = "slowdown")]
    Slowdown,
    /// A number of things (flows, cases).
    #[serde(rename = "count")]
    Count,
}

impl Unit {
    /// The value that means "no effect", for units that have one.
    pub fn neutral(self) -> Option<f64> {
        match self {
            Unit::Ratio => Some(1.0),
            Unit::Percent => Some(0.0),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ratio => "ratio",
            Unit::Percent => "percent",
            Unit::Fraction => "fraction",
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::KB => "KB",
            Unit::MB => "MB",
            Unit::Gbps => "Gbps",
            Unit::Packets => "packets",
            Unit::Rtts => "RTTs",
            Unit::Slowdown => "slowdown",
            Unit::Count => "count",
        }
    }

    /// A value in this unit as the reports print it.
    pub fn show(self, v: f64) -> String {
        let whole = matches!(self, Unit::Count) && v == v.trunc();
        let n = if v.abs() >= 100.0 || whole {
            format!("{v:.0}")
        } else if v.abs() >= 10.0 {
            format!("{v:.1}")
        } else if v.abs() >= 0.1 || v == 0.0 {
            format!("{v:.2}")
        } else {
            // Three significant digits: a loss rate of 0.0004 is not "0.000".
            let digits = (2 - v.abs().log10().floor() as i32).clamp(3, 12) as usize;
            format!("{v:.digits$}")
        };
        match self {
            Unit::Ratio => format!("{n}x"),
            Unit::Percent => format!("{}{n}%", if v > 0.0 { "+" } else { "" }),
            Unit::Fraction | Unit::Slowdown | Unit::Count => n,
            u => format!("{n} {}", u.as_str()),
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The paper's value: one number, or a range it states.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PaperValue {
    One(f64),
    Range([f64; 2]),
}

impl PaperValue {
    pub fn lo(self) -> f64 {
        match self {
            PaperValue::One(v) => v,
            PaperValue::Range([lo, _]) => lo,
        }
    }
    pub fn hi(self) -> f64 {
        match self {
            PaperValue::One(v) => v,
            PaperValue::Range([_, hi]) => hi,
        }
    }
}

/// Which side of the paper's value a claim constrains.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// "about X" or "between X and Y".
    #[default]
    Both,
    /// "never exceeds X", "below X".
    AtMost,
    /// "at least X", "above X".
    AtLeast,
}

/// A tolerance, as written: exactly one of `factor` (multiplicative, paper
/// values > 0), `plus_minus` (additive, in the part's unit) or `band`
/// (explicit bounds), and why it is that wide.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    pub factor: Option<f64>,
    pub plus_minus: Option<f64>,
    pub band: Option<[f64; 2]>,
    pub why: String,
}

/// One measured quantity of a claim.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub id: String,
    /// What is measured, precisely enough to recompute it.
    pub measures: String,
    pub unit: Unit,
    pub paper: PaperValue,
    #[serde(default)]
    pub side: Side,
    /// Whether the claim's verdict rests on this part (default: yes).
    #[serde(default = "yes")]
    pub headline: bool,
    pub holds: Tolerance,
    /// Default: within a factor of 2 of the paper's value.
    pub qualitative: Option<Tolerance>,
    /// The value is this percentile (e.g. 99) of per-message samples: judged
    /// only when enough samples lie beyond it across the seeds.
    pub percentile: Option<f64>,
    /// "No effect" for the direction check, where the unit has none of its own.
    pub neutral: Option<f64>,
    /// The paper states a direction without a size ("slower", "grows"): with
    /// `side = "at_least"` (`"at_most"`) and `paper` at no effect, the value
    /// must lie strictly above (below) it; a tie does not hold.
    #[serde(default)]
    pub direction_only: bool,
    /// Why simulation cannot measure this part (a quantity the simulator does
    /// not record, a run the paper's setup does not include): it is reported
    /// as not measured with this reason and does not decide the claim, which
    /// its other headline parts judge (none left: not measured).
    pub not_simulated: Option<String>,
}

fn yes() -> bool {
    true
}

/// One claim of a paper.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// Section, figure or table.
    #[serde(rename = "where")]
    pub location: String,
    /// The claim in the paper's words and numbers.
    pub statement: String,
    /// The baselines the paper names for this claim.
    #[serde(default)]
    pub compares: Vec<String>,
    /// How the measurement is set up, where the statement leaves it open.
    #[serde(default)]
    pub notes: String,
    /// Set when simulation cannot measure the claim (a hardware property, the
    /// paper's own arithmetic): always "not measured", with this reason.
    pub not_simulated: Option<String>,
    /// Set when every part rests on one deterministic scenario (a trace on a
    /// fixed topology, nothing drawn from the seed), with why: its seeds must
    /// agree exactly, and it is judged as the one measurement it is, with no
    /// interval (three copies are not three seeds).
    pub one_scenario: Option<String>,
    #[serde(default, rename = "part")]
    pub parts: Vec<Part>,
}

/// A tolerance changed after a run had been seen: listed in every report.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToleranceChange {
    pub claim: String,
    /// A part's id, or [`ALL_PARTS`] for a change that applies to every part of the claim.
    pub part: String,
    pub date: String,
    pub before: String,
    pub after: String,
    pub why: String,
}

/// `part = "*"` in a `[[tolerance_change]]`: the change applies to every part of the claim
/// (a change of setup or of the stability rule, not of one band).
pub const ALL_PARTS: &str = "*";

/// A paper's claims file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    /// As reports name the paper.
    pub paper: String,
    /// Where the claims and the numbers come from.
    pub source: String,
    #[serde(rename = "claim")]
    pub claims: Vec<Claim>,
    #[serde(default, rename = "tolerance_change")]
    pub changes: Vec<ToleranceChange>,
}

/// A band of values: `lo..=hi`, either end possibly infinite on a one-sided claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band {
    pub lo: f64,
    pub hi: f64,
}

impl Band {
    pub fn contains(self, v: f64) -> bool {
        v >= self.lo && v <= self.hi
    }

    pub fn show(self, unit: Unit) -> String {
        match (self.lo.is_finite(), self.hi.is_finite()) {
            (false, true) => format!("<= {}", unit.show(self.hi)),
            (true, false) => format!(">= {}", unit.show(self.lo)),
            _ => format!("[{}, {}]", unit.show(self.lo), unit.show(self.hi)),
        }
    }
}

impl Part {
    /// The value the direction check compares against, if any.
    pub fn neutral(&self) -> Option<f64> {
        self.neutral.or(self.unit.neutral())
    }

    /// The band within which the part holds.
    pub fn holds_band(&self) -> Band {
        self.band(&self.holds)
    }

    /// The band within which it holds qualitatively (default: a factor of 2,
    /// its edge toward no effect no nearer to it than [`Part::qualitative_limit`]).
    pub fn qualitative_band(&self) -> Band {
        match &self.qualitative {
            Some(t) => self.band(t),
            None => {
                // Clipped at the limit, and never inside the holds band (which
                // the loader allows within its slack of the limit).
                let (b, h) = (self.band(&default_qualitative()), self.holds_band());
                match (self.qualitative_limit(), self.direction()) {
                    (Some(l), 1) => Band { lo: b.lo.max(l).min(h.lo), ..b },
                    (Some(l), -1) => Band { hi: b.hi.min(l).max(h.hi), ..b },
                    _ => b,
                }
            }
        }
    }

    /// Whether band `b`'s edge toward no effect lies nearer to it than `limit`,
    /// beyond a slack of half a percent of the distance (claims files write
    /// their values to three or four digits).
    fn reaches_nearer_than(&self, b: Band, limit: f64) -> bool {
        let Some(n) = self.neutral() else { return false };
        let log = self.on_log_scale() && limit > 0.0;
        let at = |x: f64| if log { x.max(f64::MIN_POSITIVE).ln() } else { x };
        let slack = 0.005 * (at(limit) - at(n)).abs();
        match self.direction() {
            1 => at(b.lo) < at(limit) - slack,
            -1 => at(b.hi) > at(limit) + slack,
            _ => false,
        }
    }

    /// How near to no effect a qualitative band may reach, for a part whose
    /// paper reports an effect: halfway from no effect to the paper's value
    /// (its end nearer to no effect), in log for ratios. "Holds qualitatively"
    /// then always means at least half of the effect, never a tie; for a
    /// direction without a size it is no effect itself, which the direction
    /// check excludes.
    pub fn qualitative_limit(&self) -> Option<f64> {
        let n = self.neutral()?;
        let near = match self.direction() {
            1 => self.paper.lo(),
            -1 => self.paper.hi(),
            _ => return None,
        };
        Some(if self.on_log_scale() && near > 0.0 { (n * near).sqrt() } else { (n + near) / 2.0 })
    }

    /// Distances to no effect are measured in log for ratios (2x and 0.5x
    /// are as far from 1x), linearly otherwise.
    fn on_log_scale(&self) -> bool {
        self.unit == Unit::Ratio && self.neutral().is_some_and(|n| n > 0.0)
    }

    pub fn qualitative_tolerance(&self) -> Tolerance {
        self.qualitative.clone().unwrap_or_else(default_qualitative)
    }

    fn band(&self, t: &Tolerance) -> Band {
        let (lo, hi) = (self.paper.lo(), self.paper.hi());
        let b = if let Some(f) = t.factor {
            Band { lo: lo / f, hi: hi * f }
        } else if let Some(d) = t.plus_minus {
            Band { lo: lo - d, hi: hi + d }
        } else if let Some([a, b]) = t.band {
            Band { lo: a, hi: b }
        } else {
            Band { lo, hi }
        };
        match self.side {
            Side::Both => b,
            Side::AtMost => Band { lo: f64::NEG_INFINITY, hi: b.hi },
            Side::AtLeast => Band { lo: b.lo, hi: f64::INFINITY },
        }
    }

    /// The direction the paper reports, relative to no effect: +1, -1, or 0
    /// (no direction: the paper reports no effect, or the unit has no neutral).
    pub fn direction(&self) -> i8 {
        let Some(n) = self.neutral() else { return 0 };
        let (lo, hi) = (self.paper.lo(), self.paper.hi());
        if lo > n || self.direction_only() && self.side == Side::AtLeast {
            1
        } else if hi < n || self.direction_only() && self.side == Side::AtMost {
            -1
        } else {
            0
        }
    }

    /// A claim of a direction without a size ("slower", "grows"), as the
    /// claims file marks it: the value must lie strictly beyond no effect.
    pub fn direction_only(&self) -> bool {
        self.direction_only
    }
}

fn default_qualitative() -> Tolerance {
    Tolerance {
        factor: Some(2.0),
        plus_minus: None,
        band: None,
        why: "the default: within a factor of 2 of the paper's value".into(),
    }
}

/// Parses and checks a claims file; errors name the claim, the part and the key.
pub fn parse(text: &str, file: &str) -> Result<ClaimsFile, String> {
    let de = toml::Deserializer::new(text);
    let f: ClaimsFile =
        serde_path_to_error::deserialize(de).map_err(|e| format!("{file}: {}: {}", e.path(), e.inner()))?;
    check(&f).map_err(|e| format!("{file}: {e}"))?;
    Ok(f)
}

fn check(f: &ClaimsFile) -> Result<(), String> {
    let mut ids = std::collections::BTreeSet::new();
    for c in &f.claims {
        if !ids.insert(c.id.as_str()) {
            return Err(format!("claim {} is listed twice", c.id));
        }
        if c.not_simulated.is_some() != c.parts.is_empty() {
            return Err(format!(
                "claim {}: give either parts to measure or not_simulated (why it cannot be measured), not both or neither",
                c.id
            ));
        }
        if c.one_scenario.as_ref().is_some_and(|w| w.trim().is_empty()) {
            return Err(format!("claim {}: one_scenario: say why nothing in its runs depends on the seed", c.id));
        }
        let mut parts = std::collections::BTreeSet::new();
        for p in &c.parts {
            if !parts.insert(p.id.as_str()) {
                return Err(format!("claim {}: part {} is listed twice", c.id, p.id));
            }
            check_part(p).map_err(|e| format!("claim {} part {}: {e}", c.id, p.id))?;
        }
        if !c.parts.is_empty() && !c.parts.iter().any(|p| p.headline) {
            return Err(format!("claim {}: no part is a headline part", c.id));
        }
    }
    for ch in &f.changes {
        let ok = f
            .claims
            .iter()
            .any(|c| c.id == ch.claim && (ch.part == ALL_PARTS || c.parts.iter().any(|p| p.id == ch.part)));
        if !ok {
            return Err(format!(
                "tolerance_change names claim {} part {}, which the file does not have",
                ch.claim, ch.part
            ));
        }
    }
    Ok(())
}

fn check_tolerance(p: &Part, t: &Tolerance, key: &str) -> Result<(), String> {
    let given = [t.factor.is_some(), t.plus_minus.is_some(), t.band.is_some()].iter().filter(|&&g| g).count();
    if given != 1 {
        return Err(format!("{key}: give exactly one of factor, plus_minus and band (got {given})"));
    }
    if t.why.trim().is_empty() {
        return Err(format!("{key}.why: say why the band is this wide"));
    }
    if let Some(f) = t.factor {
        if !(f.is_finite() && f >= 1.0) {
            return Err(format!("{key}.factor = {f}: must be a finite number >= 1"));
        }
        if p.paper.lo() <= 0.0 {
            return Err(format!(
                "{key}.factor: a factor needs a positive paper value (paper = {}); use plus_minus",
                p.paper.lo()
            ));
        }
    }
    if let Some(d) = t.plus_minus {
        if !(d.is_finite() && d >= 0.0) {
            return Err(format!("{key}.plus_minus = {d}: must be a finite number >= 0"));
        }
    }
    if let Some([a, b]) = t.band {
        // NaN compares false both ways, so it fails the ordering too.
        let ordered = a <= b;
        if !ordered || (p.side == Side::Both && !(a.is_finite() && b.is_finite())) {
            return Err(format!("{key}.band = [{a}, {b}]: must be finite with lo <= hi"));
        }
        if !(a <= p.paper.lo() && p.paper.hi() <= b) && p.side == Side::Both {
            return Err(format!("{key}.band = [{a}, {b}] does not contain the paper's value"));
        }
    }
    Ok(())
}

fn check_part(p: &Part) -> Result<(), String> {
    let (lo, hi) = (p.paper.lo(), p.paper.hi());
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(format!("paper = [{lo}, {hi}]: must be finite with lo <= hi"));
    }
    check_tolerance(p, &p.holds, "holds")?;
    let q = p.qualitative_tolerance();
    check_tolerance(p, &q, "qualitative")?;
    let (h, w) = (p.holds_band(), p.qualitative_band());
    if let Some(n) = p.neutral() {
        if p.direction() != 0 && !p.direction_only() && h.contains(n) {
            return Err(format!(
                "the holds band {} contains {} (no effect) while the paper reports {}; narrow it (plus_minus or band)",
                h.show(p.unit),
                p.unit.show(n),
                p.unit.show(lo)
            ));
        }
    }
    if p.direction_only {
        let at_neutral = p.neutral().is_some_and(|n| lo == n && hi == n);
        if p.side == Side::Both || !at_neutral {
            return Err("direction_only needs side = \"at_least\" or \"at_most\" and paper at no effect (a ratio of 1, a change of 0%)".into());
        }
    }
    if let (Some(n), false, true) = (p.neutral(), p.direction_only, lo == hi && p.side != Side::Both) {
        // A one-sided claim at no effect whose holds band does not reach past
        // it is a direction written as a band: a tie would hold, or a margin
        // would be invented. A "no worse than" claim reaches past by its margin.
        let edge = if p.side == Side::AtLeast { h.lo } else { h.hi };
        let reaches_past = if p.side == Side::AtLeast { edge < n } else { edge > n };
        if lo == n && !reaches_past {
            return Err(format!(
                "paper = {} with side = \"{}\" and the holds band {} states a direction without a size: write \
                 direction_only = true (a tie then does not hold); a \"no worse than\" claim gives a holds band \
                 that reaches past no effect by its margin",
                p.unit.show(n),
                if p.side == Side::AtLeast { "at_least" } else { "at_most" },
                h.show(p.unit)
            ));
        }
    }
    if let Some(l) = p.qualitative_limit() {
        for (name, b, explicit) in [("holds", h, true), ("qualitative", w, p.qualitative.is_some())] {
            if explicit && p.reaches_nearer_than(b, l) {
                return Err(format!(
                    "the {name} band {} reaches nearer to no effect than {}, halfway (in log for ratios) from {} \
                     to the paper's {}: holding, even qualitatively, must mean at least half the effect \
                     (docs/verdicts.md)",
                    b.show(p.unit),
                    p.unit.show(l),
                    p.unit.show(p.neutral().unwrap_or_default()),
                    p.unit.show(if p.direction() > 0 { lo } else { hi })
                ));
            }
        }
    }
    if !(w.lo <= h.lo && h.hi <= w.hi) {
        return Err(format!("the qualitative band {} must contain the holds band {}", w.show(p.unit), h.show(p.unit)));
    }
    if p.not_simulated.as_ref().is_some_and(|w| w.trim().is_empty()) {
        return Err("not_simulated: say why simulation cannot measure it".into());
    }
    if let Some(q) = p.percentile {
        if !(q > 0.0 && q < 100.0) {
            return Err(format!("percentile = {q}: must lie strictly between 0 and 100"));
        }
    }
    Ok(())
}
