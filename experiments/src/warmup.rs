//! The SFT warm-up every study starts from (`grpo_gain`, `grpo_k`, `rm_pair_kinds`); its
//! settings are `agent_rl::algos::toy::toy_warmup_config`.

use std::sync::Arc;

use agent_rl::algos::sft::{SftDataset, SftTrainer};
use agent_rl::algos::{AlgoError, SftConfig};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::{ChatTokenizer, Qwen2ForCausalLm};

/// Trains `model` on `rows` with `config` and returns it.
///
/// # Errors
/// From building or running the SFT trainer.
pub fn sft(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    config: SftConfig,
    rows: &SftDataset,
) -> Result<Qwen2ForCausalLm<B>, AlgoError> {
    let mut trainer = SftTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .build()?;
    trainer.train(rows)?;
    Ok(trainer.into_model())
}
