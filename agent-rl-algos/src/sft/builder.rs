//! [`SftTrainerBuilder`]: required inputs in `builder(..)`, options chained, `build()` validates.

use std::sync::Arc;

use agent_rl_core::lora::{LoraConfig, apply_lora};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::tensor::backend::AutodiffBackend;

use crate::build_checks::{checkpointing_without_lora_dropout, padding_token};
use crate::config::SftConfig;
use crate::error::Result;
use crate::metrics::TrainObserver;
use crate::sft::dataset::SftDataset;
use crate::sft::trainer::SftTrainer;

/// Assembles an [`SftTrainer`]; get one from [`SftTrainer::builder`].
pub struct SftTrainerBuilder<B: AutodiffBackend> {
    model: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: SftConfig,
    observer: Option<Box<dyn TrainObserver>>,
    eval_dataset: Option<SftDataset>,
    lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> std::fmt::Debug for SftTrainerBuilder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SftTrainerBuilder")
            .field("config", &self.config)
            .field("observer", &self.observer.is_some())
            .field(
                "eval_dataset",
                &self.eval_dataset.as_ref().map(SftDataset::len),
            )
            .field("lora", &self.lora)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> SftTrainerBuilder<B> {
    pub(crate) fn new(model: Qwen2ForCausalLm<B>, tokenizer: Arc<ChatTokenizer>) -> Self {
        Self {
            model,
            tokenizer,
            config: SftConfig::default(),
            observer: None,
            eval_dataset: None,
            lora: None,
        }
    }

    /// Trains LoRA adapters instead of every weight (`None`: every weight, the default): `build` freezes the model's weights and
    /// adds fresh adapters (seeded from `config.seed`); saved models are then adapters in PEFT's
    /// layout (`adapter_config.json` + `adapter_model.safetensors`).
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Sets every training setting (default [`SftConfig::default`]).
    #[must_use]
    pub fn with_config(mut self, config: SftConfig) -> Self {
        self.config = config;
        self
    }

    /// Receives the metrics of every step (closures `FnMut(&StepMetrics)` qualify).
    #[must_use]
    pub fn with_observer(mut self, observer: impl TrainObserver + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Evaluates on these rows instead of splitting `eval_fraction` off the training data.
    #[must_use]
    pub fn with_eval_dataset(mut self, eval_dataset: SftDataset) -> Self {
        self.eval_dataset = Some(eval_dataset);
        self
    }

    /// Validates the config and builds the trainer.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for an invalid setting; [`AlgoError::Core`] for invalid LoRA
    /// settings (the field named); [`AlgoError::InvalidInput`] when the
    /// tokenizer has neither a pad nor an eos token to pad batches with, or its vocabulary is
    /// larger than the model's.
    ///
    /// [`AlgoError::InvalidConfig`]: crate::AlgoError::InvalidConfig
    /// [`AlgoError::Core`]: crate::AlgoError::Core
    /// [`AlgoError::InvalidInput`]: crate::AlgoError::InvalidInput
    pub fn build(self) -> Result<SftTrainer<B>> {
        self.config.validate()?;
        let pad_id = padding_token(&self.tokenizer, self.model.config().vocab_size)?;
        checkpointing_without_lora_dropout(self.config.gradient_checkpointing, self.lora.as_ref())?;
        let model = match &self.lora {
            Some(lora) => apply_lora(self.model, lora, self.config.seed)?,
            None => self.model,
        };
        Ok(SftTrainer::from_parts(
            model,
            self.tokenizer,
            self.config,
            self.observer,
            self.eval_dataset,
            pad_id,
            self.lora,
        ))
    }
}
