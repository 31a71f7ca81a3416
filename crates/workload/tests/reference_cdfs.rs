//! Checks the built-in tables and the CDF loader against the reference
//! distribution files in ../shared/workloads (skipped when absent).

use fabriclab_engine::{stream, Stream};
use fabriclab_workload::{BuiltinDist, SizeDist};
use std::path::{Path, PathBuf};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/workloads");
const KEY: &str = "workload.size_cdf_file";

fn dir() -> Option<PathBuf> {
    let d = Path::new(DIR);
    if d.is_dir() {
        Some(d.to_path_buf())
    } else {
        println!("skipped: ../shared/workloads not found (looked in {DIR})");
        None
    }
}

fn file_of(d: BuiltinDist) -> &'static str {
    match d {
        BuiltinDist::Wka => "Google_AllRPC.txt",
        BuiltinDist::Wkb => "Facebook_HadoopDist_All.txt",
        BuiltinDist::Wkc => "DCTCP_MsgSizeDist.txt",
    }
}

/// A deliberately simple reader, independent of the crate's loader:
/// (declared mean, points).
fn read_points(path: &Path) -> (f64, Vec<(u64, f64)>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let mean: f64 = lines.next().unwrap().trim().parse().unwrap();
    let points = lines
        .map(|l| {
            let mut f = l.split_whitespace();
            let s = f.next().unwrap().parse().unwrap();
            let p = f.next().unwrap().parse().unwrap();
            (s, p)
        })
        .collect();
    (mean, points)
}

#[test]
fn builtin_tables_equal_the_reference_files() {
    let Some(dir) = dir() else { return };
    for d in BuiltinDist::ALL {
        let (mean, points) = read_points(&dir.join(file_of(d)));
        assert_eq!(d.table(), points.as_slice(), "{} table vs {}", d.name(), file_of(d));
        assert_eq!(d.declared_mean(), mean, "{}", d.name());
        // In bytes: sizes times the unit (1460 for WKc), probabilities unchanged.
        let unit = if d == BuiltinDist::Wkc { 1460 } else { 1 };
        let dist = SizeDist::builtin(d);
        let sizes: Vec<u64> = points.iter().map(|p| p.0 * unit).collect();
        let probs: Vec<f64> = points.iter().map(|p| p.1).collect();
        assert_eq!(dist.sizes(), sizes.as_slice(), "{}", d.name());
        assert_eq!(dist.probs(), probs.as_slice(), "{}", d.name());
    }
}

#[test]
fn loader_reads_the_reference_files() {
    let Some(dir) = dir() else { return };
    for d in BuiltinDist::ALL {
        let unit = if d == BuiltinDist::Wkc { 1460 } else { 1 };
        let loaded = SizeDist::from_file(&dir.join(file_of(d)), unit, KEY).unwrap();
        assert_eq!(loaded, SizeDist::builtin(d), "{}", d.name());
    }
    // Homa's W2 (Google search RPC) is complete too; its declared mean passes the 2% rule.
    let w2 = SizeDist::from_file(&dir.join("Google_SearchRPC.txt"), 1, KEY).unwrap();
    assert!((w2.mean() - 440.7907).abs() / 440.7907 < 1e-6, "{}", w2.mean());
    // Homa's W1 (Facebook key-value) is only the head of a distribution whose tail
    // is a generalized Pareto: its CDF stops at 0.47, so the loader must reject it,
    // naming the last line.
    let path = dir.join("FacebookKeyValueMsgSizeDist.txt");
    let e = SizeDist::from_file(&path, 1, KEY).unwrap_err();
    assert_eq!(e.key, KEY);
    let where_ = format!("{}:16:", path.display());
    assert!(e.message.contains(&where_) && e.message.contains("must be 1"), "{}", e.message);
}

/// Standard deviation / mean of a distribution.
fn coefficient_of_variation(d: &SizeDist) -> f64 {
    let mut prev = 0.0;
    let mut m2 = 0.0;
    for (&s, &p) in d.sizes().iter().zip(d.probs()) {
        m2 += (s as f64).powi(2) * (p - prev);
        prev = p;
    }
    (m2 - d.mean().powi(2)).sqrt() / d.mean()
}

#[test]
fn sampling_builtins_matches_their_cdfs() {
    // Does not need the reference files, but belongs with the checks above.
    for (i, d) in BuiltinDist::ALL.into_iter().enumerate() {
        let dist = SizeDist::builtin(d);
        let mut rng = stream(2024 + i as u64, Stream::Workload, 0);
        // Kolmogorov-Smirnov distance over the first 200k samples.
        let n_ks = 200_000;
        let mut counts = vec![0u64; dist.sizes().len()];
        let mut sum = 0.0;
        for _ in 0..n_ks {
            let s = dist.sample(&mut rng);
            counts[dist.sizes().binary_search(&s).expect("a size of the table")] += 1;
            sum += s as f64;
        }
        let mut acc = 0;
        let mut ks: f64 = 0.0;
        for (c, &p) in counts.iter().zip(dist.probs()) {
            acc += c;
            ks = ks.max((acc as f64 / n_ks as f64 - p).abs());
        }
        assert!(ks < 0.01, "{}: KS distance {ks}", d.name());
        // The mean within 3%. WKa is so heavy-tailed (std/mean ~23) that 200k
        // samples have a 5% standard error, so draw enough samples for 3% to be
        // at least 4 standard errors.
        let cv = coefficient_of_variation(&dist);
        let n_mean = (n_ks as f64).max((4.0 * cv / 0.03).powi(2)).ceil() as u64;
        for _ in n_ks..n_mean {
            sum += dist.sample(&mut rng) as f64;
        }
        let mean = sum / n_mean as f64;
        let rel = (mean - dist.mean()).abs() / dist.mean();
        assert!(rel < 0.03, "{}: sample mean {mean} vs {} over {n_mean} samples", d.name(), dist.mean());
    }
}
