//! Attention bias and rotary tables for a (possibly left-padded, possibly cached) batch.

use burn::prelude::*;

use super::rotary::{RotaryShape, RotaryTables};
use crate::Qwen2Config;

/// Position ids from an attention mask, as HF's `generate` derives them:
/// `cumsum(mask) - 1`, with padding positions set to 1.
pub fn positions_from_mask(mask: &[bool]) -> Vec<usize> {
    let mut seen = 0usize;
    mask.iter()
        .map(|&keep| {
            if keep {
                seen += 1;
                seen - 1
            } else {
                1
            }
        })
        .collect()
}

/// Everything attention needs besides the hidden states: the additive mask and RoPE tables.
#[derive(Debug, Clone)]
pub struct AttentionInputs<B: Backend> {
    /// `[batch, heads, seq, past + seq]`: 0 where a query may attend, a large negative value
    /// elsewhere. Repeated per query head (not broadcast) so the add runs on contiguous memory.
    pub bias: Tensor<B, 4>,
    /// Rotary tables for the new positions.
    pub rotary: RotaryTables<B>,
}

impl<B: Backend> AttentionInputs<B> {
    /// Builds the causal, padding-aware bias for `seq` new tokens after `past` cached ones.
    ///
    /// `mask[b]` covers all `past + seq` positions (true = real token); `positions[b]` the
    /// `seq` new positions.
    pub fn new(
        mask: &[Vec<bool>],
        positions: &[Vec<usize>],
        past: usize,
        config: &Qwen2Config,
        device: &B::Device,
    ) -> Self {
        let batch = mask.len();
        let total = mask.first().map_or(0, Vec::len);
        let seq = total - past;
        let mut bias = Vec::with_capacity(batch * seq * total);
        for row in mask {
            for query in 0..seq {
                let limit = past + query;
                bias.extend(row.iter().enumerate().map(|(key, &keep)| {
                    if keep && key <= limit {
                        0.0f32
                    } else {
                        f32::MIN
                    }
                }));
            }
        }
        Self::from_bias(&bias, [batch, seq, total], positions, config, device)
    }

    /// Wraps a host-built bias, `[batch, seq, total]` row-major (one head's worth), with the
    /// rotary tables for `positions`.
    pub fn from_bias(
        bias: &[f32],
        [batch, seq, total]: [usize; 3],
        positions: &[Vec<usize>],
        config: &Qwen2Config,
        device: &B::Device,
    ) -> Self {
        let heads = config.num_attention_heads;
        let mut repeated = Vec::with_capacity(bias.len() * heads);
        for example in bias.chunks_exact((seq * total).max(1)) {
            for _ in 0..heads {
                repeated.extend_from_slice(example);
            }
        }
        let head_dim = config.head_size();
        let shape = RotaryShape {
            heads,
            kv_heads: config.kv_heads(),
            head_dim,
            theta: config.rope_base(),
            query_scale: 1.0 / (head_dim as f32).sqrt(),
        };
        Self {
            bias: Tensor::from_data(
                TensorData::new(repeated, [batch, heads, seq, total]),
                device,
            ),
            rotary: RotaryTables::new(positions, shape, device),
        }
    }
}

impl<B: burn::tensor::backend::AutodiffBackend> AttentionInputs<B> {
    /// The same bias and tables on the inner backend (constants: no graph to leave).
    pub fn inner(&self) -> AttentionInputs<B::InnerBackend> {
        AttentionInputs {
            bias: self.bias.clone().inner(),
            rotary: self.rotary.inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_hf_generate() {
        assert_eq!(
            positions_from_mask(&[false, false, true, true, true]),
            [1, 1, 0, 1, 2]
        );
        assert_eq!(positions_from_mask(&[true, true]), [0, 1]);
    }
}
