//! One process at a time holds a data directory. Each process keeps its own
//! vector indexes, caches and memory worker over the files there, and SQLite
//! allows only one writer: a second process on the same files would work
//! from copies that the first one's writes leave stale.
//!
//! The lock is an advisory lock on `octopus.lock` in the directory, held for
//! the life of the process that took it and released by the system when the
//! process ends, however it ends: a crash leaves no stale lock. The file
//! holds the holder's process id, for the message a second process gives.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::settings::{StorageBackend, VectorBackend};
use crate::{AppConfig, Error, Result};

/// The lock file's name in the data directory.
pub const LOCK_FILE: &str = "octopus.lock";

/// How long a process waits for a data directory whose holder may be on its
/// way out (the previous run of a command, still closing).
const WAIT_FOR_HOLDER: Duration = Duration::from_secs(3);

/// A data directory held by this process, until dropped.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    dir: PathBuf,
}

impl DataDirLock {
    /// Takes the data directory of `config` when the process keeps anything
    /// there (SQLite's files, or the embedded vector index); `None` when all
    /// of its data is on servers (PostgreSQL with pgvector or Qdrant), which
    /// any number of processes share.
    pub fn for_config(config: &AppConfig) -> Result<Option<Self>> {
        let embedded_vectors = match config.vectors.backend {
            Some(backend) => backend == VectorBackend::Embedded,
            None => config.storage.backend == StorageBackend::Sqlite,
        };
        if config.storage.backend == StorageBackend::Sqlite || embedded_vectors {
            return Self::acquire(&config.storage.data_dir).map(Some);
        }
        Ok(None)
    }

    /// Takes `dir`, creating it when missing. Fails with
    /// [`Error::DataDirInUse`] naming the holder's process id when another
    /// process holds it.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let failed = |source: std::io::Error| Error::OpenStore(Box::new(source));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(failed)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < WAIT_FOR_HOLDER => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::DataDirInUse {
                        dir: dir.to_path_buf(),
                        pid: holder(&mut file),
                    });
                }
                Err(TryLockError::Error(error)) => return Err(failed(error)),
            }
        }
        file.set_len(0).map_err(failed)?;
        file.seek(SeekFrom::Start(0)).map_err(failed)?;
        writeln!(file, "{}", std::process::id()).map_err(failed)?;
        file.flush().map_err(failed)?;
        Ok(Self {
            _file: file,
            dir: dir.to_path_buf(),
        })
    }

    /// The directory held.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The process id the holder wrote, when it can be read.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_is_refused_naming_the_holder_and_free_once_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = DataDirLock::acquire(dir.path()).unwrap();
        match DataDirLock::acquire(dir.path()) {
            Err(Error::DataDirInUse { pid, dir: named }) => {
                assert_eq!(pid, Some(std::process::id()));
                assert_eq!(named, dir.path());
            }
            other => panic!("expected DataDirInUse, got {other:?}"),
        }
        drop(held);
        let again = DataDirLock::acquire(dir.path()).unwrap();
        assert_eq!(again.dir(), dir.path());
    }

    #[test]
    fn only_a_configuration_that_keeps_data_in_the_directory_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = AppConfig::in_dir(dir.path(), Default::default());
        let sqlite = DataDirLock::for_config(&config).unwrap();
        assert!(sqlite.is_some());
        drop(sqlite);
        config.storage.backend = StorageBackend::Postgres;
        assert!(
            DataDirLock::for_config(&config).unwrap().is_none(),
            "pgvector keeps nothing there"
        );
        config.vectors.backend = Some(VectorBackend::Embedded);
        assert!(
            DataDirLock::for_config(&config).unwrap().is_some(),
            "the embedded index does"
        );
    }
}
