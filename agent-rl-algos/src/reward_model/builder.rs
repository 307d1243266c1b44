//! [`RewardTrainerBuilder`]: required inputs in `builder(..)`, options chained, `build()` validates.

use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{ChatTokenizer, Qwen2ForSequenceClassification};
use burn::tensor::backend::AutodiffBackend;

use crate::build_checks::padding_token;
use crate::config::RewardConfig;
use crate::error::Result;
use crate::metrics::TrainObserver;
use crate::reward_model::dataset::PreferenceDataset;
use crate::reward_model::trainer::{Parts, RewardTrainer};

/// Assembles a [`RewardTrainer`]; get one from [`RewardTrainer::builder`].
pub struct RewardTrainerBuilder<B: AutodiffBackend> {
    model: Qwen2ForSequenceClassification<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: RewardConfig,
    observer: Option<Box<dyn TrainObserver>>,
    eval_dataset: Option<PreferenceDataset>,
    lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> std::fmt::Debug for RewardTrainerBuilder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewardTrainerBuilder")
            .field("config", &self.config)
            .field("observer", &self.observer.is_some())
            .field(
                "eval_dataset",
                &self.eval_dataset.as_ref().map(PreferenceDataset::len),
            )
            .field("lora", &self.lora)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> RewardTrainerBuilder<B> {
    pub(crate) fn new(
        model: Qwen2ForSequenceClassification<B>,
        tokenizer: Arc<ChatTokenizer>,
    ) -> Self {
        Self {
            model,
            tokenizer,
            config: RewardConfig::default(),
            observer: None,
            eval_dataset: None,
            lora: None,
        }
    }

    /// Sets every training setting (default [`RewardConfig::default`]).
    #[must_use]
    pub fn with_config(mut self, config: RewardConfig) -> Self {
        self.config = config;
        self
    }

    /// Trains LoRA adapters on the backbone plus the score head instead of every weight (`None`:
    /// every weight, the default): `build` freezes the backbone and adds fresh adapters (seeded
    /// from `config.seed`). Saved models are full checkpoints with the adapters merged.
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Receives the metrics of every step (closures `FnMut(&StepMetrics)` qualify).
    #[must_use]
    pub fn with_observer(mut self, observer: impl TrainObserver + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Evaluates on these pairs instead of splitting `eval_fraction` off the training data.
    #[must_use]
    pub fn with_eval_dataset(mut self, eval_dataset: PreferenceDataset) -> Self {
        self.eval_dataset = Some(eval_dataset);
        self
    }

    /// Validates the config and builds the trainer.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for an invalid setting; [`AlgoError::Core`] for invalid LoRA
    /// settings (the field named) or a model that already has adapters;
    /// [`AlgoError::InvalidInput`] when the tokenizer has neither a pad nor an eos token, or
    /// its vocabulary is larger than the model's.
    ///
    /// [`AlgoError::InvalidConfig`]: crate::AlgoError::InvalidConfig
    /// [`AlgoError::Core`]: crate::AlgoError::Core
    /// [`AlgoError::InvalidInput`]: crate::AlgoError::InvalidInput
    pub fn build(self) -> Result<RewardTrainer<B>> {
        self.config.validate()?;
        let pad_id = padding_token(&self.tokenizer, self.model.config().vocab_size)?;
        let mut model = match &self.lora {
            Some(lora) => self.model.with_lora(lora, self.config.seed)?,
            None => self.model,
        };
        // transformers reads the score at the last token that is not `pad_token_id`.
        model.pad_token_id = model.pad_token_id.or(Some(pad_id));
        Ok(RewardTrainer::from_parts(Parts {
            model,
            tokenizer: self.tokenizer,
            config: self.config,
            observer: self.observer,
            eval_dataset: self.eval_dataset,
            pad_id,
            lora: self.lora,
        }))
    }
}
