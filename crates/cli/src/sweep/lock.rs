//! One sweep, or one run, per output directory at a time: `DIR/sweep.lock`
//! (or `DIR/run.lock`) holds the owner's pid and an exclusive `flock`. The
//! kernel drops the lock when its owner dies however it dies, so a stale lock
//! file of a dead process is simply taken over; a live owner's makes the
//! second sweep or run fail at once, naming it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

pub const LOCK_FILE: &str = "sweep.lock";
/// The lock of a `fabriclab run`'s `--out` (a sweep's points each have their own folder).
pub const RUN_LOCK_FILE: &str = "run.lock";

/// Held for the whole sweep; dropping it removes the file and releases the lock.
pub struct Lock {
    path: PathBuf,
    _file: File,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Unlinked while still locked: a sweep that opened the old file before
        // this sees (after its flock) that the path names another file, and retries.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Takes the sweep lock of `dir`, or says which process holds it.
pub fn acquire(dir: &Path) -> Result<Lock, String> {
    acquire_named(dir, LOCK_FILE, "sweep")
}

/// Takes the lock file `name` of `dir` for a `what` ("sweep", "run"), or
/// says which process holds it.
#[cfg(unix)]
pub fn acquire_named(dir: &Path, name: &str, what: &str) -> Result<Lock, String> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let path = dir.join(name);
    let err = |e: std::io::Error| format!("cannot lock {}: {e}", path.display());
    loop {
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(err)?;
        // SAFETY: flock on a descriptor we own; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err(e));
            }
            let owner = read_pid(&mut file).map_or("another process".to_string(), |p| format!("process {p}"));
            return Err(format!(
                "another {what} ({owner}) is writing to {}; wait for it to finish or stop it (it holds {})",
                dir.display(),
                path.display()
            ));
        }
        // The holder we waited on may have removed the file between our open and our flock.
        let same = std::fs::metadata(&path)
            .ok()
            .zip(file.metadata().ok())
            .is_some_and(|(a, b)| a.ino() == b.ino() && a.dev() == b.dev());
        if !same {
            continue;
        }
        if let Some(old) = read_pid(&mut file) {
            eprintln!("note: {} was left by process {old}, which is no longer running; taking it over", path.display());
        }
        file.set_len(0).map_err(err)?;
        file.rewind().map_err(err)?;
        writeln!(file, "{}", std::process::id()).map_err(err)?;
        file.flush().map_err(err)?;
        return Ok(Lock { path, _file: file });
    }
}

#[cfg(not(unix))]
pub fn acquire_named(dir: &Path, name: &str, what: &str) -> Result<Lock, String> {
    // No flock: an exclusive create, which a crashed owner leaves behind (remove it by hand).
    let path = dir.join(name);
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(mut file) => {
            let _ = writeln!(file, "{}", std::process::id());
            Ok(Lock { path, _file: file })
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(format!(
            "another {what} is writing to {} (it holds {}); if none is running, remove that file",
            dir.display(),
            path.display()
        )),
        Err(e) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}
