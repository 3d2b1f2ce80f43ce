//! Process-wide settings that running a model on CPU needs.

/// Tells glibc's allocator to keep freed memory for reuse.
///
/// Every tensor operation allocates its output, often megabytes. By default glibc
/// serves allocations over 128 KiB with `mmap` and unmaps them on free, so every
/// operation faults fresh pages in: about a quarter of an embedding pass went to
/// page faults (measured with `perf`, see the embedding benchmark). Raising the
/// mmap and trim thresholds keeps those buffers in the heap, to be reused by the
/// next operation. Call it once, at the start of a binary that embeds.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const THRESHOLD: libc::c_int = 512 << 20;
        // SAFETY: mallopt only adjusts allocator parameters; it is called before
        // any other thread exists and takes plain integers.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, THRESHOLD);
        }
    }
}
