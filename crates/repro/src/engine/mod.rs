//! The verdict engine shared by every reproduction: claims as data
//! ([`claims`]), what measurement code records per seed ([`measure`]), the
//! statistics over seeds ([`stats`]) and the rules that judge ([`judge`]).

pub mod claims;
pub mod judge;
pub mod measure;
pub mod stats;

pub use claims::{ClaimsFile, Unit};
pub use judge::{judge, JudgedClaim, Rules, Verdict};
pub use measure::{Measurements, Record};
