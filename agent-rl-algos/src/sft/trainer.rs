//! [`SftTrainer`]: supervised fine-tuning with AdamW, warmup + decay, global-norm clipping,
//! gradient accumulation, periodic eval loss and Hugging Face checkpoints.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use agent_rl_core::lora::{LoraConfig, save_adapter};
use agent_rl_core::model::backward_through;
use agent_rl_core::weights::{SaveOptions, save_pretrained};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::module::AutodiffModule;
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;

use crate::checkpoint_dir::write_files_into;
use crate::config::SftConfig;
use crate::error::{AlgoError, Result};
use crate::metrics::{StepMetrics, TrainObserver};
use crate::optim::{clip_grad_norm, init_adamw};
use crate::sft::batch::SftBatch;
use crate::sft::builder::SftTrainerBuilder;
use crate::sft::dataset::SftDataset;
use crate::sft::loss::{token_loss, token_loss_from_logits};
use crate::sft::masking::tokenize_example;
use crate::sft::packing::{SftSequence, pack_examples, unpacked};
use crate::supervised::{Schedule, record_step, scalar, schedule_settings, write_run_config};

/// What a training run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SftReport {
    /// Optimiser steps taken.
    pub steps: usize,
    /// Training rows used / held out for eval.
    pub num_train_examples: usize,
    /// Rows evaluated on.
    pub num_eval_examples: usize,
    /// Training rows cut to `max_length`.
    pub num_truncated: usize,
    /// Training sequences per epoch (fewer than rows when packing).
    pub num_train_sequences: usize,
    /// Real tokens processed (TRL's `num_tokens`).
    pub num_tokens: u64,
    /// `(step, eval_loss)` of every evaluation.
    pub eval_losses: Vec<(usize, f32)>,
    /// The metrics of every step, as the observer saw them.
    pub history: Vec<StepMetrics>,
    /// Directories written in Hugging Face layout (checkpoints, then the final model).
    pub checkpoints: Vec<PathBuf>,
    /// Wall-clock seconds of the run.
    pub train_time_secs: f64,
}

/// Mean token loss and accuracy of a model on a set of sequences.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EvalResult {
    /// Mean cross-entropy per loss token.
    pub loss: f32,
    /// Fraction of loss tokens predicted exactly (argmax).
    pub mean_token_accuracy: f32,
    /// Loss tokens evaluated.
    pub num_tokens: usize,
}

/// Supervised fine-tuning of a [`Qwen2ForCausalLm`] on chat or prompt/completion rows.
///
/// Loss: next-token cross-entropy over the masked tokens (assistant turns / completions, see
/// [`crate::sft::masking`]), summed over the micro-batches of an optimiser step and divided by
/// their total number of loss tokens (Hugging Face's `num_items_in_batch` normalisation, so
/// accumulation equals one big batch). Each step: gradients accumulated, clipped to the global
/// norm, AdamW at the scheduled learning rate; a step whose gradient norm is not finite is
/// skipped (reported with that norm).
///
/// ```
/// use agent_rl_algos::sft::{SftDataset, SftTrainer};
/// use agent_rl_algos::SftConfig;
/// use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
/// use agent_rl_core::weights::random_model;
/// use burn::backend::{Autodiff, Flex};
///
/// let model = random_model::<Autodiff<Flex>>(&toy_model_config(), 0, 0.05, &Default::default())?;
/// let data = SftDataset::from_jsonl_str(
///     r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}"#,
///     "inline.jsonl",
/// )?;
/// let config = SftConfig { max_steps: Some(2), batch_size: 1, ..SftConfig::default() };
/// let mut trainer = SftTrainer::builder(model, toy_tokenizer()?)
///     .with_config(config)
///     .with_observer(|m: &agent_rl_algos::StepMetrics| assert!(m.loss.is_finite()))
///     .build()?;
/// let report = trainer.train(&data)?;
/// assert_eq!(report.steps, 2);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub struct SftTrainer<B: AutodiffBackend> {
    model: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: SftConfig,
    observer: Option<Box<dyn TrainObserver>>,
    eval_dataset: Option<SftDataset>,
    pad_id: u32,
    lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> std::fmt::Debug for SftTrainer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SftTrainer")
            .field("config", &self.config)
            .field("pad_id", &self.pad_id)
            .finish_non_exhaustive()
    }
}

/// Sequences ready for training, with counts for the report.
struct Prepared {
    sequences: Vec<SftSequence>,
    examples: usize,
    truncated: usize,
}

impl<B: AutodiffBackend> SftTrainer<B> {
    /// Starts a trainer for `model` with its `tokenizer` (owned or shared via `Arc`).
    pub fn builder(
        model: Qwen2ForCausalLm<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> SftTrainerBuilder<B> {
        SftTrainerBuilder::new(model, tokenizer.into())
    }

    pub(crate) fn from_parts(
        model: Qwen2ForCausalLm<B>,
        tokenizer: Arc<ChatTokenizer>,
        config: SftConfig,
        observer: Option<Box<dyn TrainObserver>>,
        eval_dataset: Option<SftDataset>,
        pad_id: u32,
        lora: Option<LoraConfig>,
    ) -> Self {
        Self {
            model,
            tokenizer,
            config,
            observer,
            eval_dataset,
            pad_id,
            lora,
        }
    }

    /// The LoRA settings when training adapters, `None` for full fine-tuning.
    pub fn lora(&self) -> Option<&LoraConfig> {
        self.lora.as_ref()
    }

    /// The model (trained once [`Self::train`] has run).
    pub fn model(&self) -> &Qwen2ForCausalLm<B> {
        &self.model
    }

    /// The trained model.
    pub fn into_model(self) -> Qwen2ForCausalLm<B> {
        self.model
    }

    /// The settings.
    pub fn config(&self) -> &SftConfig {
        &self.config
    }

    /// Tokenises, masks, truncates and (optionally) packs `dataset`.
    fn prepare(&self, dataset: &SftDataset) -> Result<Prepared> {
        let mut examples = Vec::with_capacity(dataset.len());
        let mut truncated = 0;
        for (row, origin) in dataset.iter() {
            let mut example = tokenize_example(&self.tokenizer, row, &self.config)
                .map_err(|err| origin.error(err.to_string()))?;
            truncated += usize::from(example.truncate(self.config.max_length));
            examples.push(example);
        }
        let count = examples.len();
        let sequences = if self.config.packing {
            pack_examples(&examples, self.config.max_length)
        } else {
            unpacked(examples)
        };
        Ok(Prepared {
            sequences,
            examples: count,
            truncated,
        })
    }

    /// Mean token loss and accuracy of the current model on `dataset` (no gradients).
    ///
    /// # Errors
    /// As [`Self::train`] for malformed rows.
    pub fn evaluate(&self, dataset: &SftDataset) -> Result<EvalResult> {
        let prepared = self.prepare(dataset)?;
        Ok(self.evaluate_sequences(&prepared.sequences))
    }

    fn evaluate_sequences(&self, sequences: &[SftSequence]) -> EvalResult {
        let model = self.model.valid();
        let (mut loss_sum, mut tokens, mut correct) = (0.0f64, 0usize, 0usize);
        for chunk in sequences.chunks(self.config.batch_size) {
            let refs: Vec<&SftSequence> = chunk.iter().collect();
            let batch = SftBatch::collate(&refs, self.pad_id);
            let out = token_loss(&model, &batch);
            loss_sum += scalar(out.loss_sum);
            tokens += out.num_tokens;
            correct += out.num_correct;
        }
        let denominator = tokens.max(1) as f64;
        EvalResult {
            loss: (loss_sum / denominator) as f32,
            mean_token_accuracy: (correct as f64 / denominator) as f32,
            num_tokens: tokens,
        }
    }

    /// The model in Hugging Face layout with its tokenizer files (a loadable model directory),
    /// or with LoRA its adapters in PEFT's layout.
    fn save(&self, dir: &Path) -> Result<()> {
        match &self.lora {
            Some(lora) => save_adapter(&self.model, lora, None, dir)?,
            None => {
                save_pretrained(&self.model, dir, SaveOptions::default())?;
                self.tokenizer.save_to_dir(dir)?;
            }
        }
        Ok(())
    }

    /// Trains on `dataset` (minus the eval split, unless an eval dataset was given).
    ///
    /// # Errors
    /// [`AlgoError::DatasetRow`] naming the file and line of a row that cannot be rendered or
    /// tokenised (e.g. a template that is not prefix-stable); [`AlgoError::InvalidInput`] when no
    /// training rows remain or they hold no token the loss covers; [`AlgoError::Core`] when a checkpoint cannot be written.
    pub fn train(&mut self, dataset: &SftDataset) -> Result<SftReport> {
        let started = Instant::now();
        let (train_rows, eval_rows) = match &self.eval_dataset {
            Some(eval) => (dataset.clone(), eval.clone()),
            None => dataset.split(self.config.eval_fraction, self.config.seed),
        };
        let train = self.prepare(&train_rows)?;
        let eval = self.prepare(&eval_rows)?;
        if train.sequences.is_empty() {
            return Err(AlgoError::input(
                "dataset",
                "has no training rows (after the eval split)",
            ));
        }
        let loss_tokens: usize = train
            .sequences
            .iter()
            .map(|sequence| sequence.loss_mask.iter().filter(|&&loss| loss).count())
            .sum();
        if loss_tokens == 0 {
            // Training on nothing would report loss 0 and save an unchanged model as trained.
            return Err(AlgoError::input(
                "dataset",
                format!(
                    "its {} training rows hold no token to train on: no assistant turn or \
                     completion, or every one was cut off at max_length {}",
                    train.examples, self.config.max_length
                ),
            ));
        }
        let config = self.config.clone();
        let schedule = Schedule::new(train.sequences.len(), schedule_settings!(config));
        let total_steps = schedule.total_steps;
        let mut report = SftReport {
            num_train_examples: train.examples,
            num_eval_examples: eval.examples,
            num_truncated: train.truncated,
            num_train_sequences: train.sequences.len(),
            ..SftReport::default()
        };
        if let Some(dir) = &config.output_dir {
            write_run_config(dir, "sft_config.json", &config)?;
        }
        let mut optimizer = init_adamw::<B, Qwen2ForCausalLm<B>>(&config.optimizer);
        schedule.run(|group| {
            let step_started = Instant::now();
            let batches: Vec<SftBatch> = group
                .iter()
                .map(|indices| {
                    let refs: Vec<&SftSequence> =
                        indices.iter().map(|&i| &train.sequences[i]).collect();
                    SftBatch::collate(&refs, self.pad_id)
                })
                .collect();
            let metrics = self.step(&batches, report.steps, total_steps, &mut optimizer);
            report.steps += 1;
            report.num_tokens += batches.iter().map(|b| b.num_tokens() as u64).sum::<u64>();
            let mut metrics = StepMetrics {
                step: report.steps,
                num_tokens: report.num_tokens,
                ..metrics
            };
            if !eval.sequences.is_empty() && schedule.eval_due(report.steps) {
                let result = self.evaluate_sequences(&eval.sequences);
                metrics.eval_loss = Some(result.loss);
                report.eval_losses.push((report.steps, result.loss));
            }
            if let Some(dir) = &config.output_dir {
                schedule.checkpoint(dir, report.steps, &mut report.checkpoints, |tmp| {
                    self.save(tmp)
                })?;
                if schedule.is_last(report.steps) {
                    write_files_into(dir, |tmp| self.save(tmp))?;
                    report.checkpoints.push(dir.clone());
                }
            }
            record_step(
                metrics,
                step_started,
                &mut self.observer,
                &mut report.history,
            );
            Ok(())
        })?;
        if let Some(observer) = self.observer.as_mut() {
            observer.on_train_end(report.history.last());
        }
        report.train_time_secs = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// One optimiser step over the micro-batches of `batches`; returns its loss, gradient norm,
    /// learning rate and token accuracy.
    fn step<O: Optimizer<Qwen2ForCausalLm<B>, B>>(
        &mut self,
        batches: &[SftBatch],
        step: usize,
        total_steps: usize,
        optimizer: &mut O,
    ) -> StepMetrics {
        let step_tokens: usize = batches.iter().map(SftBatch::num_loss_tokens).sum();
        let denominator = step_tokens.max(1) as f64;
        let mut accumulator = GradientsAccumulator::<Qwen2ForCausalLm<B>>::new();
        let (mut loss, mut correct) = (0.0f64, 0usize);
        for batch in batches {
            let (out, layers) = if self.config.gradient_checkpointing {
                let (logits, layers) = batch.forward_checkpointed(&self.model);
                (token_loss_from_logits(logits, batch), Some(layers))
            } else {
                (token_loss(&self.model, batch), None)
            };
            correct += out.num_correct;
            let scaled = out.loss_sum.div_scalar(denominator);
            loss += scalar(scaled.clone().detach());
            let grads = backward_through(scaled, layers, &self.model);
            let grads = GradientsParams::from_grads(grads, &self.model);
            accumulator.accumulate(&self.model, grads);
        }
        let max_norm = self.config.optimizer.max_grad_norm.unwrap_or(f32::INFINITY);
        let (grads, grad_norm) = clip_grad_norm(&self.model, accumulator.grads(), max_norm);
        let learning_rate = self.config.optimizer.learning_rate_at(step, total_steps);
        if grad_norm.is_finite() && step_tokens > 0 {
            self.model = optimizer.step(learning_rate, self.model.clone(), grads);
        }
        StepMetrics {
            loss: loss as f32,
            grad_norm: Some(grad_norm),
            learning_rate,
            mean_token_accuracy: Some((correct as f64 / denominator) as f32),
            ..StepMetrics::default()
        }
    }
}
