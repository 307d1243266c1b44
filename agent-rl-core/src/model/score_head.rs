//! [`Qwen2ForSequenceClassification`]: the Qwen2 backbone with a scalar score head, the layout of
//! Hugging Face's class of that name (reward models, and value heads for PPO).

use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;

use super::layout::token_linear;
use super::qwen2::{Qwen2ForCausalLm, ids_tensor};
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::lora::{LoraConfig, apply_lora};
use crate::weights::RandomSource;

/// Standard deviation of a fresh score head: Qwen2's `initializer_range` default, which
/// transformers uses for `score.weight`.
pub const SCORE_HEAD_INIT_STD: f32 = 0.02;

/// A Qwen2 model that maps each token's final hidden state to one score (`num_labels = 1`) and
/// reads the sequence's score at its last real token.
///
/// Checkpoints have Hugging Face's `Qwen2ForSequenceClassification` layout: the backbone under
/// `model.*` and `score.weight` `[1, hidden]` (no bias, no `lm_head`), so a reward model trained
/// with TRL loads here and one saved here loads in transformers
/// ([`from_pretrained`](Self::from_pretrained), [`save_pretrained`](Self::save_pretrained)).
/// Build a fresh one from a policy (an SFT checkpoint) with [`from_policy`](Self::from_policy).
///
/// ```
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::{Qwen2Config, Qwen2ForSequenceClassification};
/// use burn::backend::Flex;
///
/// let policy = random_model::<Flex>(&Qwen2Config::tiny(), 7, 0.3, &Default::default())?;
/// let rm = Qwen2ForSequenceClassification::from_policy(policy, Some(0), 1);
/// // Right-padded batch: the second row's score is read at its last real token (index 1).
/// let rows = vec![vec![5, 6, 7], vec![5, 6, 0]];
/// let mask = vec![vec![true; 3], vec![true, true, false]];
/// assert_eq!(rm.score_ids(&rows, Some(&mask)).dims(), [2]);
/// assert_eq!(rm.token_scores_ids(&rows, Some(&mask)).dims(), [2, 3]);
/// # Ok::<(), agent_rl_core::CoreError>(())
/// ```
#[derive(Module, Debug)]
pub struct Qwen2ForSequenceClassification<B: Backend> {
    /// The backbone (HF `model.*`). Its `lm_head` is always `None`: only
    /// [`Qwen2ForCausalLm::forward_hidden`] is used.
    pub model: Qwen2ForCausalLm<B>,
    /// The score head `[hidden, 1]` (HF `score.weight` `[1, hidden]`, transposed), no bias.
    pub score: Linear<B>,
    /// The padding token id written to `config.json` (transformers needs one to score batches;
    /// this crate reads the score position from the attention mask instead).
    #[module(skip)]
    pub pad_token_id: Option<u32>,
}

/// For each mask row, the index of its last real token: the position transformers reads the
/// score at ("the rightmost token that is not padding"), for left- and right-padded rows alike.
/// A row without real tokens gives 0, as in transformers.
pub fn last_token_indices(mask: &[Vec<bool>]) -> Vec<usize> {
    mask.iter()
        .map(|row| row.iter().rposition(|&keep| keep).unwrap_or(0))
        .collect()
}

impl<B: Backend> Qwen2ForSequenceClassification<B> {
    /// A reward model on `policy`'s backbone: its `lm_head` dropped and a fresh score head drawn
    /// from Normal(0, [`SCORE_HEAD_INIT_STD`]) by a ChaCha8 stream seeded with `seed` (the same
    /// head on every backend). LoRA adapters the policy carries are kept.
    pub fn from_policy(
        mut policy: Qwen2ForCausalLm<B>,
        pad_token_id: Option<u32>,
        seed: u64,
    ) -> Self {
        policy.lm_head = None;
        let hidden = policy.config.hidden_size;
        let data = RandomSource::new(seed, SCORE_HEAD_INIT_STD).normals(hidden);
        let weight = Tensor::from_data(TensorData::new(data, [hidden, 1]), &policy.device());
        Self::new(policy, weight, pad_token_id)
    }

    /// Assembles a model from a backbone and a head weight `[hidden, 1]` (burn layout).
    pub(crate) fn new(
        mut model: Qwen2ForCausalLm<B>,
        weight: Tensor<B, 2>,
        pad_token_id: Option<u32>,
    ) -> Self {
        model.lm_head = None;
        Self {
            model,
            score: Linear {
                weight: Param::from_tensor(weight),
                bias: None,
            },
            pad_token_id,
        }
    }

    /// The backbone's hyper-parameters.
    pub fn config(&self) -> &Qwen2Config {
        self.model.config()
    }

    /// The device the weights live on.
    pub fn device(&self) -> B::Device {
        self.model.device()
    }

    /// The score of every position (a value head's output). `mask[b]` marks real tokens; left
    /// and right padding are both fine (positions come from the mask).
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch, seq]`
    pub fn token_scores(&self, input_ids: Tensor<B, 2, Int>, mask: &[Vec<bool>]) -> Tensor<B, 2> {
        let [batch, seq] = input_ids.dims();
        let hidden = self.model.forward_hidden(input_ids, mask, None);
        token_linear(&self.score, hidden).reshape([batch, seq])
    }

    /// Each row's score at its last real token ([`last_token_indices`]).
    ///
    /// # Shapes
    /// - `token_scores`: `[batch, seq]` → `[batch]`
    pub fn pool(token_scores: Tensor<B, 2>, mask: &[Vec<bool>]) -> Tensor<B, 1> {
        let batch = mask.len();
        let device = token_scores.device();
        let indices: Vec<i64> = last_token_indices(mask)
            .into_iter()
            .map(|index| index as i64)
            .collect();
        let indices = Tensor::<B, 2, Int>::from_data(TensorData::new(indices, [batch, 1]), &device);
        token_scores.gather(1, indices).reshape([batch])
    }

    /// The sequence scores: [`token_scores`](Self::token_scores) read at each row's last real
    /// token.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch]`
    pub fn forward(&self, input_ids: Tensor<B, 2, Int>, mask: &[Vec<bool>]) -> Tensor<B, 1> {
        Self::pool(self.token_scores(input_ids, mask), mask)
    }

    /// [`token_scores`](Self::token_scores) of host token rows (all the same length; `mask`
    /// marks real tokens, `None` = no padding).
    ///
    /// # Panics
    /// When an id is not below `vocab_size`; check untrusted ids first with
    /// [`check_token_ids`](crate::generation::check_token_ids).
    pub fn token_scores_ids(&self, rows: &[Vec<u32>], mask: Option<&[Vec<bool>]>) -> Tensor<B, 2> {
        let full: Vec<Vec<bool>>;
        let mask = match mask {
            Some(mask) => mask,
            None => {
                full = rows.iter().map(|row| vec![true; row.len()]).collect();
                &full
            }
        };
        self.token_scores(ids_tensor(rows, &self.device()), mask)
    }

    /// [`forward`](Self::forward) on host token rows (see
    /// [`token_scores_ids`](Self::token_scores_ids)).
    ///
    /// # Panics
    /// When an id is not below `vocab_size`.
    pub fn score_ids(&self, rows: &[Vec<u32>], mask: Option<&[Vec<bool>]>) -> Tensor<B, 1> {
        let full: Vec<Vec<bool>> = rows.iter().map(|row| vec![true; row.len()]).collect();
        let mask = mask.unwrap_or(&full);
        Self::pool(self.token_scores_ids(rows, Some(mask)), mask)
    }

    /// This model with LoRA adapters on its backbone ([`apply_lora`]: the backbone frozen,
    /// adapters seeded by `seed`); the score head stays trainable, as PEFT's sequence
    /// classification task keeps `score` in `modules_to_save`.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for an invalid LoRA config or a backbone that already has
    /// adapters.
    pub fn with_lora(mut self, config: &LoraConfig, seed: u64) -> Result<Self, CoreError> {
        self.model = apply_lora(self.model, config, seed)?;
        Ok(self)
    }

    /// Whether the backbone carries LoRA adapters.
    pub fn has_adapters(&self) -> bool {
        self.model.has_adapters()
    }

    /// This model with its adapters folded into the backbone weights
    /// ([`Qwen2ForCausalLm::merge_adapters`]).
    pub fn merge_adapters(mut self) -> Self {
        self.model = self.model.merge_adapters();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_token_follows_left_and_right_padding() {
        let mask = vec![
            vec![false, false, true, true],
            vec![true, true, true, false],
            vec![false; 4],
        ];
        assert_eq!(last_token_indices(&mask), [3, 2, 0]);
    }
}
