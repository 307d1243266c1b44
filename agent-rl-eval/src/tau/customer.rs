//! [`LlmCustomers`]: τ-bench's simulated customers played by a local model — the prompt from the
//! data folder (`user_simulator_prompt.txt`) and a sampling seed per task and trial, as
//! `agent-rl eval tau run` plays them.

use std::path::Path;
use std::sync::Arc;

use agent_rl_core::{BurnPolicy, ChatTokenizer, Qwen2ForCausalLm, SamplingConfig};
use burn::tensor::backend::Backend;

use super::data::domain_dir;
use super::domain::Domain;
use super::user::{LlmUser, UserSimulator, load_user_prompt};
use crate::error::{EvalError, Result};

/// A factory of simulated customers (one per task and trial) backed by one model.
#[derive(Debug, Clone)]
pub struct LlmCustomers<B: Backend> {
    model: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    template: String,
    sampling: SamplingConfig,
}

impl<B: Backend> LlmCustomers<B> {
    /// Customers played by `policy`'s model with the prompt template of the data folder `data`
    /// (the `user_simulator_prompt.txt` beside the domain folders), sampling with `sampling`
    /// (its seed is offset by `task * 1000 + trial` per episode).
    ///
    /// # Errors
    /// [`EvalError`] naming the domain folder or prompt file that cannot be found or read.
    pub fn load(
        policy: &BurnPolicy<B>,
        data: &Path,
        domain: Domain,
        sampling: SamplingConfig,
    ) -> Result<Self> {
        Ok(Self {
            model: policy.model.clone(),
            tokenizer: Arc::clone(&policy.tokenizer),
            template: customer_prompt(data, domain)?,
            sampling,
        })
    }

    /// The customer of episode (`task`, `trial`).
    pub fn customer(&self, task: usize, trial: usize) -> Box<dyn UserSimulator>
    where
        B: 'static,
    {
        let sampling = SamplingConfig {
            seed: self.sampling.seed + (task * 1000 + trial) as u64,
            ..self.sampling.clone()
        };
        let policy = BurnPolicy::new(self.model.clone(), Arc::clone(&self.tokenizer));
        Box::new(LlmUser::new(policy, self.template.clone(), sampling))
    }
}

/// The customer prompt template of the data folder `data`: the `user_simulator_prompt.txt`
/// beside `domain`'s folder (see [`load_user_prompt`]).
///
/// # Errors
/// [`EvalError`] naming the domain folder or prompt file that cannot be found or read.
pub fn customer_prompt(data: &Path, domain: Domain) -> Result<String> {
    let dir = domain_dir(data, domain.as_str())?;
    let prompt = dir
        .parent()
        .map(|root| root.join("user_simulator_prompt.txt"))
        .ok_or_else(|| EvalError::Io {
            path: dir.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the domain folder has no parent holding user_simulator_prompt.txt",
            ),
        })?;
    load_user_prompt(&prompt)
}
