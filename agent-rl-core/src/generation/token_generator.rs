//! [`TokenGenerator`]: an engine that continues token contexts, so that
//! [`AgentLoop`](crate::AgentLoop) can sample its turns somewhere other than on the local model.

use super::{Generation, SamplingConfig};
use crate::error::CoreError;

/// Continues token contexts, token in / token out: the sampled ids come back exactly as
/// sampled, with one log-probability per sampled id under the sampler.
///
/// [`AgentLoop::with_generator`](crate::AgentLoop::with_generator) runs its turns on one — an
/// inference server through an OpenAI-compatible client (`agent_rl::remote::RemotePolicy` in the
/// facade crate), for instance — while the loop itself keeps the episode's tokens, steps the
/// environments and renders their replies as tokens.
pub trait TokenGenerator: Send + Sync {
    /// Samples a continuation of every context with `sampling` (its seed, budget, stop strings),
    /// ending at one of the tokenizer's eos ids (kept as the last id) or at the budget.
    ///
    /// # Errors
    /// Invalid sampling settings, or failures of the engine.
    fn generate_ids(
        &self,
        contexts: &[Vec<u32>],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Generation>, CoreError>;
}
