//! GOAL schedules of common collectives, as text: one pure function each.
//!
//! Why write GOAL rather than messages: the schedule then runs under the
//! same executor as schedules from traces (Schedgen, ATLAHS), can be handed
//! to LogGOPSim or ATLAHS unchanged, and states its data dependencies where
//! a reader sees them. Each function builds a [`Schedule`] and writes it with
//! [`Schedule::to_goal`], after a `//` line naming what it is.
//!
//! Common to all: `ranks >= 1` (a schedule of one rank has no ops), sizes in
//! bytes, every send and recv of a round carries the round as its tag, and
//! recvs have no dependencies (they are posted at the start; a recv ends
//! when its message arrives). No computation (`calc`) is written: the
//! reduction's arithmetic is left to whoever adds it to the text.

use super::parse::{DepKind, OpId, OpKind, Schedule};
use fabriclab_engine::SimRng;
use rand::{Rng, SeedableRng};

fn send(bytes: u64, to: u32, tag: u32) -> OpKind {
    OpKind::Send { bytes, to, tag }
}

fn recv(bytes: u64, from: u32, tag: u32) -> OpKind {
    OpKind::Recv { bytes, from, tag }
}

fn text(what: String, s: &Schedule) -> String {
    format!("// {what}, written by fabriclab (crates/workload/src/goal/collectives.rs)\n{}", s.to_goal())
}

/// Chunk `c` of a buffer of `bytes` cut into `n`: `bytes / n`, the first
/// `bytes mod n` chunks one byte larger (as `crate::closed`'s ring).
fn chunk(bytes: u64, n: u32, c: u32) -> u64 {
    bytes / n as u64 + u64::from((c as u64) < bytes % n as u64)
}

/// Ring all-reduce of `bytes` per rank, the step and chunk schedule of
/// `kind = "ring_allreduce"` (`crate::closed`): 2(N-1) steps; in step s rank
/// r sends chunk (r - s) mod N to rank r + 1 (tag s), and its step-s+1 send
/// requires both its step-s send and its step-s recv (the chunk from rank
/// r - 1).
pub fn ring_allreduce(ranks: u32, bytes: u64) -> String {
    text(format!("ring all-reduce of {bytes} bytes over {ranks} ranks"), &ring(ranks, bytes))
}

fn ring(n: u32, bytes: u64) -> Schedule {
    assert!(n >= 1, "a schedule has at least one rank");
    let mut s = Schedule::new(n);
    let steps = 2 * (n - 1);
    for r in 0..n {
        let (next, prev) = ((r + 1) % n, (r + n - 1) % n);
        let mut last: Option<(OpId, OpId)> = None;
        for step in 0..steps {
            let tx = s.push(r, Some(&format!("s{step}")), send(chunk(bytes, n, (r + n - step % n) % n), next, step));
            let rx = s.push(r, Some(&format!("r{step}")), recv(chunk(bytes, n, (prev + n - step % n) % n), prev, step));
            if let Some((tx0, rx0)) = last {
                s.depend(tx, tx0, DepKind::Requires);
                s.depend(tx, rx0, DepKind::Requires);
            }
            last = Some((tx, rx));
        }
    }
    s
}

/// All-to-all of `bytes` from every rank to every other: rank r's j-th send
/// goes to rank (r + j) mod N and its j-th recv comes from (r - j) mod N,
/// j = 1..N-1 (the shifted order of `kind = "all_to_all"`), all at once.
pub fn all_to_all(ranks: u32, bytes: u64) -> String {
    text(format!("all-to-all of {bytes} bytes per pair over {ranks} ranks"), &alltoall(ranks, |_, _| bytes))
}

/// All-to-all with `bytes(src, dst)` per pair; a pair of 0 bytes has no message.
fn alltoall(n: u32, bytes: impl Fn(u32, u32) -> u64) -> Schedule {
    assert!(n >= 1, "a schedule has at least one rank");
    let mut s = Schedule::new(n);
    for r in 0..n {
        for j in 1..n {
            let to = (r + j) % n;
            if bytes(r, to) > 0 {
                s.push(r, Some(&format!("s{to}")), send(bytes(r, to), to, 0));
            }
        }
        for j in 1..n {
            let from = (r + n - j) % n;
            if bytes(from, r) > 0 {
                s.push(r, Some(&format!("r{from}")), recv(bytes(from, r), from, 0));
            }
        }
    }
    s
}

/// Tree all-reduce of `bytes`: a binomial-tree reduce to rank 0 (tag 0)
/// then a binomial-tree broadcast from it (tag 1). Rank r's parent is r minus
/// its lowest set bit; its children are r + 2^k for 2^k below that bit (every
/// 2^k for rank 0) and r + 2^k < N. A rank sends to its parent once it has
/// every child's data; it forwards the result to its children, largest
/// subtree first, each send after the previous one has been delivered.
pub fn tree_allreduce(ranks: u32, bytes: u64) -> String {
    text(
        format!("binomial-tree all-reduce (reduce, then broadcast) of {bytes} bytes over {ranks} ranks"),
        &tree(ranks, bytes),
    )
}

fn tree(n: u32, bytes: u64) -> Schedule {
    assert!(n >= 1, "a schedule has at least one rank");
    let mut s = Schedule::new(n);
    for r in 0..n {
        let low = if r == 0 { u64::MAX } else { 1u64 << r.trailing_zeros() };
        let children: Vec<u32> = (0..32)
            .map(|k| 1u64 << k)
            .take_while(|&b| b < low && r as u64 + b < n as u64)
            .map(|b| r + b as u32)
            .collect();
        let got: Vec<OpId> = children.iter().map(|&c| s.push(r, Some(&format!("rr{c}")), recv(bytes, c, 0))).collect();
        // What the broadcast waits for: the whole reduction (rank 0), or the result from the parent.
        let mut after: Vec<OpId> = got.clone();
        if r > 0 {
            let parent = r - low as u32;
            let up = s.push(r, Some("rs"), send(bytes, parent, 0));
            for &g in &got {
                s.depend(up, g, DepKind::Requires);
            }
            after = vec![s.push(r, Some("br"), recv(bytes, parent, 1))];
        }
        for &c in children.iter().rev() {
            let down = s.push(r, Some(&format!("bs{c}")), send(bytes, c, 1));
            for &a in &after {
                s.depend(down, a, DepKind::Requires);
            }
            after = vec![down];
        }
    }
    s
}

/// Recursive-doubling all-reduce of `bytes` (the MPICH algorithm): with p
/// the largest power of two <= N and q = N - p, each even rank below 2q first
/// sends its data to the odd rank above it (tag 0) and later receives the
/// result from it (tag log2(p) + 1); the other p ranks, renumbered 0..p,
/// exchange `bytes` in log2(p) rounds, in round k (tag k + 1) with the rank
/// whose new number differs in bit k. A round's send requires the previous
/// round's send and recv.
pub fn recursive_doubling_allreduce(ranks: u32, bytes: u64) -> String {
    text(format!("recursive-doubling all-reduce of {bytes} bytes over {ranks} ranks"), &doubling(ranks, bytes))
}

fn doubling(n: u32, bytes: u64) -> Schedule {
    assert!(n >= 1, "a schedule has at least one rank");
    let mut s = Schedule::new(n);
    let p = 1u32 << (31 - n.leading_zeros());
    let (q, rounds) = (n - p, p.trailing_zeros());
    let old = |new: u32| if new < q { 2 * new + 1 } else { new + q };
    for r in 0..n {
        if r < 2 * q && r % 2 == 0 {
            s.push(r, Some("pre"), send(bytes, r + 1, 0));
            s.push(r, Some("post"), recv(bytes, r + 1, rounds + 1));
            continue;
        }
        let new = if r < 2 * q { r / 2 } else { r - q };
        let mut last: Vec<OpId> = Vec::new();
        if r < 2 * q {
            last.push(s.push(r, Some("pre"), recv(bytes, r - 1, 0)));
        }
        for k in 0..rounds {
            let peer = old(new ^ (1 << k));
            let tx = s.push(r, Some(&format!("s{k}")), send(bytes, peer, k + 1));
            let rx = s.push(r, Some(&format!("r{k}")), recv(bytes, peer, k + 1));
            for &l in &last {
                s.depend(tx, l, DepKind::Requires);
            }
            last = vec![tx, rx];
        }
        if r < 2 * q {
            let post = s.push(r, Some("post"), send(bytes, r - 1, rounds + 1));
            for &l in &last {
                s.depend(post, l, DepKind::Requires);
            }
        }
    }
    s
}

/// A mixture-of-experts dispatch: an uneven all-to-all in which each of the
/// `tokens` tokens of every rank goes to `top_k` distinct expert ranks
/// (`top_k` at most N), `token_bytes` each. Expert popularity is drawn once,
/// Exp(1) per rank (a flat Dirichlet: a few experts take much of the
/// traffic); each token picks its experts with probability proportional to
/// it, without repeating one. Rank i sends rank j (j != i) the bytes of its
/// tokens routed there, in one message (none if no token goes there); tokens
/// routed to their own rank stay local. All draws come from one xoshiro256++
/// generator seeded with `seed`, so a seed gives one schedule.
pub fn moe_all_to_all(ranks: u32, tokens: u32, token_bytes: u64, top_k: u32, seed: u64) -> String {
    let counts = moe_counts(ranks, tokens, top_k, seed);
    let s = alltoall(ranks, |i, j| counts[i as usize][j as usize] * token_bytes);
    text(
        format!(
            "mixture-of-experts all-to-all over {ranks} ranks, {tokens} tokens of {token_bytes} bytes per rank, \
             top-{top_k} routing, seed {seed}"
        ),
        &s,
    )
}

/// An expert not in `chosen`, with probability proportional to its weight
/// among those left: a draw among all, redrawn on a repeat (top_k is small
/// beside N); after many repeats, a draw among those left.
fn pick(rng: &mut SimRng, weight: &[f64], cum: &[f64], chosen: &[usize]) -> usize {
    let total = cum.last().copied().unwrap_or(0.0);
    for _ in 0..64 {
        let u = rng.gen::<f64>() * total;
        let j = cum.partition_point(|&c| c <= u).min(weight.len() - 1);
        if !chosen.contains(&j) {
            return j;
        }
    }
    let left = || (0..weight.len()).filter(|j| !chosen.contains(j));
    let mut u = rng.gen::<f64>() * left().map(|j| weight[j]).sum::<f64>();
    let mut last = None;
    for j in left() {
        if u < weight[j] {
            return j;
        }
        u -= weight[j];
        last = Some(j);
    }
    last.expect("top_k <= N leaves an expert to pick")
}

/// Tokens from rank i to expert rank j, `[i][j]` (self included).
fn moe_counts(n: u32, tokens: u32, top_k: u32, seed: u64) -> Vec<Vec<u64>> {
    assert!(n >= 1, "a schedule has at least one rank");
    let k = top_k.min(n) as usize;
    let mut rng = SimRng::seed_from_u64(seed);
    let weight: Vec<f64> = (0..n).map(|_| -(1.0 - rng.gen::<f64>()).ln()).collect();
    let mut cum = Vec::with_capacity(n as usize);
    let mut total = 0.0;
    for w in &weight {
        total += w;
        cum.push(total);
    }
    let mut counts = vec![vec![0u64; n as usize]; n as usize];
    let mut chosen: Vec<usize> = Vec::with_capacity(k);
    for row in counts.iter_mut() {
        for _ in 0..tokens {
            chosen.clear();
            while chosen.len() < k {
                let j = pick(&mut rng, &weight, &cum, &chosen);
                chosen.push(j);
            }
            for &j in &chosen {
                row[j] += 1;
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::parse::{parse, tests::canonical};
    use crate::goal::GoalRun;
    use std::collections::HashMap;

    /// Runs a schedule on a network where message m takes 1 us + 1 ns per
    /// byte; returns the bytes moved per (src, dst) and the finish time.
    fn run(text: &str) -> (HashMap<(u32, u32), u64>, u64) {
        let s = parse(text, "gen.goal").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let n = s.num_ranks();
        let mut g = GoalRun::new(s, (0..n).collect(), 0);
        let mut pairs = HashMap::new();
        let mut flying: Vec<(u64, u64)> = Vec::new(); // (end, id)
        let mut id = 0;
        loop {
            while let Some(m) = g.next() {
                *pairs.entry((m.src, m.dst)).or_insert(0) += m.size;
                flying.push((m.time + 1_000_000 + m.size * 1_000, id));
                id += 1;
            }
            flying.sort_unstable();
            let Some(&(t, i)) = flying.first() else { break };
            flying.remove(0);
            g.on_complete(i, t);
        }
        assert!(g.is_complete(), "{}", g.describe_waiting(10));
        (pairs, g.finish().unwrap())
    }

    #[test]
    fn generated_schedules_read_back_to_the_same_ops() {
        for n in [1, 2, 3, 5, 8] {
            let built = [ring(n, 1003), alltoall(n, |i, j| (i * 10 + j) as u64), tree(n, 77), doubling(n, 64)];
            for s in built.iter().chain([moe_counts_schedule(n)].iter()) {
                let text = text("test".into(), s);
                let back = parse(&text, "gen.goal").unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_eq!(canonical(&back), canonical(s), "{text}");
            }
        }
        assert!(ring_allreduce(3, 9).starts_with("// ring all-reduce of 9 bytes over 3 ranks"));
    }

    fn moe_counts_schedule(n: u32) -> Schedule {
        let c = moe_counts(n, 20, 2, 7);
        alltoall(n, |i, j| c[i as usize][j as usize] * 3)
    }

    #[test]
    fn ring_moves_two_chunks_per_step_and_rank() {
        let (pairs, _) = run(&ring_allreduce(4, 10));
        // Each rank sends every chunk of 10 / 4 (3, 3, 2, 2) to its successor, most twice: 2(N-1) = 6 steps.
        let mut want = HashMap::new();
        for r in 0..4u32 {
            let sizes: u64 = (0..6u32).map(|s| chunk(10, 4, (r + 4 - s % 4) % 4)).sum();
            want.insert((r, (r + 1) % 4), sizes);
        }
        assert_eq!(pairs, want);
        assert_eq!(pairs.values().sum::<u64>(), 10 * 2 * 3);
    }

    #[test]
    fn all_to_all_moves_bytes_between_every_ordered_pair() {
        let (pairs, _) = run(&all_to_all(5, 40));
        assert_eq!(pairs.len(), 20);
        assert!(pairs.values().all(|&b| b == 40));
    }

    #[test]
    fn tree_allreduce_reduces_up_then_broadcasts_down() {
        // Finish times worked by hand, 2 us a message: the reduce takes as many levels as the
        // longest chain up (7 -> 6 -> 4 -> 0 for 8 ranks), the broadcast ceil(log2 N) rounds.
        for (n, levels) in [(2u32, 2u64), (3, 3), (6, 5), (8, 6), (13, 7)] {
            let (pairs, finish) = run(&tree_allreduce(n, 1000));
            // N - 1 edges, each crossed once up and once down.
            assert_eq!(pairs.len() as u32, 2 * (n - 1), "n = {n}");
            for (&(a, b), &bytes) in &pairs {
                assert_eq!(bytes, 1000);
                let (child, parent) = if a > b { (a, b) } else { (b, a) };
                assert_eq!(parent, child - (1 << child.trailing_zeros()), "n = {n}");
                assert!(pairs.contains_key(&(b, a)));
            }
            assert_eq!(finish, levels * 2_000_000, "n = {n}");
        }
    }

    #[test]
    fn recursive_doubling_pairs_each_round_and_folds_in_the_extra_ranks() {
        // 8 ranks: 3 rounds, each rank exchanges with r ^ 1, r ^ 2, r ^ 4.
        let (pairs, finish) = run(&recursive_doubling_allreduce(8, 500));
        assert_eq!(pairs.len(), 24);
        for (&(a, b), &bytes) in &pairs {
            assert!((a ^ b).is_power_of_two() && bytes == 500);
        }
        assert_eq!(finish, 3 * 1_500_000);
        // 6 ranks: p = 4, q = 2; ranks 0 and 2 hand their data to 1 and 3 and get the result back.
        let (pairs, finish) = run(&recursive_doubling_allreduce(6, 500));
        for pair in [(0, 1), (1, 0), (2, 3), (3, 2)] {
            assert_eq!(pairs.get(&pair), Some(&500), "{pair:?}");
        }
        // New ranks 0..4 are 1, 3, 4, 5: round 0 pairs 1-3 and 4-5, round 1 pairs 1-4 and 3-5.
        for pair in [(1, 3), (3, 1), (4, 5), (5, 4), (1, 4), (4, 1), (3, 5), (5, 3)] {
            assert_eq!(pairs.get(&pair), Some(&500), "{pair:?}");
        }
        assert_eq!(pairs.len(), 12);
        assert_eq!(finish, 4 * 1_500_000);
    }

    #[test]
    fn moe_sizes_are_uneven_reproducible_and_sum_to_the_tokens() {
        let (n, tokens, k, tb) = (8u32, 500u32, 2u32, 16u64);
        let a = moe_all_to_all(n, tokens, tb, k, 42);
        assert_eq!(a, moe_all_to_all(n, tokens, tb, k, 42));
        assert_ne!(a, moe_all_to_all(n, tokens, tb, k, 43));
        let (pairs, _) = run(&a);
        let c = moe_counts(n, tokens, k, 42);
        let local: u64 = (0..n as usize).map(|i| c[i][i]).sum();
        assert_eq!(pairs.values().sum::<u64>() + local * tb, (n * tokens * k) as u64 * tb);
        for (i, row) in c.iter().enumerate() {
            assert_eq!(row.iter().sum::<u64>(), (tokens * k) as u64, "each token goes to k experts");
            assert!(row.iter().all(|&t| t <= tokens as u64), "never twice to one expert (rank {i})");
        }
        let (lo, hi) = (pairs.values().min().unwrap(), pairs.values().max().unwrap());
        assert!(hi > &(2 * lo), "uneven: {lo}..{hi}");
        // top_k = N: every token goes everywhere.
        let c = moe_counts(3, 10, 5, 1);
        assert!(c.iter().flatten().all(|&t| t == 10));
    }
}
