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

/// Fixes the model's thread count for the life of the process, when the
/// environment does not (`RAYON_NUM_THREADS`, or candle's `CANDLE_CPU_MASK`).
///
/// candle asks for its thread count at every matrix multiplication, and
/// without either variable it counts the physical cores again by reading
/// `/proc/cpuinfo`: some forty reads per query embedded, about 3 ms of a
/// 12 ms recall by meaning on the 2-core machine (`octopus-bench locomo`,
/// vector p50 14.3–14.7 ms without, 11.6–11.7 ms with, runs alternated).
/// This sets `RAYON_NUM_THREADS` to the count candle would find (the physical
/// cores), so that the answer is read from the environment instead. Call it
/// once, at the start of a binary, before any other thread exists.
pub fn settle_thread_count() {
    let set = |name| std::env::var_os(name).is_some();
    if set("RAYON_NUM_THREADS") || set("CANDLE_CPU_MASK") {
        return;
    }
    let cores = num_cpus::get_physical().max(1);
    // SAFETY: called before any other thread exists, so nothing reads the
    // environment while it changes.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", cores.to_string());
    }
}
