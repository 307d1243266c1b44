//! [`RemoteRollouts`]: GRPO's episodes sampled on an OpenAI-compatible server, the policy
//! published to it after every optimiser step (the LoRA adapter, or the full weights).

use std::path::PathBuf;

use agent_rl_algos::{RolloutRequest, RolloutSource};
use agent_rl_core::lora::{LoraConfig, save_adapter};
use agent_rl_core::weights::{SaveOptions, save_pretrained};
use agent_rl_core::{AgentLoop, CoreError, Episode, Qwen2ForCausalLm};
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
/// - **Rollouts.** The trainer's [`AgentLoop`] runs here with the server as its sampler
///   ([`AgentLoop::with_generator`]): each turn, every live episode's token sequence (the
///   prompt rendered with the trainer's chat template, then the turns so far) goes as token
///   ids to `POST /v1/completions`, one request per episode with seed `turn seed + i`; the
///   server's sampled ids and log-probabilities join the episode as they are, never decoded
///   and re-encoded. Multi-turn episodes work as locally: tool calls run in the trainer's
///   environments and their replies are appended as masked tokens before the next request
///   (the server re-reads the whole sequence each turn; no cache survives between requests).
///   The trainer then recomputes the learner's log-probabilities of those ids and
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
}

impl<B: Backend> RolloutSource<B> for RemoteRollouts {
    fn rollout(&mut self, request: RolloutRequest<'_, B>) -> agent_rl_algos::Result<Vec<Episode>> {
        let RolloutRequest {
            tasks,
            group_size,
            policy,
            tokenizer,
            parser,
            config,
            environments,
        } = request;
        Ok(AgentLoop::new(policy, tokenizer, parser, config.clone())
            .with_generator(&self.client)
            .run(tasks, group_size, environments)?)
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
