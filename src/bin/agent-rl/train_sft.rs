//! `agent-rl train sft`: supervised fine-tuning from a run file.

use std::io::Write;
use std::sync::Arc;

use agent_rl::algos::SftConfig;
use agent_rl::algos::sft::{SftDataset, SftReport, SftTrainer};
use agent_rl::algos::toy::{toy_sft_dataset, toy_tasks};
use agent_rl::core::{ChatTokenizer, Qwen2ForCausalLm};
use agent_rl::progress::{finish_bar, progress_bar, progress_observer};
use agent_rl::run_dir::{MetricsSink, RunDir};
use anyhow::{Context, bail};
use burn::tensor::backend::AutodiffBackend;
use serde_json::json;

use crate::train::{TrainArgs, TrainJob, load_model};
use crate::train_config::{DataSection, ModelSection, SftRunConfig, load};

/// A parsed `train sft` invocation.
pub struct SftJob {
    config: SftRunConfig,
}

impl SftJob {
    /// Reads the run file.
    ///
    /// # Errors
    /// Run-file errors; `--resume` (SFT runs restart from a saved model: set `model.path`).
    pub fn new(args: TrainArgs) -> anyhow::Result<Self> {
        if let Some(dir) = &args.resume {
            bail!(
                "--resume {}: SFT runs do not resume; start a new run from a saved model with \
                 [model] path = \"{}/final_model\"",
                dir.display(),
                dir.display()
            );
        }
        let config: SftRunConfig = load(&args.config, "sft")?;
        config
            .sft
            .validate()
            .with_context(|| format!("invalid [sft] in {}", args.config.display()))?;
        Ok(Self { config })
    }
}

/// The SFT rows of a `[data]` section: `(train, eval)`; eval is empty when not given.
///
/// # Errors
/// Dataset files that cannot be read or parsed, naming file and line.
pub fn sft_datasets(data: &DataSection) -> anyhow::Result<(SftDataset, Option<SftDataset>)> {
    let train = match (&data.train, data.toy) {
        (Some(path), _) => SftDataset::from_jsonl(path)?,
        (None, Some(count)) => toy_sft_dataset(&toy_tasks(count, data.seed)),
        (None, None) => bail!("[data]: SFT reads `train = \"file.jsonl\"` or `toy = <count>`"),
    };
    let eval = match (&data.eval, data.toy_held_out) {
        (Some(path), _) => Some(SftDataset::from_jsonl(path)?),
        (None, Some(count)) => Some(toy_sft_dataset(&toy_tasks(
            count,
            data.seed.wrapping_add(1000),
        ))),
        (None, None) => None,
    };
    Ok((train, eval))
}

/// Trains `model` with `config` on `train` (eval on `eval`, else the config's split), with a
/// progress bar labelled `label`, recording each step to `sink`.
///
/// # Errors
/// Invalid config; dataset rows that cannot be rendered, naming file and line.
pub fn run_sft<B: AutodiffBackend>(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    config: SftConfig,
    train: &SftDataset,
    eval: Option<SftDataset>,
    sink: MetricsSink,
    label: &str,
) -> anyhow::Result<(Qwen2ForCausalLm<B>, SftReport)> {
    let total = config.max_steps.unwrap_or(0);
    let progress = progress_bar(total, label);
    let mut builder = SftTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .with_observer(progress_observer(&progress, sink, |m| {
            format!("loss {:.3}", m.loss)
        }));
    if let Some(eval) = eval {
        builder = builder.with_eval_dataset(eval);
    }
    let mut trainer = builder.build()?;
    let report = trainer.train(train)?;
    finish_bar(&progress);
    Ok((trainer.into_model(), report))
}

impl TrainJob for SftJob {
    fn model(&self) -> &ModelSection {
        &self.config.model
    }

    fn resolved(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.config)?)
    }

    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()> {
        let config = self.config;
        let dir = config.run.dir.clone().unwrap_or_else(|| "runs/sft".into());
        let mut run_dir = RunDir::create(&dir)
            .with_context(|| format!("creating run directory {}", dir.display()))?;
        run_dir.write_json("config.json", &serde_json::to_value(&config)?)?;
        let (train, eval) = sft_datasets(&config.data)?;
        let (model, tokenizer) = load_model::<B>(&config.model)?;
        let sink = run_dir.metrics_sink("sft")?;
        let (model, report) = run_sft(
            model,
            &tokenizer,
            config.sft.clone(),
            &train,
            eval,
            sink,
            "SFT",
        )?;
        run_dir.finish(&model, &tokenizer)?;
        let last_loss = report.history.last().map(|m| m.loss);
        let eval_loss = report.eval_losses.last().map(|(_, loss)| *loss);
        let summary = json!({
            "steps": report.steps, "train_examples": report.num_train_examples,
            "eval_examples": report.num_eval_examples, "num_tokens": report.num_tokens,
            "last_train_loss": last_loss, "last_eval_loss": eval_loss,
            "train_time_secs": report.train_time_secs,
        });
        run_dir.write_json("summary.json", &summary)?;
        writeln!(
            std::io::stdout().lock(),
            "SFT: {} steps, last train loss {}, eval loss {}; run directory {}",
            report.steps,
            last_loss.map_or("-".into(), |l| format!("{l:.4}")),
            eval_loss.map_or("-".into(), |l| format!("{l:.4}")),
            run_dir.path().display()
        )?;
        Ok(())
    }
}
