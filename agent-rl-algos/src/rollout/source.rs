//! [`RolloutSource`]: where a GRPO generation step gets its episodes — the learner's own model
//! through [`AgentLoop`] ([`LocalRollouts`], the default), or another engine such as an
//! OpenAI-compatible inference server (`agent_rl::remote::RemoteRollouts` in the facade crate).

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{
    AgentLoop, AgentLoopConfig, ChatTokenizer, EnvironmentFactory, Episode, Qwen2ForCausalLm, Task,
    ToolCallParser,
};
use burn::tensor::backend::Backend;

use crate::error::Result;

/// What a trainer asks of a rollout source for one generation step.
pub struct RolloutRequest<'a, B: Backend> {
    /// The step's tasks; each runs `group_size` times, task-major (task 0's group first), and
    /// each [`Episode::task_index`] indexes this slice.
    pub tasks: &'a [Task],
    /// Episodes per task.
    pub group_size: usize,
    /// The policy as it is now (`model.valid()`), for sources that sample on the learner.
    pub policy: &'a Qwen2ForCausalLm<B>,
    /// The policy's tokenizer and chat template.
    pub tokenizer: &'a ChatTokenizer,
    /// The tool-call format of the model's output.
    pub parser: &'a dyn ToolCallParser,
    /// Sampling (seeded for this step), completion budget, turn and prompt limits.
    pub config: &'a AgentLoopConfig,
    /// Environments of multi-turn episodes; `None` = single-turn.
    pub environments: Option<&'a dyn EnvironmentFactory>,
}

/// The trainer's setup, checked by [`RolloutSource::validate`] when the trainer is built.
#[derive(Debug, Clone, Copy)]
pub struct RolloutSetup<'a> {
    /// The adapters' settings when training LoRA, `None` for full fine-tuning.
    pub lora: Option<&'a LoraConfig>,
    /// Whether episodes are multi-turn (an environment factory is set).
    pub multi_turn: bool,
}

/// Produces the episodes of GRPO's generation steps.
///
/// Episodes carry the sampled token ids exactly as sampled and, per completion token, the
/// sampler's log-probability ([`Episode::logprobs`]). A source whose sampler is not the learner
/// ([`Self::samples_elsewhere`]) gets the policy after every optimiser step through
/// [`Self::publish`], and the trainer recomputes the learner's log-probabilities of the sampled
/// tokens and corrects the mismatch with truncated importance sampling
/// ([`GrpoConfig::rollout_importance_sampling_cap`](crate::GrpoConfig::rollout_importance_sampling_cap)).
pub trait RolloutSource<B: Backend>: Send {
    /// Refuses a setup the source cannot serve, naming what to change.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`](crate::AlgoError::InvalidConfig) for an unsupported setup.
    fn validate(&self, setup: RolloutSetup<'_>) -> Result<()> {
        let _ = setup;
        Ok(())
    }

    /// Runs `request.group_size` episodes of every task.
    ///
    /// # Errors
    /// Generation, environment, template or transport failures.
    fn rollout(&mut self, request: RolloutRequest<'_, B>) -> Result<Vec<Episode>>;

    /// Whether the episodes are sampled by another engine than the learner (default `false`).
    fn samples_elsewhere(&self) -> bool {
        false
    }

    /// Hands the sampler the policy after `step` optimiser steps (before the first rollout too,
    /// with `step` = the steps done so far). Called only when [`Self::samples_elsewhere`].
    ///
    /// # Errors
    /// When the weights cannot be written or the sampler refuses them.
    fn publish(
        &mut self,
        policy: &Qwen2ForCausalLm<B>,
        lora: Option<&LoraConfig>,
        step: usize,
    ) -> Result<()> {
        let _ = (policy, lora, step);
        Ok(())
    }
}

/// The default rollout source: [`AgentLoop`] on the learner's own model (single- and
/// multi-turn, the key/value cache carried across turns).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalRollouts;

impl<B: Backend> RolloutSource<B> for LocalRollouts {
    fn rollout(&mut self, request: RolloutRequest<'_, B>) -> Result<Vec<Episode>> {
        let RolloutRequest {
            tasks,
            group_size,
            policy,
            tokenizer,
            parser,
            config,
            environments,
        } = request;
        Ok(
            AgentLoop::new(policy, tokenizer, parser, config.clone()).run(
                tasks,
                group_size,
                environments,
            )?,
        )
    }
}
