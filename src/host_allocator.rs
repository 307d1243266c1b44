//! Host-allocator settings for tensor workloads.
//!
//! A CPU training step allocates and frees hundreds of tensors of a few hundred KiB to tens of
//! MiB. Two allocator behaviours cost a CPU run dearly:
//!
//! - Giving freed pages back to the kernel. Every step then pays to fault in and zero the same
//!   memory again (`clear_page_erms` at the top of `perf` on the GRPO benchmark, with glibc's
//!   defaults and with mimalloc's default purge delay alike).
//! - Per-thread heaps that keep their own freed blocks. glibc's malloc serves each thread from
//!   one of up to eight arenas per core and never moves a freed block between them, so the peak
//!   resident set depends on which rayon worker happened to allocate what, and varies widely
//!   between identical runs.
//!
//! [`HostAllocator`] (mimalloc) has neither problem once [`tune_host_allocator`] turns its
//! purging off: identical runs peak within a few percent of each other, and the step is as fast
//! as with glibc (measurements in the book's experiment write-ups). A library cannot choose the
//! process's allocator, so the CLI and the examples install it and call [`tune_host_allocator`]
//! first; embedders may do the same:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: agent_rl::host_allocator::HostAllocator =
//!     agent_rl::host_allocator::HostAllocator;
//!
//! fn main() {
//!     let _applied = agent_rl::host_allocator::tune_host_allocator();
//! }
//! ```
//!
//! A process that keeps glibc's malloc still gets glibc's part of the tuning (its mmap and trim
//! thresholds raised so that freed tensor buffers stay in the heap), or may set
//! `MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_` / `MALLOC_ARENA_MAX` itself.

/// The global allocator the CLI and the examples install: mimalloc, whose freed blocks return to
/// shared pages rather than to per-thread arenas (see the module docs).
pub use mimalloc::MiMalloc as HostAllocator;

/// mimalloc's `mi_option_purge_delay`: milliseconds before freed memory is returned to the OS,
/// -1 for never. Its position in `mi_option_e` (`mimalloc.h`, v2 and v3: after
/// `mi_option_eager_commit_delay` = 14, before `mi_option_use_numa_nodes` = 16), which
/// `libmimalloc-sys` does not name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Largest block glibc accepts as mmap threshold (its `DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 * 1024 * 1024;

/// Freed memory kept before the heap top is returned to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = libc::c_int::MAX;

/// Keeps freed tensor buffers in the process for reuse: turns mimalloc's purging off (it
/// matters where [`HostAllocator`] is the global allocator) and raises glibc's mmap and trim
/// thresholds (where glibc's malloc serves allocations).
///
/// Returns whether glibc accepted its settings: `false` off glibc, or when glibc refused them.
/// Call it once at start-up, before the first tensor is allocated.
///
/// ```
/// let _applied = agent_rl::host_allocator::tune_host_allocator();
/// ```
pub fn tune_host_allocator() -> bool {
    // SAFETY: `mi_option_set` only stores an option value; -1 is the documented "never purge".
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only changes allocator parameters; both values are in glibc's
        // accepted ranges, and a refusal is reported as 0, not undefined behaviour.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Lets mimalloc return memory to the OS once it has stayed free for `delay_ms` milliseconds,
/// undoing [`tune_host_allocator`]'s "never" for a long-running service: its load comes in
/// bursts, and a spike of large request bodies must not stay resident for the process's life.
///
/// ```
/// agent_rl::host_allocator::return_freed_memory_after(0);
/// ```
pub fn return_freed_memory_after(delay_ms: u32) {
    // SAFETY: `mi_option_set` only stores an option value; a non-negative delay is valid.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, std::os::raw::c_long::from(delay_ms));
    }
}

#[cfg(test)]
mod tests {
    /// The option position names mimalloc's purge delay: its default is a positive number of
    /// milliseconds, and after tuning it reads -1 ("never").
    #[test]
    #[allow(unsafe_code)]
    fn tuning_turns_mimalloc_purging_off() {
        // SAFETY: reading and storing option values has no preconditions.
        let before = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert!(before > 0, "purge delay default {before}");
        super::tune_host_allocator();
        let after = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(after, -1);
    }
}
