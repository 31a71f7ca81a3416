//! The check every front end makes before a sweep's first point runs: each
//! point's config must load, or the sweep is one error naming how many points
//! fail and the first of them (a typo in a grid key is then one error, not a
//! failed point per point).

use super::grid::Point;
use crate::config::Config;

/// Loads every point's config (its base with its overrides): the resolved
/// configs in grid order, or the sweep's one error.
pub fn load_all(points: &[Point]) -> Result<Vec<Config>, String> {
    let loaded: Vec<Result<Config, String>> =
        points.iter().map(|p| Config::load(&p.base, &p.overrides).map_err(|e| e.to_string())).collect();
    refuse_unloadable(points, loaded.iter().map(|r| r.as_ref().err().map(String::as_str)))?;
    Ok(loaded.into_iter().flatten().collect())
}

/// `Ok` if no point has an error; else the error of the sweep: how many of
/// its points do not load, the first with its swept values and why, and
/// whether the others fail the same way.
pub fn refuse_unloadable<'a>(points: &[Point], errors: impl Iterator<Item = Option<&'a str>>) -> Result<(), String> {
    let bad: Vec<(&Point, &str)> = points.iter().zip(errors).filter_map(|(p, e)| e.map(|e| (p, e))).collect();
    let Some(&(first, why)) = bad.first() else { return Ok(()) };
    let same = bad.iter().filter(|(_, e)| *e == why).count();
    let shown: Vec<String> = first.swept.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let others = match (same, bad.len()) {
        (_, 1) => String::new(),
        (s, n) if s == n => " (the same error for all of them)".into(),
        (s, n) => format!(" (the same error for {s} of them; {} others differ)", n - s),
    };
    Err(format!(
        "{} of the {} points have a config that does not load, so nothing ran; point {} ({}): {why}{others}",
        bad.len(),
        points.len(),
        first.id,
        shown.join(", "),
    ))
}
