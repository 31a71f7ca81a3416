//! `fabriclab export-cm`: a run's messages as an htsim connection matrix
//! (docs/xval.md, format: `fabriclab_workload::htsim`).

use fabriclab::config::Config;
use fabriclab::workload::htsim::{htsim_start, write};
use fabriclab::workload::MessageSpec;
use std::io::Write;
use std::path::Path;

/// Writes the messages `cfg`'s run injects to `out` (standard output when
/// `None`) and returns a note for standard error: what was written and what
/// htsim will read differently.
pub fn export(cfg: &Config, experiment: &Path, out: Option<&Path>) -> Result<String, String> {
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
            write(&mut w, n_hosts, &msgs, &comment)?;
            w.flush()
        }),
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            write(&mut w, n_hosts, &msgs, &comment).and_then(|()| w.flush())
        }
    };
    let dest = out.map_or("standard output".to_string(), |p| p.display().to_string());
    written.map_err(|e| format!("cannot write the connection matrix to {dest}: {e}"))?;
    Ok(note(n_hosts, &msgs, &dest))
}

/// What was written, and the start times htsim's 32-bit float reading moves.
fn note(n_hosts: u32, msgs: &[MessageSpec], dest: &str) -> String {
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
    let incast = msgs.iter().filter(|m| m.incast).count();
    if incast > 0 {
        s.push_str(&format!(
            "\nnote: {incast} messages of the incast overlay are ordinary connections in the file (fabriclab \
             leaves them out of its slowdown statistics; read back, they are counted)"
        ));
    }
    s
}
