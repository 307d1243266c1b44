//! Attention bias and rotary tables for a (possibly left-padded, possibly cached) batch.

use burn::prelude::*;

use super::rotary::RotaryTables;

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
    /// `[batch, 1, seq, past + seq]`: 0 where a query may attend, a large negative value elsewhere.
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
        head_dim: usize,
        theta: f64,
        device: &B::Device,
    ) -> Self {
        let batch = mask.len();
        let total = mask.first().map_or(0, Vec::len);
        let seq = total - past;
        let mut bias = Vec::with_capacity(batch * seq * total);
        for row in mask {
            for query in 0..seq {
                let limit = past + query;
                for (key, &keep) in row.iter().enumerate() {
                    bias.push(if keep && key <= limit {
                        0.0f32
                    } else {
                        f32::MIN
                    });
                }
            }
        }
        Self {
            bias: Tensor::from_data(TensorData::new(bias, [batch, 1, seq, total]), device),
            rotary: RotaryTables::new(positions, head_dim, theta, device),
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
