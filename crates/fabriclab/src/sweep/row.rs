//! One table row per point, whoever ran it (the CLI's child processes, Python
//! worker processes or Dask workers), so every front end builds the same table.

use super::grid::Point;
use super::table::{flatten_json, Cell};

/// What running one point gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The parsed `summary.json`, if the run finished.
    pub summary: Option<serde_json::Value>,
    /// Why it failed (e.g. the config error or the signal).
    pub error: Option<String>,
    /// Peak resident set size of the process that ran it, if known.
    pub peak_rss_mb: Option<f64>,
}

/// The row: point id, swept values, `status`, `peak_rss_mb`, `error`, then
/// the flattened summary. Also returns the error if the point failed.
pub fn record(p: &Point, o: Outcome) -> (Vec<(String, Cell)>, Option<String>) {
    let mut rec = vec![("point".to_string(), Cell::Str(p.id.clone()))];
    rec.extend(p.swept.iter().map(|(k, v)| (k.clone(), Cell::from_toml(v))));
    let error = match (&o.summary, o.error) {
        (Some(_), _) => None,
        (None, Some(e)) => Some(e),
        (None, None) => Some("no summary.json".to_string()),
    };
    rec.push(("status".into(), Cell::Str(if error.is_none() { "ok" } else { "failed" }.into())));
    rec.push(("peak_rss_mb".into(), o.peak_rss_mb.map_or(Cell::Null, Cell::Float)));
    rec.push(("error".into(), error.clone().map_or(Cell::Null, Cell::Str)));
    if let Some(s) = &o.summary {
        rec.extend(flatten_json(s));
    }
    (rec, error)
}
