//! [`RewardTrainer`]: a reward model trained on preference pairs with the Bradley–Terry loss.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::weights::SaveOptions;
use agent_rl_core::{ChatTokenizer, Qwen2ForSequenceClassification};
use burn::module::AutodiffModule;
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::config::RewardConfig;
use crate::error::{AlgoError, Result};
use crate::metrics::{StepMetrics, TrainObserver};
use crate::optim::{clip_grad_norm, init_adamw};
use crate::reward_model::batch::{TokenizedPair, TokenizedPairs, pair_scores, tokenize_pairs};
use crate::reward_model::builder::RewardTrainerBuilder;
use crate::reward_model::dataset::PreferenceDataset;
use crate::reward_model::loss::{PreferenceMetrics, preference_loss};
use crate::supervised::{Schedule, record_step, scalar, schedule_settings, write_run_config};

/// The reward model being trained.
type Model<B> = Qwen2ForSequenceClassification<B>;

/// Loss and metrics of a reward model on a set of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RewardEvalResult {
    /// Mean Bradley–Terry loss (with margins and centring as configured).
    pub loss: f32,
    /// Accuracy, margin and reward statistics.
    pub metrics: PreferenceMetrics,
    /// Pairs evaluated.
    pub num_pairs: usize,
}

/// What a training run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RewardReport {
    /// Optimiser steps taken.
    pub steps: usize,
    /// Training pairs used (after the length filter).
    pub num_train_pairs: usize,
    /// Pairs evaluated on.
    pub num_eval_pairs: usize,
    /// Pairs dropped because a side exceeded `max_length` (train and eval).
    pub num_filtered: usize,
    /// Real tokens processed (TRL's `num_tokens`).
    pub num_tokens: u64,
    /// `(step, result)` of every evaluation.
    pub evals: Vec<(usize, RewardEvalResult)>,
    /// The metrics of every step, as the observer saw them.
    pub history: Vec<StepMetrics>,
    /// Directories written (checkpoints, then the final model).
    pub checkpoints: Vec<PathBuf>,
    /// Wall-clock seconds of the run.
    pub train_time_secs: f64,
}

/// Trains a [`Qwen2ForSequenceClassification`] so that chosen sequences outscore rejected ones.
///
/// Loss per optimiser step: [`preference_loss`] over its pairs (the mean over pairs, so
/// gradient accumulation equals one big batch); gradients clipped to the global norm, AdamW at
/// the scheduled learning rate; a step with a non-finite gradient norm is skipped. Each
/// micro-batch scores its chosen and rejected sequences in one right-padded forward pass.
///
/// ```
/// use agent_rl_algos::reward_model::{PreferenceDataset, RewardTrainer};
/// use agent_rl_algos::RewardConfig;
/// use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::Qwen2ForSequenceClassification;
/// use burn::backend::{Autodiff, Flex};
///
/// let policy = random_model::<Autodiff<Flex>>(&toy_model_config(), 0, 0.05, &Default::default())?;
/// let model = Qwen2ForSequenceClassification::from_policy(policy, None, 0);
/// let data = PreferenceDataset::from_jsonl_str(
///     r#"{"prompt": [{"role": "user", "content": "hi"}], "chosen": [{"role": "assistant", "content": "hello"}], "rejected": [{"role": "assistant", "content": "no"}]}"#,
///     "inline.jsonl",
/// )?;
/// let config = RewardConfig { max_steps: Some(2), batch_size: 1, ..RewardConfig::default() };
/// let mut trainer = RewardTrainer::builder(model, toy_tokenizer()?).with_config(config).build()?;
/// let report = trainer.train(&data)?;
/// assert_eq!(report.steps, 2);
/// assert!(report.history[0].preference.is_some());
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub struct RewardTrainer<B: AutodiffBackend> {
    model: Model<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: RewardConfig,
    observer: Option<Box<dyn TrainObserver>>,
    eval_dataset: Option<PreferenceDataset>,
    pad_id: u32,
    lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> std::fmt::Debug for RewardTrainer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewardTrainer")
            .field("config", &self.config)
            .field("pad_id", &self.pad_id)
            .field("lora", &self.lora)
            .finish_non_exhaustive()
    }
}

fn host<B: Backend>(tensor: Tensor<B, 1>) -> Vec<f32> {
    tensor.into_data().iter::<f32>().collect()
}

/// The parts of a trainer, as the builder assembles them.
pub(crate) struct Parts<B: AutodiffBackend> {
    pub model: Model<B>,
    pub tokenizer: Arc<ChatTokenizer>,
    pub config: RewardConfig,
    pub observer: Option<Box<dyn TrainObserver>>,
    pub eval_dataset: Option<PreferenceDataset>,
    pub pad_id: u32,
    pub lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> RewardTrainer<B> {
    /// Starts a trainer for `model` (e.g. [`Qwen2ForSequenceClassification::from_policy`] on an
    /// SFT checkpoint) with its `tokenizer` (owned or shared via `Arc`).
    pub fn builder(
        model: Model<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> RewardTrainerBuilder<B> {
        RewardTrainerBuilder::new(model, tokenizer.into())
    }

    pub(crate) fn from_parts(parts: Parts<B>) -> Self {
        Self {
            model: parts.model,
            tokenizer: parts.tokenizer,
            config: parts.config,
            observer: parts.observer,
            eval_dataset: parts.eval_dataset,
            pad_id: parts.pad_id,
            lora: parts.lora,
        }
    }

    /// The model (trained once [`Self::train`] has run).
    pub fn model(&self) -> &Model<B> {
        &self.model
    }

    /// The trained model.
    pub fn into_model(self) -> Model<B> {
        self.model
    }

    /// The settings.
    pub fn config(&self) -> &RewardConfig {
        &self.config
    }

    /// The LoRA settings when training adapters, `None` for full fine-tuning.
    pub fn lora(&self) -> Option<&LoraConfig> {
        self.lora.as_ref()
    }

    fn tokenize(&self, dataset: &PreferenceDataset) -> Result<TokenizedPairs> {
        tokenize_pairs(
            &self.tokenizer,
            dataset,
            self.config.max_length,
            self.model.config().vocab_size,
        )
    }

    /// Loss, accuracy and reward statistics of the current model on `dataset` (no gradients).
    ///
    /// # Errors
    /// As [`Self::train`] for malformed rows.
    pub fn evaluate(&self, dataset: &PreferenceDataset) -> Result<RewardEvalResult> {
        let pairs = self.tokenize(dataset)?;
        Ok(self.evaluate_pairs(&pairs))
    }

    fn evaluate_pairs(&self, pairs: &TokenizedPairs) -> RewardEvalResult {
        let model = self.model.valid();
        let (mut chosen, mut rejected, mut loss_sum) = (Vec::new(), Vec::new(), 0.0f64);
        for chunk in pairs.pairs.chunks(self.config.batch_size) {
            let refs: Vec<&TokenizedPair> = chunk.iter().collect();
            let (c, r) = pair_scores(&model, &refs, self.pad_id);
            let margin = pairs.has_margin.then(|| margins(&refs, &c.device()));
            let loss = preference_loss(
                c.clone(),
                r.clone(),
                margin,
                self.config.center_rewards_coefficient,
            );
            loss_sum += scalar(loss) * chunk.len() as f64;
            chosen.extend(host(c));
            rejected.extend(host(r));
        }
        let count = pairs.pairs.len();
        RewardEvalResult {
            loss: (loss_sum / count.max(1) as f64) as f32,
            metrics: PreferenceMetrics::from_rewards(&chosen, &rejected),
            num_pairs: count,
        }
    }

    /// The model in Hugging Face's `Qwen2ForSequenceClassification` layout (LoRA adapters
    /// merged), with the tokenizer files beside it.
    fn save(&self, dir: &Path) -> Result<()> {
        self.model.save_pretrained(dir, SaveOptions::default())?;
        self.tokenizer.save_to_dir(dir)?;
        Ok(())
    }

    /// Trains on `dataset` (minus the eval split, unless an eval dataset was given).
    ///
    /// # Errors
    /// [`AlgoError::DatasetRow`] naming the file and line of a row that cannot be rendered or
    /// tokenised; [`AlgoError::InvalidInput`] when no training pairs remain (after the split and
    /// the length filter); [`AlgoError::Core`] / [`AlgoError::Checkpoint`] when a model cannot be
    /// written.
    pub fn train(&mut self, dataset: &PreferenceDataset) -> Result<RewardReport> {
        let started = Instant::now();
        let (train_rows, eval_rows) = match &self.eval_dataset {
            Some(eval) => (dataset.clone(), eval.clone()),
            None => dataset.split(self.config.eval_fraction, self.config.seed),
        };
        let train = self.tokenize(&train_rows)?;
        let eval = self.tokenize(&eval_rows)?;
        if train.pairs.is_empty() {
            return Err(AlgoError::input(
                "dataset",
                format!(
                    "has no training pairs (after the eval split and dropping {} pairs longer \
                     than max_length)",
                    train.num_filtered
                ),
            ));
        }
        let config = self.config.clone();
        let schedule = Schedule::new(train.pairs.len(), schedule_settings!(config));
        let total_steps = schedule.total_steps;
        let mut report = RewardReport {
            num_train_pairs: train.pairs.len(),
            num_eval_pairs: eval.pairs.len(),
            num_filtered: train.num_filtered + eval.num_filtered,
            ..RewardReport::default()
        };
        if let Some(dir) = &config.output_dir {
            write_run_config(dir, "reward_config.json", &config)?;
        }
        let mut optimizer = init_adamw::<B, Model<B>>(&config.optimizer);
        schedule.run(|group| {
            let step_started = Instant::now();
            let batches: Vec<Vec<&TokenizedPair>> = group
                .iter()
                .map(|indices| indices.iter().map(|&i| &train.pairs[i]).collect())
                .collect();
            let metrics = self.step(
                &batches,
                train.has_margin,
                report.steps,
                total_steps,
                &mut optimizer,
            );
            report.steps += 1;
            report.num_tokens += batches
                .iter()
                .flatten()
                .map(|p| (p.chosen.len() + p.rejected.len()) as u64)
                .sum::<u64>();
            let mut metrics = StepMetrics {
                step: report.steps,
                num_tokens: report.num_tokens,
                ..metrics
            };
            if !eval.pairs.is_empty() && schedule.eval_due(report.steps) {
                let result = self.evaluate_pairs(&eval);
                metrics.eval_loss = Some(result.loss);
                metrics.eval_preference = Some(result.metrics);
                report.evals.push((report.steps, result));
            }
            if let Some(dir) = &config.output_dir {
                schedule.checkpoint(dir, report.steps, &mut report.checkpoints, |tmp| {
                    self.save(tmp)
                })?;
                if schedule.is_last(report.steps) {
                    self.save(dir)?;
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

    /// One optimiser step over the micro-batches of `batches`.
    fn step<O: Optimizer<Model<B>, B>>(
        &mut self,
        batches: &[Vec<&TokenizedPair>],
        has_margin: bool,
        step: usize,
        total_steps: usize,
        optimizer: &mut O,
    ) -> StepMetrics {
        let step_pairs: usize = batches.iter().map(Vec::len).sum();
        let mut accumulator = GradientsAccumulator::<Model<B>>::new();
        let (mut loss_total, mut chosen, mut rejected) = (0.0f64, Vec::new(), Vec::new());
        for batch in batches {
            let (c, r) = pair_scores(&self.model, batch, self.pad_id);
            let margin = has_margin.then(|| margins(batch, &c.device()));
            chosen.extend(host(c.clone().detach()));
            rejected.extend(host(r.clone().detach()));
            // Each micro-batch's mean, weighted by its share of the step's pairs.
            let weight = batch.len() as f64 / step_pairs.max(1) as f64;
            let loss = preference_loss(c, r, margin, self.config.center_rewards_coefficient)
                .mul_scalar(weight);
            loss_total += scalar(loss.clone().detach());
            let grads = GradientsParams::from_grads(loss.backward(), &self.model);
            accumulator.accumulate(&self.model, grads);
        }
        let max_norm = self.config.optimizer.max_grad_norm.unwrap_or(f32::INFINITY);
        let (grads, grad_norm) = clip_grad_norm(&self.model, accumulator.grads(), max_norm);
        let learning_rate = self.config.optimizer.learning_rate_at(step, total_steps);
        if grad_norm.is_finite() {
            self.model = optimizer.step(learning_rate, self.model.clone(), grads);
        }
        StepMetrics {
            loss: loss_total as f32,
            grad_norm: Some(grad_norm),
            learning_rate,
            preference: Some(PreferenceMetrics::from_rewards(&chosen, &rejected)),
            ..StepMetrics::default()
        }
    }
}

/// The margins of `pairs` as a tensor.
fn margins<B: Backend>(pairs: &[&TokenizedPair], device: &B::Device) -> Tensor<B, 1> {
    let values: Vec<f32> = pairs.iter().map(|p| p.margin).collect();
    Tensor::from_data(TensorData::new(values, [pairs.len()]), device)
}
