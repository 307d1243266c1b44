//! `agent-rl train grpo`: GRPO with the tool-use reward from a run file, optionally after an SFT
//! warm-up, with checkpoints in the run directory and `--resume`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::algos::CurriculumSampler;
use agent_rl::algos::pipeline::{
    GrpoStage, Pipeline, PipelineBuilder, SftStage, ToolUseEvaluator, read_tasks,
};
use agent_rl::algos::toy::{
    ToySplit, ToyTier, toy_environments, toy_sft_dataset, toy_split_tasks, toy_tier_tasks,
};
use agent_rl::core::{AgentLoopConfig, EnvironmentFactory, SamplingConfig, Task};
use agent_rl::eval::bfcl::multi_turn::{
    LONG_CONTEXT_ENV, LongContextData, MultiTurnDocs, MultiTurnEnvConfig,
    MultiTurnEnvironmentFactory, multi_turn_reward,
};
use agent_rl::eval::bfcl::{
    BfclDataset, Category, CheckOptions, is_trainable, split_train_held_out, training_task,
};
use agent_rl::progress::StageProgress;
use agent_rl::rewards::ToolUseReward;
use anyhow::{Context, bail};
use burn::tensor::backend::AutodiffBackend;

use crate::train::{TrainArgs, TrainJob, load_model};
use crate::train_config::{
    DataSection, EnvironmentKind, GrpoRunConfig, ModelSection, RolloutsSection, load,
};

/// A parsed `train grpo` invocation.
pub struct GrpoJob {
    pub(crate) config: GrpoRunConfig,
    resume: Option<PathBuf>,
    overwrite: bool,
}

impl GrpoJob {
    /// Reads and checks the run file.
    ///
    /// # Errors
    /// Run-file errors, naming the file and the section.
    pub fn new(args: TrainArgs) -> anyhow::Result<Self> {
        let mut config: GrpoRunConfig = load(&args.config, &args.set, "grpo")?;
        config.grpo.gradient_checkpointing |= args.gradient_checkpointing;
        crate::train::set_base_dtype(&mut config.lora, args.base_dtype, &args.config)?;
        let file = args.config.display();
        config
            .grpo
            .validate()
            .with_context(|| format!("invalid [grpo] in {file}"))?;
        config
            .reward
            .validate()
            .with_context(|| format!("invalid [reward] in {file}"))?;
        if let Some(lora) = &config.lora {
            lora.validate()
                .with_context(|| format!("invalid [lora] in {file}"))?;
        }
        if let Some(warmup) = &config.warmup {
            warmup
                .validate()
                .with_context(|| format!("invalid [warmup] in {file}"))?;
            if config.data.toy.is_none() {
                bail!("{file}: [warmup] needs toy data (`[data] toy = <count>`)");
            }
        }
        Ok(Self {
            config,
            resume: args.resume,
            overwrite: args.overwrite,
        })
    }
}

/// The training and held-out tasks of a `[data]` section.
///
/// BFCL entries that cannot become tasks (possible answers no output can pass) are left out,
/// counted on stderr; `train grpo --dry-run` lists them.
///
/// # Errors
/// Files that cannot be read or parsed, naming them.
pub fn grpo_tasks(data: &DataSection) -> anyhow::Result<(Vec<Task>, Vec<Task>)> {
    let (train, held_out, rejected) = grpo_tasks_and_rejected(data)?;
    if let Some((id, reason)) = rejected.first() {
        let _ = writeln!(
            std::io::stderr(),
            "[data] bfcl: {} entries left out (list them with `train grpo --dry-run`); the \
             first, {id}: {reason}",
            rejected.len()
        );
    }
    Ok((train, held_out))
}

/// The training and held-out tasks of a `[data]` section, and the BFCL entries that could not
/// become tasks (`(id, reason)`).
///
/// # Errors
/// Files that cannot be read or parsed, naming them.
pub fn grpo_tasks_and_rejected(
    data: &DataSection,
) -> anyhow::Result<(Vec<Task>, Vec<Task>, Vec<(String, String)>)> {
    let held_out = match (&data.eval, data.toy_held_out) {
        (Some(path), _) => read_tasks(path)?,
        (None, Some(count)) => {
            toy_split_tasks(ToySplit::HeldOut, count, data.seed.wrapping_add(1000))
        }
        (None, None) => Vec::new(),
    };
    if let Some(path) = &data.train {
        return Ok((read_tasks(path)?, held_out, Vec::new()));
    }
    if let Some(count) = data.toy {
        return Ok((
            toy_split_tasks(ToySplit::Train, count, data.seed),
            held_out,
            Vec::new(),
        ));
    }
    let Some(dir) = &data.bfcl else {
        bail!("[data]: set `train`, `toy` or `bfcl`");
    };
    let (tasks, rejected) = bfcl_tasks(dir)?;
    let (train, mut bfcl_held_out) =
        split_train_held_out(tasks, data.held_out_fraction, data.seed)?;
    bfcl_held_out.extend(held_out);
    Ok((train, bfcl_held_out, rejected))
}

/// The single-turn training tasks of a BFCL data directory, every trainable category in file
/// order, and the entries that could not become tasks (`(id, reason)`).
///
/// # Errors
/// A data directory that cannot be read, naming it.
pub fn bfcl_tasks(dir: &std::path::Path) -> anyhow::Result<(Vec<Task>, Vec<(String, String)>)> {
    let dataset = BfclDataset::load(dir)
        .with_context(|| format!("[data] bfcl: loading {}", dir.display()))?;
    let mut tasks = Vec::new();
    let mut rejected = Vec::new();
    for entry in dataset
        .entries()
        .filter(|entry| is_trainable(entry.category))
    {
        match training_task(entry, CheckOptions::default()) {
            Ok(task) => tasks.push(task),
            Err(error) => rejected.push((entry.id.clone(), error.to_string())),
        }
    }
    Ok((tasks, rejected))
}

/// The environment of `[data] environment = "bfcl_multi_turn"`: the multi-turn entries of
/// `[data] bfcl` (with bfcl-eval's long-context data when `AGENT_RL_BFCL_LONG_CONTEXT` names
/// it) and the classes' function docs of its `multi_turn_func_doc/`. Entries left out (pinned
/// gaps) are counted on stderr.
///
/// # Errors
/// Unreadable data, naming the folder or file; no entry usable as a task.
pub fn bfcl_multi_turn_factory(data: &DataSection) -> anyhow::Result<MultiTurnEnvironmentFactory> {
    let Some(dir) = &data.bfcl else {
        bail!("[data] environment = \"bfcl_multi_turn\" needs `bfcl = \"data dir\"`");
    };
    let categories = [
        Category::MultiTurnBase,
        Category::MultiTurnMissFunc,
        Category::MultiTurnMissParam,
        Category::MultiTurnLongContext,
    ];
    let mut dataset = BfclDataset::load_categories(dir, &categories)
        .with_context(|| format!("[data] bfcl: loading {}", dir.display()))?;
    if let Some(filler) = LongContextData::from_env()
        .map_err(|reason| anyhow::anyhow!("{LONG_CONTEXT_ENV}: {reason}"))?
    {
        dataset.set_long_context(Arc::new(filler));
    }
    let (folder, _) = BfclDataset::detect(dir)?;
    let docs = MultiTurnDocs::load(&folder).with_context(|| {
        format!(
            "[data] bfcl: the multi-turn function docs of {}",
            folder.display()
        )
    })?;
    let factory = MultiTurnEnvironmentFactory::new(&dataset, &docs, MultiTurnEnvConfig::default());
    if factory.tasks().is_empty() {
        bail!(
            "[data] bfcl = {}: no multi-turn entry can become a task ({} left out)",
            dir.display(),
            factory.skipped().len()
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "BFCL multi-turn: {} tasks, {} entries left out (pinned gaps of the port)",
        factory.tasks().len(),
        factory.skipped().len()
    );
    Ok(factory)
}

/// The curriculum of a `[curriculum]` run: the toy tiers (`[data] toy` tasks each) with toy
/// data, else `train` grouped by `data.level`; `[data] new_scenarios` in the new-scenario pool.
///
/// # Errors
/// An invalid `[curriculum]`; a level without tasks; an unreadable `new_scenarios` file.
pub fn curriculum(
    config: &agent_rl::algos::CurriculumConfig,
    data: &DataSection,
    train: &[Task],
) -> anyhow::Result<CurriculumSampler<Task>> {
    let levels: Vec<Vec<Task>> = match data.toy {
        Some(count) => ToyTier::ALL
            .iter()
            .enumerate()
            .map(|(index, &tier)| {
                toy_tier_tasks(
                    tier,
                    ToySplit::Train,
                    count,
                    data.seed.wrapping_add(index as u64),
                )
            })
            .collect(),
        None => {
            let level = |task: &Task| {
                task.data
                    .get("level")
                    .and_then(serde_json::Value::as_u64)
                    .map_or(0, |level| level as usize)
            };
            let count = train.iter().map(level).max().map_or(0, |max| max + 1);
            let mut levels = vec![Vec::new(); count];
            for task in train {
                levels[level(task)].push(task.clone());
            }
            levels
        }
    };
    let mut sampler = CurriculumSampler::new(levels, config.clone())
        .context("[curriculum]: levels are the tasks' `data.level` (each level needs tasks)")?;
    if let Some(path) = &data.new_scenarios {
        sampler.add_new_scenarios(
            read_tasks(path)
                .with_context(|| format!("[data] new_scenarios = {}", path.display()))?,
        );
    }
    Ok(sampler)
}

/// The evaluator of held-out tasks: greedy episodes with the trainer's limits
/// (`max_prompt_length`, `max_tool_calls_per_turn` in `limits`), in `environments` when given.
pub fn held_out_evaluator(
    held_out: Vec<Task>,
    max_completion_length: usize,
    max_tool_iterations: usize,
    limits: (Option<usize>, Option<usize>),
    environments: Option<&Arc<dyn EnvironmentFactory>>,
) -> ToolUseEvaluator {
    let loop_config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(max_completion_length),
        max_tool_iterations,
        max_prompt_length: limits.0,
        max_tool_calls_per_turn: limits.1,
    };
    let evaluator =
        ToolUseEvaluator::new(held_out, max_completion_length).with_loop_config(loop_config);
    match environments {
        Some(factory) => evaluator.with_environment(Arc::clone(factory)),
        None => evaluator,
    }
}

/// `pipeline` sampling its GRPO stage on the server of a `[rollouts]` section.
///
/// # Errors
/// An invalid section or an unset API key variable, naming `[rollouts]`.
#[cfg(feature = "serve")]
fn with_remote_rollouts<B: AutodiffBackend>(
    pipeline: PipelineBuilder<B>,
    section: &RolloutsSection,
) -> anyhow::Result<PipelineBuilder<B>> {
    let mut source = agent_rl::remote::RemoteRollouts::new(
        &section.remote_config(),
        section.publish_dir.clone(),
    )
    .context("[rollouts]")?;
    if let Some(name) = &section.adapter_name {
        source = source.with_adapter_name(name.clone());
    }
    Ok(pipeline.with_rollout_source(source))
}

/// Without the `serve` feature the run file's `[rollouts]` is refused when it is loaded.
#[cfg(not(feature = "serve"))]
fn with_remote_rollouts<B: AutodiffBackend>(
    _pipeline: PipelineBuilder<B>,
    _section: &RolloutsSection,
) -> anyhow::Result<PipelineBuilder<B>> {
    bail!("[rollouts] needs the binary built with the `serve` feature (the HTTP client)")
}

impl TrainJob for GrpoJob {
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
            None => config.run.dir.clone().unwrap_or_else(|| "runs/grpo".into()),
        };
        let bfcl_multi_turn = data.environment == Some(EnvironmentKind::BfclMultiTurn);
        let (train, held_out, environments): (_, _, Option<Arc<dyn EnvironmentFactory>>) =
            if bfcl_multi_turn {
                let factory = bfcl_multi_turn_factory(data)?;
                (
                    factory.tasks().to_vec(),
                    Vec::new(),
                    Some(Arc::new(factory)),
                )
            } else {
                let (train, held_out) = grpo_tasks(data)?;
                let environments: Option<Arc<dyn EnvironmentFactory>> = if config.multi_turn() {
                    Some(Arc::new(toy_environments()))
                } else {
                    None
                };
                (train, held_out, environments)
            };
        let (model, tokenizer) = load_model::<B>(&config.model)?;

        let mut pipeline = Pipeline::builder(model, Arc::clone(&tokenizer))
            .with_run_dir(&dir)
            .with_resume(self.resume.is_some())
            .with_overwrite(self.overwrite)
            .with_config_record(crate::train_config::config_json(&config)?)
            .with_observer(StageProgress::default());
        if let Some(rollouts) = &config.rollouts {
            pipeline = with_remote_rollouts(pipeline, rollouts)?;
        }
        let sampler = config
            .curriculum
            .as_ref()
            .map(|curriculum_config| curriculum(curriculum_config, data, &train))
            .transpose()?;
        if let Some(warmup) = &config.warmup {
            pipeline = pipeline.add_stage(SftStage::new(warmup.clone(), toy_sft_dataset(&train)));
        }
        let every = config
            .run
            .checkpoint_every
            .unwrap_or(config.grpo.max_steps)
            .max(1);
        let mut grpo = GrpoStage::new(config.grpo.clone(), train);
        grpo = if bfcl_multi_turn {
            grpo.add_reward(multi_turn_reward())
        } else {
            grpo.add_reward(ToolUseReward::new(config.reward.clone())?)
        };
        let mut grpo = grpo
            .with_checkpoint_every(every)
            .with_lora(config.lora.clone());
        if let Some(sampler) = sampler {
            grpo = grpo.with_curriculum(sampler);
        }
        if let Some(factory) = &environments {
            grpo = grpo.with_environment(Arc::clone(factory));
        }
        pipeline = pipeline.add_stage(grpo);
        if !held_out.is_empty() {
            let g = &config.grpo;
            let limits = (g.max_prompt_length, g.max_tool_calls_per_turn);
            let evaluator = held_out_evaluator(
                held_out,
                g.max_completion_length,
                g.max_tool_iterations,
                limits,
                environments.as_ref(),
            );
            pipeline = pipeline.with_evaluator(evaluator);
        }
        let report = pipeline.build()?.run()?;

        let mut stdout = std::io::stdout().lock();
        for skipped in &report.skipped_checkpoints {
            writeln!(
                stdout,
                "--resume: skipped {} ({})",
                skipped.dir.display(),
                skipped.reason
            )?;
        }
        if let Some(step) = report.resumed_from {
            writeln!(stdout, "resumed from checkpoint-{step}")?;
        }
        if let Some(grpo) = report.grpo() {
            writeln!(
                stdout,
                "GRPO: global step {}, mean reward of the last steps {}; run directory {}",
                grpo.global_step,
                grpo.mean_reward(grpo.steps.len().saturating_sub(5)..grpo.steps.len())
                    .map_or("-".into(), |r| format!("{r:.3}")),
                dir.display()
            )?;
        }
        for (point, scores) in &report.scores {
            writeln!(stdout, "{point:>9}: {}", serde_json::to_value(scores)?)?;
        }
        Ok(())
    }
}
