//! How the pipeline runs a reinforcement-learning stage: GRPO and PPO take the same inputs
//! ([`RlStage`]) through the same builder calls, so one function drives both trainers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl_core::{EnvironmentFactory, Qwen2ForCausalLm, Task};
use agent_rl_rewards::Reward;
use burn::tensor::backend::AutodiffBackend;

use super::run_dir::RunDirectory;
use super::stage::RlStage;
use crate::error::Result;
use crate::grpo::{GrpoTrainer, GrpoTrainerBuilder};
use crate::ppo::{PpoTrainer, PpoTrainerBuilder};
use crate::rollout::TrainReport;

/// The builder calls a pipeline makes on a GRPO or PPO trainer builder.
pub(super) trait RlTrainerBuilder<B: AutodiffBackend>: Sized {
    /// `add_reward`.
    fn add_boxed_reward(self, reward: Box<dyn Reward>) -> Self;
    /// `with_environment` with a shared factory.
    fn with_shared_environment(self, factory: Arc<dyn EnvironmentFactory>) -> Self;
    /// `with_checkpointing`.
    fn checkpoint_into(self, dir: &Path, every_steps: usize) -> Self;
    /// `with_resume_from`.
    fn resume_from(self, dir: PathBuf) -> Self;
    /// Builds the trainer, trains on `tasks` and returns the trained policy.
    fn build_and_train(self, tasks: &[Task]) -> Result<(Qwen2ForCausalLm<B>, TrainReport)>;
}

macro_rules! rl_trainer_builder {
    ($builder:ident, $trainer:ident) => {
        impl<B: AutodiffBackend> RlTrainerBuilder<B> for $builder<B> {
            fn add_boxed_reward(self, reward: Box<dyn Reward>) -> Self {
                self.add_reward(reward)
            }
            fn with_shared_environment(self, factory: Arc<dyn EnvironmentFactory>) -> Self {
                self.with_environment(move || factory.create())
            }
            fn checkpoint_into(self, dir: &Path, every_steps: usize) -> Self {
                self.with_checkpointing(dir, every_steps)
            }
            fn resume_from(self, dir: PathBuf) -> Self {
                self.with_resume_from(dir)
            }
            fn build_and_train(
                self,
                tasks: &[Task],
            ) -> Result<(Qwen2ForCausalLm<B>, TrainReport)> {
                let mut trainer: $trainer<B> = self.build()?;
                let report = trainer.train(tasks)?;
                Ok((trainer.into_model(), report))
            }
        }
    };
}

rl_trainer_builder!(GrpoTrainerBuilder, GrpoTrainer);
rl_trainer_builder!(PpoTrainerBuilder, PpoTrainer);

/// Gives `builder` (already holding the stage's config, LoRA setting and observer) the stage's
/// rewards — then `learned`, the pipeline's reward model, when given — environment,
/// checkpointing and resume point, and trains on the stage's tasks.
pub(super) fn run_rl<B: AutodiffBackend, C>(
    mut builder: impl RlTrainerBuilder<B>,
    stage: RlStage<C>,
    learned: Option<Box<dyn Reward>>,
    run_dir: Option<&RunDirectory>,
    resume_from: Option<PathBuf>,
) -> Result<(Qwen2ForCausalLm<B>, TrainReport)> {
    for reward in stage.rewards.into_iter().chain(learned) {
        builder = builder.add_boxed_reward(reward);
    }
    if let Some(factory) = stage.environments {
        builder = builder.with_shared_environment(factory);
    }
    if let (Some(run), Some(every)) = (run_dir, stage.checkpoint_every) {
        builder = builder.checkpoint_into(run.path(), every);
    }
    if let Some(dir) = resume_from {
        builder = builder.resume_from(dir);
    }
    builder.build_and_train(&stage.tasks)
}
