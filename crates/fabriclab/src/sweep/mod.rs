//! Parameter sweeps as data: the sweep file ([`spec`]), its expansion into
//! points ([`grid`]) and the tidy result table ([`table`]). Running the points
//! is the caller's job (the CLI runs each in a child process), so other front
//! ends (Python) can reuse the same expansion and point ids.

pub mod grid;
pub mod preflight;
pub mod row;
pub mod spec;
pub mod table;

pub use grid::{expand, point_id, Axis, Point};
pub use preflight::refuse_unloadable;
pub use row::{record, Outcome};
pub use spec::SweepSpec;
pub use table::{flatten_json, Cell, Table};

#[cfg(test)]
mod tests;
