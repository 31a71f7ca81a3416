// Embeds the git commit the binary was built from (FABRICLAB_GIT_COMMIT),
// for the provenance of run directories. Outside a git checkout (a source
// tarball, a crate download) or without git the commit is "unknown": the
// build never fails for want of git.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FABRICLAB_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (a checkout), the branch it names
    // (a commit) and packed-refs. `--git-path` resolves them in worktrees too.
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(branch);
    }
    let mut any = false;
    for w in watch {
        if let Some(p) = git(&["rev-parse", "--git-path", &w]) {
            let p = std::path::Path::new(&p);
            let p = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
                any = true;
            }
        }
    }
    if any {
        println!("cargo:rerun-if-changed=build.rs");
    }
}
