//! `agent-rl train grpo`: GRPO with the tool-use reward from a run file, optionally after an SFT
//! warm-up, with checkpoints in the run directory and `--resume`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl::algos::toy::{toy_environments, toy_sft_dataset, toy_tasks};
use agent_rl::algos::{GrpoTrainer, ToolUseScores, evaluate_tool_use};
use agent_rl::core::{
    AgentLoopConfig, ChatTokenizer, EnvironmentFactory, HermesToolCallParser, Qwen2ForCausalLm,
    SamplingConfig, Task,
};
use agent_rl::eval::bfcl::{BfclDataset, CheckOptions, split_train_held_out, training_tasks};
use agent_rl::progress::{finish_bar, progress_bar, progress_observer};
use agent_rl::rewards::ToolUseReward;
use agent_rl::run_dir::RunDir;
use anyhow::{Context, bail};
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use serde_json::{Value, json};

use crate::train::{TrainArgs, TrainJob, load_model};
use crate::train_config::{DataSection, EnvironmentKind, GrpoRunConfig, ModelSection, load};
use crate::train_sft::run_sft;

/// A parsed `train grpo` invocation.
pub struct GrpoJob {
    config: GrpoRunConfig,
    resume: Option<PathBuf>,
}

impl GrpoJob {
    /// Reads and checks the run file.
    ///
    /// # Errors
    /// Run-file errors, naming the file and the section.
    pub fn new(args: TrainArgs) -> anyhow::Result<Self> {
        let config: GrpoRunConfig = load(&args.config, "grpo")?;
        let file = args.config.display();
        config
            .grpo
            .validate()
            .with_context(|| format!("invalid [grpo] in {file}"))?;
        config
            .reward
            .validate()
            .with_context(|| format!("invalid [reward] in {file}"))?;
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
        })
    }
}

/// Reads one [`Task`] per line of a JSONL file (blank lines skipped).
///
/// # Errors
/// The file that cannot be read; a line that is not a task, naming file and line.
pub fn read_tasks(path: &Path) -> anyhow::Result<Vec<Task>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open task file {}", path.display()))?;
    let mut tasks = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let task: Task = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a task", path.display(), index + 1))?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        bail!("task file {} has no tasks", path.display());
    }
    Ok(tasks)
}

/// The highest `checkpoint-<step>` directory in `run_dir`.
///
/// # Errors
/// When `run_dir` cannot be read or holds no checkpoint.
pub fn latest_checkpoint(run_dir: &Path) -> anyhow::Result<PathBuf> {
    let entries = std::fs::read_dir(run_dir)
        .with_context(|| format!("--resume: cannot read run directory {}", run_dir.display()))?;
    entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let step: usize = name.strip_prefix("checkpoint-")?.parse().ok()?;
            entry.path().is_dir().then(|| (step, entry.path()))
        })
        .max_by_key(|(step, _)| *step)
        .map(|(_, path)| path)
        .with_context(|| format!("--resume: no checkpoint-<step>/ in {}", run_dir.display()))
}

/// The training and held-out tasks of a `[data]` section.
///
/// # Errors
/// Files that cannot be read or parsed, naming them.
pub fn grpo_tasks(data: &DataSection) -> anyhow::Result<(Vec<Task>, Vec<Task>)> {
    let held_out = match (&data.eval, data.toy_held_out) {
        (Some(path), _) => read_tasks(path)?,
        (None, Some(count)) => toy_tasks(count, data.seed.wrapping_add(1000)),
        (None, None) => Vec::new(),
    };
    if let Some(path) = &data.train {
        return Ok((read_tasks(path)?, held_out));
    }
    if let Some(count) = data.toy {
        return Ok((toy_tasks(count, data.seed), held_out));
    }
    let Some(dir) = &data.bfcl else {
        bail!("[data]: set `train`, `toy` or `bfcl`");
    };
    let dataset = BfclDataset::load(dir)
        .with_context(|| format!("[data] bfcl: loading {}", dir.display()))?;
    let tasks = training_tasks(&dataset, &[], CheckOptions::default())?;
    let (train, mut bfcl_held_out) =
        split_train_held_out(tasks, data.held_out_fraction, data.seed)?;
    bfcl_held_out.extend(held_out);
    Ok((train, bfcl_held_out))
}

fn evaluate<B: AutodiffBackend>(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[Task],
    environments: Option<&dyn EnvironmentFactory>,
    config: &GrpoRunConfig,
) -> anyhow::Result<ToolUseScores> {
    let loop_config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(config.grpo.max_completion_length),
        max_tool_iterations: config.grpo.max_tool_iterations,
        max_prompt_length: config.grpo.max_prompt_length,
        max_tool_calls_per_turn: config.grpo.max_tool_calls_per_turn,
    };
    let parser = HermesToolCallParser::default();
    Ok(evaluate_tool_use(
        &model.valid(),
        tokenizer,
        &parser,
        tasks,
        environments,
        loop_config,
    )?)
}

impl TrainJob for GrpoJob {
    fn model(&self) -> &ModelSection {
        &self.config.model
    }

    fn resolved(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.config)?)
    }

    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()> {
        let config = self.config;
        let data = &config.data;
        let dir = match &self.resume {
            Some(dir) => dir.clone(),
            None => config.run.dir.clone().unwrap_or_else(|| "runs/grpo".into()),
        };
        let checkpoint = self.resume.as_deref().map(latest_checkpoint).transpose()?;
        let mut run_dir = RunDir::create(&dir)
            .with_context(|| format!("creating run directory {}", dir.display()))?;
        let config_name = if checkpoint.is_some() {
            "config.resumed.json"
        } else {
            "config.json"
        };
        run_dir.write_json(config_name, &serde_json::to_value(&config)?)?;

        let (train, held_out) = grpo_tasks(data)?;
        let default_env = if data.toy.is_some() {
            EnvironmentKind::Toy
        } else {
            EnvironmentKind::None
        };
        let environment = data.environment.unwrap_or(default_env);
        let toy_env = toy_environments();
        let env: Option<&dyn EnvironmentFactory> =
            (environment == EnvironmentKind::Toy).then_some(&toy_env as &dyn EnvironmentFactory);

        let (mut model, tokenizer) = load_model::<B>(&config.model)?;
        // A resumed run keeps the scores measured before it (`before`, `after_sft`).
        let mut summary = match &checkpoint {
            Some(_) => std::fs::read_to_string(run_dir.path().join("summary.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .and_then(|value| value.as_object().cloned())
                .unwrap_or_default(),
            None => serde_json::Map::new(),
        };
        if !held_out.is_empty() && checkpoint.is_none() {
            let before = evaluate(&model, &tokenizer, &held_out, env, &config)?;
            summary.insert("before".into(), serde_json::to_value(before)?);
        }
        if let (Some(warmup), None) = (&config.warmup, &checkpoint) {
            let sink = run_dir.metrics_sink("sft")?;
            let demos = toy_sft_dataset(&train);
            model = run_sft(model, &tokenizer, warmup.clone(), &demos, None, sink, "SFT")?.0;
            if !held_out.is_empty() {
                let scores = evaluate(&model, &tokenizer, &held_out, env, &config)?;
                summary.insert("after_sft".into(), serde_json::to_value(scores)?);
            }
        }

        let sink = match checkpoint {
            Some(_) => run_dir.metrics_sink_appending("grpo")?,
            None => run_dir.metrics_sink("grpo")?,
        };
        let progress = progress_bar(config.grpo.max_steps, "GRPO");
        let every = config
            .run
            .checkpoint_every
            .unwrap_or(config.grpo.max_steps)
            .max(1);
        let mut builder = GrpoTrainer::builder(model, Arc::clone(&tokenizer))
            .with_config(config.grpo.clone())
            .add_reward(ToolUseReward::new(config.reward.clone())?)
            .with_checkpointing(run_dir.path(), every)
            .with_observer(progress_observer(&progress, sink, |m| {
                format!("reward {:.2}", m.reward)
            }));
        if environment == EnvironmentKind::Toy {
            builder = builder.with_environment(toy_environments());
        }
        if let Some(checkpoint) = &checkpoint {
            builder = builder.with_resume_from(checkpoint);
        }
        let mut trainer = builder.build()?;
        progress.set_position(trainer.global_step() as u64);
        let report = trainer.train(&train)?;
        finish_bar(&progress);
        let model = trainer.into_model();
        if !held_out.is_empty() {
            let after = evaluate(&model, &tokenizer, &held_out, env, &config)?;
            summary.insert("after".into(), serde_json::to_value(after)?);
        }
        run_dir.finish(&model.valid(), &tokenizer)?;
        summary.insert("global_step".into(), json!(report.global_step));
        run_dir.write_json("summary.json", &Value::Object(summary.clone()))?;
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "GRPO: global step {}, mean reward of the last steps {}; run directory {}",
            report.global_step,
            report
                .mean_reward(report.steps.len().saturating_sub(5)..report.steps.len())
                .map_or("-".into(), |r| format!("{r:.3}")),
            run_dir.path().display()
        )?;
        for stage in ["before", "after_sft", "after"] {
            if let Some(scores) = summary.get(stage) {
                writeln!(stdout, "{stage:>9}: {scores}")?;
            }
        }
        Ok(())
    }
}
