//! [`Pipeline`]: the one place where a training run is orchestrated — evaluate, run each stage
//! (SFT, reward model, GRPO, PPO), evaluate after each that trains the policy, keep the run directory, resume from the last
//! checkpoint. The CLI, the examples and the learning tests all run through it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_rl_core::weights::LoadOptions;
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm, Qwen2ForSequenceClassification};
use agent_rl_rewards::{LearnedReward, Reward};
use burn::module::{AutodiffModule, Module};
use burn::tensor::backend::AutodiffBackend;
use serde_json::{Map, Value};

use super::evaluator::Evaluator;
use super::metrics_log::MetricsLog;
use super::observer::PipelineObserver;
use super::report::{PipelineReport, StageReport};
use super::rl_run::run_rl;
use super::run_dir::{RunDirectory, SUMMARY_FILE};
use super::stage::{RewardModelStage, SftStage, Stage};
use crate::error::{AlgoError, Result};
use crate::evaluate::ToolUseScores;
use crate::grpo::GrpoTrainer;
use crate::metrics::StepMetrics;
use crate::ppo::{PpoTrainer, critic_from_policy, fresh_copy};
use crate::reward_model::{RewardModelScorer, RewardReport, RewardTrainer};
use crate::rollout::RolloutSource;
use crate::run_identity::{claim_fresh_run_dir, read_run_id};
use crate::sft::SftTrainer;

type SharedObserver = Arc<Mutex<Box<dyn PipelineObserver>>>;

/// A training run: stages in order, held-out evaluation before, between and after them, and
/// an optional run directory (resolved config, metrics, `summary.json`, reward curve,
/// checkpoints, `final_model/`).
///
/// ```
/// use agent_rl_algos::pipeline::{GrpoStage, Pipeline, SftStage, ToolUseEvaluator};
/// use agent_rl_algos::toy::{toy_model_config, toy_sft_dataset, toy_tasks, toy_tokenizer};
/// use agent_rl_algos::{GrpoConfig, SftConfig};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_rewards::ToolUseReward;
/// use burn::backend::{Autodiff, Flex};
///
/// let model = random_model::<Autodiff<Flex>>(&toy_model_config(), 0, 0.05, &Default::default())?;
/// let tasks = toy_tasks(8, 0);
/// let report = Pipeline::builder(model, toy_tokenizer()?)
///     .add_stage(SftStage::new(
///         SftConfig { max_steps: Some(1), batch_size: 2, eval_fraction: 0.0, ..SftConfig::default() },
///         toy_sft_dataset(&tasks),
///     ))
///     .add_stage(
///         GrpoStage::new(
///             GrpoConfig { num_generations: 2, prompts_per_step: 1, max_steps: 1, ..GrpoConfig::default() }
///                 .with_max_completion_length(8),
///             tasks,
///         )
///         .add_reward(ToolUseReward::default()),
///     )
///     .with_evaluator(ToolUseEvaluator::new(toy_tasks(2, 1000), 8))
///     .build()?
///     .run()?;
/// let points: Vec<&str> = report.scores.iter().map(|(point, _)| point.as_str()).collect();
/// assert_eq!(points, ["before", "after_sft", "after"]);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub struct Pipeline<B: AutodiffBackend> {
    model: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    stages: Vec<Stage>,
    evaluator: Option<Box<dyn Evaluator<B::InnerBackend>>>,
    rollout_source: Option<Box<dyn RolloutSource<B::InnerBackend>>>,
    run_dir: Option<PathBuf>,
    resume: bool,
    overwrite: bool,
    config_record: Option<Value>,
    observer: Box<dyn PipelineObserver>,
}

/// Assembles a [`Pipeline`]; [`Self::build`] validates every stage.
pub struct PipelineBuilder<B: AutodiffBackend>(Pipeline<B>);

impl<B: AutodiffBackend> std::fmt::Debug for Pipeline<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("stages", &self.stages)
            .field("evaluator", &self.evaluator.is_some())
            .field("rollout_source", &self.rollout_source.is_some())
            .field("run_dir", &self.run_dir)
            .field("resume", &self.resume)
            .field("overwrite", &self.overwrite)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> std::fmt::Debug for PipelineBuilder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<B: AutodiffBackend> PipelineBuilder<B> {
    /// Appends a stage ([`SftStage`], [`RewardModelStage`], [`GrpoStage`](super::GrpoStage),
    /// [`PpoStage`](super::PpoStage)).
    #[must_use]
    pub fn add_stage(mut self, stage: impl Into<Stage>) -> Self {
        self.0.stages.push(stage.into());
        self
    }

    /// Evaluates the model before the first stage and after each one.
    #[must_use]
    pub fn with_evaluator(mut self, evaluator: impl Evaluator<B::InnerBackend> + 'static) -> Self {
        self.0.evaluator = Some(Box::new(evaluator));
        self
    }

    /// Samples the GRPO stage's episodes with `source` instead of on the learner (see
    /// [`GrpoTrainerBuilder::with_rollout_source`](crate::GrpoTrainerBuilder::with_rollout_source);
    /// e.g. `agent_rl::remote::RemoteRollouts`, rollouts on an inference server). It belongs to
    /// the pipeline rather than to the stage because it works on the pipeline's backend; a
    /// pipeline has at most one GRPO stage, so there is no doubt which stage it serves.
    #[must_use]
    pub fn with_rollout_source(
        mut self,
        source: impl RolloutSource<B::InnerBackend> + 'static,
    ) -> Self {
        self.0.rollout_source = Some(Box::new(source));
        self
    }

    /// Writes the run directory `dir` (created if needed).
    #[must_use]
    pub fn with_run_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.0.run_dir = Some(dir.into());
        self
    }

    /// Continues the run in the run directory from its newest checkpoint: stages before the
    /// checkpointed one are skipped (their scores stay in `summary.json`), the metrics are cut
    /// back to the checkpoint's step.
    #[must_use]
    pub fn with_resume(mut self, resume: bool) -> Self {
        self.0.resume = resume;
        self
    }

    /// Lets a fresh run clear the run directory of an earlier run's checkpoints, metrics and
    /// models; without it a fresh run refuses a directory holding them (see
    /// [`claim_fresh_run_dir`]).
    #[must_use]
    pub fn with_overwrite(mut self, overwrite: bool) -> Self {
        self.0.overwrite = overwrite;
        self
    }

    /// The resolved configuration to record as `config.json` (`config.resumed.json` when
    /// resuming, so the original stays).
    #[must_use]
    pub fn with_config_record(mut self, record: Value) -> Self {
        self.0.config_record = Some(record);
        self
    }

    /// Reports progress to `observer`.
    #[must_use]
    pub fn with_observer(mut self, observer: impl PipelineObserver + 'static) -> Self {
        self.0.observer = Box::new(observer);
        self
    }

    /// Checks the stages and settings.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] / [`AlgoError::InvalidInput`] naming the stage field: no
    /// stage, two stages of one kind (their metrics files would collide), a stage's invalid
    /// config, a stage scoring with the learned reward and no reward-model stage before it,
    /// resuming without a run directory or without a checkpointing GRPO or PPO stage, a
    /// rollout source without a GRPO stage to sample for. (The source checks the GRPO stage's
    /// setup when its trainer is built.)
    pub fn build(self) -> Result<Pipeline<B>> {
        let pipeline = self.0;
        if pipeline.stages.is_empty() {
            return Err(AlgoError::input("stages", "add at least one stage"));
        }
        if pipeline.rollout_source.is_some()
            && !pipeline.stages.iter().any(|s| matches!(s, Stage::Grpo(_)))
        {
            return Err(AlgoError::input(
                "rollout_source",
                "no GRPO stage to sample for (a rollout source serves the GRPO stage)",
            ));
        }
        for (index, stage) in pipeline.stages.iter().enumerate() {
            stage.validate()?;
            if pipeline.stages[..index]
                .iter()
                .any(|s| s.name() == stage.name())
            {
                return Err(AlgoError::input(
                    "stages",
                    format!(
                        "two `{}` stages: their metrics files would collide",
                        stage.name()
                    ),
                ));
            }
            let trained_before = pipeline.stages[..index]
                .iter()
                .any(|s| matches!(s, Stage::RewardModel(_)));
            if stage.uses_learned_reward() && !trained_before {
                return Err(AlgoError::input(
                    format!("{}.learned_reward", stage.name()),
                    "no reward_model stage before it trains the reward model it scores with",
                ));
            }
        }
        if pipeline.resume && pipeline.overwrite {
            return Err(AlgoError::input(
                "overwrite",
                "a resumed run continues its directory; overwriting would clear it",
            ));
        }
        if pipeline.resume {
            if pipeline.run_dir.is_none() {
                return Err(AlgoError::input("resume", "resuming needs a run directory"));
            }
            if pipeline.resumable_stage().is_none() && pipeline.sft_stage().is_none() {
                return Err(AlgoError::input(
                    "resume",
                    "no GRPO or PPO stage writes checkpoints (set its checkpoint_every) and \
                     there is no SFT stage to resume after",
                ));
            }
        }
        Ok(pipeline)
    }
}

impl<B: AutodiffBackend> Pipeline<B> {
    /// A pipeline training `model` (whose chat template and tokens `tokenizer` provides).
    pub fn builder(
        model: Qwen2ForCausalLm<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> PipelineBuilder<B> {
        PipelineBuilder(Self {
            model,
            tokenizer: tokenizer.into(),
            stages: Vec::new(),
            evaluator: None,
            rollout_source: None,
            run_dir: None,
            resume: false,
            overwrite: false,
            config_record: None,
            observer: Box::new(()),
        })
    }

    /// The index of the stage that checkpoints (and so can be resumed).
    fn resumable_stage(&self) -> Option<usize> {
        self.stages
            .iter()
            .position(|stage| stage.checkpoint_every().is_some())
    }

    /// The index of the SFT stage, whose model a run directory keeps for a resume.
    fn sft_stage(&self) -> Option<usize> {
        self.stages
            .iter()
            .position(|stage| matches!(stage, Stage::Sft(_)))
    }

    /// Runs every stage in order.
    ///
    /// A resume continues from the newest checkpoint; without one, from the model the SFT stage
    /// left in `sft_model/` (the stages up to it are skipped); without that either, a run that
    /// was started in the directory (it has a `run_id`) starts over there.
    ///
    /// # Errors
    /// Stage, evaluation and run-directory errors, naming what failed; resuming from a
    /// directory no run was started in.
    pub fn run(self) -> Result<PipelineReport<B>> {
        let resumable = self.resumable_stage();
        let sft_stage = self.sft_stage();
        let Self {
            mut model,
            tokenizer,
            stages,
            mut evaluator,
            mut rollout_source,
            run_dir,
            resume,
            overwrite,
            config_record,
            observer,
        } = self;
        let observer: SharedObserver = Arc::new(Mutex::new(observer));
        let run_dir = match run_dir {
            Some(dir) if !resume => {
                claim_fresh_run_dir(&dir, overwrite)?;
                Some(RunDirectory::create(dir)?)
            }
            dir => dir.map(RunDirectory::create).transpose()?,
        };
        let checkpoint = match (&run_dir, resume) {
            (Some(run), true) => run.latest_checkpoint()?,
            _ => None,
        };
        // Without a checkpoint, a resume continues after the SFT stage when its model was kept,
        // or starts the run over; a directory no run was started in is refused.
        let after_sft = match (&run_dir, resume, &checkpoint) {
            (Some(run), true, None) => {
                if read_run_id(run.path())?.is_none() {
                    return Err(AlgoError::input(
                        "resume",
                        format!(
                            "no checkpoint-<step>/ in {} (and no run was started there)",
                            run.path().display()
                        ),
                    ));
                }
                sft_stage.and_then(|_| run.kept_sft_model())
            }
            _ => None,
        };
        let continued = checkpoint.is_some() || after_sft.is_some();
        let skipped_checkpoints = checkpoint
            .as_ref()
            .map(|found| found.skipped.clone())
            .unwrap_or_default();
        let checkpoint = checkpoint.map(|found| (found.step, found.dir));
        let mut record = Record {
            run_dir: run_dir.clone(),
            scores: Vec::new(),
        };
        if let Some(run) = &run_dir {
            let name = if resume {
                "config.resumed.json"
            } else {
                "config.json"
            };
            if let Some(value) = &config_record {
                run.write_json(name, value)?;
            }
            if continued {
                record.scores = earlier_scores(&run.summary()?);
            } else {
                // A fresh run in a reused directory starts a fresh record.
                run.write_json(SUMMARY_FILE, &Value::Object(Map::new()))?;
            }
        }
        if !continued {
            record.evaluate(
                "before",
                &model,
                &tokenizer,
                evaluator.as_deref_mut(),
                &observer,
            )?;
        }

        let count = stages.len();
        let mut reports = Vec::with_capacity(count);
        let mut reward_model: Option<Qwen2ForSequenceClassification<B>> = None;
        for (index, stage) in stages.into_iter().enumerate() {
            let name = stage.name();
            let trains_policy = stage.trains_policy();
            if let (Some(dir), Some(at)) = (&after_sft, sft_stage)
                && index <= at
            {
                if index == at {
                    model = load_kept_model(dir, &model)?;
                }
                notify(&observer, |o| o.stage_skipped(name));
                reports.push(StageReport::Skipped { stage: name });
                continue;
            }
            let resumed_step = match (&checkpoint, resumable) {
                (Some(_), Some(at)) if index < at => {
                    notify(&observer, |o| o.stage_skipped(name));
                    reports.push(StageReport::Skipped { stage: name });
                    continue;
                }
                (Some((step, _)), Some(at)) if index == at => Some(*step),
                _ => None,
            };
            notify(&observer, |o| {
                o.stage_started(name, stage.total_steps(), resumed_step.unwrap_or(0));
            });
            let log = match (&run_dir, resumed_step) {
                (Some(run), Some(step)) => Some(run.resumed_metrics(name, step)?),
                (Some(run), None) => Some(run.metrics(name)?),
                (None, _) => None,
            };
            let sink = step_sink(name, log.clone(), Arc::clone(&observer));
            let resume_from = checkpoint
                .as_ref()
                .filter(|_| resumed_step.is_some())
                .map(|(_, dir)| dir.clone());
            if stage.uses_learned_reward() && reward_model.is_none() {
                // The reward-model stage was skipped on resume: read back what it saved.
                reward_model = Some(load_reward_model(run_dir.as_ref(), &model)?);
            }
            let reinforcement = matches!(stage, Stage::Grpo(_) | Stage::Ppo(_));
            let learned = if stage.uses_learned_reward() {
                Some(learned_reward(reward_model.as_ref(), &tokenizer)?)
            } else {
                None
            };
            let report = match stage {
                Stage::Sft(stage) => {
                    let (trained, report) = run_sft(model, &tokenizer, stage, sink)?;
                    model = trained;
                    if let Some(run) = run_dir.as_ref().filter(|_| index + 1 < count) {
                        // kept so that a run killed in a later stage resumes after this one
                        run.keep_sft_model(&model.valid(), &tokenizer)?;
                    }
                    StageReport::Sft(report)
                }
                Stage::RewardModel(stage) => {
                    let (trained, report) = run_reward_model(&model, &tokenizer, stage, sink)?;
                    if let Some(run) = &run_dir {
                        run.save_reward_model(&trained.valid(), &tokenizer)?;
                    }
                    reward_model = Some(trained);
                    StageReport::RewardModel(report)
                }
                Stage::Grpo(stage) => {
                    let builder = GrpoTrainer::builder(merged(model), Arc::clone(&tokenizer))
                        .with_config(stage.config.clone())
                        .with_lora(stage.lora.clone())
                        .with_observer(sink);
                    // The pipeline's evaluator is lent to a stage that evaluates during
                    // training and handed back by the trainer afterwards.
                    let lent = if stage.config.eval_steps.is_some() {
                        evaluator.take()
                    } else {
                        None
                    };
                    let mut builder = builder.with_boxed_evaluator(lent);
                    if let Some(source) = rollout_source.take() {
                        builder = builder.with_boxed_rollout_source(source);
                    }
                    let (trained, report) = run_rl(
                        builder,
                        stage,
                        learned,
                        run_dir.as_ref(),
                        resume_from,
                        &mut evaluator,
                    )?;
                    model = trained;
                    StageReport::Grpo(report)
                }
                Stage::Ppo(stage) => {
                    let mut builder = PpoTrainer::builder(merged(model), Arc::clone(&tokenizer))
                        .with_config(stage.config.clone())
                        .with_lora(stage.lora.clone())
                        .with_observer(sink);
                    if let (true, Some(rm)) = (stage.learned_reward, &reward_model) {
                        builder = builder.with_critic(fresh_copy(rm));
                    }
                    let (trained, report) = run_rl(
                        builder,
                        stage,
                        learned,
                        run_dir.as_ref(),
                        resume_from,
                        &mut evaluator,
                    )?;
                    model = trained;
                    StageReport::Ppo(report)
                }
            };
            if let (true, Some(run), Some(log)) = (reinforcement, &run_dir, &log) {
                run.write_reward_curve(log)?;
            }
            if let Some(log) = &log {
                log.check()?;
            }
            if let (Some(run), Some(facts)) = (&run_dir, report.summary()) {
                run.merge_summary(Map::from_iter([(name.to_owned(), facts)]))?;
            }
            reports.push(report);
            notify(&observer, |o| o.stage_finished(name));
            if !trains_policy && index + 1 < count {
                continue;
            }
            let point = if index + 1 == count {
                "after".to_owned()
            } else {
                format!("after_{name}")
            };
            record.evaluate(
                &point,
                &model,
                &tokenizer,
                evaluator.as_deref_mut(),
                &observer,
            )?;
        }
        if let Some(run) = &run_dir {
            run.save_final_model(&model.valid(), &tokenizer)?;
        }
        Ok(PipelineReport {
            model,
            scores: record.scores,
            stages: reports,
            run_dir: run_dir.map(|run| run.path().to_owned()),
            resumed_from: checkpoint.map(|(step, _)| step),
            skipped_checkpoints,
        })
    }
}

/// Scores measured so far, mirrored into `summary.json` as they arrive (so an interrupted run
/// keeps them).
struct Record {
    run_dir: Option<RunDirectory>,
    scores: Vec<(String, ToolUseScores)>,
}

impl Record {
    fn evaluate<B: AutodiffBackend>(
        &mut self,
        point: &str,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &Arc<ChatTokenizer>,
        evaluator: Option<&mut (dyn Evaluator<B::InnerBackend> + 'static)>,
        observer: &SharedObserver,
    ) -> Result<()> {
        let Some(evaluator) = evaluator else {
            return Ok(());
        };
        let scores = evaluator.evaluate(&model.valid(), tokenizer)?;
        notify(observer, |o| o.evaluated(point, &scores));
        if let Some(run) = &self.run_dir {
            let value = serde_json::to_value(scores).unwrap_or(Value::Null);
            run.merge_summary(Map::from_iter([(point.to_owned(), value)]))?;
        }
        self.scores.retain(|(name, _)| name != point);
        self.scores.push((point.to_owned(), scores));
        Ok(())
    }
}

/// The evaluation points of an earlier (interrupted) run, in their recorded order.
fn earlier_scores(summary: &Map<String, Value>) -> Vec<(String, ToolUseScores)> {
    summary
        .iter()
        .filter(|(key, _)| key.as_str() == "before" || key.starts_with("after"))
        .filter_map(|(key, value)| {
            let scores = serde_json::from_value::<ToolUseScores>(value.clone()).ok()?;
            Some((key.clone(), scores))
        })
        .collect()
}

fn notify(observer: &SharedObserver, call: impl FnOnce(&mut dyn PipelineObserver)) {
    if let Ok(mut observer) = observer.lock() {
        call(observer.as_mut());
    }
}

/// The trainer observer of one stage: records to the metrics log, then tells the observer.
fn step_sink(
    stage: &'static str,
    log: Option<MetricsLog>,
    observer: SharedObserver,
) -> impl FnMut(&StepMetrics) + Send + 'static {
    move |metrics: &StepMetrics| {
        if let Some(log) = &log {
            log.record(metrics);
        }
        notify(&observer, |o| o.step(stage, metrics));
    }
}

/// The model a stage starts from: a previous LoRA stage's adapters folded into the weights
/// (they stay frozen: a full fine-tuning stage after a LoRA stage trains nothing).
fn merged<B: AutodiffBackend>(model: Qwen2ForCausalLm<B>) -> Qwen2ForCausalLm<B> {
    if model.has_adapters() {
        model.merge_adapters()
    } else {
        model
    }
}

fn run_sft<B: AutodiffBackend>(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    stage: SftStage,
    sink: impl FnMut(&StepMetrics) + Send + 'static,
) -> Result<(Qwen2ForCausalLm<B>, crate::sft::SftReport)> {
    let mut builder = SftTrainer::builder(merged(model), Arc::clone(tokenizer))
        .with_config(stage.config)
        .with_lora(stage.lora)
        .with_observer(sink);
    if let Some(eval) = stage.eval {
        builder = builder.with_eval_dataset(eval);
    }
    let mut trainer = builder.build()?;
    let report = trainer.train(&stage.train)?;
    Ok((trainer.into_model(), report))
}

/// Trains a reward model from `policy` (its backbone with a fresh score head seeded from the
/// stage's seed); the policy is not changed.
fn run_reward_model<B: AutodiffBackend>(
    policy: &Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    stage: RewardModelStage,
    sink: impl FnMut(&StepMetrics) + Send + 'static,
) -> Result<(Qwen2ForSequenceClassification<B>, RewardReport)> {
    let model = critic_from_policy(policy, tokenizer.pad_id, stage.config.seed);
    let mut builder = RewardTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(stage.config)
        .with_lora(stage.lora)
        .with_observer(sink);
    if let Some(eval) = stage.eval {
        builder = builder.with_eval_dataset(eval);
    }
    let mut trainer = builder.build()?;
    let report = trainer.train(&stage.train)?;
    Ok((trainer.into_model(), report))
}

/// The pipeline's reward model as a reward named `reward_model` (scored on the inner backend).
fn learned_reward<B: AutodiffBackend>(
    reward_model: Option<&Qwen2ForSequenceClassification<B>>,
    tokenizer: &Arc<ChatTokenizer>,
) -> Result<Box<dyn Reward>> {
    let model = reward_model.ok_or_else(|| {
        AlgoError::input(
            "learned_reward",
            "no reward model was trained before this stage",
        )
    })?;
    let scorer =
        RewardModelScorer::new(model.valid(), Arc::clone(tokenizer))?.with_name("reward_model");
    Ok(Box::new(LearnedReward::new("reward_model", scorer)))
}

/// The model a resumed run continues from: what the SFT stage kept in `dir`, on `current`'s
/// device.
fn load_kept_model<B: AutodiffBackend>(
    dir: &std::path::Path,
    current: &Qwen2ForCausalLm<B>,
) -> Result<Qwen2ForCausalLm<B>> {
    let device = current.devices().into_iter().next().unwrap_or_default();
    let (model, _) =
        agent_rl_core::weights::load_pretrained::<B>(dir, LoadOptions::default(), &device)?;
    Ok(model)
}

/// The reward model an interrupted run's reward-model stage saved in the run directory.
fn load_reward_model<B: AutodiffBackend>(
    run_dir: Option<&RunDirectory>,
    policy: &Qwen2ForCausalLm<B>,
) -> Result<Qwen2ForSequenceClassification<B>> {
    let run = run_dir.ok_or_else(|| {
        AlgoError::input(
            "resume",
            "a skipped reward-model stage needs the run directory",
        )
    })?;
    let device = policy.devices().into_iter().next().unwrap_or_default();
    let (model, _) = Qwen2ForSequenceClassification::from_pretrained(
        &run.reward_model_dir(),
        LoadOptions::default(),
        &device,
    )?;
    Ok(model)
}
