//! The output side of the checks before a run (ARCHITECTURE.md §8): every output is created
//! or opened for appending, and its folder takes a one-byte probe file, before any solving or
//! counting, so a result never finds nowhere to go.

use super::LimitError;
use std::io::Write;
use std::path::{Path, PathBuf};

fn unwritable(path: &Path, e: impl std::fmt::Display) -> LimitError {
    LimitError::Unwritable { path: path.display().to_string(), reason: e.to_string() }
}

/// Writes and removes one small file in `dir`: fails when the folder is missing, read-only or
/// its file system is full.
fn probe(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(format!(".concur-write-check-{}", std::process::id()));
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .and_then(|mut f| f.write_all(b"\n").and_then(|()| f.flush()));
    let _ = std::fs::remove_file(&path);
    r
}

/// An output file checked before the work: it exists when the check passes (created empty if
/// it did not), and a file the check created is removed again if nothing was written to it.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    created: bool,
    written: bool,
    /// The path is a link or a device (`/dev/stdout`): written through, not replaced.
    in_place: bool,
}

impl OutputFile {
    /// Checks that `path` can be written: its folder takes a new file (so it exists, is
    /// writable and not full), and the file opens for appending (it is created if missing;
    /// what it holds is left as it is).
    pub fn check(path: &Path) -> Result<OutputFile, LimitError> {
        if path.is_dir() {
            return Err(unwritable(path, "it is a folder"));
        }
        let meta = path.symlink_metadata().ok();
        let in_place = meta.as_ref().is_some_and(|m| !m.is_file());
        if !in_place {
            probe(folder_of(path)).map_err(|e| unwritable(path, e))?;
        }
        std::fs::OpenOptions::new().append(true).create(true).open(path).map_err(|e| unwritable(path, e))?;
        Ok(OutputFile { path: path.to_path_buf(), created: meta.is_none(), written: false, in_place })
    }

    /// The output's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the file to the caller (an append-only writer such as a journal): it is not
    /// removed when dropped.
    pub fn keep(mut self) {
        self.written = true;
    }

    /// Replaces the file's content with `bytes`, through a new file in the same folder renamed
    /// over it: a write that fails (a full disk) leaves the file as it was. A link or a device
    /// (`-o /dev/stdout`) is written through instead.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.in_place {
            std::fs::write(&self.path, bytes)?;
            self.written = true;
            return Ok(());
        }
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = folder_of(&self.path).join(format!(".{name}.concur-{}", std::process::id()));
        let r = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        } else {
            self.written = true;
        }
        r
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The folder a file goes into (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks that files can be written into the folder `dir` (creating it and its parents; a
/// folder it made is removed again when files cannot go into it).
pub fn output_dir(dir: &Path) -> Result<(), LimitError> {
    let existed = dir.is_dir();
    std::fs::create_dir_all(dir).map_err(|e| unwritable(dir, e))?;
    probe(dir).map_err(|e| {
        if !existed {
            // The folder the check made (it is empty) goes again.
            let _ = std::fs::remove_dir(dir);
        }
        unwritable(dir, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_checked_and_an_unused_one_is_removed() {
        let dir = std::env::temp_dir().join(format!("concur-limits-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        output_dir(&dir.join("a/b")).unwrap();
        let f = dir.join("a/out.txt");
        let out = OutputFile::check(&f).unwrap();
        assert!(f.exists());
        drop(out);
        assert!(!f.exists(), "a file the check created and nothing wrote is removed");
        std::fs::write(&f, "kept").unwrap();
        drop(OutputFile::check(&f).unwrap());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "kept", "an existing file is left as it was");
        let mut out = OutputFile::check(&f).unwrap();
        out.write(b"new").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        let mut out = OutputFile::check(&dir.join("a/fresh.txt")).unwrap();
        out.write(b"x").unwrap();
        drop(out);
        assert!(dir.join("a/fresh.txt").exists(), "a written file stays");
        // A link is written through, not replaced.
        #[cfg(unix)]
        {
            let link = dir.join("a/link.txt");
            std::os::unix::fs::symlink(&f, &link).unwrap();
            let mut out = OutputFile::check(&link).unwrap();
            out.write(b"through").unwrap();
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read_to_string(&f).unwrap(), "through");
        }
        for bad in [dir.join("missing/x.txt"), f.join("under-a-file.txt"), dir.join("a")] {
            let e = OutputFile::check(&bad).unwrap_err().to_string();
            assert!(e.starts_with("cannot write"), "{e}");
        }
        assert!(output_dir(&f.join("sub")).is_err());
        assert!(
            std::fs::read_dir(dir.join("a")).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".concur"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
