//! Built-in message-size distributions, compiled into constant tables.
//!
//! Why: the standard workloads must be available on any machine without
//! external files, and bit-identical across runs. Each table is the list of
//! `(size, cumulative_probability)` points of a published step CDF, kept as
//! data in `crates/workload/data/*.cdf` (the CDF file format users write, with
//! the source of each) and compiled in by `build.rs`; the declared means are
//! kept to check the encoding. `tests/reference_cdfs.rs` checks the points
//! against the published files when they are available.

use serde::{Deserialize, Serialize};

/// A built-in size distribution (`workload.size_dist`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuiltinDist {
    /// SIRD WKa: Google aggregate RPC sizes (mean ~2.9 KB).
    Wka,
    /// SIRD WKb: Facebook Hadoop (mean ~128 KB).
    Wkb,
    /// SIRD WKc: web search (mean ~2.55 MB with 1460-byte packets).
    Wkc,
}

impl BuiltinDist {
    /// All built-ins, in the order of their names.
    pub const ALL: [BuiltinDist; 3] = [BuiltinDist::Wka, BuiltinDist::Wkb, BuiltinDist::Wkc];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinDist::Wka => "wka",
            BuiltinDist::Wkb => "wkb",
            BuiltinDist::Wkc => "wkc",
        }
    }

    /// The table points, in the unit of the source (see [`BuiltinDist::unit_bytes`]).
    pub fn table(self) -> &'static [(u64, f64)] {
        match self {
            BuiltinDist::Wka => WKA,
            BuiltinDist::Wkb => WKB,
            BuiltinDist::Wkc => WKC_PACKETS,
        }
    }

    /// Bytes per unit of the table's size column.
    pub fn unit_bytes(self) -> u64 {
        match self {
            BuiltinDist::Wka | BuiltinDist::Wkb => 1,
            BuiltinDist::Wkc => WKC_BYTES_PER_PACKET,
        }
    }

    /// The mean declared by the source, in table units.
    pub fn declared_mean(self) -> f64 {
        match self {
            BuiltinDist::Wka => WKA_DECLARED_MEAN,
            BuiltinDist::Wkb => WKB_DECLARED_MEAN,
            BuiltinDist::Wkc => WKC_DECLARED_MEAN_PACKETS,
        }
    }
}

/// Payload bytes of one full packet for WKc: the MSS of a 1500-byte MTU
/// (1500 - 20 IP - 20 TCP-sized transport header).
pub const WKC_BYTES_PER_PACKET: u64 = 1460;

include!(concat!(env!("OUT_DIR"), "/builtin_tables.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SizeDist;

    #[test]
    fn tables_are_valid_and_match_their_declared_means() {
        for d in BuiltinDist::ALL {
            let dist = SizeDist::builtin(d);
            let mean_units = dist.mean() / d.unit_bytes() as f64;
            let rel = (mean_units - d.declared_mean()).abs() / d.declared_mean();
            assert!(rel < 1e-5, "{}: mean {mean_units} vs declared {}", d.name(), d.declared_mean());
        }
    }

    #[test]
    fn means_match_the_sird_paper() {
        // SIRD §5.1: WKa ~3 KB, WKb ~125 KB, WKc ~2.5 MB.
        let stated = [(BuiltinDist::Wka, 3e3), (BuiltinDist::Wkb, 125e3), (BuiltinDist::Wkc, 2.5e6)];
        for (d, s) in stated {
            let m = SizeDist::builtin(d).mean();
            assert!((m - s).abs() / s < 0.03, "{}: mean {m} vs stated {s}", d.name());
        }
        let wkc = SizeDist::builtin(BuiltinDist::Wkc).mean();
        assert!((wkc - 1744.70406 * 1460.0).abs() < 1e-3, "{wkc}");
    }

    #[test]
    fn table_sizes() {
        assert_eq!(WKA.len(), 842);
        assert_eq!(WKB.len(), 461);
        assert_eq!(WKC_PACKETS.len(), 400);
        assert_eq!(WKA[0], (3, 0.0648826230027598));
        assert_eq!(WKB[0], (50, 0.0));
        assert_eq!(*WKC_PACKETS.last().unwrap(), (20000, 1.0));
    }

    #[test]
    fn data_files_read_by_the_user_cdf_loader_give_the_built_in_tables() {
        // The built-ins are compiled from the same files a user could give as
        // `workload.size_cdf_file`; both readings must agree point for point.
        for d in BuiltinDist::ALL {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/{}.cdf", d.name()));
            let file = SizeDist::from_file(&path, d.unit_bytes(), "workload.size_cdf_file").unwrap();
            let builtin = SizeDist::builtin(d);
            assert_eq!(file.sizes(), builtin.sizes(), "{}", d.name());
            assert_eq!(file.probs(), builtin.probs(), "{}", d.name());
            let points: Vec<u64> = d.table().iter().map(|&(s, _)| s * d.unit_bytes()).collect();
            assert_eq!(file.sizes(), &points[..], "{}", d.name());
        }
    }

    #[test]
    fn names_round_trip_through_serde() {
        for d in BuiltinDist::ALL {
            let v: BuiltinDist = serde::Deserialize::deserialize(serde::de::value::StrDeserializer::<
                serde::de::value::Error,
            >::new(d.name()))
            .unwrap();
            assert_eq!(v, d);
        }
    }
}
