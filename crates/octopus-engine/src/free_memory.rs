//! Giving freed memory back to the operating system once a burst of work is
//! over. glibc keeps what a thread freed in that thread's arena for reuse;
//! after a burst of embedding spread over several threads, `octopus-bench
//! memory` found a third of the heap free but still resident. A memory
//! server often shares a small machine, so the worker hands it back when its
//! queue empties after a burst (`BURST` jobs or more since the last time):
//! milliseconds, and not after every message of a steady trickle.

/// Jobs done since the last release that make a burst.
pub const BURST: usize = 256;

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
