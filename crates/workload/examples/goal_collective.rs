//! Writes a GOAL schedule of a collective to stdout with the generators of
//! `fabriclab_workload::goal::collectives` (docs/applications.md):
//!
//! ```text
//! cargo run --release -p fabriclab-workload --example goal_collective -- ring_allreduce 16 1000000 > ring16.goal
//! ```
//!
//! Arguments: the collective, the number of ranks, the bytes per rank (per
//! token for `moe_all_to_all`, which also takes tokens, top_k and a seed).

use fabriclab_workload::goal::collectives;
use std::process::ExitCode;

const USAGE: &str = "usage: goal_collective COLLECTIVE RANKS BYTES [TOKENS TOP_K SEED]\n  COLLECTIVE: ring_allreduce, \
                     tree_allreduce, recursive_doubling_allreduce, all_to_all, moe_all_to_all (which takes TOKENS \
                     TOP_K SEED, BYTES per token)";

fn number(args: &[String], i: usize, name: &str) -> Result<u64, String> {
    let v = args.get(i).ok_or_else(|| format!("{name} is missing\n{USAGE}"))?;
    v.parse().map_err(|_| format!("{name} = {v:?}: expected a whole number\n{USAGE}"))
}

fn schedule(args: &[String]) -> Result<String, String> {
    let what = args.first().ok_or_else(|| USAGE.to_string())?;
    let ranks = u32::try_from(number(args, 1, "RANKS")?).map_err(|_| format!("RANKS: at most {}", u32::MAX))?;
    if ranks == 0 {
        return Err(format!("RANKS = 0: expected at least 1\n{USAGE}"));
    }
    let bytes = number(args, 2, "BYTES")?;
    Ok(match what.as_str() {
        "ring_allreduce" => collectives::ring_allreduce(ranks, bytes),
        "tree_allreduce" => collectives::tree_allreduce(ranks, bytes),
        "recursive_doubling_allreduce" => collectives::recursive_doubling_allreduce(ranks, bytes),
        "all_to_all" => collectives::all_to_all(ranks, bytes),
        "moe_all_to_all" => {
            let tokens = u32::try_from(number(args, 3, "TOKENS")?).map_err(|_| "TOKENS: too large".to_string())?;
            let top_k = u32::try_from(number(args, 4, "TOP_K")?).map_err(|_| "TOP_K: too large".to_string())?;
            collectives::moe_all_to_all(ranks, tokens, bytes, top_k, number(args, 5, "SEED")?)
        }
        other => return Err(format!("COLLECTIVE = {other:?} is not one of them\n{USAGE}")),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match schedule(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
