//! The measures of Figs. 4.6/4.10 and 4.15 on small hand-made arrival lists and
//! queue series (times in ps; US = 1 us).

use super::*;

/// Arrivals of `bytes[k]` in bin k of width `bin`, each as one packet at the bin's middle.
fn per_bin(bytes: &[u64], bin: Time) -> Cumulative {
    let log: Vec<Arrival> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b > 0)
        .map(|(k, &b)| Arrival {
            time: k as Time * bin + bin / 2,
            host: 1,
            src: 0,
            wire_bytes: b as u32,
            prog: P_DATA,
            tx_time: 0,
            prog_qlen: 0,
        })
        .collect();
    cumulative(&log, |_| true)
}

#[test]
fn bytes_in_counts_the_half_open_interval_and_skips_control_packets() {
    let a = |t: Time, b: u32| Arrival { time: t, host: 1, src: 0, wire_bytes: b, prog: 0, tx_time: 0, prog_qlen: 0 };
    // An ACK (84 wire bytes) at 15 is not data.
    let log = [a(30, 1000), a(10, 1538), a(15, CONTROL_WIRE), a(20, 500)];
    let c = cumulative(&log, |_| true);
    assert_eq!(c, vec![(10, 1538), (20, 2038), (30, 3038)]);
    assert_eq!(bytes_in(&c, 10, 30), 1500, "(10, 30]: the packets at 20 and 30");
    assert_eq!(bytes_in(&c, 0, 10), 1538);
    assert_eq!(bytes_in(&c, 30, 100), 0);
    assert_eq!(bytes_in(&c, 0, 5), 0);
}

#[test]
fn peak_and_drain_finds_the_peak_in_the_window_and_the_first_low_sample_after_it() {
    let q = [(0, 0), (10, 5000), (20, 9000), (30, 4000), (40, 1000), (50, 3000)];
    assert_eq!(peak_and_drain(&q, 5, 60, 1538), Some(((20, 9000), Some(40))));
    // From 25 the peak is 4000 at 30; 1000 at 40 is the drain.
    assert_eq!(peak_and_drain(&q, 25, 60, 1538), Some(((30, 4000), Some(40))));
    // A higher bar for "empty" drains at the first sample under it.
    assert_eq!(peak_and_drain(&q, 5, 60, 4000), Some(((20, 9000), Some(30))));
    // Never back to one packet after the peak.
    assert_eq!(peak_and_drain(&q[..4], 5, 60, 1538), Some(((20, 9000), None)));
    // No sample in the window.
    assert_eq!(peak_and_drain(&q, 51, 60, 1538), None);
}

#[test]
fn min_window_utilization_finds_the_first_lowest_window() {
    // 1250 B every 100 ns is exactly 100 Gb/s; packets 11 to 15 are missing.
    let ns = US / 1000;
    let log: Vec<Arrival> = (1..=30u64)
        .filter(|k| !(11..=15).contains(k))
        .map(|k| Arrival {
            time: k * 100 * ns,
            host: 1,
            src: 0,
            wire_bytes: 1250,
            prog: P_DATA,
            tx_time: 0,
            prog_qlen: 0,
        })
        .collect();
    let c = cumulative(&log, |_| true);
    // Windows of 1 us in 100 ns steps: (500, 1500] ns holds packets 6-10 only, the first at 0.5.
    let (u, at) = min_window_utilization(&c, 100e9, 0, 3 * US, US, 100 * ns).unwrap();
    assert!((u - 0.5).abs() < 1e-12, "{u}");
    assert_eq!(at, 500 * ns);
    // A full window: (2000, 3000] ns holds packets 21-30.
    let (u, _) = min_window_utilization(&c, 100e9, 2 * US, 3 * US, US, 100 * ns).unwrap();
    assert!((u - 1.0).abs() < 1e-12, "{u}");
    // No window fits.
    assert_eq!(min_window_utilization(&c, 100e9, 0, US - 1, US, 100 * ns), None);
}

#[test]
fn fair_share_completions_share_the_rate_equally() {
    // 1 B/us: A (150 B) alone for 100 us, then both at 0.5 B/us: A ends at 200 us, B (100 B) at 250 us.
    let done = fair_share_completions(&[(0, 150), (100 * US, 100)], 1e6);
    assert_eq!(done, vec![200 * US, 250 * US]);
    // The schedule of experiments/bolt/fairness.csv ends at 40, 50, 60, 70 ms (to 1 us).
    let ms = 1000 * US;
    let flows = [(0, 247_209_580), (10 * ms, 168_102_514), (20 * ms, 168_102_514), (30 * ms, 247_209_580)];
    let done = fair_share_completions(&flows, 12.5e9 * 1460.0 / 1538.0);
    for (d, want) in done.iter().zip([40, 50, 60, 70]) {
        assert!(d.abs_diff(want * ms) < US, "{d} ps against {want} ms");
    }
    // And experiments/bolt/arrival.csv's first flow ends at 650 us.
    let done = fair_share_completions(&[(0, 4_449_772), (100 * US, 6_000_000)], 12.5e9 * 1460.0 / 1538.0);
    assert!(done[0].abs_diff(650 * US) < US / 100, "{}", done[0]);
}

#[test]
fn jain_index() {
    assert_eq!(jain(&[3.0, 3.0, 3.0]), 1.0);
    assert!((jain(&[1.1, 0.9]) - 1.0 / 1.01).abs() < 1e-12);
    assert_eq!(jain(&[1.0, 0.0]), 0.5);
}

#[test]
fn convergence_is_the_start_of_the_last_run_of_fair_bins() {
    let bin = US;
    // Fair share 1000 B per bin, within 10%.
    let a = per_bin(&[2000, 1500, 1050, 950, 1000], bin);
    let b = per_bin(&[0, 500, 950, 1000, 1080], bin);
    assert_eq!(convergence(&[&a, &b], 0, 5 * bin, bin, 1000.0, 0.1), Some(2 * bin));
    // A fair first bin does not count when a later one is not ("stays").
    let a = per_bin(&[1000, 1200, 1000], bin);
    let b = per_bin(&[1000, 1000, 1000], bin);
    assert_eq!(convergence(&[&a, &b], 0, 3 * bin, bin, 1000.0, 0.1), Some(2 * bin));
    // Not fair in the last bin: never.
    let a = per_bin(&[1000, 1000, 1200], bin);
    assert_eq!(convergence(&[&a, &b], 0, 3 * bin, bin, 1000.0, 0.1), None);
    // Bins count from the event; a partial last bin is left out (to = 3.5 bins).
    let a = per_bin(&[5000, 1000, 1000, 1000], bin);
    let b = per_bin(&[0, 1000, 1000, 1000], bin);
    assert_eq!(convergence(&[&a, &b], 0, 3 * bin + bin / 2, bin, 1000.0, 0.1), Some(bin));
}
