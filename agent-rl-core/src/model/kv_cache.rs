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

    /// Puts the rows of several caches into one: `parts[i].0` gives, for each row of
    /// `parts[i].1`, its row in the result (together the lists cover `0..rows` once). Caches
    /// shorter than the longest are left-padded with masked positions, which attention skips
    /// and positions do not count, so every row attends exactly as before.
    ///
    /// Layers missing from a part (nothing cached yet) stay missing in the result.
    pub fn assemble(parts: Vec<(Vec<usize>, KvCache<B>)>, rows: usize) -> Self {
        let num_layers = parts.first().map_or(0, |(_, cache)| cache.layers.len());
        let past = parts.iter().map(|(_, c)| c.past_len()).max().unwrap_or(0);
        let mut order = Vec::with_capacity(rows);
        let mut mask = Vec::with_capacity(rows);
        let mut layers: Vec<Vec<(Tensor<B, 4>, Tensor<B, 4>)>> = vec![Vec::new(); num_layers];
        let mut complete = vec![true; num_layers];
        for (targets, cache) in parts {
            let pad = past - cache.past_len();
            order.extend(targets);
            mask.extend(cache.mask.into_iter().map(|row| {
                std::iter::repeat_n(false, pad)
                    .chain(row)
                    .collect::<Vec<bool>>()
            }));
            for (index, layer) in cache.layers.into_iter().enumerate() {
                match layer {
                    Some((keys, values)) => {
                        layers[index].push((left_pad(keys, pad), left_pad(values, pad)));
                    }
                    None => complete[index] = false,
                }
            }
        }
        let mut inverse = vec![0usize; order.len()];
        for (position, &row) in order.iter().enumerate() {
            if let Some(slot) = inverse.get_mut(row) {
                *slot = position;
            }
        }
        let identity = inverse.iter().enumerate().all(|(row, &at)| row == at);
        let mut assembled = Self {
            layers: layers
                .into_iter()
                .zip(complete)
                .map(|(pieces, complete)| {
                    (complete && !pieces.is_empty()).then(|| {
                        let (keys, values): (Vec<_>, Vec<_>) = pieces.into_iter().unzip();
                        (Tensor::cat(keys, 0), Tensor::cat(values, 0))
                    })
                })
                .collect(),
            mask,
        };
        if !identity {
            assembled.retain(&inverse);
        }
        assembled
    }
}

/// `cache` (`[batch, heads, len, dim]`) with `pad` zero positions in front.
fn left_pad<B: Backend>(cache: Tensor<B, 4>, pad: usize) -> Tensor<B, 4> {
    if pad == 0 {
        return cache;
    }
    let [batch, heads, _, dim] = cache.dims();
    let zeros = Tensor::<B, 4>::zeros([batch, heads, pad, dim], &cache.device());
    let zeros = if zeros.dtype() == cache.dtype() {
        zeros
    } else {
        zeros.cast(burn::tensor::FloatDType::from(cache.dtype()))
    };
    Tensor::cat(vec![zeros, cache], 2)
}
