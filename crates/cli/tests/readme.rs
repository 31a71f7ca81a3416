//! README.md's first example: its main command, run as written, prints the
//! block README shows, line for line, but for the two figures that measure
//! the machine (the wall time and the events per second on the first line).

use std::path::Path;
use std::process::Command;

/// The wall-clock figures of the first line, as placeholders.
fn without_timing(block: &str) -> String {
    block
        .lines()
        .map(|l| match (l.find(" simulated in "), l.find(" events/s)")) {
            (Some(a), Some(b)) if a < b => format!("{} simulated in T s (R M{}", &l[..a], &l[b..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn readmes_main_command_prints_the_block_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = readme
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release --bin fabriclab -- "))
        .expect("README's main command");
    let shown = readme
        .split_once("\n```text\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(block, _)| block)
        .expect("README's example output: its first text block");
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(args.last(), Some(&"out/"), "the block's last line names out/");
    // Run from an empty folder, so its out/ is the test's own; the experiment as README names it.
    let cwd = std::env::temp_dir().join(format!("fabriclab-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let args: Vec<String> = args
        .iter()
        .map(
            |a| if a.starts_with("experiments/") { root.join(a).to_string_lossy().into_owned() } else { a.to_string() },
        )
        .collect();
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(&args).current_dir(&cwd).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        without_timing(shown),
        without_timing(printed.trim_end()),
        "README.md's example output is not what `{command}` prints; paste the new block into README"
    );
}
