//! Deterministic discrete-event core.
//!
//! Knows nothing of networks: it offers simulated time in integer picoseconds,
//! an event queue that orders equal-time events by insertion sequence, and
//! independent seeded random streams, so that a run is a pure function of
//! (configuration, seed). It also holds the configuration error type that every
//! crate parsing part of an experiment reports through.

pub mod error;
pub mod limits;
mod prefetch;
mod queue;
mod rng;
mod time;

pub use error::{ConfigError, Validate};
pub use prefetch::{prefetch, prefetch_span};
pub use queue::{EventQueue, Packed};
pub use rng::{mix64, stream, SimRng, Stream};
pub use time::*;
