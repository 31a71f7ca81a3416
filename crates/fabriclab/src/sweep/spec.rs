//! The sweep file: a base experiment, fixed overrides, grid and zipped axes,
//! seeds, and an optional `[quick]` overlay. Keys keep the order of the file,
//! so the expansion order (and hence the row order of the result table) is the
//! order the author wrote.

use crate::config::ConfigError;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A TOML table flattened to `dotted.key -> value`, in file order. Nested
/// tables (`[grid] workload.load = [...]`) and quoted dotted keys
/// (`"workload.load" = [...]`) both give the key `workload.load`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DottedTable(pub Vec<(String, toml::Value)>);

/// One value of the file: either a nested table (kept in order) or a leaf.
#[derive(Deserialize)]
#[serde(untagged)]
enum Node {
    Table(OrderedNodes),
    Leaf(toml::Value),
}

struct OrderedNodes(Vec<(String, Node)>);

impl<'de> Deserialize<'de> for OrderedNodes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedNodes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedNodes, A::Error> {
                let mut v = Vec::new();
                while let Some((k, n)) = m.next_entry::<String, Node>()? {
                    v.push((k, n));
                }
                Ok(OrderedNodes(v))
            }
        }
        d.deserialize_map(V)
    }
}

fn flatten(prefix: &str, nodes: OrderedNodes, out: &mut Vec<(String, toml::Value)>) {
    for (k, n) in nodes.0 {
        let key = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
        match n {
            Node::Table(t) => flatten(&key, t, out),
            Node::Leaf(v) => out.push((key, v)),
        }
    }
}

impl<'de> Deserialize<'de> for DottedTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = Vec::new();
        flatten("", OrderedNodes::deserialize(d)?, &mut out);
        Ok(DottedTable(out))
    }
}

impl DottedTable {
    pub fn get(&self, key: &str) -> Option<&toml::Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, replacing an existing entry in place or appending.
    pub fn insert(&mut self, key: String, value: toml::Value) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }
}

/// The `base` key: one experiment, or a list of them (an axis of its own).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Base {
    One(String),
    Many(Vec<String>),
}

/// What `[quick]` may replace: fixed overrides are merged key by key, grid
/// axes replace the axis of the same key, `zip`, `seeds` and `when` replace the whole list.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    #[serde(default)]
    pub base: Option<Base>,
    #[serde(default)]
    pub set: DottedTable,
    #[serde(default)]
    pub grid: DottedTable,
    #[serde(default)]
    pub zip: Option<Vec<DottedTable>>,
    #[serde(default)]
    pub seeds: Option<Vec<u64>>,
    #[serde(default)]
    pub when: Option<Vec<When>>,
}

/// One `[[when]]` table: overrides for the points whose swept values match,
/// for settings that depend on a point (a run length that grows with the load
/// on one workload, say). They are not table columns, like `[set]`, and they
/// take precedence over `[set]` on the points they match.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// Swept key -> one value, or a list of values any of which matches.
    #[serde(rename = "match")]
    pub matches: DottedTable,
    /// The overrides for the matching points.
    pub set: DottedTable,
}

/// A parsed sweep file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Experiment path(s), relative to the sweep file.
    pub base: Base,
    /// Overrides applied to every point (not columns of the table).
    #[serde(default)]
    pub set: DottedTable,
    /// Cartesian axes: dotted key -> list of values.
    #[serde(default)]
    pub grid: DottedTable,
    /// Zipped axes: each `[[zip]]` table is one axis whose lists vary together.
    #[serde(default)]
    pub zip: Vec<DottedTable>,
    /// Seeds (`run.seed`), the innermost axis.
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// Conditional overrides, applied in file order (a later one wins on a key both set).
    #[serde(default)]
    pub when: Vec<When>,
    /// Smaller version of the sweep for `--quick`.
    #[serde(default)]
    pub quick: Option<Overlay>,
    /// Where relative base paths are resolved (the sweep file's directory).
    #[serde(skip)]
    pub dir: PathBuf,
}

impl SweepSpec {
    pub fn load(path: &Path) -> Result<SweepSpec, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new("", format!("cannot read sweep file {}: {e}", path.display())))?;
        let mut s = Self::parse(&text)?;
        s.dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(s)
    }

    pub fn parse(text: &str) -> Result<SweepSpec, ConfigError> {
        let de = toml::de::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let key = if path == "." { String::new() } else { path };
            let msg = e.inner().message().to_string();
            ConfigError::new(&key, format!("invalid sweep file: {msg}"))
        })
    }

    /// The spec with `key=value` overrides (the command line's `--set`) added
    /// to its `[set]`, over the file's own values. A swept key is refused: a
    /// fixed value would silently replace the axis in every point.
    pub fn with_overrides(mut self, sets: &[String]) -> Result<SweepSpec, ConfigError> {
        for spec in sets {
            let (key, value) = crate::config::parse_override(spec)?;
            let swept = self.grid.0.iter().any(|(k, _)| *k == key)
                || self.zip.iter().any(|z| z.0.iter().any(|(k, _)| *k == key))
                || (key == super::grid::SEED_KEY && !self.seeds.is_empty());
            if swept {
                return Err(ConfigError::new(
                    &key,
                    "(from --set) is an axis of this sweep; --set fixes a key the sweep does not vary".into(),
                ));
            }
            self.set.insert(key, value);
        }
        Ok(self)
    }

    /// The spec with its `[quick]` overlay applied (unchanged if it has none).
    pub fn quick(mut self) -> SweepSpec {
        let Some(q) = self.quick.take() else { return self };
        if let Some(b) = q.base {
            self.base = b;
        }
        for (k, v) in q.set.0 {
            self.set.insert(k, v);
        }
        for (k, v) in q.grid.0 {
            self.grid.insert(k, v);
        }
        if let Some(z) = q.zip {
            self.zip = z;
        }
        if let Some(s) = q.seeds {
            self.seeds = s;
        }
        if let Some(w) = q.when {
            self.when = w;
        }
        self
    }
}
