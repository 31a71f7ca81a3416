//! The tidy result table: one row per point, the swept values, the point's
//! status, then every `summary.json` field flattened (`slowdown.A.p99` ->
//! `slowdown_A_p99`).

use std::fmt::Write as _;

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Cell {
    pub fn from_toml(v: &toml::Value) -> Cell {
        match v {
            toml::Value::Boolean(b) => Cell::Bool(*b),
            toml::Value::Integer(i) => Cell::Int(*i),
            toml::Value::Float(f) => Cell::Float(*f),
            toml::Value::String(s) => Cell::Str(s.clone()),
            other => Cell::Str(other.to_string()),
        }
    }

    pub fn from_json(v: &serde_json::Value) -> Cell {
        match v {
            serde_json::Value::Null => Cell::Null,
            serde_json::Value::Bool(b) => Cell::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Cell::Int(i),
                None => Cell::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Cell::Str(s.clone()),
            other => Cell::Str(other.to_string()),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Cell::Str(s) => Some(s),
            _ => None,
        }
    }

    /// CSV text: shortest round-trip numbers, `inf`, empty for null.
    fn write_csv(&self, o: &mut String) {
        match self {
            Cell::Null => {}
            Cell::Bool(b) => o.push_str(if *b { "true" } else { "false" }),
            Cell::Int(i) => {
                let _ = write!(o, "{i}");
            }
            Cell::Float(f) => {
                let _ = write!(o, "{f}");
            }
            Cell::Str(s) if s.contains([',', '"', '\n', '\r']) => {
                o.push('"');
                o.push_str(&s.replace('"', "\"\""));
                o.push('"');
            }
            Cell::Str(s) => o.push_str(s),
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Str(s.to_string())
    }
}

impl From<f64> for Cell {
    fn from(x: f64) -> Cell {
        Cell::Float(x)
    }
}

/// `{"slowdown": {"A": {"p99": 1}}}` -> `[("slowdown_A_p99", 1)]`, keys in the JSON's order.
pub fn flatten_json(v: &serde_json::Value) -> Vec<(String, Cell)> {
    fn go(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, Cell)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}_{k}") };
                    go(&key, x, out);
                }
            }
            other => out.push((prefix.to_string(), Cell::from_json(other))),
        }
    }
    let mut out = Vec::new();
    go("", v, &mut out);
    out
}

/// Column-ordered table; rows are `Vec<Cell>` aligned with `columns`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Builds a table from rows of named cells: columns in order of first appearance.
    pub fn from_records(records: &[Vec<(String, Cell)>]) -> Table {
        let mut columns: Vec<String> = Vec::new();
        for r in records {
            for (k, _) in r {
                if !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
        }
        let rows = records
            .iter()
            .map(|r| {
                columns.iter().map(|c| r.iter().find(|(k, _)| k == c).map_or(Cell::Null, |(_, v)| v.clone())).collect()
            })
            .collect();
        Table { columns, rows }
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// The cell of `row` in column `name` (Null if there is no such column).
    pub fn get(&self, row: usize, name: &str) -> &Cell {
        static NULL: Cell = Cell::Null;
        self.column(name).map_or(&NULL, |c| &self.rows[row][c])
    }

    pub fn to_csv(&self) -> String {
        let mut o = String::new();
        let header: Vec<Cell> = self.columns.iter().map(|c| Cell::Str(c.clone())).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            for (i, c) in row.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                c.write_csv(&mut o);
            }
            o.push('\n');
        }
        o
    }
}
