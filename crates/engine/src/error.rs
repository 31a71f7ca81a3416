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
        let message = shorten_words(&self.message);
        if self.key.is_empty() {
            write!(f, "config error: {message}")
        } else {
            write!(f, "config error at `{}`: {message}", shorten_words(&self.key))
        }
    }
}

/// Longest word (run without whitespace) an error shows whole: a path up to
/// Linux's PATH_MAX is still named in full.
const MAX_WORD: usize = 4096;

/// How much of a longer word an error shows.
const SHOWN: usize = 60;

/// `text` with every word longer than [`MAX_WORD`] characters cut to its
/// start and its length: a bad value pasted by mistake (a whole file, a
/// megabyte string) is named, not echoed.
fn shorten_words(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.split_whitespace().any(|w| w.chars().count() > MAX_WORD) {
        return text.into();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        out.push_str(&rest[..start]);
        let word = &rest[start..];
        let end = word.find(char::is_whitespace).unwrap_or(word.len());
        let n = word[..end].chars().count();
        if n > MAX_WORD {
            // A comma or the like after the value stays, so the sentence still reads.
            let tail = word[..end].chars().last().filter(|c| ",;:.".contains(*c));
            let cut: String = word.chars().take(SHOWN).collect();
            let n = n - usize::from(tail.is_some());
            out.push_str(&format!("{cut}... ({n} characters){}", tail.map(String::from).unwrap_or_default()));
        } else {
            out.push_str(&word[..end]);
        }
        rest = &word[end..];
    }
    out.push_str(rest);
    out.into()
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

#[cfg(test)]
mod tests {
    use super::ConfigError;

    #[test]
    fn a_huge_value_is_named_by_its_start_and_length_not_echoed() {
        let huge = "x".repeat(1_000_000);
        let e = ConfigError::value("protocol.name", format!("\"{huge}\""), "one of sird, homa").to_string();
        assert!(e.len() < 200, "{} bytes", e.len());
        assert!(e.contains("(1000002 characters), expected one of sird, homa"), "{e}");
        let short = ConfigError::value("run.seed", -1, "a value >= 0").to_string();
        assert_eq!(short, "config error at `run.seed`: got -1, expected a value >= 0");
        let key = ConfigError::new(&"k".repeat(5000), "is unknown".into()).to_string();
        assert!(key.contains("(5000 characters)") && key.len() < 150, "{key}");
        // A long path is named whole (a file's error must name the file).
        let path = format!("/{}/mixed-k8.cm", "d".repeat(300));
        let e = ConfigError::new("workload.trace_file", format!("{path} does not exist")).to_string();
        assert!(e.contains(&path), "{e}");
    }
}
