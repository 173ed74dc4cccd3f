//! The results file of one shard, held by one writer: an advisory lock, a torn last line cut
//! off in place, and lines appended whole and brought to the disk.
//!
//! **The lock** is an exclusive `flock(2)` (through the standard library's `File::try_lock`)
//! on a file beside the results, `<results>.lock`, which also names its holder (host, pid,
//! since when). The kernel drops it when the holder exits, however it exits, so a stale lock
//! file never blocks anyone. It holds between processes of one machine on any file system,
//! and between machines on NFS (Linux emulates `flock` there with the server's byte-range
//! locks, NFSv4 or NFSv3 with its lock manager); on Lustre only when the clients mount it with
//! `-o flock`, and on a file system without locks (some FUSE mounts) `try_lock` fails and the
//! ladder says so. A second writer of the same shard (an operator's second copy, or a
//! replacement pod that starts while the old one is still stopping) is refused with one line
//! that names the holder, or waits for it with `--wait-lock`.
//!
//! **Durability**: each line is written whole (a write that fails part-way is cut back off),
//! and the file is synced (`fdatasync`) at most [`SYNC_EVERY`] after a line, and when the file
//! is closed; a crash of the machine loses at most the lines of that interval, never a line
//! in part. The cost is measured in BENCHMARKS.md.

use concur::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest a written line waits for its sync.
pub const SYNC_EVERY: Duration = Duration::from_millis(500);

/// A shard's results file, locked by this process, open for appending.
#[derive(Debug)]
pub struct ShardFile {
    path: PathBuf,
    file: File,
    /// The lock file, held locked while this lives.
    _lock: File,
    /// When the file was last synced, and whether lines were written since.
    synced: Instant,
    dirty: bool,
}

/// The lock file of a results file: `<results>.lock`.
pub fn lock_path(results: &Path) -> PathBuf {
    let mut name = results.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    results.with_file_name(name)
}

impl ShardFile {
    /// Takes the shard's lock (waiting at most `wait` for its holder to let go, none without
    /// it), cuts a torn last line off the results file in place, and opens it for appending.
    /// A lock held by another writer past the wait is an error that names the holder.
    pub fn open(path: &Path, wait: Option<Duration>) -> Result<Self> {
        let lp = lock_path(path);
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lp)
            .map_err(|e| Error::io("open", &lp, e))?;
        let started = Instant::now();
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if wait.is_some_and(|w| started.elapsed() < w) {
                        std::thread::sleep(Duration::from_millis(200));
                        continue;
                    }
                    let mut holder = String::new();
                    let _ = File::open(&lp).and_then(|mut f| f.read_to_string(&mut holder));
                    let holder = holder.trim();
                    let holder = if holder.is_empty() { "another process".to_string() } else { holder.to_string() };
                    let waited = wait.map_or(String::new(), |w| format!(" after waiting {} s", w.as_secs_f64()));
                    return Err(Error::results(format!(
                        "{} is being written by {holder}{waited}; one writer per shard (--wait-lock SECS waits for it)",
                        path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io(
                        "lock",
                        &lp,
                        format!("{e}; the results folder needs a file system with locks"),
                    ));
                }
            }
        }
        // Name the holder: host, pid, since when.
        let me = format!(
            "pid {} on {} since {}\n",
            std::process::id(),
            super::provenance::host_name(),
            humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        );
        lock.set_len(0)
            .and_then(|_| lock.seek(SeekFrom::Start(0)))
            .and_then(|_| lock.write_all(me.as_bytes()))
            .and_then(|_| lock.flush())
            .map_err(|e| Error::io("write", &lp, e))?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io("open", path, e))?;
        cut_torn_tail(&mut file).map_err(|e| Error::io("repair", path, e))?;
        Ok(ShardFile { path: path.to_path_buf(), file, _lock: lock, synced: Instant::now(), dirty: false })
    }

    /// The results file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line (it must end in a newline) whole or not at all, and syncs the file
    /// when the last sync is [`SYNC_EVERY`] old.
    pub fn append(&mut self, line: &str) -> std::io::Result<()> {
        debug_assert!(line.ends_with('\n'));
        let before = self.file.metadata()?.len();
        if let Err(e) = self.file.write_all(line.as_bytes()).and_then(|_| self.file.flush()) {
            let _ = self.file.set_len(before);
            return Err(e);
        }
        self.dirty = true;
        if self.synced.elapsed() >= SYNC_EVERY {
            self.sync()?;
        }
        Ok(())
    }

    /// Brings every line written so far to the disk.
    pub fn sync(&mut self) -> std::io::Result<()> {
        if self.dirty {
            self.file.sync_data()?;
            self.dirty = false;
        }
        self.synced = Instant::now();
        Ok(())
    }
}

impl Drop for ShardFile {
    /// The last lines reach the disk before the lock is let go.
    fn drop(&mut self) {
        let _ = self.sync();
    }
}

/// Cuts a torn last line (a write cut short by a crash) off the file, in place: the file is
/// truncated after its last newline. Nothing is rewritten.
fn cut_torn_tail(file: &mut File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    // Read backwards in blocks until a newline (or the start) is found.
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep != len {
                file.set_len(keep)?;
            }
            return Ok(());
        }
        if start == 0 {
            file.set_len(0)?;
            return Ok(());
        }
        end = start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("concur-shard-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("results.jsonl")
    }

    #[test]
    fn a_torn_tail_is_cut_in_place_and_whole_lines_stay() {
        for (text, kept) in
            [("", ""), ("{\"a\":1}\n", "{\"a\":1}\n"), ("{\"a\":1}\n{\"b\":", "{\"a\":1}\n"), ("{\"b\":", "")]
        {
            let p = tmp("torn");
            std::fs::write(&p, text).unwrap();
            let mut f = ShardFile::open(&p, None).unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), kept, "{text:?}");
            f.append("{\"c\":3}\n").unwrap();
            drop(f);
            assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{kept}{{\"c\":3}}\n"));
        }
        // A tail longer than one block of the backwards read.
        let p = tmp("long");
        let long = format!("{{\"a\":1}}\n{}", "x".repeat(200_000));
        std::fs::write(&p, long).unwrap();
        drop(ShardFile::open(&p, None).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n");
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holder_named_and_may_wait() {
        let p = tmp("lock");
        let held = ShardFile::open(&p, None).unwrap();
        let e = ShardFile::open(&p, None).unwrap_err().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())) && e.contains("--wait-lock"), "{e}");
        let e = ShardFile::open(&p, Some(Duration::from_millis(300))).unwrap_err().to_string();
        assert!(e.contains("after waiting"), "{e}");
        // The holder lets go while the second waits: the second takes it.
        let waiter = {
            let p = p.clone();
            std::thread::spawn(move || ShardFile::open(&p, Some(Duration::from_secs(20))).map(|_| ()))
        };
        std::thread::sleep(Duration::from_millis(300));
        drop(held);
        waiter.join().unwrap().unwrap();
    }
}
