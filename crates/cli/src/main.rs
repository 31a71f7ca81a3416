//! `fabriclab`: run, validate and benchmark experiments.
//!
//! The CLI as a library (crate `fabriclab_cli`; this file is its root), so that
//! the `fabriclab` binary (src/bin/fabriclab.rs) and the Python package's
//! `fabriclab` console script (crates/python) run the same code through
//! [`entry`]. Inside Python the process's executable is the interpreter, so
//! child processes (sweep points, benchmark scenarios) re-invoke the command
//! [`entry`] is given (module `exe`).

mod bench;
mod bundled;
mod exe;
/// The sweeps' results.parquet writer, for the Python package's sweeps.
pub use sweep::parquet_out::write as write_sweep_parquet;
mod export;
mod guard;
mod output;
mod report;
mod schema;
mod sweep;
mod xval_ns2;

use clap::{Parser, Subcommand};
use fabriclab::config::{Config, ConfigError, ProtocolName};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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
        /// Output directory for summary.json, messages.csv and the run's provenance.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[command(flatten)]
        over: Overrides,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Run anyway: overwrite an earlier run's results in --out, and run even if the estimated
        /// peak memory exceeds what the machine has available.
        #[arg(long)]
        force: bool,
    },
    /// Print the fully resolved configuration, or the first error.
    Validate {
        experiment: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Write the messages the run would inject as an htsim connection matrix (docs/xval.md).
    ExportCm {
        experiment: PathBuf,
        /// The file to write (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        over: Overrides,
    },
    /// Write the messages the run would inject as a request file of the SIRD authors' ns-2
    /// simulator, its "manual" request mode (docs/xval.md).
    ExportNs2 {
        experiment: PathBuf,
        /// The file to write (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        over: Overrides,
    },
    /// Compare a fabriclab run with the SIRD authors' ns-2 run of the same messages
    /// (written by export-ns2): per size group, per message (docs/xval.md).
    CompareNs2 {
        /// The fabriclab run's directory (`fabriclab run --out`).
        ours: PathBuf,
        /// The ns-2 run's output directory (holding applications_trace.str, and qmon/).
        ns2: PathBuf,
        /// Also write the ns-2 run's messages and switch ports as DIR/messages.csv (fabriclab's ids) and DIR/queues.csv.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// List protocols with their parameters, defaults and sources.
    Protocols {
        /// Only the protocol names, one per line (for scripts).
        #[arg(long)]
        names: bool,
    },
    /// Print the JSON Schema (draft 2020-12) of an experiment file, for editors and checkers.
    Schema {
        /// Write it to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write RUN_DIR/report.html: one self-contained page with the run's config, summary and plots.
    Report {
        /// A directory written by `fabriclab run`.
        run_dir: PathBuf,
    },
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
        /// Runs per scenario (the record holds the median run and the min/max wall time).
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// Multiply every scenario's message sizes or durations by this.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Quick mode for CI: --scale 0.02 (checks that every scenario works, measures nothing useful).
        #[arg(long, conflicts_with = "scale")]
        quick: bool,
        /// Run the one chosen scenario at 1/8, 1/4, 1/2 and 1 of its size and fit the cost exponent.
        #[arg(long)]
        scaling: bool,
    },
    /// Run a parameter sweep: every point in its own process, N at a time; resumable.
    Sweep {
        /// The sweep file (see docs/sweep.md).
        file: PathBuf,
        /// Points run in parallel.
        #[arg(long, short, default_value_t = default_jobs())]
        jobs: usize,
        /// Output directory: points/<id>/ per point, results.csv and results.parquet.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Apply the file's [quick] overlay (short runs, fewer points).
        #[arg(long)]
        quick: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Run the points on this Dask cluster (scheduler address, e.g. tcp://host:8786) through
        /// the Python package (`python3 -m fabriclab sweep`); --jobs is then the cluster's business.
        #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["records", "set"])]
        dask: Option<String>,
        /// Set a key for every point (repeatable), over the sweep file's [set]; a swept key is
        /// refused.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Keep each finished point's record (its summary, its config's hash and the model
        /// version) in DIR, and reuse a record made there by this model from the same config
        /// instead of running the point: a folder to commit, so a long sweep survives its machine.
        #[arg(long, value_name = "DIR")]
        records: Option<PathBuf>,
        /// Run even if the points' estimated peak memory exceeds what the machine has available.
        #[arg(long)]
        force: bool,
    },
    /// Reproduce a paper's evaluation: sweeps, figures and a claim-by-claim report.
    Repro {
        /// The paper: sird, paydebt, nanotransport, bolt or smartt (an unknown name lists them with
        /// their titles).
        name: String,
        /// Short runs on reduced settings (minutes): every figure path, numbers not meaningful.
        #[arg(long)]
        quick: bool,
        /// Only this figure (its id, e.g. fig3 or table4_2; an unknown id lists the paper's figures;
        /// repeatable).
        #[arg(long)]
        only: Vec<String>,
        /// Points run in parallel.
        #[arg(long, short, default_value_t = default_jobs())]
        jobs: usize,
        /// Output directory (default out/repro/NAME).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seeds per point (default 3 in full mode, 1 in quick mode); with --judge, the seeds
        /// each claim part needs (default: the file's, at most 3).
        #[arg(long)]
        seeds: Option<u64>,
        /// Keep each finished point's record in DIR/SWEEP/ and reuse the records made there by
        /// this model from the same config (default in full mode: experiments/repro/NAME/points,
        /// which is committed as a run goes on; quick mode keeps none unless given).
        #[arg(long, value_name = "DIR")]
        records: Option<PathBuf>,
        /// Judge a measurements file (a run's measurements.toml, or recorded values) instead of
        /// running; writes REPORT.md to --out.
        #[arg(long, value_name = "FILE")]
        judge: Option<PathBuf>,
        /// Run even if the points' estimated peak memory exceeds what the machine has available.
        #[arg(long)]
        force: bool,
    },
    /// SIRD over real UDP sockets: serve, send, bench, probe (see docs/udp.md).
    Udp {
        #[command(subcommand)]
        cmd: fabriclab_udp::cli::UdpCmd,
    },
    /// Run one benchmark scenario in this process (used by `bench`).
    #[command(hide = true)]
    BenchOne {
        name: String,
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
    },
}

/// The config overrides of `run`, `export-cm` and `export-ns2`.
#[derive(clap::Args)]
struct Overrides {
    /// Override a config key: --set workload.load=0.7 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Shorthand for --set run.seed=N (0 to 2^63 - 1: TOML integers are signed 64-bit).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    seed: Option<u64>,
}

fn load(path: &Path, set: &[String], seed: Option<u64>) -> Result<Config, ConfigError> {
    let mut set = set.to_vec();
    if let Some(s) = seed {
        set.push(format!("run.seed={s}"));
    }
    // A bundled experiment's name ("sird/balanced-wkc") when no such file exists.
    let path = bundled::resolve(path).map_err(|e| ConfigError::new("", e))?;
    Config::load(&path, &set)
}

/// What `validate` prints: the resolved config, then the estimated cost and
/// the fabric's base RTT per hop count as TOML comments (so the output still loads).
fn validated(cfg: &fabriclab::config::Config) -> String {
    let mut out = cfg.to_toml();
    let est = fabriclab::estimate::estimate(cfg);
    out.push_str(&format!("\n# {}\n", est.summary_line()));
    // The base RTTs come from the built fabric: skipped where building it alone would be slow.
    let fabric = est.terms.iter().find(|t| t.what == "topology and routing tables").map_or(0.0, |t| t.bytes);
    if fabric > MAX_FABRIC_FOR_RTT {
        out.push_str("# base RTT: not computed, the fabric is too large to build for it\n");
    } else if let Ok(rtts) = fabriclab::sim::base_rtts(cfg) {
        out.push_str("\n# base RTT (unloaded; a full data packet out, a control packet back):\n");
        for (hops, t) in rtts {
            out.push_str(&format!("#   {hops} links each way: {:.3} us\n", t as f64 / 1e6));
        }
    }
    out
}

/// Above this estimated size of the fabric's tables (about a k = 48 fat
/// tree), `validate` does not build the fabric for its base RTTs.
const MAX_FABRIC_FOR_RTT: f64 = 200e6;

/// Runs the CLI on `args` (the first is the program's name, as in
/// `std::env::args_os`) and returns the exit code: 0, 2 for an error (printed
/// after `error: `), 128 + N for a sweep stopped by signal N, clap's code for
/// bad usage. `reinvoke` is the program and leading arguments that run this CLI
/// in child processes (the Python package: `python -m fabriclab`); `None` for
/// this executable.
pub fn entry(args: impl IntoIterator<Item = OsString>, reinvoke: Option<Vec<OsString>>) -> u8 {
    if let Some(cmd) = reinvoke {
        exe::set(cmd);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version go to stdout with code 0; usage errors to stderr with 2.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    if let Cmd::Run { force: true, .. } | Cmd::Sweep { force: true, .. } | Cmd::Repro { force: true, .. } = cli.cmd {
        // Before any thread starts; sweep points (child processes) inherit it.
        std::env::set_var(guard::FORCE_VAR, "1");
    }
    let result = match cli.cmd {
        Cmd::Run { experiment, out, force, over, quiet } => {
            load(&experiment, &over.set, over.seed).map_err(|e| e.to_string()).and_then(|cfg| {
                guard::check_run(&cfg)?;
                guard::warn_long_run(&cfg);
                let prov = output::Provenance { resolved: &validated(&cfg), experiment: &experiment };
                output::run(&cfg, &out, quiet, force, &prov)
            })
        }
        Cmd::Validate { experiment, set } => {
            load(&experiment, &set, None).map(|cfg| print!("{}", validated(&cfg))).map_err(|e| e.to_string())
        }
        Cmd::ExportCm { experiment, out, over } => load(&experiment, &over.set, over.seed)
            .map_err(|e| e.to_string())
            .and_then(|cfg| export::export(&cfg, &experiment, out.as_deref(), export::Format::Htsim))
            .map(|note| eprintln!("{note}")),
        Cmd::ExportNs2 { experiment, out, over } => load(&experiment, &over.set, over.seed)
            .map_err(|e| e.to_string())
            .and_then(|cfg| export::export(&cfg, &experiment, out.as_deref(), export::Format::Ns2))
            .map(|note| eprintln!("{note}")),
        Cmd::CompareNs2 { ours, ns2, out } => xval_ns2::command(&ours, &ns2, out.as_deref()).map(|t| print(&t)),
        Cmd::Protocols { names } => {
            protocols(names);
            Ok(())
        }
        Cmd::Bench { only, record, list, repeat, scale, quick, scaling } => bench::run(&bench::Options {
            only: only.as_deref(),
            record: record.as_deref(),
            list,
            repeat,
            scale: if quick { 0.02 } else { scale },
            scaling,
        }),
        Cmd::Schema { out } => schema::command(out.as_deref()),
        Cmd::Report { run_dir } => report::command(&run_dir).map(|note| eprintln!("{note}")),
        Cmd::BenchOne { name, scale } => bench::run_one(&name, scale),
        Cmd::Repro { name, quick, only, jobs, out, seeds, judge, records, .. } => {
            let args = fabriclab_repro::Args { name, quick, only, jobs, out, seeds, judge, records };
            fabriclab_repro::command(args, &sweep::Runner).map(|text| print(&text))
        }
        Cmd::Sweep { file, jobs, out, quick, quiet, dask, records, set, .. } => {
            bundled::resolve(&file).and_then(|file| {
                let out = out.unwrap_or_else(|| default_sweep_out(&file));
                let opts = sweep::Options { jobs, out, quiet, records };
                match dask {
                    Some(addr) => sweep::dask::command(&file, quick, &addr, &opts),
                    None => sweep::command(&file, quick, &set, &opts),
                }
            })
        }
        Cmd::Udp { cmd } => fabriclab_udp::cli::run(cmd),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            // A sweep stopped by SIGINT/SIGTERM exits as the shell expects of a signal.
            let sig = sweep::stop::requested().and_then(|s| u8::try_from(128 + s).ok());
            sig.unwrap_or(2)
        }
    }
}

/// All cores, as parallel points are independent processes.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `out/sweeps/<file stem>` when no --out is given.
fn default_sweep_out(file: &std::path::Path) -> PathBuf {
    let stem = file.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("out/sweeps").join(stem)
}

/// Writes to stdout; a closed pipe (`fabriclab ... | head`) is not an error.
pub fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn protocols(names_only: bool) {
    use std::fmt::Write as _;
    if names_only {
        print(&ProtocolName::ALL.iter().map(|n| format!("{}\n", n.as_str())).collect::<String>());
        return;
    }
    let mut o = String::new();
    for &name in ProtocolName::ALL {
        let lb = serde_json::to_string(&name.default_load_balancing()).unwrap_or_default();
        let _ = writeln!(o, "{}  —  {}; load balancing: {}", name.as_str(), name.paper(), lb.trim_matches('"'));
        let _ = writeln!(o, "  [protocol.{}]", name.as_str());
        for d in name.docs() {
            let _ = writeln!(o, "    {:<24} = {:<26} {}  ({})", d.key, d.default, d.meaning, d.source);
            // The bound `validate` applies (docs/limits.md).
            let allowed =
                fabriclab::config::limits::describe(&format!("protocol.{}.{}", name.as_str(), d.key), &d.default);
            if !allowed.is_empty() {
                let _ = writeln!(o, "    {:<24}   allowed: {allowed}", "");
            }
        }
        let _ = writeln!(o);
    }
    print(&o);
}
