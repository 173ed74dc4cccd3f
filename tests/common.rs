//! Shared helpers: where the real puzzle sets are, and generated puzzles.
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Board, Puzzle, format};
use std::path::PathBuf;

/// The shared puzzle folder (`CONCUR_PUZZLES`, else `../shared/puzzles`). When neither
/// exists the caller prints SKIPPED, unless `REQUIRE_PUZZLES=1`, which makes it a failure.
pub fn puzzles(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CONCUR_PUZZLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("../shared/puzzles"));
    if dir.join("brendan_owen").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("REQUIRE_PUZZLES").as_deref() != Ok("1"),
        "{test}: REQUIRE_PUZZLES=1 but no puzzle sets at {}",
        dir.display()
    );
    eprintln!("SKIPPED {test}: no puzzle sets at {} (set CONCUR_PUZZLES)", dir.display());
    None
}

pub fn brendan(dir: &std::path::Path, set: u8, w: usize, h: usize) -> Puzzle {
    let path = dir.join(format!("brendan_owen/pieces_set_{set}/pieces_{w:02}x{h:02}.txt"));
    format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn generated(w: usize, h: usize, seed: u64) -> (Puzzle, Board) {
    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed }).unwrap()
}

/// Whether this build is the full tier (`CONCUR_TESTS=full` when it was built, as CI sets
/// it; `cli/build.rs` turns it into the cfg `full_tier`): the long samples (the SIGINT
/// storm, the fuzzed command lines) run whole, and the tests marked
/// `#[cfg_attr(not(full_tier), ignore = ...)]` run. Without it the fast tier runs a slice of
/// each sample, the same code on fewer draws, and ignores the marked tests.
pub fn full_tier() -> bool {
    cfg!(full_tier)
}

/// `full` draws in the full tier, `fast` in the fast one.
pub fn sample(full: usize, fast: usize) -> usize {
    if full_tier() { full } else { fast }
}

/// The `concur` binary the CLI tests run: `$CONCUR_BIN` where set (a staged binary on a
/// machine without the build tree, as on a device machine), else the one cargo built.
pub fn concur_bin() -> std::path::PathBuf {
    std::env::var_os("CONCUR_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_concur")))
}

/// Runs the `concur` binary with `args` and extra environment variables.
pub fn concur_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = std::process::Command::new(concur_bin());
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run concur")
}

/// A fresh folder for one test under the system's temporary folder.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("concur-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exit 2 with one line on stderr, `concur: error: ...`, that contains `needle`; no panic.
pub fn assert_refused(out: &std::process::Output, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: stderr {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: want one line, got {err:?}");
    assert!(err.starts_with("concur: error:") && !err.contains("panicked"), "{what}: {err}");
    assert!(err.contains(needle), "{what}: {needle:?} not in {err:?}");
}

/// A small tmpfs mounted at a fresh folder (which needs root), unmounted when dropped.
pub struct Tmpfs {
    pub dir: PathBuf,
}

impl Tmpfs {
    /// Mounts `size` (e.g. "64k"), read-only with `ro`; `None`, with a SKIPPED line, where
    /// mounting is not allowed.
    pub fn mount(test: &str, size: &str, ro: bool) -> Option<Tmpfs> {
        let dir = scratch(&format!("tmpfs-{test}"));
        let opts = format!("size={size}{}", if ro { ",ro" } else { "" });
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &opts, "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("SKIPPED {test} on a tmpfs: cannot mount one here (it needs root)");
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Tmpfs { dir })
    }

    /// Writes a file until the file system is full.
    pub fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.join("filler")).unwrap();
        while f.write_all(&[0u8; 1024]).and_then(|()| f.flush()).is_ok() {}
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Divide and concur at its options' defaults with the plain layout (the GPU backend's; the
/// capability table says so), run as `MapRun::default` says.
pub fn dc_plain() -> concur::dc::DcConfig {
    concur::dc::DcOptions { layout: concur::dc::DcLayout::Plain, ..Default::default() }
        .config(concur::batch::MapRun::default())
}
