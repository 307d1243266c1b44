//! Field checks shared by the trainer configs' `validate()`: each returns the first invalid
//! field as [`AlgoError::InvalidConfig`], so a config checks its fields in a fixed order.

use agent_rl_core::{CoreError, SamplingConfig};

use crate::config::{MAX_SFT_BATCH_SIZE, OptimizerConfig};
use crate::error::{AlgoError, Result};

/// Every `(field, value)` is ≥ 1.
pub(super) fn at_least_one(fields: &[(&str, usize)]) -> Result<()> {
    match fields.iter().find(|(_, value)| *value == 0) {
        Some((field, _)) => Err(AlgoError::config(*field, "is 0; must be >= 1")),
        None => Ok(()),
    }
}

/// `max_prompt_length` is unset or ≥ 1.
pub(super) fn max_prompt_length(value: Option<usize>) -> Result<()> {
    unset_or_positive("max_prompt_length", value, "for no truncation")
}

/// `value` of `field` is unset or ≥ 1; `unset` says what leaving it unset does.
pub(super) fn unset_or_positive(field: &str, value: Option<usize>, unset: &str) -> Result<()> {
    if value == Some(0) {
        return Err(AlgoError::config(
            field,
            format!("is 0; set >= 1, or null {unset}"),
        ));
    }
    Ok(())
}

/// The rollouts' sampling settings: `max_new_tokens` agrees with `max_completion_length`
/// (`setter` sets both), every sampling field is in range, and sampling is not greedy
/// (`greedy_reason` says why the algorithm needs that).
pub(super) fn rollout_sampling(
    sampling: &SamplingConfig,
    max_completion_length: usize,
    setter: &str,
    greedy_reason: &str,
) -> Result<()> {
    if sampling.max_new_tokens != max_completion_length {
        return Err(AlgoError::config(
            "sampling.max_new_tokens",
            format!(
                "is {} but max_completion_length is {max_completion_length}; they must agree — \
                 set both with {setter}",
                sampling.max_new_tokens
            ),
        ));
    }
    match sampling.validate() {
        Ok(()) => {}
        Err(CoreError::InvalidArgument { field, reason }) => {
            return Err(AlgoError::config(format!("sampling.{field}"), reason));
        }
        Err(other) => return Err(other.into()),
    }
    if sampling.is_greedy() {
        return Err(AlgoError::config("sampling.temperature", greedy_reason));
    }
    Ok(())
}

/// Every reward weight is finite.
pub(super) fn reward_weights(weights: &[f32]) -> Result<()> {
    match weights.iter().position(|w| !w.is_finite()) {
        Some(i) => Err(AlgoError::config(
            format!("reward_weights[{i}]"),
            "is not finite; use finite weights",
        )),
        None => Ok(()),
    }
}

/// The length of a supervised run (`num_train_epochs` or `max_steps`) and its micro-batch size,
/// whose rows are `batch_rows` ("pairs", "sequences").
pub(super) fn epochs_and_batch_size(
    num_train_epochs: usize,
    max_steps: Option<usize>,
    batch_size: usize,
    batch_rows: &str,
) -> Result<()> {
    if num_train_epochs == 0 && max_steps.is_none() {
        return Err(AlgoError::config(
            "num_train_epochs",
            "is 0 and max_steps is null; set one of them >= 1",
        ));
    }
    unset_or_positive("max_steps", max_steps, "to run num_train_epochs")?;
    if batch_size == 0 {
        return Err(AlgoError::config("batch_size", "is 0; must be >= 1"));
    }
    if batch_size > MAX_SFT_BATCH_SIZE {
        return Err(AlgoError::config(
            "batch_size",
            format!(
                "is {batch_size}; at most {MAX_SFT_BATCH_SIZE} {batch_rows} fit one micro-batch in \
                 memory (use gradient_accumulation_steps for larger effective batches)"
            ),
        ));
    }
    Ok(())
}

/// The evaluation split and schedule, the checkpoint schedule and the optimiser of a supervised
/// run.
pub(super) fn eval_save_and_optimizer(
    eval_fraction: f32,
    eval_steps: Option<usize>,
    save_steps: Option<usize>,
    optimizer: &OptimizerConfig,
) -> Result<()> {
    if !(0.0..1.0).contains(&eval_fraction) {
        return Err(AlgoError::config(
            "eval_fraction",
            format!("is {eval_fraction}; must be in [0, 1) (0 = no eval split)"),
        ));
    }
    unset_or_positive("eval_steps", eval_steps, "to evaluate only at the end")?;
    unset_or_positive("save_steps", save_steps, "to save only the final model")?;
    optimizer.validate_with_prefix("optimizer.")
}
