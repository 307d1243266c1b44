//! [`RemoteRollouts`]: GRPO's episodes sampled on an OpenAI-compatible server, the policy
//! published to it after every optimiser step (the LoRA adapter, or the full weights).

use std::path::PathBuf;

use agent_rl_algos::{AlgoError, RolloutRequest, RolloutSetup, RolloutSource};
use agent_rl_core::generation::{FinishReason, Generation};
use agent_rl_core::lora::{LoraConfig, save_adapter};
use agent_rl_core::weights::{SaveOptions, save_pretrained};
use agent_rl_core::{AssistantTurn, CoreError, Episode, Qwen2ForCausalLm, Trajectory};
use burn::tensor::backend::Backend;

use super::config::RemoteConfig;
use super::policy::RemotePolicy;

/// The adapter name the policy is published under unless [`RemoteRollouts::with_adapter_name`]
/// says otherwise.
pub const DEFAULT_ADAPTER_NAME: &str = "agent-rl-policy";

/// A [`RolloutSource`] that samples GRPO's episodes on an OpenAI-compatible server (`agent-rl
/// serve --allow-runtime-lora` / `--allow-weight-updates`, vLLM with runtime LoRA updating,
/// SGLang), token in / token out.
///
/// - **Rollouts.** Each task's prompt is rendered here with the trainer's chat template (and
///   `max_prompt_length`, as the local agent loop does) and sent as token ids to
///   `POST /v1/completions`, one request per episode with seed `step seed + i`; the server's
///   sampled ids and log-probabilities become the episode as they are, never decoded and
///   re-encoded. The trainer then recomputes the learner's log-probabilities of those ids and
///   corrects the difference with truncated importance sampling
///   ([`GrpoConfig::rollout_importance_sampling_cap`](agent_rl_algos::GrpoConfig::rollout_importance_sampling_cap)).
/// - **Publishing.** Before the first rollout and after every update the trainer hands over the
///   policy. With LoRA, its adapters are written in PEFT's layout to `<publish_dir>/<adapter
///   name>` and the server is asked to load them under the adapter name (vLLM's
///   `/v1/load_lora_adapter`, which replaces an adapter of the same name); rollouts then name
///   the adapter as `model`. With full fine-tuning, the whole model is written as a Hugging Face
///   checkpoint to `<publish_dir>/<adapter name>-weights` (each file replaced atomically) and the
///   server is asked to swap its base weights for it (SGLang's `/update_weights_from_disk`,
///   answered by `agent-rl serve --allow-weight-updates`); rollouts keep naming the base model.
///   `publish_dir` must be readable by the server at the same path (same machine or a shared
///   file system). Writing full weights every step costs a checkpoint's size of disk traffic per
///   step: LoRA is the cheap path.
///
/// Limits: single-turn only — multi-turn episodes (an environment factory) are refused, since
/// the agent loop's turns (tool execution, observation tokens) run on the local model only
/// today.
#[derive(Debug)]
pub struct RemoteRollouts {
    client: RemotePolicy,
    adapter_name: String,
    publish_dir: PathBuf,
}

impl RemoteRollouts {
    /// Rollouts on the server of `config` (`config.model` = the served base model), publishing
    /// adapters under `publish_dir`.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for a bad config or an unset API key variable.
    pub fn new(config: &RemoteConfig, publish_dir: impl Into<PathBuf>) -> Result<Self, CoreError> {
        Ok(Self {
            client: RemotePolicy::new(config)?,
            adapter_name: DEFAULT_ADAPTER_NAME.into(),
            publish_dir: publish_dir.into(),
        })
    }

    /// Publishes the policy under `name` (default [`DEFAULT_ADAPTER_NAME`]).
    #[must_use]
    pub fn with_adapter_name(mut self, name: impl Into<String>) -> Self {
        self.adapter_name = name.into();
        self
    }

    /// The adapter name the policy is published under.
    pub fn adapter_name(&self) -> &str {
        &self.adapter_name
    }

    /// The HTTP client (e.g. to query the server outside of training).
    pub fn client(&self) -> &RemotePolicy {
        &self.client
    }

    /// One single-turn episode from a generation, as the local agent loop builds it.
    fn episode(
        request: &RolloutRequest<'_, impl Backend>,
        task_index: usize,
        prompt: Vec<u32>,
        mut generation: Generation,
    ) -> Result<Episode, CoreError> {
        let task = &request.tasks[task_index];
        let budget = request.config.sampling.max_new_tokens;
        if generation.token_ids.len() > budget {
            generation.token_ids.truncate(budget);
            generation.logprobs.truncate(budget);
            generation.finish_reason = FinishReason::Length;
        }
        let text = request.tokenizer.decode(&generation.token_ids, true)?;
        let parsed = request.parser.parse(&text);
        let generated = generation.token_ids.len();
        let prompt_len = prompt.len();
        let mut token_ids = prompt;
        token_ids.extend_from_slice(&generation.token_ids);
        let truncated = generation.finish_reason == FinishReason::Length;
        Ok(Episode {
            task_index,
            token_ids,
            prompt_len,
            policy_mask: vec![true; generated],
            logprobs: generation.logprobs,
            truncated,
            trajectory: Trajectory {
                task_id: task.id.clone(),
                tools: task.tools.clone(),
                prompt: task.messages.clone(),
                turns: vec![AssistantTurn {
                    text,
                    parsed,
                    finish_reason: generation.finish_reason,
                    num_tokens: generated,
                    observations: Vec::new(),
                }],
                max_new_tokens: budget,
                environment_reward: None,
            },
        })
    }
}

/// The error of a setup remote rollouts cannot serve.
fn refused(field: &str, reason: &str) -> AlgoError {
    AlgoError::InvalidConfig {
        field: field.into(),
        reason: reason.into(),
    }
}

impl<B: Backend> RolloutSource<B> for RemoteRollouts {
    fn validate(&self, setup: RolloutSetup<'_>) -> agent_rl_algos::Result<()> {
        if setup.multi_turn {
            return Err(refused(
                "environment",
                "remote rollouts are single-turn: the multi-turn agent loop (tool execution, \
                 observation tokens) runs on the local model only; drop with_environment or use \
                 local rollouts",
            ));
        }
        Ok(())
    }

    fn rollout(&mut self, request: RolloutRequest<'_, B>) -> agent_rl_algos::Result<Vec<Episode>> {
        if request.environments.is_some() {
            return Err(refused(
                "environment",
                "remote rollouts are single-turn (see RemoteRollouts)",
            ));
        }
        let mut prompts = Vec::with_capacity(request.tasks.len() * request.group_size);
        let mut task_of = Vec::with_capacity(prompts.capacity());
        for (task_index, task) in request.tasks.iter().enumerate() {
            let mut prompt = request
                .tokenizer
                .encode_chat(&task.messages, &task.tools, true)?;
            if let Some(limit) = request.config.max_prompt_length
                && prompt.len() > limit
            {
                prompt.drain(..prompt.len() - limit);
            }
            for _ in 0..request.group_size {
                prompts.push(prompt.clone());
                task_of.push(task_index);
            }
        }
        let generations = self
            .client
            .complete_ids(&prompts, &request.config.sampling)?;
        let mut episodes = Vec::with_capacity(generations.len());
        for ((prompt, task_index), generation) in prompts.into_iter().zip(task_of).zip(generations)
        {
            episodes.push(Self::episode(&request, task_index, prompt, generation)?);
        }
        Ok(episodes)
    }

    fn samples_elsewhere(&self) -> bool {
        true
    }

    fn publish(
        &mut self,
        policy: &Qwen2ForCausalLm<B>,
        lora: Option<&LoraConfig>,
        step: usize,
    ) -> agent_rl_algos::Result<()> {
        match lora {
            Some(lora) => {
                let dir = self.publish_dir.join(&self.adapter_name);
                save_adapter(policy, lora, None, &dir)?;
                self.client.load_lora_adapter(&self.adapter_name, &dir)?;
                self.client.set_model(self.adapter_name.clone());
            }
            None => {
                let dir = self
                    .publish_dir
                    .join(format!("{}-weights", self.adapter_name));
                save_pretrained(policy, &dir, SaveOptions::default())?;
                self.client.update_weights_from_disk(&dir)?;
            }
        }
        tracing::debug!(step, adapter = %self.adapter_name, "published the policy to the rollout server");
        Ok(())
    }
}
