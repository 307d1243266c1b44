//! Checks the trainer builders share in `build()`.

use agent_rl_core::ChatTokenizer;
use agent_rl_core::lora::LoraConfig;

use crate::error::{AlgoError, Result};

/// The token that pads batches (the tokenizer's pad token, else its first eos token), after
/// checking that the tokenizer's vocabulary fits the model's `model_vocab`.
///
/// # Errors
/// [`AlgoError::InvalidInput`] (`tokenizer`) when it has neither token or too many tokens.
pub(crate) fn padding_token(tokenizer: &ChatTokenizer, model_vocab: usize) -> Result<u32> {
    let pad_id = tokenizer
        .pad_id
        .or_else(|| tokenizer.eos_ids.first().copied())
        .ok_or_else(|| {
            AlgoError::input(
                "tokenizer",
                "has neither a pad token nor an eos token; set `pad_token` in \
                 tokenizer_config.json",
            )
        })?;
    if tokenizer.vocab_size() > model_vocab {
        return Err(AlgoError::input(
            "tokenizer",
            format!(
                "has {} tokens but the model's vocabulary is {model_vocab}; use the model's own \
                 tokenizer",
                tokenizer.vocab_size()
            ),
        ));
    }
    Ok(pad_id)
}

/// Gradient checkpointing re-runs each layer in the backward pass, which LoRA dropout would
/// give other masks than the forward.
///
/// # Errors
/// [`AlgoError::InvalidConfig`] (`gradient_checkpointing`) for that combination.
pub(crate) fn checkpointing_without_lora_dropout(
    gradient_checkpointing: bool,
    lora: Option<&LoraConfig>,
) -> Result<()> {
    if gradient_checkpointing && lora.is_some_and(|l| l.dropout > 0.0) {
        return Err(AlgoError::config(
            "gradient_checkpointing",
            "is true with LoRA dropout > 0: the re-run layer would draw other dropout masks \
             than the forward; set lora.dropout = 0 or gradient_checkpointing = false",
        ));
    }
    Ok(())
}
