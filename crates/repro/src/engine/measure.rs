//! What a paper's measurement code hands the verdict engine: per seed, per
//! claim part, a value in a unit (with the sample count behind a percentile),
//! or why there is none. The code runs once per seed, on that seed's rows.
//!
//! The same records are written to `measurements.toml` by every reproduction,
//! so a run can be judged again (after a tolerance change, or by the Python
//! package) without running it again.

use super::claims::Unit;
use serde::{Deserialize, Serialize};

/// What one seed gave for one part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A measured value, in the entry's unit.
    Value(f64),
    /// Nothing to judge: not run, no data, an unstable run, "n/a".
    Missing(String),
    /// The behaviour the claim describes did not happen at all (e.g. a rate
    /// never reached within the run): the part does not hold.
    Failed(String),
}

/// One record: a seed's outcome for a claim's part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub claim: String,
    pub part: String,
    pub seed: u64,
    pub unit: Unit,
    pub outcome: Outcome,
    /// Per-message samples behind a percentile (for a ratio of two
    /// percentiles, the smaller of the two counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    /// Where the value was found (scenario, load), when that matters to a reader.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// One of several conditions (loads) the part is judged at, each on its
    /// own seeds: the part gets the worst verdict over the conditions that
    /// were measured (docs/verdicts.md, "Parts judged at several conditions").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub condition: String,
}

impl Entry {
    /// The sample count behind a percentile value.
    pub fn samples(&mut self, n: impl Into<Option<f64>>) -> &mut Entry {
        self.samples = n.into().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64);
        self
    }

    pub fn note(&mut self, s: impl Into<String>) -> &mut Entry {
        self.note = s.into();
        self
    }

    pub fn condition(&mut self, s: impl Into<String>) -> &mut Entry {
        self.condition = s.into();
        self
    }
}

/// Collects one seed's entries; paper code calls it once per part it measures.
pub struct Record<'a> {
    seed: u64,
    out: &'a mut Vec<Entry>,
}

impl<'a> Record<'a> {
    pub fn new(seed: u64, out: &'a mut Vec<Entry>) -> Record<'a> {
        Record { seed, out }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn push(&mut self, claim: &str, part: &str, unit: Unit, outcome: Outcome) -> &mut Entry {
        self.out.push(Entry {
            claim: claim.into(),
            part: part.into(),
            seed: self.seed,
            unit,
            outcome,
            samples: None,
            note: String::new(),
            condition: String::new(),
        });
        self.out.last_mut().expect("just pushed")
    }

    /// A measured value; `None`, NaN or an infinity is recorded as missing ("no data").
    pub fn value(&mut self, claim: &str, part: &str, unit: Unit, v: Option<f64>) -> &mut Entry {
        let outcome = match v {
            Some(v) if v.is_finite() => Outcome::Value(v),
            Some(v) => Outcome::Missing(format!("not a finite number ({v})")),
            None => Outcome::Missing("no data".into()),
        };
        self.push(claim, part, unit, outcome)
    }

    /// Entries recorded elsewhere (with [`Record::new`] on another list) for this seed.
    pub fn extend(&mut self, entries: impl IntoIterator<Item = Entry>) {
        let seed = self.seed;
        self.out.extend(entries.into_iter().inspect(|e| debug_assert_eq!(e.seed, seed)));
    }

    /// No value, and why.
    pub fn missing(&mut self, claim: &str, part: &str, unit: Unit, why: impl Into<String>) -> &mut Entry {
        self.push(claim, part, unit, Outcome::Missing(why.into()))
    }

    /// The claimed behaviour did not occur, and what happened instead.
    pub fn failed(&mut self, claim: &str, part: &str, unit: Unit, why: impl Into<String>) -> &mut Entry {
        self.push(claim, part, unit, Outcome::Failed(why.into()))
    }
}

/// A reproduction's measurements, as written to and read from `measurements.toml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurements {
    pub paper: String,
    /// "full" or "quick", or where transcribed records come from.
    pub mode: String,
    /// The seeds that ran.
    pub seeds: Vec<u64>,
    #[serde(default, rename = "entry")]
    pub entries: Vec<Entry>,
}

impl Measurements {
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot write the measurements: {e}\n"))
    }

    pub fn parse(text: &str, file: &str) -> Result<Measurements, String> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{file}: {}: {}", e.path(), e.inner()))
    }
}
