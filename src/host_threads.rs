//! Which thread drives the work: a worker of the compute pool, not the process's main thread.
//!
//! On the CPU backend every parallel kernel (matrix products, the fused row kernels, decoding
//! shards, the reference scored beside the policy) runs on rayon's global pool, one worker per
//! core. A trainer driven from the main thread hands each of the hundreds of parallel loops of a
//! step to those workers from outside the pool and sleeps until they finish, and runs the step's
//! serial parts (autodiff bookkeeping, the optimiser, small tensor ops) as one more thread beside
//! workers that spin before they sleep. Driven from a worker, the serial parts and the loops take
//! turns on the pool's own threads, which makes short steps measurably faster (`bench_grpo`; the
//! figures are in the book's experiment write-ups).
//!
//! A library cannot move its caller onto another thread, so the CLI and the examples call
//! [`on_compute_pool`] first, after [`crate::host_allocator::tune_host_allocator`]; embedders
//! may do the same:
//!
//! ```
//! fn run() -> Result<usize, String> {
//!     // Build the trainer and train here.
//!     Ok(2 + 2)
//! }
//!
//! assert_eq!(agent_rl::host_threads::on_compute_pool(run), Ok(4));
//! ```

/// Runs `work` on a worker thread of rayon's global pool (the pool the CPU kernels use), blocks
/// the calling thread until it returns, and returns its result; a panic in `work` resumes on the
/// caller. Called from a worker already, `work` runs in place.
///
/// The pool's threads must stay free for computing: do not call this around a long-lived
/// server loop (`agent-rl serve` keeps its own threads).
pub fn on_compute_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    let mut result = None;
    rayon::scope(|_| result = Some(work()));
    result.expect("rayon::scope returns only after its closure has run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_a_pool_worker_and_returns_its_value() {
        assert_eq!(
            rayon::current_thread_index(),
            None,
            "tests run off the pool"
        );
        let (value, worker) = on_compute_pool(|| (7, rayon::current_thread_index()));
        assert_eq!(value, 7);
        assert!(worker.is_some(), "the work ran on a worker of the pool");
        let nested = on_compute_pool(|| on_compute_pool(|| 1) + 1);
        assert_eq!(nested, 2);
    }

    #[test]
    fn a_panic_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| on_compute_pool(|| panic!("boom")));
        assert!(caught.is_err());
    }
}
