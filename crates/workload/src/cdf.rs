//! Message-size distributions: step CDFs, their sampling, and the CDF file loader.
//!
//! Why a module of its own: the same distribution type serves the built-in
//! tables, user CDF files and fixed sizes, and the simulator queries its exact
//! mean (for example to size statistics), so it is public and must be exact.
//!
//! # Sampling convention
//!
//! A distribution is a list of points `(size_i, p_i)` with strictly increasing
//! sizes and non-decreasing cumulative probabilities ending at exactly 1. As in
//! the Homa simulator, sampling draws `u` uniformly in `(0, 1]` and returns the
//! first `size_i` with `p_i >= u` (a step CDF, no interpolation). So `size_i` has
//! probability `p_i - p_{i-1}` (with `p_{-1} = 0`), and a point with `p_i = 0`
//! is never drawn. The mean is `sum_i size_i * (p_i - p_{i-1})`, exactly.
//!
//! # CDF file format (`workload.size_cdf_file`)
//!
//! A size distribution file is plain text (UTF-8), read line by line:
//!
//! - Everything from a `#` to the end of a line is a comment. Blank lines
//!   (after removing comments) are ignored.
//! - Each data line holds two numbers separated by whitespace:
//!   `size cumulative_probability`, meaning "a message is at most `size` with
//!   probability `cumulative_probability`".
//! - Sizes are positive integers, strictly increasing from line to line.
//! - Probabilities are numbers in `[0, 1]`, non-decreasing from line to line;
//!   the last one must be `1` (within 1e-9).
//! - Optionally, the first data line may hold a single number: the declared
//!   mean size, in the same unit as the size column (this is the layout of the
//!   Homa simulator's distribution files). If present, it must agree with the
//!   mean computed from the points within 2% (relative), which catches
//!   truncated or mistyped files.
//! - Sizes are in bytes unless `workload.size_cdf_unit_bytes` says otherwise:
//!   every size is multiplied by that number (for example 1460 for a file whose
//!   sizes count full packets). The declared mean is checked before scaling.
//!
//! Example:
//!
//! ```text
//! # mean (optional)
//! 5500
//! # size  cumulative_probability
//! 1000    0.5
//! 10000   1.0
//! ```
//!
//! Errors name the configuration key, the file path and the line number.

use fabriclab_engine::limits::MAX_MESSAGE_BYTES;
use fabriclab_engine::ConfigError;
use rand::Rng;
use std::path::Path;

/// Cumulative probabilities this close to 1 count as 1.
pub const PROB_TOLERANCE: f64 = 1e-9;

/// Largest relative difference allowed between a file's declared mean and the
/// mean computed from its points. All four complete reference files (Homa's
/// W2..W5) agree within 3e-6, so 2% only rejects files that are really wrong.
pub const DECLARED_MEAN_TOLERANCE: f64 = 0.02;

/// A message-size distribution: a step CDF over sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeDist {
    /// Strictly increasing, all positive.
    sizes: Vec<u64>,
    /// Non-decreasing, last exactly 1.0.
    probs: Vec<f64>,
    mean: f64,
}

impl SizeDist {
    /// A distribution from `(size_bytes, cumulative_probability)` points.
    /// Checks the rules of the module docs; the error says which point is wrong
    /// (0-based index).
    pub fn new(points: &[(u64, f64)]) -> Result<SizeDist, String> {
        if points.is_empty() {
            return Err("a size distribution needs at least one point".into());
        }
        let mut sizes = Vec::with_capacity(points.len());
        let mut probs = Vec::with_capacity(points.len());
        for (i, &(size, p)) in points.iter().enumerate() {
            if let Some(msg) = check_point(sizes.last().copied(), probs.last().copied(), size, p) {
                return Err(format!("point {i} ({size}, {p}): {msg}"));
            }
            sizes.push(size);
            probs.push(p.min(1.0));
        }
        let last = probs.len() - 1;
        if (probs[last] - 1.0).abs() > PROB_TOLERANCE {
            return Err(format!(
                "point {last} ({}, {}): the last cumulative probability must be 1",
                sizes[last], probs[last]
            ));
        }
        probs[last] = 1.0;
        let mean = step_mean(&sizes, &probs);
        Ok(SizeDist { sizes, probs, mean })
    }

    /// Every message has `size` bytes (`size` must be positive).
    pub fn fixed(size: u64) -> Result<SizeDist, String> {
        SizeDist::new(&[(size, 1.0)])
    }

    /// A built-in distribution, in bytes.
    pub fn builtin(which: crate::BuiltinDist) -> SizeDist {
        let unit = which.unit_bytes();
        let points: Vec<(u64, f64)> = which.table().iter().map(|&(s, p)| (s * unit, p)).collect();
        // The tables are checked by this crate's tests, so this cannot fail.
        SizeDist::new(&points).unwrap_or_else(|e| unreachable!("built-in table {}: {e}", which.name()))
    }

    /// Reads a CDF file (format in the module docs). `key` is the configuration
    /// key that named the file; `unit_bytes` multiplies every size.
    pub fn from_file(path: &Path, unit_bytes: u64, key: &str) -> Result<SizeDist, ConfigError> {
        let text = crate::read_input(path, key, "CDF file")?;
        SizeDist::parse_cdf(&text, &path.display().to_string(), unit_bytes, key)
    }

    /// Parses CDF file text; `origin` (usually the path) prefixes error messages.
    pub fn parse_cdf(text: &str, origin: &str, unit_bytes: u64, key: &str) -> Result<SizeDist, ConfigError> {
        let err = |line: usize, msg: String| ConfigError::new(key, format!("{origin}:{line}: {msg}"));
        if unit_bytes == 0 {
            return Err(ConfigError::value(key, "a size unit of 0 bytes", "a positive unit"));
        }
        let mut declared_mean: Option<(usize, f64)> = None;
        let mut sizes: Vec<u64> = Vec::new();
        let mut probs: Vec<f64> = Vec::new();
        let mut last_data_line = 0;
        let mut n_lines = 0;
        for (idx, raw) in text.lines().enumerate() {
            let line_no = idx + 1;
            n_lines = line_no;
            let content = raw.split('#').next().unwrap_or("");
            let fields: Vec<&str> = content.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            let first_data_line = last_data_line == 0;
            last_data_line = line_no;
            match fields.as_slice() {
                [mean] if first_data_line => {
                    let m: f64 = mean
                        .parse()
                        .map_err(|_| err(line_no, format!("expected a declared mean (a number), found `{mean}`")))?;
                    if !(m.is_finite() && m > 0.0) {
                        return Err(err(
                            line_no,
                            format!("the declared mean must be a positive number, found `{mean}`"),
                        ));
                    }
                    declared_mean = Some((line_no, m));
                }
                [size, prob] => {
                    let size: u64 = match size.parse() {
                        Ok(s) => s,
                        Err(_) => {
                            return Err(err(
                                line_no,
                                format!("expected `size cumulative_probability` with an integer size, found `{size}`"),
                            ))
                        }
                    };
                    let p: f64 = prob.parse().map_err(|_| {
                        err(
                            line_no,
                            format!(
                                "expected `size cumulative_probability` with a numeric probability, found `{prob}`"
                            ),
                        )
                    })?;
                    if let Some(msg) = check_point(sizes.last().copied(), probs.last().copied(), size, p) {
                        return Err(err(line_no, msg));
                    }
                    sizes.push(size);
                    probs.push(p.min(1.0));
                }
                _ => {
                    return Err(err(
                        line_no,
                        format!(
                            "expected two numbers `size cumulative_probability`, found {} field(s): `{}`",
                            fields.len(),
                            content.trim()
                        ),
                    ))
                }
            }
        }
        if sizes.is_empty() {
            return Err(err(
                n_lines.max(1),
                "end of file without any `size cumulative_probability` line (empty CDF file)".into(),
            ));
        }
        let last = probs.len() - 1;
        if (probs[last] - 1.0).abs() > PROB_TOLERANCE {
            return Err(err(
                last_data_line,
                format!("the last cumulative probability must be 1, found {}", probs[last]),
            ));
        }
        probs[last] = 1.0;
        let mean_units = step_mean(&sizes, &probs);
        if let Some((line_no, declared)) = declared_mean {
            let rel = (mean_units - declared).abs() / declared;
            if rel > DECLARED_MEAN_TOLERANCE {
                return Err(err(
                    line_no,
                    format!(
                        "declared mean {declared} differs from the mean of the points, {mean_units:.6}, by {:.2}% \
                         (more than {}% allowed)",
                        rel * 100.0,
                        DECLARED_MEAN_TOLERANCE * 100.0
                    ),
                ));
            }
        }
        let mut scaled = Vec::with_capacity(sizes.len());
        for s in &sizes {
            // Messages are at most 4 GiB (docs/limits.md): per-message state grows with the size.
            match s.checked_mul(unit_bytes).filter(|&b| b <= MAX_MESSAGE_BYTES) {
                Some(b) => scaled.push(b),
                None => {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "{origin}: size {s} times the unit {unit_bytes} bytes is above the largest message, \
                             {MAX_MESSAGE_BYTES} bytes (bounds: docs/limits.md)"
                        ),
                    ))
                }
            }
        }
        let mean = step_mean(&scaled, &probs);
        Ok(SizeDist { sizes: scaled, probs, mean })
    }

    /// Exact mean size in bytes.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sizes of the points, in bytes.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// Cumulative probabilities of the points.
    pub fn probs(&self) -> &[f64] {
        &self.probs
    }

    /// Smallest size that can be drawn.
    pub fn min(&self) -> u64 {
        let first = self.probs.iter().position(|&p| p > 0.0).unwrap_or(0);
        self.sizes[first]
    }

    /// Largest size (the last point).
    pub fn max(&self) -> u64 {
        self.sizes[self.sizes.len() - 1]
    }

    /// `P(size <= x)`.
    pub fn cdf(&self, x: u64) -> f64 {
        let n = self.sizes.partition_point(|&s| s <= x);
        if n == 0 {
            0.0
        } else {
            self.probs[n - 1]
        }
    }

    /// The size for a uniform draw `u` in `(0, 1]`: the first size whose
    /// cumulative probability is `>= u`.
    #[inline]
    pub fn quantile(&self, u: f64) -> u64 {
        let i = self.probs.partition_point(|&p| p < u);
        self.sizes[i.min(self.sizes.len() - 1)]
    }

    /// Draws one size (one uniform number from `rng`).
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        // gen::<f64>() is in [0, 1); 1 - it is in (0, 1].
        let u = 1.0 - rng.gen::<f64>();
        self.quantile(u)
    }
}

/// Checks one point against the previous one; `None` when fine.
fn check_point(prev_size: Option<u64>, prev_prob: Option<f64>, size: u64, p: f64) -> Option<String> {
    if size == 0 {
        return Some("sizes must be positive, found 0".into());
    }
    if let Some(prev) = prev_size {
        if size <= prev {
            return Some(format!("sizes must be strictly increasing, found {size} after {prev}"));
        }
    }
    if !(p.is_finite() && (0.0..=1.0 + PROB_TOLERANCE).contains(&p)) {
        return Some(format!("cumulative probabilities must be in [0, 1], found {p}"));
    }
    if let Some(prev) = prev_prob {
        if p < prev {
            return Some(format!("cumulative probabilities must be non-decreasing, found {p} after {prev}"));
        }
    }
    None
}

/// Exact mean of a step CDF.
fn step_mean(sizes: &[u64], probs: &[f64]) -> f64 {
    let mut prev = 0.0;
    let mut mean = 0.0;
    for (&s, &p) in sizes.iter().zip(probs) {
        mean += s as f64 * (p - prev);
        prev = p;
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabriclab_engine::{stream, Stream};

    const KEY: &str = "workload.size_cdf_file";

    fn parse(text: &str) -> Result<SizeDist, ConfigError> {
        SizeDist::parse_cdf(text, "t.cdf", 1, KEY)
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text).expect_err("the text should be rejected");
        assert_eq!(e.key, KEY);
        e.message
    }

    #[test]
    fn quantile_follows_the_step_convention() {
        let d = SizeDist::new(&[(10, 0.25), (20, 0.25), (30, 0.75), (40, 1.0)]).unwrap();
        assert_eq!(d.quantile(1e-12), 10);
        assert_eq!(d.quantile(0.25), 10); // p >= u: ties go to the first point
        assert_eq!(d.quantile(0.25 + 1e-12), 30); // 20 has zero probability
        assert_eq!(d.quantile(0.75), 30);
        assert_eq!(d.quantile(0.76), 40);
        assert_eq!(d.quantile(1.0), 40);
        assert_eq!(d.min(), 10);
        assert_eq!(d.max(), 40);
        assert_eq!(d.cdf(9), 0.0);
        assert_eq!(d.cdf(25), 0.25);
        assert_eq!(d.cdf(40), 1.0);
    }

    #[test]
    fn leading_zero_probability_point_is_never_drawn() {
        let d = SizeDist::new(&[(50, 0.0), (60, 1.0)]).unwrap();
        assert_eq!(d.quantile(f64::MIN_POSITIVE), 60);
        assert_eq!(d.min(), 60);
        assert_eq!(d.mean(), 60.0);
    }

    #[test]
    fn mean_is_exact() {
        let d = SizeDist::new(&[(10, 0.25), (20, 0.25), (30, 0.75), (40, 1.0)]).unwrap();
        assert_eq!(d.mean(), 10.0 * 0.25 + 30.0 * 0.5 + 40.0 * 0.25);
        assert_eq!(SizeDist::fixed(1234).unwrap().mean(), 1234.0);
    }

    #[test]
    fn sampling_frequencies_match_the_steps() {
        let d = SizeDist::new(&[(1, 0.1), (2, 0.4), (3, 1.0)]).unwrap();
        let mut rng = stream(1, Stream::Workload, 0);
        let mut counts = [0u32; 4];
        let n = 100_000;
        for _ in 0..n {
            counts[d.sample(&mut rng) as usize] += 1;
        }
        let f = |c: u32| c as f64 / n as f64;
        assert_eq!(counts[0], 0);
        assert!((f(counts[1]) - 0.1).abs() < 0.005, "{counts:?}");
        assert!((f(counts[2]) - 0.3).abs() < 0.008, "{counts:?}");
        assert!((f(counts[3]) - 0.6).abs() < 0.008, "{counts:?}");
    }

    #[test]
    fn new_rejects_bad_points() {
        assert!(SizeDist::new(&[]).is_err());
        assert!(SizeDist::new(&[(0, 1.0)]).is_err());
        assert!(SizeDist::new(&[(5, 0.5), (5, 1.0)]).is_err());
        assert!(SizeDist::new(&[(5, 0.6), (6, 0.5), (7, 1.0)]).is_err());
        assert!(SizeDist::new(&[(5, 0.5), (6, 0.9)]).is_err());
        assert!(SizeDist::new(&[(5, f64::NAN), (6, 1.0)]).is_err());
        assert!(SizeDist::fixed(0).is_err());
    }

    #[test]
    fn parses_the_documented_format() {
        let text = "# mean first\n5500\n\n# size prob\n1000 0.5   # half\n10000\t1.0\n";
        let d = parse(text).unwrap();
        assert_eq!(d.sizes(), &[1000, 10000]);
        assert_eq!(d.probs(), &[0.5, 1.0]);
        assert_eq!(d.mean(), 5500.0);
        // Without a declared mean, and with a unit multiplier.
        let d = SizeDist::parse_cdf("1 0.5\n2 1\n", "x", 1460, KEY).unwrap();
        assert_eq!(d.sizes(), &[1460, 2920]);
        assert_eq!(d.mean(), 1.5 * 1460.0);
        // Probability within the tolerance of 1 counts as 1.
        let d = parse("7 0.9999999999\n").unwrap();
        assert_eq!(d.probs(), &[1.0]);
        // CRLF line endings.
        assert!(parse("3\r\n2 0.5\r\n4 1.0\r\n").is_ok());
    }

    #[test]
    fn non_numeric_fields_name_the_line() {
        let m = parse_err("10 0.5\n2O 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("`2O`"), "{m}");
        let m = parse_err("10 half\n20 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("probability"), "{m}");
        let m = parse_err("10.5 0.5\n20 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("integer"), "{m}");
        let m = parse_err("10 0.5 7\n20 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("3 field"), "{m}");
        let m = parse_err("-3 0.5\n20 1.0\n");
        assert!(m.contains("t.cdf:1:"), "{m}");
    }

    #[test]
    fn a_single_number_after_the_first_data_line_is_an_error() {
        let m = parse_err("10 0.5\n20\n30 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("two numbers"), "{m}");
    }

    #[test]
    fn decreasing_or_repeated_sizes_name_the_line() {
        let m = parse_err("# c\n10 0.2\n30 0.5\n20 1.0\n");
        assert!(m.contains("t.cdf:4:") && m.contains("strictly increasing"), "{m}");
        let m = parse_err("10 0.2\n10 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("strictly increasing"), "{m}");
        let m = parse_err("0 0.2\n10 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("positive"), "{m}");
    }

    #[test]
    fn bad_probabilities_name_the_line() {
        let m = parse_err("10 0.2\n20 1.5\n30 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("[0, 1]"), "{m}");
        let m = parse_err("10 -0.1\n20 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("[0, 1]"), "{m}");
        let m = parse_err("10 nan\n20 1.0\n");
        assert!(m.contains("t.cdf:1:"), "{m}");
        let m = parse_err("10 0.6\n20 0.5\n30 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("non-decreasing"), "{m}");
    }

    #[test]
    fn last_probability_must_be_one() {
        let m = parse_err("10 0.2\n20 0.9\n\n# end\n");
        assert!(m.contains("t.cdf:2:") && m.contains("must be 1"), "{m}");
    }

    #[test]
    fn empty_files_are_rejected() {
        let m = parse_err("");
        assert!(m.contains("t.cdf:1:") && m.contains("empty"), "{m}");
        let m = parse_err("# only a comment\n\n");
        assert!(m.contains("t.cdf:2:") && m.contains("empty"), "{m}");
        let m = parse_err("42\n");
        assert!(m.contains("empty"), "{m}");
    }

    #[test]
    fn declared_mean_is_checked() {
        // Points give mean 5500; 5600 is within 2%, 5700 is not.
        assert!(parse("5600\n1000 0.5\n10000 1.0\n").is_ok());
        let m = parse_err("# header\n5700\n1000 0.5\n10000 1.0\n");
        assert!(m.contains("t.cdf:2:") && m.contains("declared mean"), "{m}");
        let m = parse_err("abc\n1000 0.5\n10000 1.0\n");
        assert!(m.contains("t.cdf:1:"), "{m}");
        let m = parse_err("-5\n1000 0.5\n10000 1.0\n");
        assert!(m.contains("t.cdf:1:") && m.contains("positive"), "{m}");
        // The declared mean is in file units, before the multiplier.
        assert!(SizeDist::parse_cdf("1.5\n1 0.5\n2 1\n", "x", 1460, KEY).is_ok());
    }

    #[test]
    fn unit_overflow_and_zero_unit_are_errors() {
        assert!(SizeDist::parse_cdf("10 1.0\n", "x", u64::MAX, KEY).is_err());
        assert!(SizeDist::parse_cdf("10 1.0\n", "x", 0, KEY).is_err());
    }

    #[test]
    fn missing_file_names_key_and_path() {
        let e = SizeDist::from_file(Path::new("/nonexistent/dir/x.cdf"), 1, KEY).unwrap_err();
        assert_eq!(e.key, KEY);
        assert!(e.message.contains("/nonexistent/dir/x.cdf"), "{}", e.message);
    }
}
