//! The critic: a [`Qwen2ForSequenceClassification`] whose per-token scores are the values, and
//! how one is made from the policy.

use agent_rl_core::{Qwen2ForCausalLm, Qwen2ForSequenceClassification};
use burn::module::{AutodiffModule, Module, ModuleMapper, Param, ParamId};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor};

/// Gives every float parameter a fresh id (the tensors are shared until an optimiser step
/// replaces them).
struct FreshIds;

impl<B: Backend> ModuleMapper<B> for FreshIds {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (_, tensor, mapper) = param.consume();
        Param::from_mapped_value(ParamId::new(), tensor, mapper)
    }
}

/// A critic initialised from `policy`'s weights (a separate module: its own parameter ids and
/// autodiff leaves, so the two never share gradients) with a fresh score head seeded by `seed`.
pub(crate) fn critic_from_policy<B: AutodiffBackend>(
    policy: &Qwen2ForCausalLm<B>,
    pad_token_id: Option<u32>,
    seed: u64,
) -> Qwen2ForSequenceClassification<B> {
    let copy = Qwen2ForCausalLm::<B>::from_inner(policy.valid()).map(&mut FreshIds);
    Qwen2ForSequenceClassification::from_policy(copy, pad_token_id, seed)
}

/// A copy of `model` as a separate module (its own parameter ids and autodiff leaves): the
/// critic a PPO run starts from the reward model, which keeps scoring unchanged.
pub(crate) fn fresh_copy<B: AutodiffBackend>(
    model: &Qwen2ForSequenceClassification<B>,
) -> Qwen2ForSequenceClassification<B> {
    Qwen2ForSequenceClassification::<B>::from_inner(model.valid()).map(&mut FreshIds)
}

/// The critic's value of the state before each of the last `completion_len` tokens: its score at
/// the position that predicts the token (TRL: `full_value[:, context_length - 1 : -1]`), the
/// same alignment as the policy's log-probabilities.
///
/// # Shapes
/// - `input_ids`: `[batch, seq]`, `completion_len < seq` → `[batch, completion_len]`
pub(crate) fn token_values<B: Backend>(
    critic: &Qwen2ForSequenceClassification<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    completion_len: usize,
) -> Tensor<B, 2> {
    let [batch, seq] = input_ids.dims();
    critic
        .token_scores(input_ids, mask)
        .slice([0..batch, seq - completion_len - 1..seq - 1])
}
