//! The process set-up every tuned bench `main` runs first.

/// Turns the allocator's purging off and runs `work` on a worker of the compute pool
/// (`agent_rl::host_allocator`, `agent_rl::host_threads`), returning its result.
pub fn run_tuned<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    agent_rl::host_allocator::tune_host_allocator();
    agent_rl::host_threads::on_compute_pool(work)
}
