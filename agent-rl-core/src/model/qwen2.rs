//! [`Qwen2ForCausalLm`]: embeddings, decoder layers, final norm, language-model head.

use burn::module::Param;
use burn::nn::Embedding;
use burn::prelude::*;
use burn::tensor::FloatDType;

use super::decoder_layer::DecoderLayer;
use super::kv_cache::KvCache;
use super::layout::contiguous;
use super::mask::{AttentionInputs, positions_from_mask};
use super::rms_norm::RmsNorm;
use crate::config::Qwen2Config;

/// The Qwen2 causal language model.
///
/// Build one with [`crate::weights::random_model`] (seeded random weights) or
/// [`crate::weights::load_pretrained`] (a Hugging Face snapshot). Runs on any burn backend: the
/// autodiff backend for training, the plain one (`model.valid()`) for rollouts and reference
/// models.
#[derive(Module, Debug)]
pub struct Qwen2ForCausalLm<B: Backend> {
    /// Token embedding `[vocab, hidden]` (HF `model.embed_tokens.weight`).
    pub embed_tokens: Embedding<B>,
    /// Decoder layers (HF `model.layers.N`).
    pub layers: Vec<DecoderLayer<B>>,
    /// Final norm (HF `model.norm`).
    pub norm: RmsNorm<B>,
    /// Untied head `[hidden, vocab]` (HF `lm_head.weight`, transposed); `None` when tied.
    pub lm_head: Option<Param<Tensor<B, 2>>>,
    /// The hyper-parameters.
    #[module(skip)]
    pub config: Qwen2Config,
}

/// Turns `u32` token rows into an Int tensor.
pub(crate) fn ids_tensor<B: Backend>(rows: &[Vec<u32>], device: &B::Device) -> Tensor<B, 2, Int> {
    let batch = rows.len();
    let seq = rows.first().map_or(0, Vec::len);
    let flat: Vec<i64> = rows.iter().flatten().map(|&id| i64::from(id)).collect();
    Tensor::from_data(TensorData::new(flat, [batch, seq]), device)
}

impl<B: Backend> Qwen2ForCausalLm<B> {
    /// The model's hyper-parameters.
    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    /// The device the weights live on.
    pub fn device(&self) -> B::Device {
        self.embed_tokens.weight.val().device()
    }

    /// The token embeddings of `input_ids`, in the model's float type (its norms'): an
    /// embedding held in half precision ([`crate::lora::BaseDtype`]) is widened after the
    /// lookup.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn embed(&self, input_ids: Tensor<B, 2, Int>) -> Tensor<B, 3> {
        let x = self.embed_tokens.forward(input_ids);
        let float = self.norm.weight.dtype();
        if x.dtype() == float {
            x
        } else {
            x.cast(FloatDType::from(float))
        }
    }

    /// Final hidden states (after the last norm), for value and reward heads.
    ///
    /// `mask[b]` marks the real tokens of the new positions (false = left padding). With a
    /// cache, the new tokens attend to the cached ones and are appended to the cache.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn forward_hidden(
        &self,
        input_ids: Tensor<B, 2, Int>,
        mask: &[Vec<bool>],
        cache: Option<&mut KvCache<B>>,
    ) -> Tensor<B, 3> {
        let config = self.config();
        let device = input_ids.device();
        let mut x = self.embed(input_ids);
        match cache {
            Some(cache) => {
                let past = cache.past_len();
                for (history, new) in cache.mask.iter_mut().zip(mask) {
                    history.extend_from_slice(new);
                }
                let positions: Vec<Vec<usize>> = cache
                    .mask
                    .iter()
                    .map(|row| positions_from_mask(row)[past..].to_vec())
                    .collect();
                let inputs = AttentionInputs::new(&cache.mask, &positions, past, config, &device);
                for (layer, slot) in self.layers.iter().zip(cache.layers.iter_mut()) {
                    x = layer.forward(x, &inputs, Some(slot));
                }
            }
            None => {
                let positions: Vec<Vec<usize>> =
                    mask.iter().map(|row| positions_from_mask(row)).collect();
                let inputs = AttentionInputs::new(mask, &positions, 0, config, &device);
                for layer in &self.layers {
                    x = layer.forward(x, &inputs, None);
                }
            }
        }
        self.norm.forward(x)
    }

    /// Projects hidden states to vocabulary logits (tied or untied head).
    ///
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]` → `[batch, seq, vocab]`
    pub fn logits(&self, hidden: Tensor<B, 3>) -> Tensor<B, 3> {
        let head = match &self.lm_head {
            Some(head) => head.val(),
            None => self.embed_tokens.weight.val().transpose(),
        };
        let [batch, seq, width] = hidden.dims();
        let vocab = head.dims()[1];
        // One [tokens, hidden] x [hidden, vocab] product (see `layout::token_linear`).
        let tokens = contiguous(hidden).reshape([batch * seq, width]);
        crate::fused::linear(tokens, head, None).reshape([batch, seq, vocab])
    }

    /// Logits for every position.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]` → `[batch, seq, vocab]`
    pub fn forward(&self, input_ids: Tensor<B, 2, Int>, mask: &[Vec<bool>]) -> Tensor<B, 3> {
        self.logits(self.forward_hidden(input_ids, mask, None))
    }

    /// Logits for every position of host token rows (all rows the same length; `mask` marks
    /// real tokens, `None` = no padding).
    ///
    /// # Panics
    /// When an id is not below `vocab_size`; check untrusted ids first with
    /// [`check_token_ids`](crate::generation::check_token_ids).
    pub fn forward_ids(&self, rows: &[Vec<u32>], mask: Option<&[Vec<bool>]>) -> Tensor<B, 3> {
        let full: Vec<Vec<bool>>;
        let mask = match mask {
            Some(mask) => mask,
            None => {
                full = rows.iter().map(|row| vec![true; row.len()]).collect();
                &full
            }
        };
        self.forward(ids_tensor(rows, &self.device()), mask)
    }

    /// A fresh cache for `batch` sequences.
    pub fn new_cache(&self, batch: usize) -> KvCache<B> {
        KvCache::new(self.layers.len(), batch)
    }
}
