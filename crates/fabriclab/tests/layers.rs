//! The layers of docs/architecture.md hold: no import runs back up from a lower
//! layer to a higher one, and no circle of imports spans more than two files
//! (`scripts/import-graph.py --check`, which reads the `use` lines).

#[test]
fn no_import_runs_back_up_the_layers() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let out = std::process::Command::new(python)
        .arg(root.join("scripts/import-graph.py"))
        .arg("--check")
        .output()
        .expect("python3 runs scripts/import-graph.py");
    assert!(
        out.status.success(),
        "scripts/import-graph.py --check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
