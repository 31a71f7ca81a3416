//! `fabriclab export-cm` and `export-ns2`: a run's messages in another
//! simulator's input format (docs/xval.md): an htsim connection matrix
//! (`fabriclab_workload::htsim`) or the SIRD artifact's ns-2 request file
//! (`fabriclab_workload::ns2`).

use fabriclab::config::Config;
use fabriclab::workload::htsim::{self, htsim_start};
use fabriclab::workload::{ns2, MessageSpec};
use std::io::Write;
use std::path::Path;

/// The simulator whose input is written.
#[derive(Clone, Copy)]
pub enum Format {
    Htsim,
    Ns2,
}

impl Format {
    fn what(self) -> &'static str {
        match self {
            Format::Htsim => "connection matrix",
            Format::Ns2 => "ns-2 request file",
        }
    }

    fn write(self, w: &mut dyn Write, n_hosts: u32, msgs: &[MessageSpec], comment: &str) -> std::io::Result<()> {
        match self {
            Format::Htsim => htsim::write(w, n_hosts, msgs, comment),
            // The artifact's reader takes every line as requests: no comment.
            Format::Ns2 => ns2::write(w, n_hosts, msgs),
        }
    }
}

/// Writes the messages `cfg`'s run injects to `out` (standard output when
/// `None`) in `format` and returns a note for standard error: what was written
/// and what the other simulator will read differently.
pub fn export(cfg: &Config, experiment: &Path, out: Option<&Path>, format: Format) -> Result<String, String> {
    let (n_hosts, msgs) = fabriclab::sim::injected_messages(cfg).map_err(|e| e.to_string())?;
    if msgs.is_empty() {
        return Err(format!(
            "the workload injects no message before the end of the run ({} ms): nothing to export",
            cfg.run.duration_ms
        ));
    }
    let comment = format!(
        "fabriclab export-cm {} (seed {}, run.duration_ms = {}): {} messages in injection order\n\
         start in picoseconds, size in bytes; topology, protocol and link settings are htsim's own flags",
        experiment.display(),
        cfg.run.seed,
        cfg.run.duration_ms,
        msgs.len()
    );
    let written = match out {
        Some(path) => std::fs::File::create(path).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            format.write(&mut w, n_hosts, &msgs, &comment)?;
            w.flush()
        }),
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            format.write(&mut w, n_hosts, &msgs, &comment).and_then(|()| w.flush())
        }
    };
    let dest = out.map_or("standard output".to_string(), |p| p.display().to_string());
    written.map_err(|e| format!("cannot write the {} to {dest}: {e}", format.what()))?;
    Ok(match format {
        Format::Htsim => htsim_note(n_hosts, &msgs, &dest),
        Format::Ns2 => ns2_note(cfg, experiment, n_hosts, &msgs, &dest),
    })
}

/// What was written, and the start times htsim's 32-bit float reading moves.
fn htsim_note(n_hosts: u32, msgs: &[MessageSpec], dest: &str) -> String {
    let last = msgs.iter().map(|m| m.time).max().unwrap_or(0);
    let mut s = format!(
        "wrote {} connections for {n_hosts} hosts to {dest} (last start {:.6} us)",
        msgs.len(),
        last as f64 / 1e6
    );
    let shifts: Vec<u64> = msgs.iter().map(|m| m.time.abs_diff(htsim_start(m.time))).filter(|&d| d > 0).collect();
    if let Some(max) = shifts.iter().max() {
        s.push_str(&format!(
            "\nnote: htsim parses `start` as a 32-bit float (exact to 16.777216 us): it moves {} of these start \
             times, by up to {max} ps",
            shifts.len()
        ));
    }
    s.push_str(&incast_note(msgs));
    s
}

/// What was written, and what the artifact's run needs besides the file.
fn ns2_note(cfg: &Config, experiment: &Path, n_hosts: u32, msgs: &[MessageSpec], dest: &str) -> String {
    let last = msgs.iter().map(|m| m.time).max().unwrap_or(0);
    let senders = {
        let mut s: Vec<u32> = msgs.iter().map(|m| m.src).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let mut s = format!(
        "wrote {} requests of {senders} hosts (of {n_hosts}) to {dest}: {} seed {}, last start {:.6} us\n\
         note: run it with the artifact's req_interval_distr, req_target_distr and req_size_distr set to \"manual\" \
         and manual_req_interval_file set to this file, for at least {} ms (docs/xval.md)",
        msgs.len(),
        experiment.display(),
        cfg.run.seed,
        last as f64 / 1e6,
        cfg.run.duration_ms
    );
    s.push_str(&incast_note(msgs));
    s
}

fn incast_note(msgs: &[MessageSpec]) -> String {
    let incast = msgs.iter().filter(|m| m.incast).count();
    if incast == 0 {
        return String::new();
    }
    format!(
        "\nnote: {incast} messages of the incast overlay are ordinary messages in the file (fabriclab \
         leaves them out of its slowdown statistics; read back, they are counted)"
    )
}
