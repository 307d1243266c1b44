//! Host-allocator settings for tensor workloads on glibc.
//!
//! A CPU training step allocates and frees hundreds of tensors of a few hundred KiB to tens of
//! MiB. glibc's defaults serve each of them with a fresh `mmap` and give the pages back on
//! `free`, so every step pays the kernel to fault in and zero the same memory again: on the GRPO
//! benchmark that was a third of the step (`clear_page_erms` at the top of `perf`). Raising the
//! mmap and trim thresholds keeps freed blocks in the heap for reuse. A library cannot choose
//! the process's allocator, so the binaries and examples call [`tune_host_allocator`] first;
//! embedders may do the same, or set `MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_`.

/// Largest block glibc accepts as mmap threshold (its `DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 * 1024 * 1024;

/// Freed memory kept before the heap top is returned to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = libc::c_int::MAX;

/// Keeps freed tensor buffers (up to 32 MiB each) in the heap instead of unmapping them.
///
/// Returns whether the settings were applied: `false` off glibc, or when glibc refused them.
/// Call it once at start-up, before the first tensor is allocated.
///
/// ```
/// let _applied = agent_rl::host_allocator::tune_host_allocator();
/// ```
pub fn tune_host_allocator() -> bool {
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
