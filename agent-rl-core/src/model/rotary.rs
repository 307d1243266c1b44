//! Rotary position embeddings with Hugging Face's rotate-half convention and per-row positions.

use burn::prelude::*;

/// Cosine and signed-sine tables for a batch of position ids.
///
/// `rotate(x) = x * cos + swap_halves(x) * sin_signed`, where `swap_halves([a, b]) = [b, a]`
/// and `sin_signed = [-sin, sin]`; this equals HF's `x * cos + rotate_half(x) * sin`.
#[derive(Debug, Clone)]
pub struct RotaryTables<B: Backend> {
    /// `[batch, 1, seq, head_dim]`.
    pub cos: Tensor<B, 4>,
    /// `[batch, 1, seq, head_dim]`, first half negated.
    pub sin_signed: Tensor<B, 4>,
}

impl<B: Backend> RotaryTables<B> {
    /// Tables for `positions[b][t]` (computed on the host in f32, as HF does).
    pub fn new(positions: &[Vec<usize>], head_dim: usize, theta: f64, device: &B::Device) -> Self {
        let batch = positions.len();
        let seq = positions.first().map_or(0, Vec::len);
        let half = head_dim / 2;
        let inv_freq: Vec<f32> = (0..half)
            .map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / head_dim as f32))
            .collect();
        let mut cos = Vec::with_capacity(batch * seq * head_dim);
        let mut sin = Vec::with_capacity(batch * seq * head_dim);
        for row in positions {
            for &position in row {
                let angles: Vec<f32> = inv_freq.iter().map(|f| f * position as f32).collect();
                for sign in [-1.0f32, 1.0] {
                    for angle in &angles {
                        cos.push(angle.cos());
                        sin.push(sign * angle.sin());
                    }
                }
            }
        }
        let shape = [batch, 1, seq, head_dim];
        Self {
            cos: Tensor::from_data(TensorData::new(cos, shape), device),
            sin_signed: Tensor::from_data(TensorData::new(sin, shape), device),
        }
    }

    /// Rotates queries or keys.
    ///
    /// # Shapes
    /// - `x`: `[batch, heads, seq, head_dim]` → same
    pub fn apply(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let [_, _, _, head_dim] = x.dims();
        let half = head_dim / 2;
        let swapped = Tensor::cat(
            vec![
                x.clone().narrow(3, half, half),
                x.clone().narrow(3, 0, half),
            ],
            3,
        );
        x * self.cos.clone() + swapped * self.sin_signed.clone()
    }
}
