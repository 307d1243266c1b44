//! `agent-rl train rm` and `agent-rl train ppo`: the RLHF level from a run file — an optional
//! SFT warm-up, a reward model trained on preference pairs, then (for `ppo`) PPO against the
//! learned reward, rule rewards or both. One library [`Pipeline`] runs every stage.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl::algos::pipeline::{
    Pipeline, PipelineBuilder, PipelineReport, PpoStage, RewardModelStage, SftStage, read_tasks,
};
use agent_rl::algos::reward_model::PreferenceDataset;
use agent_rl::algos::toy::{
    ToyKind, toy_environments, toy_preferences, toy_reluctant_sft_dataset, toy_rlhf_tasks,
};
use agent_rl::algos::{RewardConfig, SftConfig};
use agent_rl::core::lora::LoraConfig;
use agent_rl::core::{EnvironmentFactory, Task};
use agent_rl::progress::StageProgress;
use agent_rl::rewards::ToolUseReward;
use anyhow::{Context, bail};
use burn::tensor::backend::AutodiffBackend;

use crate::train::{TrainArgs, TrainJob, load_model};
use crate::train_config::{
    DataSection, EnvironmentKind, ModelSection, PpoRunConfig, RmRunConfig, load,
};
use crate::train_grpo::held_out_evaluator;

/// Training and held-out data of an RLHF run.
struct RlhfData {
    /// Tasks (toy or from `train`): SFT demonstrations and PPO prompts.
    tasks: Vec<Task>,
    /// Held-out tasks scored before and after.
    held_out: Vec<Task>,
    /// The reward model's training pairs.
    pairs: PreferenceDataset,
    /// The reward model's held-out pairs.
    eval_pairs: Option<PreferenceDataset>,
}

/// Toy data: training and held-out requests kept apart ([`toy_rlhf_tasks`]), synthetic
/// preference pairs on each side.
fn toy_data(data: &DataSection, count: usize) -> RlhfData {
    let (tasks, held_out) = toy_rlhf_tasks(count, data.toy_held_out.unwrap_or(0), data.seed);
    let pairs = toy_preferences(&tasks, data.seed);
    let eval_pairs =
        (!held_out.is_empty()).then(|| toy_preferences(&held_out, data.seed.wrapping_add(1000)));
    RlhfData {
        tasks,
        held_out,
        pairs,
        eval_pairs,
    }
}

/// Reads a preference file, naming the `[data]` key on error.
fn read_pairs(key: &str, path: &Path) -> anyhow::Result<PreferenceDataset> {
    PreferenceDataset::from_jsonl(path)
        .with_context(|| format!("[data] {key} = {}", path.display()))
}

/// The warm-up stage (toy data only; `[data] toy_refusal` of the city requests declined by its
/// teacher) and the reward-model stage.
fn add_warmup_and_reward_model<B: AutodiffBackend>(
    mut pipeline: PipelineBuilder<B>,
    warmup: Option<&SftConfig>,
    reward_model: Option<(&RewardConfig, Option<&LoraConfig>)>,
    data: &RlhfData,
    section: &DataSection,
) -> PipelineBuilder<B> {
    if let Some(warmup) = warmup {
        let rows = toy_reluctant_sft_dataset(
            &data.tasks,
            &ToyKind::CITY,
            section.toy_refusal.unwrap_or(0.0),
            section.seed,
        );
        pipeline = pipeline.add_stage(SftStage::new(warmup.clone(), rows));
    }
    if let Some((config, lora)) = reward_model {
        let mut stage =
            RewardModelStage::new(config.clone(), data.pairs.clone()).with_lora(lora.cloned());
        if let Some(eval) = &data.eval_pairs {
            stage = stage.with_eval(eval.clone());
        }
        pipeline = pipeline.add_stage(stage);
    }
    pipeline
}

/// Prints what the run did: the reward model's accuracy, PPO's last rewards, held-out scores.
fn print_report<B: AutodiffBackend>(report: &PipelineReport<B>, dir: &Path) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    if let Some(step) = report.resumed_from {
        writeln!(stdout, "resumed from checkpoint-{step}")?;
    }
    if let Some(rm) = report.reward_model() {
        writeln!(
            stdout,
            "reward model: {} steps on {} pairs, held-out accuracy {}; saved to {}",
            rm.steps,
            rm.num_train_pairs,
            report
                .reward_model_accuracy()
                .map_or("-".into(), |a| format!("{a:.3}")),
            dir.join("reward_model").display()
        )?;
    }
    if let Some(ppo) = report.ppo() {
        writeln!(
            stdout,
            "PPO: global step {}, mean reward of the last steps {}",
            ppo.global_step,
            ppo.mean_reward(ppo.steps.len().saturating_sub(5)..ppo.steps.len())
                .map_or("-".into(), |r| format!("{r:.3}")),
        )?;
    }
    if !report.scores.is_empty() {
        writeln!(stdout, "{}", report.scores_table())?;
    }
    writeln!(stdout, "run directory {}", dir.display())?;
    Ok(())
}

/// A parsed `train rm` invocation.
pub struct RmJob {
    config: RmRunConfig,
    overwrite: bool,
}

impl RmJob {
    /// Reads and checks the run file.
    ///
    /// # Errors
    /// Run-file errors naming the file and section; `--resume` (a reward-model run restarts).
    pub fn new(args: TrainArgs) -> anyhow::Result<Self> {
        if let Some(dir) = &args.resume {
            bail!(
                "--resume {}: reward-model runs do not resume; start again",
                dir.display()
            );
        }
        if args.gradient_checkpointing {
            bail!("--gradient-checkpointing: not supported by reward-model training yet");
        }
        let mut config: RmRunConfig = load(&args.config, &args.set, "rm")?;
        crate::train::set_base_dtype(&mut config.lora, args.base_dtype, &args.config)?;
        let file = args.config.display();
        if let Some(lora) = &config.lora {
            lora.validate()
                .with_context(|| format!("invalid [lora] in {file}"))?;
        }
        if config.warmup.is_some() && config.data.toy.is_none() {
            bail!("{file}: [warmup] needs toy data (`[data] toy = <count>`)");
        }
        Ok(Self {
            config,
            overwrite: args.overwrite,
        })
    }
}

impl TrainJob for RmJob {
    fn model(&self) -> &ModelSection {
        &self.config.model
    }

    fn resolved(&self) -> anyhow::Result<serde_json::Value> {
        crate::train_config::config_json(&self.config)
    }

    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()> {
        let config = self.config;
        let data = &config.data;
        let dir = config.run.dir.clone().unwrap_or_else(|| "runs/rm".into());
        let rlhf = match (&data.train, data.toy) {
            (_, Some(count)) => toy_data(data, count),
            (Some(path), None) => RlhfData {
                tasks: Vec::new(),
                held_out: Vec::new(),
                pairs: read_pairs("train", path)?,
                eval_pairs: data
                    .eval
                    .as_deref()
                    .map(|path| read_pairs("eval", path))
                    .transpose()?,
            },
            (None, None) => bail!("[data]: set `train = \"pairs.jsonl\"` or `toy = <count>`"),
        };
        let (model, tokenizer) = load_model::<B>(&config.model)?;
        let pipeline = Pipeline::builder(model, tokenizer)
            .with_run_dir(&dir)
            .with_overwrite(self.overwrite)
            .with_config_record(crate::train_config::config_json(&config)?)
            .with_observer(StageProgress::default());
        let reward_model = Some((&config.reward_model, config.lora.as_ref()));
        let pipeline = add_warmup_and_reward_model(
            pipeline,
            config.warmup.as_ref(),
            reward_model,
            &rlhf,
            data,
        );
        let report = pipeline.build()?.run()?;
        print_report(&report, &dir)
    }
}

/// A parsed `train ppo` invocation.
pub struct PpoJob {
    config: PpoRunConfig,
    resume: Option<PathBuf>,
    overwrite: bool,
}

impl PpoJob {
    /// Reads and checks the run file.
    ///
    /// # Errors
    /// Run-file errors naming the file and section.
    pub fn new(args: TrainArgs) -> anyhow::Result<Self> {
        let mut config: PpoRunConfig = load(&args.config, &args.set, "ppo")?;
        crate::train::set_base_dtype(&mut config.lora, args.base_dtype, &args.config)?;
        let file = args.config.display();
        if args.gradient_checkpointing {
            bail!("--gradient-checkpointing: not supported by PPO yet");
        }
        if let Some(lora) = &config.lora {
            lora.validate()
                .with_context(|| format!("invalid [lora] in {file}"))?;
        }
        let data = &config.data;
        if config.warmup.is_some() && data.toy.is_none() {
            bail!("{file}: [warmup] needs toy data (`[data] toy = <count>`)");
        }
        if config.reward_model.is_some() && data.toy.is_none() && data.preferences.is_none() {
            bail!(
                "{file}: [reward_model] needs preference pairs: set `[data] preferences = \
                 \"pairs.jsonl\"` (or use toy data)"
            );
        }
        Ok(Self {
            config,
            resume: args.resume,
            overwrite: args.overwrite,
        })
    }
}

impl TrainJob for PpoJob {
    fn model(&self) -> &ModelSection {
        &self.config.model
    }

    fn resolved(&self) -> anyhow::Result<serde_json::Value> {
        crate::train_config::config_json(&self.config)
    }

    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()> {
        let config = self.config;
        let data = &config.data;
        let dir = match &self.resume {
            Some(dir) => dir.clone(),
            None => config.run.dir.clone().unwrap_or_else(|| "runs/ppo".into()),
        };
        let mut rlhf = match (&data.train, data.toy) {
            (_, Some(count)) => toy_data(data, count),
            (Some(path), None) => RlhfData {
                tasks: read_tasks(path)?,
                held_out: data
                    .eval
                    .as_deref()
                    .map(read_tasks)
                    .transpose()?
                    .unwrap_or_default(),
                pairs: match &data.preferences {
                    Some(path) => read_pairs("preferences", path)?,
                    None => PreferenceDataset::default(),
                },
                eval_pairs: data
                    .eval_preferences
                    .as_deref()
                    .map(|path| read_pairs("eval_preferences", path))
                    .transpose()?,
            },
            (None, None) => bail!("[data]: set `train = \"tasks.jsonl\"` or `toy = <count>`"),
        };
        let environments: Option<Arc<dyn EnvironmentFactory>> =
            match data.environment.unwrap_or(EnvironmentKind::None) {
                EnvironmentKind::Toy => Some(Arc::new(toy_environments())),
                EnvironmentKind::None => None,
                EnvironmentKind::BfclMultiTurn => bail!(
                    "[data] environment = \"bfcl_multi_turn\" is for GRPO runs (`agent-rl \
                     train grpo`)"
                ),
            };
        let (model, tokenizer) = load_model::<B>(&config.model)?;
        let pipeline = Pipeline::builder(model, tokenizer)
            .with_run_dir(&dir)
            .with_resume(self.resume.is_some())
            .with_overwrite(self.overwrite)
            .with_config_record(crate::train_config::config_json(&config)?)
            .with_observer(StageProgress::default());
        let reward_model = config.reward_model.as_ref().map(|c| (c, None));
        let mut pipeline = add_warmup_and_reward_model(
            pipeline,
            config.warmup.as_ref(),
            reward_model,
            &rlhf,
            data,
        );
        let every = config
            .run
            .checkpoint_every
            .unwrap_or(config.ppo.max_steps)
            .max(1);
        let mut ppo = PpoStage::new(config.ppo.clone(), std::mem::take(&mut rlhf.tasks))
            .with_checkpoint_every(every)
            .with_lora(config.lora.clone());
        if let Some(reward) = &config.reward {
            ppo = ppo.add_reward(ToolUseReward::new(reward.clone())?);
        }
        if config.reward_model.is_some() {
            ppo = ppo.with_learned_reward();
        }
        if let Some(factory) = &environments {
            ppo = ppo.with_environment(Arc::clone(factory));
        }
        pipeline = pipeline.add_stage(ppo);
        if !rlhf.held_out.is_empty() {
            let p = &config.ppo;
            let evaluator = held_out_evaluator(
                rlhf.held_out,
                p.max_completion_length,
                p.max_tool_iterations,
                (p.max_prompt_length, p.max_tool_calls_per_turn),
                environments.as_ref(),
            );
            pipeline = pipeline.with_evaluator(evaluator);
        }
        let report = pipeline.build()?.run()?;
        print_report(&report, &dir)
    }
}
