//! Rotary position embeddings with Hugging Face's rotate-half convention and per-row positions.

use burn::prelude::*;

use super::layout::contiguous;
use crate::config::RopeScaling;

/// Cosine and signed-sine tables for a batch of position ids, laid out per head.
///
/// `rotate(x) = x * cos + swap_halves(x) * sin_signed`, where `swap_halves([a, b]) = [b, a]`
/// and `sin_signed = [-sin, sin]`; this equals HF's `x * cos + rotate_half(x) * sin`.
///
/// The tables are repeated over the heads (`[batch, heads, seq, head_dim]`, attention's layout,
/// so that gradients arrive contiguous too) rather than
/// broadcast: elementwise kernels on CPU backends only take their vectorised paths when both
/// operands are contiguous, and a broadcast over a middle axis falls back to a scalar walk that
/// cost more than the matmuls around it. The query tables also carry attention's
/// `1 / sqrt(head_dim)` scale, so scaling the queries costs nothing.
#[derive(Debug, Clone)]
pub struct RotaryTables<B: Backend> {
    /// `[batch, heads, seq, head_dim]`: query cosines, times the query scale.
    pub query_cos: Tensor<B, 4>,
    /// `[batch, heads, seq, head_dim]`: query signed sines, times the query scale.
    pub query_sin: Tensor<B, 4>,
    /// `[batch, kv_heads, seq, head_dim]`: key cosines.
    pub key_cos: Tensor<B, 4>,
    /// `[batch, kv_heads, seq, head_dim]`: key signed sines.
    pub key_sin: Tensor<B, 4>,
    /// `[head_dim, head_dim]`: the half-swap as a permutation matrix, `swap_halves(x) = x · P`.
    /// A small matrix product instead of two slices and a concatenation keeps the backward pass
    /// free of zero-filled slice gradients.
    pub swap_halves: Tensor<B, 2>,
}

impl<B: burn::tensor::backend::AutodiffBackend> RotaryTables<B> {
    /// The same tables on the inner backend.
    pub fn inner(&self) -> RotaryTables<B::InnerBackend> {
        RotaryTables {
            query_cos: self.query_cos.clone().inner(),
            query_sin: self.query_sin.clone().inner(),
            key_cos: self.key_cos.clone().inner(),
            key_sin: self.key_sin.clone().inner(),
            swap_halves: self.swap_halves.clone().inner(),
        }
    }
}

/// Which tables [`RotaryTables::heads_first`] rotates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rotate {
    /// The (scaled) query tables.
    Queries,
    /// The key tables.
    Keys,
    /// None: values are not rotated.
    None,
}

/// How many heads the tables cover and how queries are scaled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotaryShape {
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// Width of one head (even).
    pub head_dim: usize,
    /// RoPE base frequency.
    pub theta: f64,
    /// How the frequencies are scaled (Llama 3) or not.
    pub scaling: RopeScaling,
    /// Factor folded into the query tables (attention's `1 / sqrt(head_dim)`).
    pub query_scale: f32,
}

impl<B: Backend> RotaryTables<B> {
    /// Tables for `positions[b][t]` (angles computed on the host in f32, as HF does).
    pub fn new(positions: &[Vec<usize>], shape: RotaryShape, device: &B::Device) -> Self {
        let head_dim = shape.head_dim;
        let half = head_dim / 2;
        let inv_freq = shape.scaling.inv_freq(shape.theta, head_dim);
        // One head's rows, [batch * seq, head_dim], then repeated per head.
        let mut cos = Vec::with_capacity(positions.iter().map(Vec::len).sum::<usize>() * head_dim);
        let mut sin = Vec::with_capacity(cos.capacity());
        for &position in positions.iter().flatten() {
            for sign in [-1.0f32, 1.0] {
                for frequency in &inv_freq {
                    let angle = frequency * position as f32;
                    cos.push(angle.cos());
                    sin.push(sign * angle.sin());
                }
            }
        }
        let batch = positions.len();
        let seq = positions.first().map_or(0, Vec::len);
        let table = |rows: &[f32], heads: usize, scale: f32| {
            let mut data = Vec::with_capacity(rows.len() * heads);
            for example in rows.chunks_exact((seq * head_dim).max(1)) {
                for _ in 0..heads {
                    data.extend(example.iter().map(|v| v * scale));
                }
            }
            Tensor::from_data(TensorData::new(data, [batch, heads, seq, head_dim]), device)
        };
        let mut permutation = vec![0.0f32; head_dim * head_dim];
        for column in 0..head_dim {
            permutation[((column + half) % head_dim) * head_dim + column] = 1.0;
        }
        Self {
            swap_halves: Tensor::from_data(
                TensorData::new(permutation, [head_dim, head_dim]),
                device,
            ),
            query_cos: table(&cos, shape.heads, shape.query_scale),
            query_sin: table(&sin, shape.heads, shape.query_scale),
            key_cos: table(&cos, shape.kv_heads, 1.0),
            key_sin: table(&sin, shape.kv_heads, 1.0),
        }
    }

    /// A projection `[batch, seq, heads, head_dim]` as contiguous `[batch, heads, seq,
    /// head_dim]`, rotated with the query or key tables (values: `Rotate::None`, a plain swap).
    /// One fused pass on the CPU backend (see `crate::fused::swap_middle`).
    pub(crate) fn heads_first(&self, x: Tensor<B, 4>, rotate: Rotate) -> Tensor<B, 4> {
        let tables = match rotate {
            Rotate::Queries => Some((&self.query_cos, &self.query_sin)),
            Rotate::Keys => Some((&self.key_cos, &self.key_sin)),
            Rotate::None => None,
        };
        match crate::fused::swap_middle(x, tables) {
            Ok(rotated) => rotated,
            Err(x) => match tables {
                Some((cos, sin)) => self.rotate(contiguous(x.swap_dims(1, 2)), cos, sin),
                None => x.swap_dims(1, 2),
            },
        }
    }

    /// Rotates (and scales) queries.
    ///
    /// # Shapes
    /// - `x`: `[batch, heads, seq, head_dim]` → same
    pub fn rotate_queries(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        self.rotate(x, &self.query_cos, &self.query_sin)
    }

    /// Rotates keys.
    ///
    /// # Shapes
    /// - `x`: `[batch, kv_heads, seq, head_dim]` → same
    pub fn rotate_keys(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        self.rotate(x, &self.key_cos, &self.key_sin)
    }

    fn rotate(&self, x: Tensor<B, 4>, cos: &Tensor<B, 4>, sin: &Tensor<B, 4>) -> Tensor<B, 4> {
        let dims = x.dims();
        let [batch, heads, seq, head_dim] = dims;
        let swapped = x
            .clone()
            .reshape([batch * seq * heads, head_dim])
            .matmul(self.swap_halves.clone())
            .reshape(dims);
        x * cos.clone() + swapped * sin.clone()
    }
}
