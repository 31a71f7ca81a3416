//! `fabriclab`: run, validate and benchmark experiments.

mod bench;
mod output;

use clap::{Parser, Subcommand};
use fabriclab::config::{Config, ConfigError, ProtocolName};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "fabriclab", version, about = "Deterministic packet-level datacenter network simulator")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one experiment.
    Run {
        experiment: PathBuf,
        /// Output directory for summary.json and messages.csv.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Override a config key: --set workload.load=0.7 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Shorthand for --set run.seed=N.
        #[arg(long)]
        seed: Option<u64>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the fully resolved configuration, or the first error.
    Validate {
        experiment: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List protocols with their parameters, defaults and sources.
    Protocols,
    /// Run the benchmark suite (each scenario in its own process) and report simulator speed.
    Bench {
        /// Only the scenarios whose name contains this.
        #[arg(long)]
        only: Option<String>,
        /// Append the JSON records to this file (e.g. bench/history.jsonl).
        #[arg(long)]
        record: Option<PathBuf>,
        /// List the scenarios and exit.
        #[arg(long)]
        list: bool,
    },
    /// SIRD over real UDP sockets: serve, send, bench, probe (see docs/udp.md).
    Udp {
        #[command(subcommand)]
        cmd: fabriclab_udp::cli::UdpCmd,
    },
    /// Run one benchmark scenario in this process (used by `bench`).
    #[command(hide = true)]
    BenchOne { name: String },
}

fn load(path: &PathBuf, set: &[String], seed: Option<u64>) -> Result<Config, ConfigError> {
    let mut set = set.to_vec();
    if let Some(s) = seed {
        set.push(format!("run.seed={s}"));
    }
    Config::load(path, &set)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run { experiment, out, set, seed, quiet } => {
            load(&experiment, &set, seed).map_err(|e| e.to_string()).and_then(|cfg| output::run(&cfg, &out, quiet))
        }
        Cmd::Validate { experiment, set } => {
            load(&experiment, &set, None).map(|cfg| print!("{}", cfg.to_toml())).map_err(|e| e.to_string())
        }
        Cmd::Protocols => {
            protocols();
            Ok(())
        }
        Cmd::Bench { only, record, list } => bench::run(only.as_deref(), record.as_deref(), list),
        Cmd::BenchOne { name } => bench::run_one(&name),
        Cmd::Udp { cmd } => fabriclab_udp::cli::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Writes to stdout; a closed pipe (`fabriclab ... | head`) is not an error.
pub fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn protocols() {
    use std::fmt::Write as _;
    let mut o = String::new();
    for &name in ProtocolName::ALL {
        let lb = serde_json::to_string(&name.default_load_balancing()).unwrap_or_default();
        let _ = writeln!(o, "{}  —  {}; load balancing: {}", name.as_str(), name.paper(), lb.trim_matches('"'));
        let _ = writeln!(o, "  [protocol.{}]", name.as_str());
        for d in name.docs() {
            let _ = writeln!(o, "    {:<24} = {:<26} {}  ({})", d.key, d.default, d.meaning, d.source);
        }
        let _ = writeln!(o);
    }
    print(&o);
}
