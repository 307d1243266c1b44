//! [`RemoteCustomers`]: τ-bench's simulated customers played by a model behind an
//! OpenAI-compatible endpoint (a strong model on vLLM or OpenAI while a local model is the
//! agent).

use std::path::Path;

use agent_rl_core::SamplingConfig;
use agent_rl_eval::EvalError;
use agent_rl_eval::tau::{Domain, LlmUser, UserSimulator, customer_prompt};

use super::RemotePolicy;

/// A factory of simulated customers (one per task and trial) answered by one endpoint; the
/// remote twin of [`agent_rl_eval::tau::LlmCustomers`], with the same prompt and seeds.
#[derive(Debug)]
pub struct RemoteCustomers {
    policy: RemotePolicy,
    template: String,
    sampling: SamplingConfig,
}

impl RemoteCustomers {
    /// Customers played through `policy` with the prompt template of the data folder `data`
    /// (the `user_simulator_prompt.txt` beside the domain folders), sampling with `sampling`
    /// (its seed is offset by `task * 1000 + trial` per episode).
    ///
    /// # Errors
    /// [`EvalError`] naming the domain folder or prompt file that cannot be found or read.
    pub fn load(
        policy: RemotePolicy,
        data: &Path,
        domain: Domain,
        sampling: SamplingConfig,
    ) -> Result<Self, EvalError> {
        Ok(Self {
            policy,
            template: customer_prompt(data, domain)?,
            sampling,
        })
    }

    /// The customer of episode (`task`, `trial`).
    pub fn customer(&self, task: usize, trial: usize) -> Box<dyn UserSimulator> {
        let sampling = SamplingConfig {
            seed: self.sampling.seed + (task * 1000 + trial) as u64,
            ..self.sampling.clone()
        };
        Box::new(LlmUser::new(
            self.policy.fork(),
            self.template.clone(),
            sampling,
        ))
    }
}
