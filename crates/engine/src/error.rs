//! Configuration errors, shared by every crate that parses part of an experiment.

use std::fmt;

/// A configuration problem: which key, and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: &str, message: String) -> Self {
        ConfigError { key: key.to_string(), message }
    }

    /// `key` has value `value`, but only `allowed` is allowed.
    pub fn value(key: &str, value: impl fmt::Display, allowed: &str) -> Self {
        ConfigError { key: key.to_string(), message: format!("got {value}, expected {allowed}") }
    }

    /// The same error under table `to` instead of `from` (a protocol variant
    /// that reads another protocol's parameters from its own table).
    pub fn in_table(self, from: &str, to: &str) -> Self {
        ConfigError { key: self.key.replacen(from, to, 1), ..self }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "config error: {}", self.message)
        } else {
            write!(f, "config error at `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Semantic checks beyond what the types enforce.
pub trait Validate {
    fn validate(&self) -> Result<(), ConfigError>;
}

/// Helpers for range checks that name the key.
pub fn check_positive(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::value(key, v, "a positive number"))
    }
}

pub fn check_range(key: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ConfigError::value(key, v, &format!("a number in [{lo}, {hi}]")))
    }
}
