//! Giving freed memory back to the operating system once a burst of work is
//! over. glibc keeps what a thread freed in that thread's arena for reuse;
//! after a burst of embedding spread over several threads, `octopus-bench
//! memory` found a third of the heap free but still resident. A memory
//! server often shares a small machine, so the worker hands it back when its
//! queue empties after a burst (`BURST` jobs or more since the last time):
//! milliseconds, and not after every message of a steady trickle.

/// Jobs done since the last release that make a burst.
pub const BURST: usize = 256;

/// How often memory is released all the same under a backlog that never
/// empties (a steady load above what the model embeds): the soak
/// (`octopus-bench soak`) saw a server's own memory grow for as long as its
/// queue stayed busy, more than half of it freed memory glibc kept.
pub const STEADY: std::time::Duration = std::time::Duration::from_secs(30);

/// Returns free heap pages to the system, where the allocator can.
pub fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: `malloc_trim` takes a plain integer, touches only the
    // allocator's own free lists under its own locks, and may be called from
    // any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Caps glibc's malloc arenas at two per core (its default is eight). Each
/// thread that allocates gets an arena, and memory freed in one is reused
/// only by the threads sharing it: under the soak's mixed load (requests,
/// the worker, the indexer, SQLite on blocking threads) fifteen arenas of
/// 64 MB each were full. Call once, at start, before the runtime's threads.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let arenas = libc::c_int::try_from(cores * 2).unwrap_or(libc::c_int::MAX);
        #[allow(unsafe_code)]
        // SAFETY: `mallopt` takes two plain integers and only sets the
        // allocator's parameter under its own lock; no pointer is involved.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
