//! Runs one sweep point as a child process (`fabriclab run`), so that its
//! crash or config error stays its own and its peak memory can be measured.

use super::stop;
use crate::exe::SelfCommand;
use fabriclab::files;
use fabriclab::sweep::Point;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

/// What happened to one point.
#[derive(Clone, Debug, PartialEq)]
pub struct PointRun {
    pub ok: bool,
    /// Last line the child wrote to stderr, or how it died.
    pub error: Option<String>,
    pub peak_rss_mb: Option<f64>,
    /// The files the run listed in its manifest (when ok).
    pub files: Vec<String>,
}

/// The parent's files in a point directory, besides the run's.
pub const LOGS: [&str; 2] = ["stdout.log", "stderr.log"];

/// Runs `point` with `exe run` (this CLI, see [`SelfCommand`]), writing into
/// `dir` (emptied first: nothing of an earlier attempt stays); stdout and
/// stderr go to log files there. The point is ok only if the run exited 0 and
/// its files match its manifest.
pub fn run_point(exe: &SelfCommand, point: &Point, dir: &Path) -> PointRun {
    let failed = |e: String| PointRun { ok: false, error: Some(e), peak_rss_mb: None, files: vec![] };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return failed(format!("cannot create {}: {e}", dir.display()));
    }
    if let Err(e) = files::clear(dir, &[]) {
        return failed(e);
    }
    let log = |name: &str| std::fs::File::create(dir.join(name));
    let (Ok(out), Ok(err)) = (log("stdout.log"), log("stderr.log")) else {
        return failed(format!("cannot create log files in {}", dir.display()));
    };
    let mut cmd = exe.command();
    cmd.arg("run").arg(&point.base).arg("--out").arg(dir).arg("--quiet");
    for o in &point.overrides {
        cmd.arg("--set").arg(o);
    }
    die_with_parent(&mut cmd);
    let child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start {exe}: {e}")),
    };
    stop::track(child.id());
    let (status, peak_rss_mb) = match wait(&mut child) {
        Ok(x) => x,
        Err(e) => {
            stop::untrack(child.id());
            return failed(format!("cannot wait for the point's process: {e}"));
        }
    };
    let stderr = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string());
    if let Some(sig) = stop::requested().filter(|_| !status.success()) {
        return PointRun { peak_rss_mb, ..failed(format!("stopped by {}", stop::name(sig))) };
    }
    if !status.success() {
        return PointRun { peak_rss_mb, ..failed(describe_failure(status, last)) };
    }
    match files::verify(dir, &["summary.json"]) {
        Ok(entries) => {
            PointRun { ok: true, error: None, peak_rss_mb, files: entries.into_iter().map(|e| e.name).collect() }
        }
        Err(e) => PointRun { peak_rss_mb, ..failed(format!("the run exited 0 but its files are incomplete: {e}")) },
    }
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
/// ru_maxrss of the reaped child, via wait4). It first waits without reaping
/// (waitid with WNOWAIT) and untracks the pid, so that a signal's kill never
/// reaches a pid that has been reaped and perhaps reused.
#[cfg(unix)]
fn wait(child: &mut std::process::Child) -> std::io::Result<(ExitStatus, Option<f64>)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    loop {
        // SAFETY: siginfo_t is plain data; zero is a valid bit pattern.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our own unreaped child; the pointer is to a live local.
        if unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) } == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    stop::untrack(child.id());
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
    let r = child.wait().map(|s| (s, None));
    stop::untrack(child.id());
    r
}

/// A sweep killed outright (SIGKILL, the OOM killer), which can run no
/// handler, still takes its points with it: the kernel sends each child
/// SIGKILL when the thread that started it ends, which in a live sweep is
/// only after that child has been waited for.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure calls only async-signal-safe
    // functions (prctl, getppid) and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl: nobody is left to wait for this point.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut std::process::Command) {}
