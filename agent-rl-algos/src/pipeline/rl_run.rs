//! How the pipeline runs a reinforcement-learning stage: GRPO and PPO take the same inputs
//! ([`RlStage`]) through the same builder calls, so one function drives both trainers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl_core::{EnvironmentFactory, Qwen2ForCausalLm, Task};
use agent_rl_rewards::Reward;
use burn::tensor::backend::AutodiffBackend;

use super::evaluator::Evaluator;
use super::run_dir::RunDirectory;
use super::stage::RlStage;
use crate::curriculum::CurriculumSampler;
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
    /// Builds the trainer, trains on `tasks` (or on draws from `curriculum` when given) and
    /// returns the trained policy and the evaluator the trainer was lent, if any.
    fn build_and_train(
        self,
        tasks: &[Task],
        curriculum: Option<CurriculumSampler<Task>>,
    ) -> Result<Trained<B>>;
}

/// The evaluator a pipeline holds, lent to a GRPO stage that evaluates during training.
pub(super) type LentEvaluator<B> = Option<Box<dyn Evaluator<<B as AutodiffBackend>::InnerBackend>>>;

/// What a trainer hands back to the pipeline.
pub(super) struct Trained<B: AutodiffBackend> {
    model: Qwen2ForCausalLm<B>,
    report: TrainReport,
    evaluator: LentEvaluator<B>,
}

macro_rules! rl_trainer_builder {
    ($builder:ident, $trainer:ident, $take_evaluator:expr) => {
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
                curriculum: Option<CurriculumSampler<Task>>,
            ) -> Result<Trained<B>> {
                let mut trainer: $trainer<B> = self.build()?;
                let report = match curriculum {
                    Some(mut sampler) => trainer.train_curriculum(&mut sampler),
                    None => trainer.train(tasks),
                };
                let evaluator = $take_evaluator(&mut trainer);
                let report = report?;
                Ok(Trained {
                    model: trainer.into_model(),
                    report,
                    evaluator,
                })
            }
        }
    };
}

rl_trainer_builder!(GrpoTrainerBuilder, GrpoTrainer, GrpoTrainer::take_evaluator);
rl_trainer_builder!(PpoTrainerBuilder, PpoTrainer, |_: &mut PpoTrainer<B>| None);

/// Gives `builder` (already holding the stage's config, LoRA setting and observer) the stage's
/// rewards — then `learned`, the pipeline's reward model, when given — environment,
/// checkpointing and resume point, and trains on the stage's tasks or curriculum. An evaluator
/// the trainer was lent is put back into `evaluator`.
pub(super) fn run_rl<B: AutodiffBackend, C>(
    mut builder: impl RlTrainerBuilder<B>,
    stage: RlStage<C>,
    learned: Option<Box<dyn Reward>>,
    run_dir: Option<&RunDirectory>,
    resume_from: Option<PathBuf>,
    evaluator: &mut LentEvaluator<B>,
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
    let trained = builder.build_and_train(&stage.tasks, stage.curriculum)?;
    if trained.evaluator.is_some() {
        *evaluator = trained.evaluator;
    }
    Ok((trained.model, trained.report))
}
