//! Attention mask and rotary tables for a (possibly left-padded, possibly cached) batch.

use std::sync::{Arc, OnceLock};

use burn::prelude::*;

use super::attention_mask::AttentionMask;
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

/// Everything attention needs besides the hidden states: which keys each query sees and the
/// RoPE tables.
#[derive(Debug, Clone)]
pub struct AttentionInputs<B: Backend> {
    /// Which keys each query sees, on the host (the CPU kernel reads it directly).
    pub mask: Arc<AttentionMask>,
    /// Rotary tables for the new positions.
    pub rotary: RotaryTables<B>,
    /// Query heads (the bias is repeated per head).
    heads: usize,
    /// `mask`'s additive form, built the first time a backend without the blocked kernel asks.
    bias: Arc<OnceLock<Tensor<B, 4>>>,
}

impl<B: Backend> AttentionInputs<B> {
    /// Causal, padding-aware attention for `seq` new tokens after `past` cached ones.
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
        Self::from_mask(AttentionMask::causal(mask, past), positions, config, device)
    }

    /// Wraps `mask` with the rotary tables for `positions` (`[batch][seq]`).
    pub fn from_mask(
        mask: AttentionMask,
        positions: &[Vec<usize>],
        config: &Qwen2Config,
        device: &B::Device,
    ) -> Self {
        let head_dim = config.head_size();
        let shape = RotaryShape {
            heads: config.num_attention_heads,
            kv_heads: config.kv_heads(),
            head_dim,
            theta: config.rope_base(),
            // The model was built from a validated config, whose scaling parses.
            scaling: config
                .rope_scaling_kind()
                .unwrap_or(crate::RopeScaling::Default),
            query_scale: 1.0 / (head_dim as f32).sqrt(),
        };
        Self {
            mask: Arc::new(mask),
            rotary: RotaryTables::new(positions, shape, device),
            heads: config.num_attention_heads,
            bias: Arc::new(OnceLock::new()),
        }
    }

    /// The mask as an additive bias, `[batch, heads, seq, total]`: 0 where a query may attend, a
    /// large negative value elsewhere; repeated per query head (not broadcast) so the add runs
    /// on contiguous memory. Built on first use and kept (backends without the blocked kernel
    /// of `crate::fused::attention` need it; on the CPU backend it is never built).
    pub fn bias(&self) -> Tensor<B, 4> {
        self.bias
            .get_or_init(|| {
                let [batch, seq, total] = self.mask.dims();
                let bias = self.mask.bias();
                let mut repeated = Vec::with_capacity(bias.len() * self.heads);
                for example in bias.chunks_exact((seq * total).max(1)) {
                    for _ in 0..self.heads {
                        repeated.extend_from_slice(example);
                    }
                }
                let data = TensorData::new(repeated, [batch, self.heads, seq, total]);
                Tensor::from_data(data, &self.rotary.query_cos.device())
            })
            .clone()
    }
}

impl<B: burn::tensor::backend::AutodiffBackend> AttentionInputs<B> {
    /// The same mask and tables on the inner backend (constants: no graph to leave).
    pub fn inner(&self) -> AttentionInputs<B::InnerBackend> {
        AttentionInputs {
            mask: Arc::clone(&self.mask),
            rotary: self.rotary.inner(),
            heads: self.heads,
            bias: Arc::new(OnceLock::new()),
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
