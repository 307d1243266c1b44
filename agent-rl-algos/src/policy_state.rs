//! [`PolicyState`]: the policy side every RL trainer (GRPO, PPO) holds, trains and
//! checkpoints — the policy, its frozen reference, the LoRA settings and the policy's AdamW.
//!
//! Both trainers keep these four the same way and write them into their checkpoints the same
//! way (`model/` or `adapter/`, `reference/`, `optimizer.bin`, `config.json`,
//! `trainer_state.json`), so that code lives here once; PPO adds its critic beside it.

use std::path::Path;

use agent_rl_core::lora::{LoraConfig, apply_lora};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::module::AutodiffModule;
use burn::optim::AdamW;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::tensor::backend::AutodiffBackend;
use serde::Serialize;

use crate::checkpoint_dir::verify_checkpoint_dir;
use crate::config::OptimizerConfig;
use crate::error::Result;
use crate::optim::init_adamw;
use crate::run_identity::{check_checkpoint_run, run_id_for_checkpoint};
use crate::trainer_state::{
    TrainerState, load_optimizer, load_policy, load_reference, read_trainer_state, save_optimizer,
    save_policy, write_json,
};

/// AdamW over the policy.
pub(crate) type PolicyOptim<B> = OptimizerAdaptor<AdamW, Qwen2ForCausalLm<B>, B>;

/// The policy being trained with what goes with it in every RL trainer.
pub(crate) struct PolicyState<B: AutodiffBackend> {
    /// The policy; `None` only inside an optimiser step.
    pub(crate) model: Option<Qwen2ForCausalLm<B>>,
    /// A frozen copy of the initial policy on the inner backend, when the run needs reference
    /// log-probabilities and does not train LoRA (whose reference is the policy with its
    /// adapters off).
    pub(crate) reference: Option<Qwen2ForCausalLm<B::InnerBackend>>,
    /// The adapters' settings when training LoRA.
    pub(crate) lora: Option<LoraConfig>,
    /// The policy's AdamW.
    pub(crate) optimizer: PolicyOptim<B>,
}

impl<B: AutodiffBackend> PolicyState<B> {
    /// The state a run starts from: `policy` with LoRA adapters added when `lora` is set
    /// (initialised from `seed`), a frozen copy of it as the reference when `needs_reference`
    /// and not training LoRA, and a fresh AdamW from `optimizer`.
    ///
    /// # Errors
    /// LoRA errors (an adapter that does not fit the model).
    pub(crate) fn new(
        policy: Qwen2ForCausalLm<B>,
        lora: Option<LoraConfig>,
        needs_reference: bool,
        optimizer: &OptimizerConfig,
        seed: u64,
    ) -> Result<Self> {
        let model = match &lora {
            Some(lora) => apply_lora(policy, lora, seed)?,
            None => policy,
        };
        // With LoRA the reference is the policy with its adapters off: nothing to keep.
        let reference = (needs_reference && lora.is_none()).then(|| model.valid());
        Ok(Self {
            model: Some(model),
            reference,
            lora,
            optimizer: init_adamw(optimizer),
        })
    }

    /// The policy.
    ///
    /// # Panics
    /// Never: the model is only moved out for the duration of an optimiser step.
    pub(crate) fn model(&self) -> &Qwen2ForCausalLm<B> {
        self.model
            .as_ref()
            .expect("the model is only taken inside an optimiser step")
    }

    /// The policy, by value.
    ///
    /// # Panics
    /// Never (see [`Self::model`]).
    pub(crate) fn into_model(self) -> Qwen2ForCausalLm<B> {
        self.model
            .expect("the model is only taken inside an optimiser step")
    }

    /// Writes the files every RL checkpoint has into `dir`: the policy (with `tokenizer`'s files
    /// in `model/`) and reference ([`save_policy`]), the policy's AdamW state `optimizer.bin`, the run's resolved `config`
    /// as `config.json` and `state` as `trainer_state.json`.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`](crate::AlgoError::Checkpoint) naming the file that could not be
    /// written; model export errors.
    pub(crate) fn save(
        &self,
        dir: &Path,
        config: &impl Serialize,
        state: &TrainerState,
        tokenizer: &ChatTokenizer,
    ) -> Result<()> {
        save_policy(
            dir,
            self.model(),
            self.lora.as_ref(),
            self.reference.as_ref(),
            tokenizer,
        )?;
        save_optimizer(&self.optimizer, dir, "optimizer")?;
        write_json(&dir.join("config.json"), config)?;
        let state = TrainerState {
            run_id: run_id_for_checkpoint(dir)?,
            ..state.clone()
        };
        write_json(&dir.join("trainer_state.json"), &state)
    }

    /// Verifies checkpoint `dir` against its manifest ([`verify_checkpoint_dir`]), then reads
    /// back what [`Self::save`] wrote: the trainer state (its seed must be `seed`), the policy
    /// ([`load_policy`], onto this policy's frozen base with LoRA, whose settings must match),
    /// the reference when this state keeps one, and the policy's AdamW state (built from
    /// `optimizer`). `self` is left as it is, so a caller that loads more can commit all or
    /// nothing.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`](crate::AlgoError::Checkpoint) for an incomplete or damaged
    /// checkpoint, missing or unreadable files, another seed, or optimizer state that does not
    /// match the model; model load errors.
    pub(crate) fn load(
        &self,
        dir: &Path,
        seed: u64,
        optimizer: &OptimizerConfig,
    ) -> Result<(Self, TrainerState)> {
        verify_checkpoint_dir(dir)?;
        let state = read_trainer_state(dir, seed)?;
        check_checkpoint_run(
            dir,
            &dir.join("trainer_state.json"),
            state.run_id.as_deref(),
        )?;
        let device = self.model().device();
        let model = load_policy(dir, self.model(), self.lora.as_ref())?;
        let reference = match self.reference {
            Some(_) => Some(load_reference::<B>(dir, &device)?),
            None => None,
        };
        let optimizer = load_optimizer(
            optimizer,
            &model,
            &state.param_ids,
            dir,
            "optimizer",
            &device,
        )?;
        let loaded = Self {
            model: Some(model),
            reference,
            lora: self.lora.clone(),
            optimizer,
        };
        Ok((loaded, state))
    }
}
