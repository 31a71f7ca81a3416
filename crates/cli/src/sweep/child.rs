//! Runs one sweep point as a child process (`fabriclab run`), so that its
//! crash or config error stays its own and its peak memory can be measured.

use fabriclab::sweep::Point;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// What happened to one point.
#[derive(Clone, Debug, PartialEq)]
pub struct PointRun {
    pub ok: bool,
    /// Last line the child wrote to stderr, or how it died.
    pub error: Option<String>,
    pub peak_rss_mb: Option<f64>,
}

/// Runs `point` with `exe run`, writing into `dir`; stdout and stderr go to log files there.
pub fn run_point(exe: &Path, point: &Point, dir: &Path) -> PointRun {
    let failed = |e: String| PointRun { ok: false, error: Some(e), peak_rss_mb: None };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return failed(format!("cannot create {}: {e}", dir.display()));
    }
    let log = |name: &str| std::fs::File::create(dir.join(name));
    let (Ok(out), Ok(err)) = (log("stdout.log"), log("stderr.log")) else {
        return failed(format!("cannot create log files in {}", dir.display()));
    };
    let mut cmd = Command::new(exe);
    cmd.arg("run").arg(&point.base).arg("--out").arg(dir).arg("--quiet");
    for o in &point.overrides {
        cmd.arg("--set").arg(o);
    }
    let child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start {}: {e}", exe.display())),
    };
    let (status, peak_rss_mb) = match wait(&mut child) {
        Ok(x) => x,
        Err(e) => return failed(format!("cannot wait for the point's process: {e}")),
    };
    let stderr = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string());
    let ok = status.success() && dir.join("summary.json").exists();
    let error = (!ok).then(|| describe_failure(status, last));
    PointRun { ok, error, peak_rss_mb }
}

fn describe_failure(status: ExitStatus, last: Option<String>) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}{}", last.map(|l| format!(": {l}")).unwrap_or_default());
        }
    }
    let code = status.code().map_or("?".into(), |c| c.to_string());
    match last {
        Some(l) => format!("exit code {code}: {}", l.strip_prefix("error: ").unwrap_or(&l)),
        None => format!("exit code {code}"),
    }
}

/// Waits for the child and reads its peak resident set size (getrusage's
/// ru_maxrss of the reaped child, via wait4).
#[cfg(unix)]
fn wait(child: &mut std::process::Child) -> std::io::Result<(ExitStatus, Option<f64>)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; zero is a valid bit pattern.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; the pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    // Linux reports kilobytes, macOS bytes.
    let kb = if cfg!(target_os = "macos") { usage.ru_maxrss as f64 / 1024.0 } else { usage.ru_maxrss as f64 };
    Ok((ExitStatus::from_raw(status), Some((kb / 1024.0 * 10.0).round() / 10.0)))
}

#[cfg(not(unix))]
fn wait(child: &mut std::process::Child) -> std::io::Result<(ExitStatus, Option<f64>)> {
    child.wait().map(|s| (s, None))
}
