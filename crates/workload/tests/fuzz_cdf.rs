//! Fuzzing the CDF parser: any text yields a distribution or an error naming the key, never a
//! panic; whatever parses samples only sizes from the table.

use fabriclab_engine::{stream, Stream};
use fabriclab_workload::SizeDist;
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        (any::<u64>(), any::<f64>()).prop_map(|(s, p)| format!("{s} {p}")),
        (0u64..1_000_000, 0.0f64..=1.0).prop_map(|(s, p)| format!("{s} {p}")),
        (1u64 << 30..1u64 << 34, 0.0f64..=1.0).prop_map(|(s, p)| format!("{s} {p}")),
        "\\PC{0,30}",
        Just("# comment".to_string()),
        Just(String::new()),
        any::<f64>().prop_map(|m| format!("{m}")),
    ]
}

proptest! {
    #[test]
    fn parse_never_panics(lines in proptest::collection::vec(line(), 0..12), unit in 0u64..5000) {
        let text = lines.join("\n");
        match SizeDist::parse_cdf(&text, "fuzz.cdf", unit, "workload.size_cdf_file") {
            Ok(d) => {
                prop_assert!(d.sizes().iter().all(|s| (1..=fabriclab_engine::limits::MAX_MESSAGE_BYTES).contains(s)));
                let mut rng = stream(1, Stream::Workload, 0);
                for _ in 0..32 {
                    let s = d.sample(&mut rng);
                    prop_assert!(d.sizes().contains(&s));
                }
            }
            Err(e) => prop_assert!(e.to_string().contains("workload.size_cdf_file")),
        }
    }
}
