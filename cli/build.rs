//! Names the commit that `concur --version` prints (the `CONCUR_COMMIT` variable of the
//! build): `git rev-parse --short=12 HEAD` in a clone, `unknown` where the source is not one
//! (a source package) or git is missing. The script runs again when HEAD moves (a commit, a
//! checkout), and only then: a change to the working tree alone does not rename the build.

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
