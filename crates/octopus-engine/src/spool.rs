//! A dump written to a file of its own before it is sent.
//!
//! A store reads a dump from one snapshot: on SQLite an open read
//! transaction, which keeps the write-ahead log from being emptied, and on
//! PostgreSQL one that holds back vacuum. Were the records handed straight
//! to the client, a client that reads slowly (or not at all) would hold
//! that snapshot open for as long as it liked. Written to a spool file
//! first, the snapshot lasts as long as reading the data does; the client
//! then reads the file at its own pace. The file has no name on disk: it is
//! unlinked as soon as it is made, and its space is freed when the export
//! ends, however it ends.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};

/// The spool's writing end, for the store's sink: one record a line.
pub(crate) struct SpoolWriter {
    out: BufWriter<File>,
    failed: Option<std::io::Error>,
}

/// Makes a spool file in the system's temporary folder: the writer, and a
/// handle to read it back from the start.
pub(crate) fn spool() -> std::io::Result<(SpoolWriter, File)> {
    spool_in(&std::env::temp_dir())
}

fn spool_in(folder: &std::path::Path) -> std::io::Result<(SpoolWriter, File)> {
    let path = folder.join(format!(
        "octopus-export-{}.jsonl",
        uuid::Uuid::now_v7().simple()
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    // Nameless from here on: nothing is left behind by a crash or a panic.
    std::fs::remove_file(&path)?;
    let reader = file.try_clone()?;
    Ok((
        SpoolWriter {
            out: BufWriter::new(file),
            failed: None,
        },
        reader,
    ))
}

impl SpoolWriter {
    /// Writes one line; false once writing failed (a full disk), so the
    /// store stops reading.
    pub(crate) fn line(&mut self, line: &str) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if let Err(error) = self.out.write_all(line.as_bytes()) {
            self.failed = Some(error);
            return false;
        }
        true
    }

    /// Flushes what is buffered, and says whether every line was written.
    pub(crate) fn finish(&mut self) -> std::io::Result<()> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        self.out.flush()
    }
}

/// The writer, shared between a store's sink and the export that made it.
pub(crate) fn lock(
    writer: &std::sync::Mutex<SpoolWriter>,
) -> std::sync::MutexGuard<'_, SpoolWriter> {
    writer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads the spool back from its start, handing each line (with its
/// newline) to `send` until it returns false (the client went away).
pub(crate) fn read_back(
    mut file: File,
    mut send: impl FnMut(String) -> bool,
) -> std::io::Result<()> {
    file.rewind()?;
    let mut lines = BufReader::new(file);
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line)? == 0 || !send(line) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_back_in_order_and_the_file_has_no_name() {
        let folder = tempfile::tempdir().unwrap();
        let (mut writer, reader) = spool_in(folder.path()).unwrap();
        assert_eq!(
            std::fs::read_dir(folder.path()).unwrap().count(),
            0,
            "unlinked as soon as made"
        );
        for line in ["{\"a\":1}\n", "{\"b\":\"two\"}\n", "{\"c\":[3]}\n"] {
            assert!(writer.line(line));
        }
        writer.finish().unwrap();
        let mut read = Vec::new();
        read_back(reader, |line| {
            read.push(line);
            true
        })
        .unwrap();
        assert_eq!(read, ["{\"a\":1}\n", "{\"b\":\"two\"}\n", "{\"c\":[3]}\n"]);
    }

    #[test]
    fn reading_back_stops_when_the_client_goes_away() {
        let (mut writer, reader) = spool().unwrap();
        for n in 0..10 {
            assert!(writer.line(&format!("{n}\n")));
        }
        writer.finish().unwrap();
        let mut taken = 0;
        read_back(reader, |_| {
            taken += 1;
            taken < 3
        })
        .unwrap();
        assert_eq!(taken, 3);
    }
}
