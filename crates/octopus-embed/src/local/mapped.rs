//! The model's weights file mapped into memory, read-only.
//!
//! The word embeddings are half of MiniLM's weights (47 MB in f32), and a
//! text touches only the rows of its tokens: read from the mapping, a row
//! costs resident memory only once a text has used it, and the kernel can
//! take it back. The other weights are copied out at load (each forward pass
//! reads all of them anyway), after which the pages the load read are let go.

#![allow(unsafe_code)]

use std::path::Path;

use octopus_core::embedding::EmbedError;

/// A file's bytes, mapped.
pub struct MappedFile(memmap2::Mmap);

impl MappedFile {
    pub fn open(path: &Path) -> Result<Self, EmbedError> {
        let fail = |e: std::io::Error| EmbedError::Model(format!("map {}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(fail)?;
        // SAFETY: a mapping shows later writes to the file, and reading it
        // after the file shrank faults. Model files are written once, by the
        // setup that installs a model folder, and replaced only by writing a
        // new folder; nothing writes to one in place while a server runs.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(fail)?;
        Ok(Self(map))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Drops the pages read so far from this process's resident memory; a
    /// page touched again is read back from the kernel's page cache (or the
    /// file). Failing only costs memory, so a failure is logged.
    pub fn release_pages(&self) {
        // SAFETY: DONTNEED on a read-only private file mapping discards no
        // data: its pages are clean copies of the file, read again on access.
        let released = unsafe { self.0.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        if let Err(error) = released {
            tracing::debug!(%error, "releasing the model file's pages failed");
        }
    }
}
