//! Key/value cache for incremental decoding.

use burn::prelude::*;

/// Cached keys and values of every layer, plus the attention-mask history of the batch.
#[derive(Debug, Clone)]
pub struct KvCache<B: Backend> {
    /// Per layer: keys and values, each `[batch, kv_heads, past, head_dim]`.
    pub layers: Vec<Option<(Tensor<B, 4>, Tensor<B, 4>)>>,
    /// Per sequence: which of the `past` positions are real tokens (false = left padding).
    pub mask: Vec<Vec<bool>>,
}

impl<B: Backend> KvCache<B> {
    /// An empty cache for `num_layers` layers and `batch` sequences.
    pub fn new(num_layers: usize, batch: usize) -> Self {
        Self {
            layers: vec![None; num_layers],
            mask: vec![Vec::new(); batch],
        }
    }

    /// Number of cached positions.
    pub fn past_len(&self) -> usize {
        self.mask.first().map_or(0, Vec::len)
    }

    /// Number of real (non-padding) tokens cached for each sequence.
    pub fn real_lengths(&self) -> Vec<usize> {
        self.mask
            .iter()
            .map(|row| row.iter().filter(|&&keep| keep).count())
            .collect()
    }

    /// Keeps only the listed sequences (e.g. drop finished ones from a decoding batch); a row may
    /// be listed more than once (e.g. fan a shared prompt out to its completions).
    pub fn retain(&mut self, rows: &[usize]) {
        if rows.is_empty() {
            *self = Self::new(self.layers.len(), 0);
            return;
        }
        let device = self
            .layers
            .iter()
            .flatten()
            .next()
            .map(|(keys, _)| keys.device());
        if let Some(device) = device {
            let index = crate::generation::index_tensor(rows, &device);
            for layer in self.layers.iter_mut().flatten() {
                layer.0 = layer.0.clone().select(0, index.clone());
                layer.1 = layer.1.clone().select(0, index.clone());
            }
        }
        self.mask = rows.iter().map(|&r| self.mask[r].clone()).collect();
    }
}
