//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// A file in the tests' scratch directory.
pub fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fabriclab-workload-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
