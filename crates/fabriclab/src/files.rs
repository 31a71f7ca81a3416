//! Crash-safe result files: every file is written under a temporary name in
//! its own directory and renamed into place (a rename within a directory is
//! atomic), so a reader sees either the whole previous file, the whole new one,
//! or none; and a directory records that it is complete last, in
//! `manifest.json`, which lists every file with its size and SHA-256. A run
//! killed at any moment therefore leaves at most hidden `.NAME.partial-PID`
//! files and no manifest, never a truncated file that looks finished.
//!
//! SHA-256 because it is what `sha256sum` and Python's `hashlib` compute, so a
//! manifest can be checked by hand or from the Python package.

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The name of a directory's completion record.
pub const MANIFEST: &str = "manifest.json";

/// Where `path` is written before it is renamed into place: hidden, in the
/// same directory (a rename across file systems would not be atomic), and
/// unique per process so that two writers never share one.
pub fn partial_name(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// True for the temporary name of an unfinished write (see [`partial_name`]).
pub fn is_partial(name: &str) -> bool {
    name.starts_with('.') && name.contains(".partial-")
}

/// Writes `path` by calling `fill` on a temporary file, syncing it to disk
/// and renaming it over `path`. On any error the temporary file is removed
/// and `path` is untouched. Errors name the file.
pub fn write_with<T>(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<T>) -> Result<T, String> {
    let tmp = partial_name(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        let value = fill(&mut f)?;
        f.flush()?;
        // Without the sync a power cut after the rename could leave a named but empty file.
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(value)
    })();
    result.map_err(|e: io::Error| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// [`write_with`] for bytes already in memory.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_with(path, |f| f.write_all(bytes))
}

/// One file of a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
}

/// The size and SHA-256 (lower-case hex) of the file at `path`.
pub fn digest(path: &Path) -> io::Result<(u64, String)> {
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((bytes, hex(&h.finalize())))
}

/// The SHA-256 of `bytes`, lower-case hex (as [`digest`] gives a file's).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(sum: &[u8]) -> String {
    sum.iter().map(|b| format!("{b:02x}")).collect()
}

/// Records that `dir` is complete: writes `manifest.json` listing `names`
/// (files in `dir`, in that order) with their sizes and checksums. Call it
/// after every listed file has been written, and write nothing after it.
pub fn seal(dir: &Path, names: &[&str]) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(name);
        let (bytes, sha256) = digest(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        entries.push(Entry { name: name.to_string(), bytes, sha256 });
    }
    let files: Vec<serde_json::Value> =
        entries.iter().map(|e| serde_json::json!({ "name": e.name, "bytes": e.bytes, "sha256": e.sha256 })).collect();
    let v = serde_json::json!({ "complete": true, "files": files });
    write(&dir.join(MANIFEST), format!("{v:#}\n").as_bytes())?;
    Ok(entries)
}

/// Removes the manifest first (so the directory stops looking complete),
/// then every other regular file in `dir` except those in `keep`: a
/// directory about to be written again holds nothing from an earlier attempt.
pub fn clear(dir: &Path, keep: &[&str]) -> Result<(), String> {
    let err = |e: io::Error| format!("cannot clear {}: {e}", dir.display());
    match std::fs::remove_file(dir.join(MANIFEST)) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err(e)),
    };
    for entry in entries {
        let entry = entry.map_err(err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().map_err(err)?.is_file() && !keep.contains(&name.as_str()) {
            std::fs::remove_file(entry.path()).map_err(err)?;
        }
    }
    Ok(())
}

/// Why a directory cannot be trusted as complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incomplete {
    /// No manifest: the run never finished (or never started).
    NoManifest,
    /// The manifest cannot be read as one.
    BadManifest(String),
    /// A listed file is missing, has another size or another checksum.
    Mismatch(String),
    /// The manifest is fine but lacks a file that must be there.
    Unlisted(String),
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Incomplete::NoManifest => write!(f, "no {MANIFEST}: the run did not finish"),
            Incomplete::BadManifest(e) => write!(f, "{MANIFEST} is unreadable ({e})"),
            Incomplete::Mismatch(e) | Incomplete::Unlisted(e) => f.write_str(e),
        }
    }
}

/// Checks `dir` against its manifest: it must exist, list every one of
/// `required`, and every listed file must have the listed size and checksum.
/// Returns the entries when it does.
pub fn verify(dir: &Path, required: &[&str]) -> Result<Vec<Entry>, Incomplete> {
    let text = match std::fs::read_to_string(dir.join(MANIFEST)) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Incomplete::NoManifest),
        Err(e) => return Err(Incomplete::BadManifest(e.to_string())),
    };
    let entries = parse(&text).map_err(Incomplete::BadManifest)?;
    for r in required {
        if !entries.iter().any(|e| e.name == *r) {
            return Err(Incomplete::Unlisted(format!("{MANIFEST} does not list {r}")));
        }
    }
    for e in &entries {
        match digest(&dir.join(&e.name)) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(Incomplete::Mismatch(format!("{} is missing", e.name)))
            }
            Err(err) => return Err(Incomplete::Mismatch(format!("cannot read {}: {err}", e.name))),
            Ok((bytes, _)) if bytes != e.bytes => {
                return Err(Incomplete::Mismatch(format!("{} has {bytes} bytes, {MANIFEST} says {}", e.name, e.bytes)))
            }
            Ok((_, sha)) if sha != e.sha256 => {
                return Err(Incomplete::Mismatch(format!("{} does not match its checksum in {MANIFEST}", e.name)))
            }
            Ok(_) => {}
        }
    }
    Ok(entries)
}

/// The resolved config a run (and a sweep point) keeps beside its results.
pub const RESOLVED_CONFIG: &str = "config.resolved.toml";

/// Whether a complete point's stored [`RESOLVED_CONFIG`] is what this build
/// resolves its config to now (`now`, `Config::to_toml`): a changed default
/// or an edited base file makes its results stale, which the point id (base
/// path and overrides) cannot see. The stored file may go on with comments
/// (the CLI's cost estimate). `Err(Some(why))` when stale or unreadable.
pub fn config_matches(dir: &Path, now: &str) -> Result<(), Option<String>> {
    let stored = std::fs::read_to_string(dir.join(RESOLVED_CONFIG))
        .map_err(|e| Some(format!("cannot read its {RESOLVED_CONFIG}: {e}")))?;
    match stored.strip_prefix(now) {
        Some(rest) if rest.is_empty() || rest.starts_with("\n#") || rest.starts_with('#') => Ok(()),
        _ => Err(Some(format!("its {RESOLVED_CONFIG} is not what this build resolves: a default or its base changed"))),
    }
}

/// What a sweep point's directory must list in its manifest to count as done.
pub const POINT_REQUIRED: [&str; 2] = ["summary.json", "point.json"];

/// Whether a sweep point's directory is complete (its manifest lists
/// [`POINT_REQUIRED`], every listed file matches, point.json says ok and
/// names this build's [`crate::MODEL`]): `Ok` if so, else why not, `None`
/// when it plainly never finished (no manifest, no summary.json: never ran,
/// or failed), which needs no word on resume. The one rule of the CLI and
/// the Python package, so both resume the same points, and a point run by a
/// model whose results differ is never reused (nor recorded as this one's).
pub fn point_done(dir: &Path) -> Result<(), Option<String>> {
    match verify(dir, &POINT_REQUIRED) {
        Ok(_) => {
            let v = std::fs::read_to_string(dir.join("point.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .unwrap_or_default();
            if v["ok"] != serde_json::Value::Bool(true) {
                return Err(Some("point.json says it failed".into()));
            }
            match v["model"].as_str() {
                Some(m) if m == crate::MODEL => Ok(()),
                Some(m) => Err(Some(format!("it was run by model {m}, this build's is {}", crate::MODEL))),
                None => Err(Some("its point.json names no model version (run before models were recorded)".into())),
            }
        }
        Err(Incomplete::NoManifest) if !dir.join("summary.json").exists() => Err(None),
        Err(e) => Err(Some(e.to_string())),
    }
}

fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if v["complete"] != serde_json::Value::Bool(true) {
        return Err("it does not say complete = true".into());
    }
    let files = v["files"].as_array().ok_or("it has no files list")?;
    files
        .iter()
        .map(|f| {
            let name = f["name"].as_str().filter(|n| !n.is_empty() && !n.contains(['/', '\\']));
            match (name, f["bytes"].as_u64(), f["sha256"].as_str()) {
                (Some(name), Some(bytes), Some(sha)) => {
                    Ok(Entry { name: name.to_string(), bytes, sha256: sha.to_string() })
                }
                _ => Err(format!("a file entry lacks a plain name, bytes or sha256: {f}")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fabriclab-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn sha256_of_a_known_input() {
        let d = scratch("sha");
        write(&d.join("abc"), b"abc").unwrap();
        let (n, sha) = digest(&d.join("abc")).unwrap();
        assert_eq!(n, 3);
        assert_eq!(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_partial() {
        let d = scratch("fail");
        let p = d.join("summary.json");
        write(&p, b"old").unwrap();
        let e = write_with(&p, |f| {
            f.write_all(b"half")?;
            Err::<(), _>(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.contains("summary.json") && e.contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["summary.json"]);
    }

    #[test]
    fn verify_catches_truncation_corruption_and_missing_files() {
        let d = scratch("verify");
        write(&d.join("summary.json"), b"{}\n").unwrap();
        write(&d.join("messages.csv"), b"id,size\n1,100\n2,200\n").unwrap();
        assert_eq!(verify(&d, &["summary.json"]), Err(Incomplete::NoManifest));
        seal(&d, &["summary.json", "messages.csv"]).unwrap();
        assert_eq!(verify(&d, &["summary.json"]).unwrap().len(), 2);
        assert!(matches!(verify(&d, &["point.json"]), Err(Incomplete::Unlisted(_))));

        std::fs::write(d.join("messages.csv"), b"id,size\n1,100\n").unwrap();
        let e = verify(&d, &[]).unwrap_err().to_string();
        assert!(e.contains("messages.csv has 14 bytes") && e.contains("says 20"), "{e}");
        std::fs::write(d.join("messages.csv"), b"id,size\n1,100\n2,201\n").unwrap();
        let e = verify(&d, &[]).unwrap_err().to_string();
        assert!(e.contains("messages.csv does not match its checksum"), "{e}");
        std::fs::remove_file(d.join("messages.csv")).unwrap();
        assert!(verify(&d, &[]).unwrap_err().to_string().contains("messages.csv is missing"));
        std::fs::write(d.join(MANIFEST), b"{\"files\": []}").unwrap();
        assert!(matches!(verify(&d, &[]), Err(Incomplete::BadManifest(_))));
    }

    #[test]
    fn clear_removes_the_manifest_and_the_files_but_what_is_kept() {
        let d = scratch("clear");
        write(&d.join("summary.json"), b"{}").unwrap();
        write(&d.join("stderr.log"), b"").unwrap();
        seal(&d, &["summary.json"]).unwrap();
        clear(&d, &["stderr.log"]).unwrap();
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["stderr.log"]);
    }

    #[test]
    fn partial_names_are_hidden_and_recognised() {
        let p = partial_name(Path::new("/x/messages.csv"));
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".messages.csv.partial-") && is_partial(name));
        assert!(!is_partial("messages.csv"));
    }
}
