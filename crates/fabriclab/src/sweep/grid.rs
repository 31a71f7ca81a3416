//! Grid expansion: the cartesian product of the axes (base list, grid keys,
//! zip groups, seeds, outermost first), each point with its `--set` overrides
//! and a stable id.

use super::spec::{Base, DottedTable, SweepSpec, When};
use crate::config::ConfigError;
use std::hash::Hasher;
use std::path::PathBuf;

/// One axis: one or more keys whose values vary together.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub keys: Vec<String>,
    /// `values[i]` holds one value per key.
    pub values: Vec<Vec<toml::Value>>,
}

/// One run of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Position in grid order (row of the table).
    pub index: usize,
    /// Stable id: hash of the base path and the overrides; the point's directory name.
    pub id: String,
    /// The experiment file, resolved against the sweep file's directory.
    pub base: PathBuf,
    /// Swept values, one per axis key (`base` for a list of bases, `run.seed` for seeds).
    pub swept: Vec<(String, toml::Value)>,
    /// `dotted.key=value` overrides: the fixed `[set]` ones, then the swept ones.
    pub overrides: Vec<String>,
}

/// The column name of the seeds axis.
pub const SEED_KEY: &str = "run.seed";
/// The column name of a list of base experiments.
pub const BASE_KEY: &str = "base";

fn axis_values(key: &str, v: &toml::Value) -> Result<Vec<toml::Value>, ConfigError> {
    match v {
        toml::Value::Array(a) if !a.is_empty() => Ok(a.clone()),
        toml::Value::Array(_) => Err(ConfigError::new(key, "an axis needs at least one value, got []".into())),
        other => Err(ConfigError::new(key, format!("an axis must be a list of values, got `{other}`"))),
    }
}

/// An axis value given twice would be the same point twice, run twice at
/// once into one folder. 5 and 5.0 are the same value here, as in a config;
/// a zip group's values are compared as tuples.
fn check_distinct(key: &str, axis: &Axis) -> Result<(), ConfigError> {
    let num = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
    let same = |a: &toml::Value, b: &toml::Value| match (num(a), num(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    };
    let values = &axis.values;
    for (j, b) in values.iter().enumerate() {
        if let Some(i) = values[..j].iter().position(|a| a.iter().zip(b).all(|(x, y)| same(x, y))) {
            let shown: Vec<String> = b.iter().map(ToString::to_string).collect();
            return Err(ConfigError::new(
                key,
                format!(
                    "value `{}` is given twice (positions {} and {}); each value of an axis is one point, so give it once",
                    shown.join(", "),
                    i + 1,
                    j + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The axes of a spec, outermost first.
pub fn axes(spec: &SweepSpec) -> Result<Vec<Axis>, ConfigError> {
    let mut axes = Vec::new();
    if let Base::Many(list) = &spec.base {
        if list.is_empty() {
            return Err(ConfigError::new("base", "needs at least one experiment path".into()));
        }
        let values = list.iter().map(|b| vec![toml::Value::String(b.clone())]).collect();
        axes.push(Axis { keys: vec![BASE_KEY.into()], values });
    }
    for (k, v) in &spec.grid.0 {
        let values = axis_values(&format!("grid.{k}"), v)?.into_iter().map(|x| vec![x]).collect();
        axes.push(Axis { keys: vec![k.clone()], values });
    }
    let first_zip = axes.len();
    for (i, group) in spec.zip.iter().enumerate() {
        axes.push(zip_axis(i, group)?);
    }
    if !spec.seeds.is_empty() {
        let values = spec.seeds.iter().map(|&s| vec![toml::Value::Integer(s as i64)]).collect();
        axes.push(Axis { keys: vec![SEED_KEY.into()], values });
    }
    for (i, a) in axes.iter().enumerate() {
        let key = match a.keys.as_slice() {
            [k] if k == SEED_KEY => "seeds".to_string(),
            [k] if k == BASE_KEY => BASE_KEY.to_string(),
            [k] if i < first_zip => format!("grid.{k}"),
            _ => format!("zip[{}]", i - first_zip),
        };
        check_distinct(&key, a)?;
    }
    check_unique_keys(spec, &axes)?;
    Ok(axes)
}

fn zip_axis(i: usize, group: &DottedTable) -> Result<Axis, ConfigError> {
    if group.0.is_empty() {
        return Err(ConfigError::new(&format!("zip[{i}]"), "a zip group needs at least one key".into()));
    }
    let lists = group.0.iter().map(|(k, v)| axis_values(&format!("zip[{i}].{k}"), v)).collect::<Result<Vec<_>, _>>()?;
    let n = lists[0].len();
    if lists.iter().any(|l| l.len() != n) {
        let lens: Vec<String> = group.0.iter().zip(&lists).map(|((k, _), l)| format!("{k} ({})", l.len())).collect();
        return Err(ConfigError::new(
            &format!("zip[{i}]"),
            format!("zipped lists must have equal lengths, got {}", lens.join(", ")),
        ));
    }
    let values = (0..n).map(|j| lists.iter().map(|l| l[j].clone()).collect()).collect();
    Ok(Axis { keys: group.0.iter().map(|(k, _)| k.clone()).collect(), values })
}

fn check_unique_keys(spec: &SweepSpec, axes: &[Axis]) -> Result<(), ConfigError> {
    let mut seen: Vec<&str> = spec.set.0.iter().map(|(k, _)| k.as_str()).collect();
    for k in axes.iter().flat_map(|a| &a.keys) {
        if seen.contains(&k.as_str()) {
            return Err(ConfigError::new(k, "is given more than once across set, grid, zip and seeds".into()));
        }
        seen.push(k);
    }
    Ok(())
}

/// `key=value` with the value as a TOML literal (what `--set` parses).
fn override_of(key: &str, v: &toml::Value) -> String {
    format!("{key}={v}")
}

/// The most points a sweep may have. Each point is held in memory with its
/// overrides (about a kilobyte) before anything runs, and even at a second
/// a point 100,000 points are more than a day on one core; a grid of 10^7
/// once took 12.6 GB before it started. Larger studies are several sweeps.
pub const MAX_POINTS: usize = 100_000;

/// The number of points of `axes`, checked against [`MAX_POINTS`] without
/// multiplying past it.
pub fn count_points(axes: &[Axis]) -> Result<usize, ConfigError> {
    let mut total: usize = 1;
    for a in axes {
        total = total.saturating_mul(a.values.len()).min(MAX_POINTS + 1);
    }
    if total > MAX_POINTS {
        let sizes: Vec<String> = axes.iter().map(|a| format!("{} ({})", a.keys.join("+"), a.values.len())).collect();
        let product = axes.iter().fold(1f64, |p, a| p * a.values.len() as f64);
        return Err(ConfigError::new(
            "grid",
            format!(
                "the axes {} make {product:.3e} points, more than the {MAX_POINTS} a sweep may have; \
                 use fewer values, zip axes that vary together, or split the study into several sweeps",
                sizes.join(" x ")
            ),
        ));
    }
    Ok(total)
}

/// The values a `[[when]]` match entry accepts: a list, or one value.
fn accepted(v: &toml::Value) -> &[toml::Value] {
    match v {
        toml::Value::Array(a) => a,
        one => std::slice::from_ref(one),
    }
}

/// Checks every `[[when]]` against the axes: a match key must be swept and
/// each value it names must be one of the axis's values (else the table could
/// never apply, silently); its overrides must not be axes themselves.
fn check_when(when: &[When], axes: &[Axis]) -> Result<(), ConfigError> {
    let axis_of = |k: &str| axes.iter().find_map(|a| a.keys.iter().position(|x| x == k).map(|i| (a, i)));
    for (i, w) in when.iter().enumerate() {
        if w.matches.0.is_empty() || w.set.0.is_empty() {
            return Err(ConfigError::new(&format!("when[{i}]"), "needs a non-empty `match` and `set`".into()));
        }
        for (k, v) in &w.matches.0 {
            let key = format!("when[{i}].match.{k}");
            let Some((axis, j)) = axis_of(k) else {
                let swept: Vec<&str> = axes.iter().flat_map(|a| a.keys.iter().map(String::as_str)).collect();
                return Err(ConfigError::new(
                    &key,
                    format!("is not swept; a match names an axis: {}", swept.join(", ")),
                ));
            };
            for x in accepted(v) {
                if !axis.values.iter().any(|vals| &vals[j] == x) {
                    return Err(ConfigError::new(
                        &key,
                        format!("value `{x}` is not one of the axis's values, so it never matches"),
                    ));
                }
            }
        }
        if let Some((k, _)) = w.set.0.iter().find(|(k, _)| axis_of(k).is_some()) {
            return Err(ConfigError::new(
                &format!("when[{i}].set.{k}"),
                "is an axis; a `when` may only set keys that are not swept".into(),
            ));
        }
    }
    Ok(())
}

/// Whether `w` matches a point with these swept values.
fn matches(w: &When, swept: &[(String, toml::Value)]) -> bool {
    w.matches.0.iter().all(|(k, v)| swept.iter().any(|(sk, sv)| sk == k && accepted(v).contains(sv)))
}

/// Expands the spec into its points, in grid order (first axis outermost).
pub fn expand(spec: &SweepSpec) -> Result<Vec<Point>, ConfigError> {
    let axes = axes(spec)?;
    let total = count_points(&axes)?;
    check_when(&spec.when, &axes)?;
    let mut points = Vec::with_capacity(total);
    for index in 0..total {
        // Mixed-radix digits of `index`, last axis fastest.
        let mut rest = index;
        let mut pick = vec![0; axes.len()];
        for (d, a) in pick.iter_mut().zip(&axes).rev() {
            *d = rest % a.values.len();
            rest /= a.values.len();
        }
        let mut base = match &spec.base {
            Base::One(b) => b.clone(),
            Base::Many(_) => String::new(),
        };
        let mut swept = Vec::new();
        for (a, &j) in axes.iter().zip(&pick) {
            for (k, v) in a.keys.iter().zip(&a.values[j]) {
                swept.push((k.clone(), v.clone()));
                if let (BASE_KEY, toml::Value::String(s)) = (k.as_str(), v) {
                    base = s.clone();
                }
            }
        }
        // The fixed overrides, with those of the matching `[[when]]`s over them.
        let mut fixed = spec.set.clone();
        for w in spec.when.iter().filter(|w| matches(w, &swept)) {
            for (k, v) in &w.set.0 {
                fixed.insert(k.clone(), v.clone());
            }
        }
        let mut overrides: Vec<String> = fixed.0.iter().map(|(k, v)| override_of(k, v)).collect();
        overrides.extend(swept.iter().filter(|(k, _)| k != BASE_KEY).map(|(k, v)| override_of(k, v)));
        let id = point_id(&base, &overrides);
        points.push(Point { index, id, base: spec.dir.join(&base), swept, overrides });
    }
    Ok(points)
}

/// FNV-1a (64 bit) of the base path and the sorted overrides: independent of
/// axis order and of the machine, so a resumed sweep finds its points again.
pub fn point_id(base: &str, overrides: &[String]) -> String {
    let mut lines: Vec<&str> = overrides.iter().map(String::as_str).collect();
    lines.sort_unstable();
    let mut h = fnv::FnvHasher::default();
    h.write(base.as_bytes());
    for l in lines {
        h.write(b"\n");
        h.write(l.as_bytes());
    }
    format!("{:016x}", h.finish())
}
