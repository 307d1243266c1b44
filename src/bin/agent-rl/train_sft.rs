//! `agent-rl train sft`: supervised fine-tuning from a run file.

use std::io::Write;

use agent_rl::algos::pipeline::{Pipeline, SftStage};
use agent_rl::algos::sft::SftDataset;
use agent_rl::algos::toy::{ToySplit, toy_sft_dataset, toy_split_tasks};
use agent_rl::progress::StageProgress;
use anyhow::{Context, bail};
use burn::tensor::backend::AutodiffBackend;

use crate::train::{TrainArgs, TrainJob, load_model};
use crate::train_config::{DataSection, ModelSection, SftRunConfig, load};

/// A parsed `train sft` invocation.
pub struct SftJob {
    config: SftRunConfig,
    overwrite: bool,
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
        let mut config: SftRunConfig = load(&args.config, &args.set, "sft")?;
        config.sft.gradient_checkpointing |= args.gradient_checkpointing;
        crate::train::set_base_dtype(&mut config.lora, args.base_dtype, &args.config)?;
        config
            .sft
            .validate()
            .with_context(|| format!("invalid [sft] in {}", args.config.display()))?;
        if let Some(lora) = &config.lora {
            lora.validate()
                .with_context(|| format!("invalid [lora] in {}", args.config.display()))?;
        }
        Ok(Self {
            config,
            overwrite: args.overwrite,
        })
    }
}

/// The SFT rows of a `[data]` section: `(train, eval)`; eval is empty when not given.
///
/// # Errors
/// Dataset files that cannot be read or parsed, naming file and line.
pub fn sft_datasets(data: &DataSection) -> anyhow::Result<(SftDataset, Option<SftDataset>)> {
    let train = match (&data.train, data.toy) {
        (Some(path), _) => SftDataset::from_jsonl(path)?,
        (None, Some(count)) => toy_sft_dataset(&toy_split_tasks(ToySplit::Train, count, data.seed)),
        (None, None) => bail!("[data]: SFT reads `train = \"file.jsonl\"` or `toy = <count>`"),
    };
    let eval = match (&data.eval, data.toy_held_out) {
        (Some(path), _) => Some(SftDataset::from_jsonl(path)?),
        (None, Some(count)) => Some(toy_sft_dataset(&toy_split_tasks(
            ToySplit::HeldOut,
            count,
            data.seed.wrapping_add(1000),
        ))),
        (None, None) => None,
    };
    Ok((train, eval))
}

impl TrainJob for SftJob {
    fn model(&self) -> &ModelSection {
        &self.config.model
    }

    fn resolved(&self) -> anyhow::Result<serde_json::Value> {
        crate::train_config::config_json(&self.config)
    }

    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()> {
        let config = self.config;
        let dir = config.run.dir.clone().unwrap_or_else(|| "runs/sft".into());
        let (train, eval) = sft_datasets(&config.data)?;
        let (model, tokenizer) = load_model::<B>(&config.model)?;
        let mut stage = SftStage::new(config.sft.clone(), train).with_lora(config.lora.clone());
        if let Some(eval) = eval {
            stage = stage.with_eval(eval);
        }
        let report = Pipeline::builder(model, tokenizer)
            .add_stage(stage)
            .with_run_dir(&dir)
            .with_overwrite(self.overwrite)
            .with_config_record(crate::train_config::config_json(&config)?)
            .with_observer(StageProgress::default())
            .build()?
            .run()?;
        let Some(sft) = report.sft() else {
            bail!("the SFT stage did not run");
        };
        writeln!(
            std::io::stdout().lock(),
            "SFT: {} steps, last train loss {}, eval loss {}; run directory {}",
            sft.steps,
            sft.history
                .last()
                .map_or("-".into(), |m| format!("{:.4}", m.loss)),
            sft.eval_losses
                .last()
                .map_or("-".into(), |(_, l)| format!("{l:.4}")),
            dir.display()
        )?;
        Ok(())
    }
}
