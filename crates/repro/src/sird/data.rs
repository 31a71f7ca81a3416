//! Reading the sweep tables: row selection, and the per-scenario aggregates of
//! the paper's Fig. 4 / Table 4 (highest stable goodput, highest stable peak
//! ToR queuing, slowdown at 50% load, each normalised to the best protocol).

use super::{QUEUE_MAX, QUEUE_MEAN};
pub use crate::view::View;
use fabriclab::sweep::{Cell, Table};

/// The six protocols in the paper's order.
pub const PROTOCOLS: [&str; 6] = ["sird", "homa", "dcpim", "expresspass", "dctcp", "swift"];
/// The nine scenarios (file stems of experiments/sird/).
pub const SCENARIOS: [&str; 9] = [
    "balanced-wka",
    "balanced-wkb",
    "balanced-wkc",
    "core-wka",
    "core-wkb",
    "core-wkc",
    "incast-wka",
    "incast-wkb",
    "incast-wkc",
];

/// One protocol in one scenario (a row of Table 4).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aggregate {
    pub scenario: String,
    pub protocol: String,
    /// Highest goodput over stable loads (Gbps per host).
    pub goodput: Option<f64>,
    /// Highest peak ToR queuing over stable loads (bytes).
    pub queue_max: Option<f64>,
    /// Highest time-averaged ToR queuing over stable loads (bytes).
    pub queue_mean: Option<f64>,
    /// Slowdown of all messages at 50% load (if stable there).
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    /// Messages behind those percentiles.
    pub count: Option<f64>,
    /// Normalised to the best protocol of the scenario (1 = best, larger = worse).
    pub goodput_norm: Option<f64>,
    pub queue_norm: Option<f64>,
    pub p99_norm: Option<f64>,
    /// Loads run and loads stable.
    pub runs: usize,
    pub stable_runs: usize,
}

/// Table 4: every scenario x protocol, normalised per scenario.
pub fn aggregates(t: &Table) -> Vec<Aggregate> {
    let all = View::ok(t);
    let mut out = Vec::new();
    for sc in SCENARIOS {
        let first = out.len();
        for p in PROTOCOLS {
            let v = all.scenario(sc).eq("protocol.name", p);
            let s = v.stable();
            let half = s.eq("workload.load", 0.5);
            out.push(Aggregate {
                scenario: sc.into(),
                protocol: p.into(),
                goodput: s.max("goodput_gbps"),
                queue_max: s.max(QUEUE_MAX),
                queue_mean: s.max(QUEUE_MEAN),
                p50: half.num("slowdown_all_p50"),
                p99: half.num("slowdown_all_p99"),
                count: half.num("slowdown_all_count"),
                runs: v.rows.len(),
                stable_runs: s.rows.len(),
                ..Default::default()
            });
        }
        normalise(&mut out[first..]);
    }
    out.retain(|a| a.runs > 0);
    out
}

fn normalise(group: &mut [Aggregate]) {
    let best = |f: fn(&Aggregate) -> Option<f64>, higher_better: bool| {
        let v = group.iter().filter_map(f).filter(|x| *x > 0.0);
        if higher_better {
            v.reduce(f64::max)
        } else {
            v.reduce(f64::min)
        }
    };
    let (g, q, d) = (best(|a| a.goodput, true), best(|a| a.queue_max, false), best(|a| a.p99, false));
    for a in group.iter_mut() {
        a.goodput_norm = g.zip(a.goodput).map(|(b, x)| b / x);
        a.queue_norm = q.zip(a.queue_max).map(|(b, x)| x / b.max(1.0));
        a.p99_norm = d.zip(a.p99).map(|(b, x)| x / b);
    }
}

/// Table 4 over several seeds: computed per seed (as the claims see it), then
/// each value averaged over the seeds that have it; `runs` and `stable_runs`
/// add up over seeds. `tables` are a seed's evaluation tables, one per seed.
pub fn aggregates_over_seeds(tables: &[Table]) -> Vec<Aggregate> {
    let per_seed: Vec<Vec<Aggregate>> = tables.iter().map(aggregates).collect();
    let Some(first) = per_seed.first() else { return vec![] };
    let mut out = first.clone();
    for a in &mut out {
        let same: Vec<&Aggregate> = per_seed
            .iter()
            .filter_map(|s| s.iter().find(|b| b.scenario == a.scenario && b.protocol == a.protocol))
            .collect();
        let mean = |f: fn(&Aggregate) -> Option<f64>| {
            let v: Vec<f64> = same.iter().filter_map(|b| f(b)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        a.goodput = mean(|b| b.goodput);
        a.queue_max = mean(|b| b.queue_max);
        a.queue_mean = mean(|b| b.queue_mean);
        a.p50 = mean(|b| b.p50);
        a.p99 = mean(|b| b.p99);
        a.count = mean(|b| b.count);
        a.goodput_norm = mean(|b| b.goodput_norm);
        a.queue_norm = mean(|b| b.queue_norm);
        a.p99_norm = mean(|b| b.p99_norm);
        a.runs = same.iter().map(|b| b.runs).sum();
        a.stable_runs = same.iter().map(|b| b.stable_runs).sum();
    }
    out
}

/// Table 4 as a tidy table (written as table4.csv).
pub fn aggregates_table(aggs: &[Aggregate]) -> Table {
    let opt = |x: Option<f64>| x.map_or(Cell::Null, Cell::Float);
    let records: Vec<Vec<(String, Cell)>> = aggs
        .iter()
        .map(|a| {
            vec![
                ("scenario".into(), Cell::Str(a.scenario.clone())),
                ("protocol".into(), Cell::Str(a.protocol.clone())),
                ("runs".into(), Cell::Int(a.runs as i64)),
                ("stable_runs".into(), Cell::Int(a.stable_runs as i64)),
                ("max_stable_goodput_gbps".into(), opt(a.goodput)),
                ("max_stable_tor_queue_avg_max_bytes".into(), opt(a.queue_max)),
                ("max_stable_tor_queue_avg_mean_bytes".into(), opt(a.queue_mean)),
                ("slowdown_all_p50_at_50".into(), opt(a.p50)),
                ("slowdown_all_p99_at_50".into(), opt(a.p99)),
                ("slowdown_all_count_at_50".into(), opt(a.count)),
                ("goodput_norm".into(), opt(a.goodput_norm)),
                ("queue_norm".into(), opt(a.queue_norm)),
                ("slowdown_norm".into(), opt(a.p99_norm)),
            ]
        })
        .collect();
    Table::from_records(&records)
}

/// Mean over scenarios of a normalised metric of one protocol (Table 4's "mean").
pub fn mean_norm(aggs: &[Aggregate], protocol: &str, f: fn(&Aggregate) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = aggs.iter().filter(|a| a.protocol == protocol).filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A fixed evaluation table: one row per (scenario, protocol, load, goodput, queue, p99, stable).
    pub fn table(rows: &[(&str, &str, f64, f64, f64, f64, bool)]) -> Table {
        let records: Vec<Vec<(String, Cell)>> = rows
            .iter()
            .map(|&(sc, p, load, gp, q, p99, stable)| {
                vec![
                    ("base".into(), Cell::Str(format!("../../sird/{sc}.toml"))),
                    ("protocol.name".into(), Cell::Str(p.into())),
                    ("workload.load".into(), Cell::Float(load)),
                    ("status".into(), Cell::Str("ok".into())),
                    ("goodput_gbps".into(), Cell::Float(gp)),
                    (QUEUE_MAX.into(), Cell::Int(q as i64)),
                    (QUEUE_MEAN.into(), Cell::Float(q / 2.0)),
                    ("slowdown_all_p50".into(), Cell::Float(1.0 + p99 / 10.0)),
                    ("slowdown_all_p99".into(), Cell::Float(p99)),
                    ("slowdown_all_count".into(), Cell::Int(1000)),
                    ("stable".into(), Cell::Bool(stable)),
                ]
            })
            .collect();
        Table::from_records(&records)
    }

    #[test]
    fn unstable_runs_are_excluded_and_metrics_normalised_to_the_best() {
        let t = table(&[
            ("balanced-wka", "sird", 0.5, 49.0, 100_000.0, 2.0, true),
            ("balanced-wka", "sird", 0.95, 88.0, 300_000.0, 9.0, true),
            ("balanced-wka", "homa", 0.5, 49.0, 1_000_000.0, 1.5, true),
            ("balanced-wka", "homa", 0.95, 90.0, 3_600_000.0, 6.0, true),
            ("balanced-wka", "dctcp", 0.5, 49.0, 2_000_000.0, 15.0, true),
            // Unstable: neither its goodput nor its queue counts.
            ("balanced-wka", "dctcp", 0.95, 93.0, 9_000_000.0, 50.0, false),
        ]);
        let a = aggregates(&t);
        assert_eq!(a.len(), 3);
        let get = |p: &str| a.iter().find(|x| x.protocol == p).unwrap();
        assert_eq!(get("dctcp").goodput, Some(49.0));
        assert_eq!(get("dctcp").stable_runs, 1);
        assert_eq!(get("homa").goodput_norm, Some(1.0));
        assert!((get("sird").goodput_norm.unwrap() - 90.0 / 88.0).abs() < 1e-12);
        assert_eq!(get("sird").queue_norm, Some(1.0));
        assert_eq!(get("homa").queue_norm, Some(12.0));
        assert_eq!(get("homa").p99_norm, Some(1.0));
        assert_eq!(get("dctcp").p99_norm, Some(10.0));
        assert_eq!(mean_norm(&a, "homa", |x| x.queue_norm), Some(12.0));
        let csv = aggregates_table(&a).to_csv();
        assert!(csv.starts_with("scenario,protocol,runs,stable_runs,max_stable_goodput_gbps"));
        assert!(csv.contains("balanced-wka,dctcp,2,1,49,2000000,"));
    }

    #[test]
    fn several_seeds_give_the_mean_of_each_seeds_table() {
        let one = table(&[
            ("balanced-wka", "sird", 0.5, 40.0, 100_000.0, 2.0, true),
            ("balanced-wka", "homa", 0.5, 50.0, 400_000.0, 4.0, true),
        ]);
        let two = table(&[
            ("balanced-wka", "sird", 0.5, 50.0, 300_000.0, 4.0, true),
            ("balanced-wka", "homa", 0.5, 50.0, 300_000.0, 2.0, false),
        ]);
        let a = aggregates_over_seeds(&[one, two]);
        let get = |p: &str| a.iter().find(|x| x.protocol == p).unwrap();
        assert_eq!(get("sird").goodput, Some(45.0));
        // Seed 1: SIRD's goodput deficit 50/40; seed 2: best (SIRD alone stable) 1.
        assert_eq!(get("sird").goodput_norm, Some((1.25 + 1.0) / 2.0));
        // Homa is unstable in seed 2: its values are seed 1's.
        assert_eq!(get("homa").queue_max, Some(400_000.0));
        assert_eq!((get("homa").runs, get("homa").stable_runs), (2, 1));
    }
}
