//! Names the commit that `concur --version` prints (the `CONCUR_COMMIT` variable of the
//! build): `git rev-parse --short=12 HEAD` in a clone, `unknown` where the source is not one
//! (a source package) or git is missing. The script runs again when HEAD moves (a commit, a
//! checkout), and only then: a change to the working tree alone does not rename the build.
//!
//! It also sets the test tier: `CONCUR_TESTS=full` at build time compiles the end-to-end
//! tests' full tier in (the cfg `full_tier`: the long device tests, the coverage studies, the
//! GPU storm and the Slurm test run, and the samples run whole); without it they are ignored
//! with that reason, and the README's `cargo test --release` is the fast tier.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CONCUR_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(full_tier)");
    println!("cargo:rerun-if-env-changed=CONCUR_TESTS");
    if std::env::var("CONCUR_TESTS").as_deref() == Ok("full") {
        println!("cargo:rustc-cfg=full_tier");
    }
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        // HEAD, the branch it names, and the packed refs: each only if it exists, since a
        // path that does not would run the script on every build.
        let mut watch = vec![format!("{dir}/HEAD"), format!("{dir}/packed-refs")];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{dir}/{branch}"));
        }
        for path in watch.iter().filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
