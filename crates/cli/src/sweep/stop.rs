//! SIGINT and SIGTERM during a sweep: kill and reap the points' child
//! processes, start no new ones, and let the sweep return an error (the
//! binary then exits with 128 + the signal number, as the shell expects).
//!
//! signal-hook's iterator runs the signal handler for us (a self-pipe read
//! by a thread), so no code of ours runs in signal context. Outside a sweep
//! (before it, after it, or between the sweeps of `repro`) a signal does
//! what it would have done without us: it ends the process.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The signal that asked us to stop, or 0.
static STOP: AtomicI32 = AtomicI32::new(0);
/// Sweeps running in this process.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Points' processes not yet reaped: killing one of these pids cannot hit an
/// unrelated process, as a pid is not reused before its zombie is reaped.
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Keeps signals in "stop the sweep" mode while it lives.
pub struct Active;

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Installs the handler (once per process) and marks a sweep as running.
pub fn begin() -> Result<Active, String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(install).clone()?;
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    Ok(Active)
}

/// The signal that stopped the sweep, if one did.
pub fn requested() -> Option<i32> {
    Some(STOP.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Registers a just-started point process. Returns false if a stop was
/// asked for meanwhile: the process has then been killed (reap it as usual).
pub fn track(pid: u32) -> bool {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.push(pid);
    // Read under the lock that `stop` takes after setting STOP: either it saw
    // this pid, or this sees its signal.
    if requested().is_some() {
        kill(pid);
        return false;
    }
    true
}

/// Forgets a point process that has exited but is not yet reaped.
pub fn untrack(pid: u32) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != pid);
}

fn kill(pid: u32) {
    // SAFETY: kill(2) on a pid of our own unreaped child; no memory is involved.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

fn stop(sig: i32) {
    STOP.store(sig, Ordering::SeqCst);
    for &pid in LIVE.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        kill(pid);
    }
}

#[cfg(unix)]
fn install() -> Result<(), String> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .map_err(|e| format!("cannot install the SIGINT/SIGTERM handler: {e}"))?;
    std::thread::Builder::new()
        .name("sweep-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if ACTIVE.load(Ordering::SeqCst) > 0 && requested().is_none() {
                    stop(sig);
                } else {
                    // Not in a sweep, or a second signal: die as without a handler.
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                }
            }
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    Ok(())
}

#[cfg(not(unix))]
fn install() -> Result<(), String> {
    Ok(())
}
