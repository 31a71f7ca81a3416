//! Reading sweep tables: rows narrowed down by conditions (successful runs,
//! a scenario, stable runs, a column's value), shared by every paper.

use fabriclab::sweep::{Cell, Table};

/// Rows of a table, narrowed down by conditions; only successful runs.
#[derive(Clone)]
pub struct View<'a> {
    pub t: &'a Table,
    pub rows: Vec<usize>,
}

/// The scenario of a row: the file stem of its `base` column.
pub fn scenario_of(c: &Cell) -> Option<String> {
    let s = c.as_str()?;
    let stem = s.rsplit('/').next()?;
    Some(stem.trim_end_matches(".toml").to_string())
}

fn same(c: &Cell, want: &Cell) -> bool {
    match (c.as_f64(), want.as_f64()) {
        (Some(a), Some(b)) if a.is_infinite() || b.is_infinite() => a == b,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        _ => c == want,
    }
}

impl<'a> View<'a> {
    /// Every successful point.
    pub fn ok(t: &'a Table) -> View<'a> {
        let rows = (0..t.rows.len()).filter(|&r| t.get(r, "status").as_str() == Some("ok")).collect();
        View { t, rows }
    }

    /// Rows whose column `col` equals `v` (numbers compare by value).
    pub fn eq(&self, col: &str, v: impl Into<Cell>) -> View<'a> {
        let v = v.into();
        let rows = self.rows.iter().copied().filter(|&r| same(self.t.get(r, col), &v)).collect();
        View { t: self.t, rows }
    }

    pub fn scenario(&self, name: &str) -> View<'a> {
        let rows = self
            .rows
            .iter()
            .copied()
            .filter(|&r| scenario_of(self.t.get(r, "base")).as_deref() == Some(name))
            .collect();
        View { t: self.t, rows }
    }

    /// The rows `keep` takes.
    pub fn filter(&self, keep: impl Fn(&Table, usize) -> bool) -> View<'a> {
        let rows = self.rows.iter().copied().filter(|&r| keep(self.t, r)).collect();
        View { t: self.t, rows }
    }

    /// Runs the paper would keep: stable ones.
    pub fn stable(&self) -> View<'a> {
        self.eq("stable", Cell::Bool(true))
    }

    pub fn nums(&self, col: &str) -> Vec<f64> {
        self.rows.iter().filter_map(|&r| self.t.get(r, col).as_f64()).collect()
    }

    /// The value of `col` in the single (first) row, if any.
    pub fn num(&self, col: &str) -> Option<f64> {
        self.nums(col).into_iter().next()
    }

    pub fn max(&self, col: &str) -> Option<f64> {
        self.nums(col).into_iter().reduce(f64::max)
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// a / b, if both are known and the quotient is finite.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a / b).filter(|r| r.is_finite())
}
