//! [`SftBatch`]: sequences right-padded into one batch, with segment-aware (block-diagonal
//! causal) attention, and the model forward pass over it.

use agent_rl_core::model::{AttentionInputs, AttentionMask, CheckpointedLayers};
use agent_rl_core::{Qwen2Config, Qwen2ForCausalLm};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::sft::packing::SftSequence;

/// A padded batch of [`SftSequence`]s and the host-side targets of its next-token loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SftBatch {
    /// `[batch][seq]` token ids, right-padded with the pad id.
    pub input_ids: Vec<Vec<u32>>,
    /// `[batch][seq]` segment of each position: `Some(k)` for the `k`-th example of the row,
    /// `None` for padding.
    pub segments: Vec<Vec<Option<usize>>>,
    /// `[batch][seq]` position id of each token inside its example (0 for padding).
    pub positions: Vec<Vec<usize>>,
    /// `[batch][seq - 1]`: position `t` predicts token `t + 1` inside the loss.
    pub loss_targets: Vec<Vec<bool>>,
}

impl SftBatch {
    /// Right-pads `sequences` to the longest with `pad_id`.
    pub fn collate(sequences: &[&SftSequence], pad_id: u32) -> Self {
        let seq = sequences.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
        let mut batch = Self {
            input_ids: Vec::with_capacity(sequences.len()),
            segments: Vec::with_capacity(sequences.len()),
            positions: Vec::with_capacity(sequences.len()),
            loss_targets: Vec::with_capacity(sequences.len()),
        };
        for sequence in sequences {
            let mut ids = sequence.input_ids.clone();
            ids.resize(seq, pad_id);
            let mut segments = Vec::with_capacity(seq);
            let mut positions = Vec::with_capacity(seq);
            for (index, &length) in sequence.segment_lengths.iter().enumerate() {
                segments.extend(std::iter::repeat_n(Some(index), length));
                positions.extend(0..length);
            }
            segments.resize(seq, None);
            positions.resize(seq, 0);
            let mut targets = sequence.loss_targets();
            targets.resize(seq - 1, false);
            batch.input_ids.push(ids);
            batch.segments.push(segments);
            batch.positions.push(positions);
            batch.loss_targets.push(targets);
        }
        batch
    }

    /// Number of rows.
    pub fn batch_size(&self) -> usize {
        self.input_ids.len()
    }

    /// Padded length of the rows.
    pub fn seq_len(&self) -> usize {
        self.input_ids.first().map_or(0, Vec::len)
    }

    /// Real (non-padding) tokens in the batch (TRL's `num_tokens` counts these).
    pub fn num_tokens(&self) -> usize {
        self.segments
            .iter()
            .flatten()
            .filter(|s| s.is_some())
            .count()
    }

    /// Tokens that carry loss.
    pub fn num_loss_tokens(&self) -> usize {
        self.loss_targets.iter().flatten().filter(|&&t| t).count()
    }

    /// The token ids as an Int tensor `[batch, seq]`.
    pub fn ids_tensor<B: Backend>(&self, device: &B::Device) -> Tensor<B, 2, Int> {
        let flat: Vec<i64> = self
            .input_ids
            .iter()
            .flatten()
            .map(|&id| i64::from(id))
            .collect();
        Tensor::from_data(
            TensorData::new(flat, [self.batch_size(), self.seq_len()]),
            device,
        )
    }

    /// Attention mask and rotary tables: a token attends to the earlier tokens of its own
    /// example only (padding attends to itself), and positions restart at each example.
    pub fn attention_inputs<B: Backend>(
        &self,
        config: &Qwen2Config,
        device: &B::Device,
    ) -> AttentionInputs<B> {
        let (batch, seq) = (self.batch_size(), self.seq_len());
        // Examples are contiguous: a query's visible keys run from its example's first token
        // to itself.
        let mut ranges = Vec::with_capacity(batch * seq);
        for segments in &self.segments {
            let mut example_start = 0;
            for (query, segment) in segments.iter().enumerate() {
                if query == 0 || segment.is_none() || segments[query - 1] != *segment {
                    example_start = query;
                }
                ranges.push(example_start..query + 1);
            }
        }
        let mask = AttentionMask::from_parts([batch, seq, seq], vec![true; batch * seq], ranges);
        AttentionInputs::from_mask(mask, &self.positions, config, device)
    }

    /// Logits of `model` at every position, each example attending only to itself.
    ///
    /// # Shapes
    /// - returns `[batch, seq, vocab]`
    pub fn forward<B: Backend>(&self, model: &Qwen2ForCausalLm<B>) -> Tensor<B, 3> {
        let device = model.device();
        let config = model.config();
        let inputs = self.attention_inputs(config, &device);
        let mut hidden = model.embed(self.ids_tensor(&device));
        for layer in &model.layers {
            hidden = layer.forward(hidden, &inputs, None);
        }
        model.logits(model.norm.forward(hidden))
    }

    /// [`forward`](Self::forward) with activation checkpointing per decoder layer: the logits
    /// and the layers to differentiate the loss through
    /// ([`CheckpointedLayers::backward`](agent_rl_core::model::CheckpointedLayers::backward)).
    ///
    /// # Shapes
    /// - returns `[batch, seq, vocab]`
    pub fn forward_checkpointed<B: AutodiffBackend>(
        &self,
        model: &Qwen2ForCausalLm<B>,
    ) -> (Tensor<B, 3>, CheckpointedLayers<B>) {
        let device = model.device();
        let inputs = self.attention_inputs(model.config(), &device);
        let embedded = model.embed(self.ids_tensor(&device));
        let layers = CheckpointedLayers::forward(&model.layers, embedded, &inputs);
        (model.logits(model.norm.forward(layers.output())), layers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sft::masking::TokenizedExample;

    #[test]
    fn collate_pads_and_restarts_positions() {
        let mut packed = SftSequence::single(TokenizedExample {
            input_ids: vec![1, 2, 3],
            loss_mask: vec![false, true, true],
        });
        packed.push(&TokenizedExample {
            input_ids: vec![4, 5],
            loss_mask: vec![true, true],
        });
        let short = SftSequence::single(TokenizedExample {
            input_ids: vec![6, 7],
            loss_mask: vec![false, true],
        });
        let batch = SftBatch::collate(&[&packed, &short], 0);
        assert_eq!(batch.input_ids[1], [6, 7, 0, 0, 0]);
        assert_eq!(batch.positions[0], [0, 1, 2, 0, 1]);
        assert_eq!(batch.segments[1], [Some(0), Some(0), None, None, None]);
        assert_eq!(batch.loss_targets[0], [true, true, false, true]);
        assert_eq!(batch.loss_targets[1], [true, false, false, false]);
        assert_eq!((batch.num_tokens(), batch.num_loss_tokens()), (7, 4));
    }
}
